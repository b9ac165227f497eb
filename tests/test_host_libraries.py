"""NumPy, SciPy and `math` calls that cannot take a tracer, checked against JAX itself."""

from __future__ import annotations

import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxloopfix.analysis.host_libraries import NUMPY_ON_TRACERS, SCIPY_HOST_MODULES, SCIPY_ON_TRACERS, computes_on_host
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text


def _runs_on_a_tracer(func, extra: tuple = ()) -> bool:
    def traced(x):
        func(x, *[x if a is _TRACER else a for a in extra])
        return 0

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jax.jit(traced)(jnp.ones((3, 3)))
    except Exception:  # noqa: BLE001 - raising on a tracer (or on one argument) is the point
        return False
    return True


_TRACER = object()
# Arguments beside the traced array: axes, counts, a float, the tracer again.
EXTRA_ARGUMENTS = [(), (0,), (0, 1), (_TRACER,), (3,), (1.0,)]


def _runs_with_some_arguments(func) -> bool:
    return any(_runs_on_a_tracer(func, extra) for extra in EXTRA_ARGUMENTS)


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
        ("scipy.spatial.cKDTree", True), ("scipy.linalg.expm", True), ("scipy.ndimage.gaussian_filter", True),
        ("scipy.linalg.LinAlgError", False), ("scipy.stats.norm", False), ("scipy", False),
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


@pytest.mark.parametrize("module", sorted(SCIPY_HOST_MODULES - {"cluster"}) + ["cluster.vq", "cluster.hierarchy"])
def test_every_scipy_callable_of_a_host_module_raises_on_a_tracer(module: str) -> None:
    """Each public function and class of the listed SciPy modules, called under `jax.jit` with
    a traced (3, 3) array, alone or beside axes, counts, a float or itself, raises, but for the
    names `SCIPY_ON_TRACERS` lists."""
    import importlib

    mod = importlib.import_module(f"scipy.{module}")
    names = [n for n in getattr(mod, "__all__", dir(mod)) if not n.startswith("_") and callable(getattr(mod, n, None))]
    assert names
    running = {n for n in names if _runs_with_some_arguments(getattr(mod, n))}
    assert running <= SCIPY_ON_TRACERS, sorted(running - SCIPY_ON_TRACERS)
    assert all(computes_on_host(f"scipy.{module}.{n}") for n in names if n not in running)


NEIGHBOURS = '''
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.spatial


@partial(jax.jit, static_argnames=("n", "radius"))
def edges(x, n, radius):
    grid = np.linspace(0.0, 1.0, n)
    tree = scipy.spatial.cKDTree(np.stack([grid, grid**2], axis=1))
    neighbours = tree.query_ball_point(tree.data, r=radius)
    senders = []
    receivers = []
    for i, near in enumerate(neighbours):
        senders.append(np.repeat(i, len(near)))
        receivers.append(near)
    total = jnp.zeros(x.shape[1:])
    for t in range(x.shape[0]):
        total = total + jnp.tanh(x[t])
    return total, np.concatenate(senders), np.concatenate(receivers)
'''


def test_a_loop_over_what_a_host_objects_method_returns_is_left_alone() -> None:
    """`cKDTree(...)` is built on the host (SciPy raises on a tracer), so `query_ball_point`,
    one of its methods, returns host lists: the loop over them builds host edge lists. The loop
    over `x`'s rows beside it is reported."""
    found = [d.location.row for d in lint_text(NEIGHBOURS, "neighbours.py", Settings()) if d.code in ("JLF001", "JLF002")]
    assert found == [21]


@pytest.mark.parametrize(
    ("name", "extra"),
    [("moveaxis", (0, -1)), ("rollaxis", (1,)), ("split", (3,)), ("array_split", (2,)), ("hsplit", (3,)),
     ("vsplit", (3,))],
)
def test_numpy_functions_that_run_on_a_tracer_given_their_arguments_are_known(name: str, extra: tuple) -> None:
    """Called with one array they raise (an argument is missing); with their axes or sections
    they transpose or slice the tracer, so they are not host-only."""
    assert _runs_on_a_tracer(getattr(np, name), extra)
    assert name in NUMPY_ON_TRACERS and not computes_on_host(f"numpy.{name}")
