"""A body whose only work is a gather (`element = parent[element]`, an array indexed by an
array) does array work each step: the loop is reported, and its fix, run on JAX, computes what
the loop does (pointer jumping in a union-find forest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RECALL = Path(__file__).resolve().parent.parent / "fixtures" / "recall"


def test_the_rewrite_of_a_gather_loop_computes_the_same(tmp_path: Path) -> None:
    source = (RECALL / "gather_per_step.py").read_text(encoding="utf-8")
    fixed, _, count = apply_fixes(source, "m.py", Settings(), unsafe=True)
    assert count == 1 and "lax.scan" in fixed
    (tmp_path / "a.py").write_text(source, encoding="utf-8")
    (tmp_path / "b.py").write_text(fixed, encoding="utf-8")
    parent = jnp.array([0, 0, 1, 2, 3, 4, 5, 6, 7, 9, 9, 10])  # a chain 8 -> ... -> 0 and a short tree at 9
    element = jnp.arange(12)
    expected = load_module(tmp_path / "a.py", "gather_a").find_roots(parent, element)
    actual = load_module(tmp_path / "b.py", "gather_b").find_roots(parent, element)
    assert jnp.array_equal(expected, actual)
    assert expected.tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1, 9, 9, 9]  # seven hops from each point
