"""Loops over literal lists of numbers (`planner._numeric_steps`): judged by what the numbers do."""

from __future__ import annotations

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

H = "import jax\nimport jax.numpy as jnp\n\nCOEFFS = [1.0, -0.5, 0.25, -0.125, 0.0625, -0.03125]\n\n"


def _loops(body: str):
    source = H + "@jax.jit\ndef f(x, w):\n" + body
    return [d for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")]


@pytest.mark.parametrize("body", [
    # the numbers are the terms of a series: each step is arithmetic with one of them
    "    acc = jnp.zeros_like(x)\n    for c in COEFFS:\n        acc = acc * x + c\n    return acc\n",
    "    acc = jnp.zeros_like(x)\n    for i in range(1, len(COEFFS)):\n        acc = acc * x + COEFFS[i]\n    return acc\n",
])
def test_a_series_over_literal_coefficients_is_reported_without_a_fix(body: str) -> None:
    found = _loops(body)
    assert len(found) == 1 and found[0].fix is None and "list of numbers" in found[0].no_fix_reason


@pytest.mark.parametrize("body", [
    # each number is a setting the step needs as a Python value: a different computation per step
    "    outs = []\n    for s in [2, 3, 4, 5, 6]:\n        outs.append(jnp.mean(x[::s]))\n    return outs\n",
    "    total = 0.0\n    for k in [3, 5, 7, 9, 11]:\n        total = total + jnp.sum(x[:k])\n    return total\n",
    "    outs = []\n    for n in (2, 4, 8, 16, 32):\n        outs.append(x.reshape(n, -1).sum())\n    return outs\n",
    # three numbers: a few static steps
    "    acc = jnp.zeros_like(x)\n    for c in (0.5, -1.0, 2.0):\n        acc = acc * x + c\n    return acc\n",
])
def test_numbers_used_as_settings_or_few_stay_clean(body: str) -> None:
    assert _loops(body) == []
