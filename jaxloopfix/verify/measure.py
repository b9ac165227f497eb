"""Measure what a loop-to-scan rewrite buys: trace/lower and compile time, program size, run time.

Imported only inside the verify subprocess (it imports jax at module top).
Every number returned is a plain float or int so the worker can send it back
as JSON.

JAX caches traces, lowerings and executables (in memory and, if configured,
on disk), so a second `lower()`/`compile()` of the same function costs almost
nothing. Each measurement therefore clears the in-memory caches first and runs
with the persistent compilation cache switched off; otherwise the second
version measured would look free.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
from jax._src import config as _jax_config

try:  # public home of the jaxpr classes since JAX 0.4.3x; `jax.core` dropped them later
    from jax.extend.core import ClosedJaxpr, Jaxpr
except ImportError:  # pragma: no cover - older JAX
    from jax.core import ClosedJaxpr, Jaxpr

# Keys of `measure()` that `ratios()` divides: timings and sizes.
RATIO_KEYS = ("trace_lower_s", "compile_s", "run_median_s", "jaxpr_eqns", "stablehlo_bytes")
# A larger unroll factor must beat a smaller one by this fraction to be chosen.
UNROLL_NOISE_GUARD = 0.03


def _is_static_scalar(value: Any) -> bool:
    """Python ints/bools/strs usually size loops or pick branches, so they must be static."""
    return isinstance(value, (bool, int, str))


def _static_positions(args: tuple, static_argnums: tuple[int, ...] | None) -> tuple[int, ...]:
    """The positions the caller says are static, plus every Python int/bool/str argument."""
    n = len(args)
    given = {i % n for i in static_argnums or () if -n <= i < n}
    return tuple(sorted(given | {i for i, a in enumerate(args) if _is_static_scalar(a)}))


def _jit(fn: Callable, args: tuple, kwargs: dict, static_argnums: tuple[int, ...] | None) -> Callable:
    """`fn` itself if already jitted (keeps its own static args), else a jit with the static positions."""
    if hasattr(fn, "lower"):
        return fn
    static_argnames = tuple(k for k, v in kwargs.items() if _is_static_scalar(v))
    return jax.jit(fn, static_argnums=_static_positions(args, static_argnums), static_argnames=static_argnames)


def _static_spec(
    jitted: Callable, args: tuple, kwargs: dict, static_argnums: tuple[int, ...] | None
) -> tuple[set[int], set[str], bool]:
    """Static positions and names of this call, and whether buffers are donated.

    A `Compiled` is called with the dynamic arguments only, so the static ones
    must be dropped. `_jit_info` is private; without it fall back to the same
    guess `_jit` makes.
    """
    info = getattr(jitted, "_jit_info", None)
    if info is None:
        return (
            set(_static_positions(args, static_argnums)),
            {k for k, v in kwargs.items() if _is_static_scalar(v)},
            False,
        )
    n = len(args)
    positions = {i % n for i in info.static_argnums if -n <= i < n} if n else set()
    donates = bool(info.donate_argnums or info.donate_argnames)
    return positions, set(info.static_argnames), donates


@contextlib.contextmanager
def _fresh_compilation() -> Iterator[None]:
    """Clear JAX's in-memory caches and keep the on-disk cache out, so timings are of real work.

    JAX decides once per process whether the persistent cache is in use and keeps using it
    after `enable_compilation_cache` is turned off (a user with a cache directory would time
    cache reads), so the decision is reset on the way in and again on the way out."""
    jax.clear_caches()
    state = getattr(_jax_config, "enable_compilation_cache", None)
    with state(False) if state is not None else contextlib.nullcontext():
        _reset_persistent_cache()
        try:
            yield
        finally:
            _reset_persistent_cache()


def _reset_persistent_cache() -> None:
    """Makes JAX decide afresh, at its next compile, whether the persistent cache is in use."""
    try:
        from jax.experimental.compilation_cache import compilation_cache
    except ImportError:  # pragma: no cover - older JAX without the module
        return
    compilation_cache.reset_cache()


def count_eqns(jaxpr: Any) -> int:
    """Equations in `jaxpr` and, recursively, in every sub-jaxpr (scan/cond/while/pjit bodies)."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)  # ClosedJaxpr -> Jaxpr
    total = 0
    for eqn in inner.eqns:
        total += 1
        for value in eqn.params.values():
            total += _count_param(value)
    return total


def _count_param(value: Any) -> int:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return count_eqns(value)
    if isinstance(value, (tuple, list)):  # cond's `branches`, etc.
        return sum(_count_param(v) for v in value)
    return 0


