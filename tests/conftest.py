"""Test-wide settings: JAX on CPU at full matmul precision, so scan and loop can be compared
tightly; one persistent compilation cache for the whole run."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")
# Test workers and the verify subprocesses they start compile many of the same programs (the
# same fixtures, JAX's eager operations in every fresh process); XLA's compile of each costs
# about 0.2 s on CPU. One cache directory for the run, made by the first process (pytest-xdist
# workers and subprocesses inherit it), serves repeats from disk; a hit is the same executable.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="jaxloopfix-tests-xla-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

import pytest


@pytest.fixture
def analyse_reduced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine analyses the pre-filter's reduced text even where a run reads the whole text
    (`prefilter.Scan.whole`): the reduction must give the same results, since results are
    reused by its digest (`prefilter.analysed_digest`)."""
    from dataclasses import replace

    from jaxloopfix import engine, prefilter

    def scan(*args, **kwargs):
        found = prefilter.scan(*args, **kwargs)
        return replace(found, whole=False) if found is not None else None

    monkeypatch.setattr(engine, "scan", scan)
