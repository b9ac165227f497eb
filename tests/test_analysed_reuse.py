"""Results reused across edits the analysis does not read, and the pre-filter's parameter flow.

A text the pre-filter reduces is analysed without the functions nothing traced reaches or
names; a result without diagnostics then holds for every text whose analysed code is the
same (`prefilter.analysed_digest`), and the cache finds it by that digest. Every test here
compares with a run that reads no cache: the reuse only saves work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_cache import HELPERS
from test_cache import LAYERS as TRACED_LAYERS

from jaxloopfix import engine
from jaxloopfix.cli import main
from jaxloopfix.config import Settings
from jaxloopfix.prefilter import analysed_digest, scan

pytest.importorskip("jax")

STEP = '''

def step(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2)
    return jnp.stack(out)
'''
UNRELATED = '''

def unrelated(values):
    total = 0
    for v in values:
        total += v
    return total
'''
PARAMETER_FLOW = '''import jax
import jax.numpy as jnp


def compile_and_run(fn, x):
    return jax.jit(fn)(x)


def outer(fn, x):
    return compile_and_run(fn, x)


def main(x):
    return outer(step, x)
''' + STEP + UNRELATED
GLOBAL_FLOW = '''import jax
import jax.numpy as jnp

MODEL = None


def set_model():
    global MODEL
    MODEL = step


def run(x):
    return jax.jit(MODEL)(x)
''' + STEP


def test_callers_that_pass_a_function_to_a_traced_parameter_are_kept(analyse_reduced):
    """`jax.jit(fn)` with `fn` a parameter traces what the callers pass, two calls up here: the
    reduced text keeps `outer` and `main` (without them `step` is not traced) and leaves out
    the function nothing names."""
    reduced = scan(PARAMETER_FLOW).reduce(PARAMETER_FLOW)
    assert reduced is not None
    assert "def main" in reduced.text and "def outer" in reduced.text and "def unrelated" not in reduced.text
    fast = engine.lint_text(PARAMETER_FLOW, "m.py", Settings())
    assert [d.traced_reason for d in fast] == ["`step` is traced: wrapped by `jax.jit(fn)` on line 6"]
    assert fast == engine.lint_text(PARAMETER_FLOW, "m.py", Settings(), prefilter=False)


def test_a_function_binding_a_global_keeps_the_whole_module(analyse_reduced):
    """`global MODEL` in `set_model` binds what `jax.jit(MODEL)` wraps: nothing is left out."""
    assert scan(GLOBAL_FLOW).reduce(GLOBAL_FLOW) is None
    fast = engine.lint_text(GLOBAL_FLOW, "m.py", Settings())
    assert len(fast) == 1 and fast == engine.lint_text(GLOBAL_FLOW, "m.py", Settings(), prefilter=False)


def _digest(text: str) -> str:
    reduced = scan(text).reduce(text)
    return analysed_digest(reduced.text if reduced is not None else text)


def test_the_digest_is_that_of_the_code_analysed_in_its_place():
    base = PARAMETER_FLOW
    appended = base + "\n\ndef added(values):\n    return [v for v in values]\n"
    assert _digest(appended) == _digest(base) == _digest(base + "\n\n\n")
    # Left-out code edited in place: every analysed line keeps its number.
    assert _digest(base.replace("total += v", "total -= v")) == _digest(base)
    # Lines added above analysed code move it: the reasons name other lines.
    moved = base.replace("\n\ndef main", "\n\ndef added(values):\n    return values\n\n\ndef main")
    assert _digest(moved) != _digest(base)
    assert _digest(base.replace("out.append(x[i] * 2)", "out.append(x[i] * 3)")) != _digest(base)


# `layers.step` traces `helpers.norm` (with its loop); `describe` is host code nothing names.
LAYERS = TRACED_LAYERS.replace(
    "def encode(xs):\n    return helpers.norm(xs) * 2.0\n",
    'def describe(values):\n    return ", ".join(str(v) for v in values)\n',
)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the libcst analysis really runs on."""
    seen: list[str] = []
    real = engine._lint_parsed

    def counting(parsed, rules, settings):
        seen.append(Path(parsed.filename).name)
        return real(parsed, rules, settings)

    monkeypatch.setattr(engine, "_lint_parsed", counting)
    return seen


