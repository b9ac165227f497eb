"""JAX functions that return tuples of arrays (`analysis/tuple_results.py`), checked against
the installed JAX; a loop over one steps over its few items and never gets a scan fix."""

from __future__ import annotations

import importlib

import pytest

from jaxloopfix.analysis.tuple_results import ARRAY_WHEN, TUPLE_LENGTHS, TUPLE_RESULTS
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

M = [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]


def _arguments(name: str) -> tuple[list, dict]:
    """Arguments each function accepts (a symmetric positive definite matrix, vectors, a shape)."""
    m, v, i = jnp.array(M), jnp.arange(1.0, 7.0), jnp.array([1, 4])
    short = name.rsplit(".", 1)[-1]
    special = {
        "lstsq": ([m, v[:3]], {}), "divmod": ([v, 2.0], {}), "unravel_index": ([i, (2, 3)], {}),
        "tril_indices": ([3], {}), "triu_indices": ([3], {}), "diag_indices": ([3], {}),
        "meshgrid": ([v, v], {}), "broadcast_arrays": ([v, v[:1]], {}), "split": ([v, 2], {}),
        "array_split": ([v, 4], {}), "hsplit": ([v, 2], {}), "vsplit": ([m, 3], {}), "dsplit": ([m[None, :, :, None], 1], {}),
        "ix_": ([v, v], {}), "top_k": ([v, 2], {}), "sort_key_val": ([v, v], {}), "histogram2d": ([v, v], {}),
        "histogramdd": ([m], {}), "nonzero": ([v], {}), "unstack": ([m], {}),
        "jax.lax.split": ([v, (2, 4)], {}),
    }
    if name in special:
        return special[name]
    if short in special:
        return special[short]
    if short in ("frexp", "modf", "histogram"):
        return [v], {}
    return [m], {}


def _function(name: str):
    module, _, short = name.rpartition(".")
    return getattr(importlib.import_module(module), short)


@pytest.mark.parametrize("name", sorted(TUPLE_RESULTS))
def test_each_function_returns_a_tuple_or_list_of_arrays(name: str) -> None:
    args, kwargs = _arguments(name)
    result = _function(name)(*args, **kwargs)
    assert isinstance(result, (tuple, list)), (name, type(result))
    if name in TUPLE_LENGTHS:
        assert len(result) == TUPLE_LENGTHS[name], (name, len(result))


@pytest.mark.parametrize("name", sorted(ARRAY_WHEN))
def test_the_argument_that_makes_it_one_array(name: str) -> None:
    args, _ = _arguments(name)
    keyword, position, value = ARRAY_WHEN[name]
    result = _function(name)(*args, **{keyword: eval(value)})  # noqa: S307 - a literal from the table
    assert hasattr(result, "shape") and not isinstance(result, tuple), (name, type(result))
    # The same argument passed by position (the others at their defaults).
    import inspect

    parameters = list(inspect.signature(_function(name)).parameters.values())
    if position is None:
        assert next(p for p in parameters if p.name == keyword).kind is inspect.Parameter.KEYWORD_ONLY
        return
    assert parameters[position].name == keyword, (name, [p.name for p in parameters])
    filled = list(args) + [p.default for p in parameters[len(args):position]] + [eval(value)]  # noqa: S307
    by_position = _function(name)(*filled)
    assert hasattr(by_position, "shape") and not isinstance(by_position, tuple), (name, type(by_position))


def _loops(source: str, settings: Settings | None = None):
    return [d for d in lint_text(source, "m.py", settings or Settings()) if d.code in ("JLF001", "JLF002")]


LOOP = (
    "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(m):\n    total = jnp.zeros(())\n{bind}"
    "    for part in {iterable}:\n        total = total + jnp.sum(part)\n    return total\n"
)


@pytest.mark.parametrize(
    "bind, iterable",
    [("", "jnp.linalg.eigh(m)"), ("    parts = jnp.linalg.svd(m)\n", "parts"), ("", "jnp.divmod(m, 3.0)")],
)
def test_a_loop_over_a_tuple_of_arrays_takes_a_few_steps_and_never_gets_a_scan(bind: str, iterable: str) -> None:
    source = LOOP.format(bind=bind, iterable=iterable)
    assert _loops(source) == []
    reported = _loops(source, Settings(min_trip_count=2))
    assert len(reported) == 1 and reported[0].fix is None and "tuple of" in reported[0].no_fix_reason


@pytest.mark.parametrize("call", ["jnp.linalg.svd(m, compute_uv=False)", "jnp.linalg.svd(m, False, False)",
                                  "jnp.linalg.qr(m, 'r')"])
def test_one_array_when_the_argument_says_so(call: str) -> None:
    source = LOOP.format(bind="", iterable=call)
    assert [d.code for d in _loops(source)] == ["JLF002"]
