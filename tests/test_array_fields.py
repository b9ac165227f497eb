"""Attributes of the instance that hold arrays (`analysis/array_fields.py`): a range as long as
one, or a comprehension over its rows, steps over array data and is reported; the rewrite
computes what the loop computes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fixture_tools import original_and_fixed
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RECALL = Path(__file__).resolve().parent.parent / "fixtures" / "recall"


def _loops(source: str):
    return [d for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")]


def test_rewrite_of_a_loop_over_an_array_field_computes_the_same(tmp_path: Path) -> None:
    original, fixed = original_and_fixed((RECALL / "array_field_range.py").read_text(encoding="utf-8"), tmp_path, "array_field")
    coefficients, w = jnp.array([0.5, -1.0, 2.0, 0.25, 3.0, -0.5]), jnp.linspace(-1.0, 1.0, 7)
    expected, actual = original.evaluate(coefficients, w), fixed.evaluate(coefficients, w)
    assert jnp.allclose(expected, actual, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "declaration, stored",
    [
        ("    weights: jax.Array\n", "weights"),  # declared in the class body
        ("", "jnp.linspace(0.0, 1.0, n)"),  # stored by the constructor
    ],
)
def test_field_evidence_from_the_declaration_or_the_constructor(declaration: str, stored: str) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\nclass Mix:\n" + declaration
        + f"    def __init__(self, weights, n=8):\n        self.weights = {stored}\n\n"
        "    def __call__(self, x):\n        for i in range(self.weights.shape[0]):\n"
        "            x = jnp.tanh(x * self.weights[i])\n        return x\n\n"
        "@jax.jit\ndef run(w, x):\n    return Mix(w)(x)\n"
    )
    assert [d.code for d in _loops(source)] == ["JLF002"]


@pytest.mark.parametrize(
    "declaration",
    [
        "    weights: jax.Array = eqx.field(static=True)\n",  # declared static: a Python value under the trace
        "    weights: tuple\n",  # declared a tuple
    ],
)
def test_static_or_python_fields_are_not_array_evidence(declaration: str) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\nimport equinox as eqx\n\nclass Mix(eqx.Module):\n" + declaration
        + "\n    def __call__(self, x):\n        for i in range(len(self.weights)):\n"
        "            x = jnp.tanh(x * self.weights[i])\n        return x\n\n"
        "@jax.jit\ndef run(x):\n    return Mix((1.0, 2.0, 3.0, 4.0, 5.0))(x)\n"
    )
    assert _loops(source) == []


def test_a_field_also_set_to_a_python_value_is_not_an_array() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\nclass Mix:\n    def __init__(self, weights, host=False):\n"
        "        if host:\n            self.weights = list(weights)\n        else:\n            self.weights = jnp.asarray(weights)\n\n"
        "    def __call__(self, x):\n        for i in range(len(self.weights)):\n"
        "            x = jnp.tanh(x * self.weights[i])\n        return x\n\n"
        "@jax.jit\ndef run(w, x):\n    return Mix(w)(x)\n"
    )
    assert _loops(source) == []


def test_explain_shows_the_loop_over_a_field_reported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "m.py").write_text((RECALL / "array_field_range.py").read_text(encoding="utf-8"), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", "--explain", "m.py"], capture_output=True, text=True, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "stores: `total` array" in out.stdout and "reported: JLF002" in out.stdout


def test_a_subclass_reads_the_array_fields_its_base_declares() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\nimport equinox as eqx\n\nclass Base(eqx.Module):\n    taps: jax.Array\n\n"
        "class Filter(Base):\n    def __call__(self, x):\n        for j in range(len(self.taps)):\n"
        "            x = x + self.taps[j] * jnp.roll(x, 1)\n        return x\n\n"
        "@jax.jit\ndef run(taps, x):\n    return Filter(taps)(x)\n"
    )
    assert [d.code for d in _loops(source)] == ["JLF002"]
    redeclared = source.replace("class Filter(Base):\n", "class Filter(Base):\n    taps: tuple\n\n")
    assert _loops(redeclared) == []


def test_a_declaration_the_constructor_contradicts_is_not_array_evidence() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\nclass Mix:\n    weights: jax.Array\n\n"
        "    def __init__(self, weights):\n        self.weights = [jnp.asarray(w) for w in weights]\n\n"
        "    def __call__(self, x):\n        for i in range(len(self.weights)):\n"
        "            x = jnp.tanh(x * self.weights[i])\n        return x\n\n"
        "@jax.jit\ndef run(x):\n    return Mix([1.0, 2.0, 3.0, 4.0, 5.0])(x)\n"
    )
    assert _loops(source) == []