def _check(*args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    for name, text in {"__init__.py": "", "helpers.py": HELPERS, "layers.py": LAYERS}.items():
        (tmp_path / "pkg" / name).write_text(text)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_edit_to_code_the_analysis_leaves_out_reuses_the_result(project, analysed):
    """The editor's or hook's `check layers.py` after a project run: a helper appended or an
    untraced function edited in place leaves the analysed code as it was, and the file is not
    analysed again; an edit to traced code, or one moving it, is. Each answer is the one a run
    without the cache gives, including the note in `helpers.py` naming `layers.py`'s line."""
    whole = _check("pkg")
    assert [(Path(d["filename"]).name, d["code"]) for d in whole] == [("helpers.py", "JLF002")]
    layers = project / "pkg" / "layers.py"
    edits = [
        ("reused", LAYERS, LAYERS + "\n\ndef added(values):\n    return [v for v in values]\n"),
        ("reused", 'return ", ".join', 'return "; ".join'),
        ("analysed", "return helpers.norm(xs)", "return helpers.norm(xs) + 0.0"),
        ("analysed", "\n\n@jax.jit", "\n\ndef first(values):\n    return values\n\n\n@jax.jit"),
    ]
    for expected, old, new in edits:
        _edit(layers, old, new)
        analysed.clear()
        alone = _check("pkg/layers.py")
        assert ("layers.py" in analysed) == (expected == "analysed"), (old, new)
        assert alone == _check("--no-cache", "pkg/layers.py") == []
        assert _check("pkg") == _check("--no-cache", "pkg")
    notes = [d["traced_reason"] for d in _check("pkg")]
    assert notes == ["`norm` is traced: called from traced function `step` on line 12 of pkg/layers.py"]


def test_a_file_with_findings_is_analysed_again(project, analysed):
    """Findings carry fixes and generated names that depend on the whole text: a file with any
    is analysed after every edit, however far from its traced code."""
    _check("pkg")
    helpers = project / "pkg" / "helpers.py"
    _edit(helpers, HELPERS, HELPERS + UNRELATED)
    analysed.clear()
    found = _check("pkg/helpers.py")
    assert "helpers.py" in analysed
    assert [d["code"] for d in found] == ["JLF002"] and found == _check("--no-cache", "pkg/helpers.py")


REEXPORTING = '''import jax

from pkg.helpers import norm


@jax.jit
def step(xs):
    return norm(xs)


def describe(values):
    return ", ".join(str(v) for v in values)
'''
TRAIN = '''import jax

from pkg import layers


@jax.jit
def loss(xs):
    return layers.norm(xs) + layers.step(xs)
'''


def test_a_module_passing_a_seed_on_is_reduced_and_passes_it_on(project, analyse_reduced):
    """`train.py` traces `layers.norm`, which `layers.py` only imports: the seed goes on to
    `helpers.py` from the kept imports, while the function nothing names is left out of the
    analysed text (it used to keep the whole module), and appending another reuses the result."""
    from dataclasses import replace

    from jaxloopfix import api

    layers = project / "pkg" / "layers.py"
    layers.write_text(REEXPORTING)
    (project / "pkg" / "train.py").write_text(TRAIN)
    settings = api.project_settings(layers, REEXPORTING, Settings())
    assert {seed.name for seed in settings.site.seeds} == {"norm", "step"}
    found = scan(REEXPORTING, seeds=frozenset({"norm", "step"}), project_roots=settings.site.roots)
    reduced = found.reduce(REEXPORTING)
    assert reduced is not None and "def describe" not in reduced.text and "import norm" in reduced.text
    fast = engine.lint_module(REEXPORTING, str(layers), settings)
    slow = engine.lint_module(REEXPORTING, str(layers), settings, prefilter=False)
    assert (fast.diagnostics, fast.links) == (slow.diagnostics, slow.links)
    assert ("pkg.helpers", "norm") in {(trace.module, trace.name) for trace in fast.links.external}
    without = replace(settings, site=replace(settings.site, seeds=()))
    assert engine.lint_module(REEXPORTING, str(layers), without).links != fast.links
    whole = _check("pkg")
    assert [d["traced_reason"] for d in whole] == ["`norm` is traced: called from traced function `step` on line 8 of pkg/layers.py"]
    layers.write_text(REEXPORTING + "\n\ndef added(values):\n    return [v for v in values]\n")
    assert _check("pkg/helpers.py") == _check("--no-cache", "pkg/helpers.py") == whole