def _trace_and_lower(jitted: Callable, args: tuple, kwargs: dict) -> tuple[Any, int]:
    """Lower `jitted` from a fresh trace, returning the Lowered and the jaxpr's equation count."""
    if hasattr(jitted, "trace"):
        traced = jitted.trace(*args, **kwargs)
        return traced.lower(), count_eqns(traced.jaxpr)
    lowered = jitted.lower(*args, **kwargs)  # older JAX: count from a separate make_jaxpr
    return lowered, count_eqns(jax.make_jaxpr(jitted)(*args, **kwargs))


def _copy_arrays(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda a: a.copy() if isinstance(a, jax.Array) else a, tree)


def measure(
    fn: Callable,
    args: tuple,
    kwargs: dict | None = None,
    *,
    repeats: int = 20,
    static_argnums: tuple[int, ...] | None = None,
) -> dict:
    """Cost of `fn(*args, **kwargs)` under jit: trace+lower s, compile s, jaxpr eqns, StableHLO bytes, median run s.

    A function that is already jitted keeps its own static arguments; any
    other is jitted with `static_argnums` (positions the caller knows must be
    static, e.g. a shape tuple) plus every Python int/bool/str argument.

    Trace+lower and compile are timed once each, from cleared caches. The run
    time is the median of `repeats` calls of the compiled executable after one
    warm-up call, each waited on with `block_until_ready` (JAX dispatches
    asynchronously, so without it only the dispatch is timed).
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    kwargs = dict(kwargs or {})
    jitted = _jit(fn, args, kwargs, static_argnums)
    with _fresh_compilation():
        start = time.perf_counter()
        lowered, eqns = _trace_and_lower(jitted, args, kwargs)
        lowered_at = time.perf_counter()
        compiled = lowered.compile()
        compiled_at = time.perf_counter()
    hlo_bytes = len(lowered.as_text())

    static_pos, static_names, donates = _static_spec(jitted, args, kwargs, static_argnums)
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}

    def call_once() -> float:
        call_args, call_kwargs = (_copy_arrays((dyn_args, dyn_kwargs)) if donates else (dyn_args, dyn_kwargs))
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*call_args, **call_kwargs))
        return time.perf_counter() - t0

    call_once()  # warm-up: first-call allocations, thread pools
    times = [call_once() for _ in range(repeats)]
    return {
        "trace_lower_s": lowered_at - start,
        "compile_s": compiled_at - lowered_at,
        "jaxpr_eqns": int(eqns),
        "stablehlo_bytes": int(hlo_bytes),
        "run_median_s": float(statistics.median(times)),
        "repeats": int(repeats),
    }


def ratios(original: dict, rewritten: dict) -> dict:
    """original / rewritten for each timing and size, so > 1 means the rewrite is faster or smaller.

    A key missing from either side or with a zero denominator maps to None
    (JSON has no infinity).
    """
    out: dict[str, float | None] = {}
    for key in RATIO_KEYS:
        a, b = original.get(key), rewritten.get(key)
        out[key] = float(a) / float(b) if a is not None and b else None
    return out


def choose_unroll(run_medians: dict[int, float], *, noise_guard: float = UNROLL_NOISE_GUARD) -> int:
    """The simplest variant that no other beats by `noise_guard` or more.

    Timing noise of a few percent would otherwise pick a large unroll factor,
    which costs compile time and program size, for no real gain. Simplest: the
    associative form (key 0), then plain scans by unroll factor, then scans with
    hoisted input products (key -k, see `targets.HOISTED_VARIANTS`), whose batched
    products round differently from the loop's.
    """
    if not run_medians:
        raise ValueError("no unroll variants")
    fastest = min(run_medians.values())
    candidates = [k for k, t in run_medians.items() if fastest > (1.0 - noise_guard) * t]
    return min(candidates, key=lambda k: (k < 0, abs(k)))


def tune_unroll(
    versions: dict[int, Callable],
    args: tuple,
    kwargs: dict | None = None,
    *,
    repeats: int = 20,
    noise_guard: float = UNROLL_NOISE_GUARD,
    static_argnums: tuple[int, ...] | None = None,
) -> dict:
    """Measure each `lax.scan(..., unroll=k)` variant and pick k (see `choose_unroll`).

    `gain_vs_1` is run_median(1) / run_median(choice); without a k=1 variant the
    smallest k is the baseline.
    """
    runs: dict[int, dict] = {}
    for k in sorted(versions):
        m = measure(versions[k], args, kwargs, repeats=repeats, static_argnums=static_argnums)
        runs[k] = {"run_median_s": m["run_median_s"], "compile_s": m["compile_s"]}
    choice = choose_unroll({k: r["run_median_s"] for k, r in runs.items()}, noise_guard=noise_guard)
    baseline = 1 if 1 in runs else min(runs)
    chosen_run = runs[choice]["run_median_s"]
    gain = runs[baseline]["run_median_s"] / chosen_run if chosen_run > 0 else None
    return {"choice": choice, "runs": runs, "gain_vs_1": gain}
