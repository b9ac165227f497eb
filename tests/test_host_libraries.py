"""NumPy, SciPy and `math` calls that cannot take a tracer, checked against JAX itself."""

from __future__ import annotations

import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxloopfix.analysis.host_libraries import NUMPY_ON_TRACERS, computes_on_host
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text


def _runs_on_a_tracer(func) -> bool:
    def traced(x):
        func(x)
        return 0

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jax.jit(traced)(jnp.ones((3, 3)))
    except Exception:  # noqa: BLE001 - raising on a tracer (or on one argument) is the point
        return False
    return True


def test_every_numpy_function_that_runs_on_a_tracer_is_known() -> None:
    """Called with a traced (3, 3) array under `jax.jit`, the public NumPy functions that do
    not raise are those `NUMPY_ON_TRACERS` lists: every other one is host-only."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = [
            n for n in dir(np)
            if not n.startswith("_") and callable(getattr(np, n, None)) and not inspect.isclass(getattr(np, n))
        ]
    running = {n for n in names if _runs_on_a_tracer(getattr(np, n))}
    assert running <= NUMPY_ON_TRACERS, sorted(running - NUMPY_ON_TRACERS)
    assert {"sum", "mean", "reshape"} <= NUMPY_ON_TRACERS and "sin" not in running


@pytest.mark.parametrize(
    ("qualified", "host"),
    [
        ("numpy.sin", True), ("numpy.zeros_like", True), ("numpy.linalg.norm", True), ("math.sqrt", True),
        ("scipy.special.spherical_jn", True), ("numpy.sum", False), ("numpy.reshape", False),
        ("numpy.random.normal", False), ("jax.numpy.sin", False), ("scipy.optimize.minimize", False),
    ],
)
def test_host_only_calls(qualified: str, host: bool) -> None:
    assert computes_on_host(qualified) is host
    if host and qualified.startswith("numpy.") and "." not in qualified[6:]:
        assert not _runs_on_a_tracer(getattr(np, qualified[6:]))


LOOPS = '''
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def f(x, orders):
    table = np.empty((len(orders), 4))
    for i in range(len(orders)):
        table[i] = np.sin(np.arange(4) * orders[i])
    total = jnp.zeros(x.shape[1:])
    for t in range(x.shape[0]):
        total = total + np.sum(x[t])
    return total + jnp.asarray(table).sum()
'''


def test_a_step_calling_only_host_numpy_is_left_alone_and_one_reducing_a_tracer_is_reported() -> None:
    """`np.sin` on static values builds a host table; `np.sum(x[t])` hands the row to the
    tracer's own `sum`, so that loop unrolls traced work."""
    found = [(d.location.row, d.code) for d in lint_text(LOOPS, "loops.py", Settings()) if d.code in ("JLF001", "JLF002")]
    assert found == [(13, found[0][1])]
