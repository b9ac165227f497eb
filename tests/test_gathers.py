"""A body whose only work is a gather (`element = parent[element]`, an array indexed by an
array) does array work each step: the loop is reported, and its fix, run on JAX, computes what
the loop does (pointer jumping in a union-find forest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_tools import original_and_fixed

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RECALL = Path(__file__).resolve().parent.parent / "fixtures" / "recall"


def test_the_rewrite_of_a_gather_loop_computes_the_same(tmp_path: Path) -> None:
    original, fixed = original_and_fixed((RECALL / "gather_per_step.py").read_text(encoding="utf-8"), tmp_path, "gather")
    parent = jnp.array([0, 0, 1, 2, 3, 4, 5, 6, 7, 9, 9, 10])  # a chain 8 -> ... -> 0 and a short tree at 9
    element = jnp.arange(12)
    expected, actual = original.find_roots(parent, element), fixed.find_roots(parent, element)
    assert jnp.array_equal(expected, actual)
    assert expected.tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1, 9, 9, 9]  # seven hops from each point
