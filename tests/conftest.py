"""Test-wide settings: JAX on CPU at full matmul precision, so scan and loop can be compared tightly."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")

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
