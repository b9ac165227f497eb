"""The results cache: a warm run re-analyses only changed files and reports exactly what a cold
run reports; anything that can change a result (bytes, settings, other modules' tracing) misses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import jaxloopfix.api as api
from fixture_tools import SEED_SOURCE
from jaxloopfix.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the engine really analyses (cache misses)."""
    seen: list[str] = []
    real = api._lint

    def counting(task):
        seen.append(task.source.path.name)
        return real(task)

    monkeypatch.setattr(api, "_lint", counting)
    return seen


def _check(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", *args, str(root)])
    return result.exit_code, result.output


def test_warm_run_reuses_results_and_reanalyses_changed_files(tmp_path, monkeypatch, analysed) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "JLF001", tmp_path / "src", ignore=shutil.ignore_patterns("*.fixed.py"))
    cold = _check(tmp_path / "src")
    count = len(analysed)
    assert cold[0] == 1 and count == len(list((tmp_path / "src").glob("*.py")))
    cache = tmp_path / ".jaxloopfix_cache"
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    json.loads((cache / "results-v2.json").read_text())  # plain JSON, never pickle

    analysed.clear()
    assert _check(tmp_path / "src") == cold and analysed == []

    target = tmp_path / "src" / "axis1.py"
    target.write_text(target.read_text() + "\n# edited\n")
    warm = _check(tmp_path / "src")
    assert analysed == ["axis1.py"] and warm == cold

    analysed.clear()
    _check(tmp_path / "src", "--select", "JLF002")  # other settings: other results
    assert len(analysed) == count


def test_no_cache_neither_reads_nor_writes(tmp_path, monkeypatch, analysed) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    _check(tmp_path, "--no-cache")
    _check(tmp_path, "--no-cache")
    assert analysed == ["rnn.py", "rnn.py"] and not (tmp_path / ".jaxloopfix_cache").exists()


def test_damaged_cache_is_ignored_and_replaced(tmp_path, monkeypatch, analysed) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    cold = _check(tmp_path)
    results = tmp_path / ".jaxloopfix_cache" / "results-v2.json"
    for damage in ("{not json", json.dumps({"format": 2, "entries": {str(tmp_path / "rnn.py"): {"key": 3}}})):
        results.write_text(damage)
        assert _check(tmp_path) == cold
    entries = json.loads(results.read_text())["entries"][str(tmp_path / "rnn.py")]
    for result in entries.values():
        result["diagnostics"] = "garbage"
    results.write_text(json.dumps({"format": 2, "entries": {str(tmp_path / "rnn.py"): entries}}))
    assert _check(tmp_path) == cold


def test_warm_project_run_analyses_nothing(tmp_path, monkeypatch, analysed) -> None:
    """A file checked twice in one run (once more when another module traces it) is cached twice."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "project", tmp_path / "project")
    cold = _check(tmp_path / "project")
    assert analysed.count("layers.py") >= 2  # once alone, again once callers are known
    analysed.clear()
    assert _check(tmp_path / "project") == cold and analysed == []


def test_tracing_from_another_module_invalidates_the_callee(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "project", tmp_path / "project")
    before = json.loads(_check(tmp_path / "project")[1])
    assert [d["code"] for d in before] == ["JLF001", "JLF002"]
    train = tmp_path / "project" / "seqmodel" / "train.py"
    train.write_text(train.read_text().replace("ys, _ = encode(w, xs, h)", "ys = xs"))
    after = json.loads(_check(tmp_path / "project")[1])
    assert [d["code"] for d in after] == ["JLF002"]


HELPERS = """def norm(xs):
    total = 0.0
    for x in xs:
        total = total + x * x
    return total
"""
LAYERS = """import jax

from pkg import helpers


@jax.jit
def step(xs):
    return helpers.norm(xs)


def encode(xs):
    return helpers.norm(xs) * 2.0
"""
TRAIN = """import jax

from pkg import layers


@jax.jit
def loss(xs):
    return layers.encode(xs)
"""


def test_an_edited_file_checked_alone_after_a_project_run_analyses_only_that_file(tmp_path, monkeypatch, analysed) -> None:
    """After `check project/`, the pre-commit hook or the editor checks the one edited file. The
    run passes through the project run's rounds, so each unchanged module is answered by an
    entry that run wrote, even one seeded both by the edited module's own jitted code (from the
    first round) and by code other modules trace there (later); given relative or absolute."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in {"__init__.py": "", "helpers.py": HELPERS, "layers.py": LAYERS, "train.py": TRAIN}.items():
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    whole = json.loads(_check(tmp_path / "pkg")[1])
    assert [(Path(d["filename"]).name, d["code"]) for d in whole] == [("helpers.py", "JLF002")]
    layers = tmp_path / "pkg" / "layers.py"
    for given in (Path("pkg/layers.py"), layers):
        layers.write_text(layers.read_text() + "\n\ndef added(values):\n    return list(values)\n")
        analysed.clear()
        assert json.loads(_check(given)[1]) == []  # layers.py itself has no finding
        assert set(analysed) == {"layers.py"}
    analysed.clear()
    again = json.loads(_check(tmp_path / "pkg")[1])
    assert analysed == [] and [d["traced_reason"] for d in again] == [d["traced_reason"] for d in whole]


PLAIN_BASE = "class Base:\n    hidden = 4\n"
FLAX_BASE = "import flax.linen as nn\n\n\nclass Base(nn.Module):\n    hidden: int = 4\n"
ENCODER = """import jax.numpy as jnp

from pkg.base import Base


class Encoder(Base):
    def __call__(self, xs):
        h = jnp.zeros(4)
        for t in range(xs.shape[0]):
            h = jnp.tanh(h + xs[t])
        return h
"""


def test_the_framework_word_search_is_kept_per_file_content(tmp_path, monkeypatch) -> None:
    """Whether any file can define a Flax module class (`may_define_framework_classes`) is
    searched once per file content: a warm run searches nothing, and an edit that brings in
    Flax is searched again, so a subclass's loop in another file is then reported, as a run
    without the cache reports it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    for name, text in {"__init__.py": "", "base.py": PLAIN_BASE, "model.py": ENCODER}.items():
        (tmp_path / "pkg" / name).write_text(text)
    searched: list[str] = []
    real = api.may_define_framework_classes

    def recording(texts, extra=()):
        texts = list(texts)
        searched.extend(texts)
        return real(texts, extra)

    monkeypatch.setattr(api, "may_define_framework_classes", recording)
    plain = _check(tmp_path / "pkg")
    assert json.loads(plain[1]) == [] and len(searched) == 3
    searched.clear()
    assert _check(tmp_path / "pkg") == plain and searched == []

    (tmp_path / "pkg" / "base.py").write_text(FLAX_BASE)
    flax = _check(tmp_path / "pkg")
    assert [(Path(d["filename"]).name, d["traced_reason"]) for d in json.loads(flax[1])] == [
        ("model.py", "`__call__` is traced: method `__call__` of Flax module `Encoder`")
    ]
    assert searched == [FLAX_BASE]  # `__init__.py` answered from the cache, then the edited file
    assert flax == _check(tmp_path / "pkg", "--no-cache")
    (tmp_path / "pkg" / "base.py").write_text(PLAIN_BASE)
    assert _check(tmp_path / "pkg") == plain
