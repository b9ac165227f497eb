"""Compare two pytrees of arrays the way an equivalence check must: structure, shapes, dtypes, then values.

Tolerances depend on the dtype: scan and an unrolled loop reassociate
floating-point work, so values agree to a few ulps times the trip count, not
bit for bit. Integer and boolean leaves must match exactly.

Where the values differ by more than the fixed tolerance, `compare_with_reference` decides
from the numerics instead: both versions are compared with the original run in float64, and
the rewrite passes when its error is within a small multiple of the loop's own error (summation
order in a long dot product moves both by the same few ulps).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

# (rtol, atol) per floating dtype, for computations at highest matmul precision.
TOLERANCES = {
    "float64": (1e-10, 1e-12),
    "float32": (2e-5, 2e-6),
    "bfloat16": (2e-2, 2e-3),
    "float16": (5e-3, 5e-4),
}


@dataclass
class Comparison:
    equal: bool
    reason: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    where: str = ""  # pytree path and index of the largest relative difference

    def to_json(self) -> dict:
        return asdict(self)


def _path(key_path) -> str:
    import jax

    return jax.tree_util.keystr(key_path) or "<root>"


def compare_trees(expected, actual, *, scale: float = 1.0) -> Comparison:
    """Compare `actual` to `expected`; `scale` widens float tolerances (e.g. for gradients)."""
    import jax

    expected_leaves, expected_def = jax.tree_util.tree_flatten_with_path(expected)
    actual_leaves, actual_def = jax.tree_util.tree_flatten_with_path(actual)
    if expected_def != actual_def:
        return Comparison(False, f"different pytree structure: {expected_def} vs {actual_def}")
    result = Comparison(True)
    worst_rel = -1.0
    for (path, e), (_, a) in zip(expected_leaves, actual_leaves):
        e_arr, a_arr = np.asarray(e), np.asarray(a)
        where = _path(path)
        if e_arr.shape != a_arr.shape:
            return Comparison(False, f"{where}: shape {e_arr.shape} vs {a_arr.shape}", where=where)
        if e_arr.dtype != a_arr.dtype:
            return Comparison(False, f"{where}: dtype {e_arr.dtype} vs {a_arr.dtype}", where=where)
        if e_arr.size == 0:
            continue
        if not np.issubdtype(e_arr.dtype, np.inexact):
            diff = e_arr != a_arr
            if diff.any():
                index = tuple(int(i) for i in np.argwhere(diff)[0])
                return Comparison(False, f"{where}{list(index)}: {e_arr[index]} vs {a_arr[index]}", 1.0, 1.0, where)
            continue
        e64, a64 = e_arr.astype(np.float64), a_arr.astype(np.float64)
        if not np.array_equal(np.isnan(e64), np.isnan(a64)):
            return Comparison(False, f"{where}: NaN in different places", float("nan"), float("nan"), where)
        finite = ~np.isnan(e64)
        abs_diff = np.where(finite, np.abs(e64 - a64), 0.0)
        rel_diff = abs_diff / np.maximum(np.abs(e64), np.finfo(np.float64).tiny)
        rtol, atol = TOLERANCES.get(str(e_arr.dtype), (2e-5, 2e-6))
        rtol, atol = rtol * scale, atol * scale
        result.max_abs = max(result.max_abs, float(abs_diff.max()))
        flat = int(np.argmax(np.where(abs_diff > atol, rel_diff, 0.0)))
        index = np.unravel_index(flat, e_arr.shape) if e_arr.shape else ()
        leaf_rel = float(np.where(abs_diff > atol, rel_diff, 0.0).max())
        result.max_rel = max(result.max_rel, leaf_rel)
        if leaf_rel > worst_rel:
            worst_rel = leaf_rel
            result.where = f"{where}{list(int(i) for i in index)}" if index else where
        bad = abs_diff > atol + rtol * np.abs(e64)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            result.equal = False
            result.reason = (
                f"{where}{list(first)}: expected {e_arr[first]!r}, got {a_arr[first]!r} "
                f"(|diff| {abs_diff[first]:.3g}, rtol {rtol:g}, atol {atol:g})"
            )
            result.where = f"{where}{list(first)}"
            return result
    return result


# The rewrite may be this many times further from the float64 reference than the loop is.
REFERENCE_FACTOR = 4.0


@dataclass
class ReferenceErrors:
    """Largest absolute errors of both versions against the float64 reference."""

    loop: float
    rewrite: float


def compare_with_reference(expected, actual, reference) -> tuple[Comparison, ReferenceErrors]:
    """`actual` passes where its error against `reference` is within REFERENCE_FACTOR times
    `expected`'s (plus the fixed tolerance); structure, shapes and dtypes must already agree."""
    import jax

    errors = ReferenceErrors(0.0, 0.0)
    result = Comparison(True)
    leaves = zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(reference))
    for e, a, r in leaves:
        e64, a64, r64 = (np.asarray(x).astype(np.float64) for x in (e, a, r))
        if e64.shape != r64.shape or not np.issubdtype(np.asarray(e).dtype, np.inexact):
            continue
        loop_error, fix_error = np.abs(e64 - r64), np.abs(a64 - r64)
        finite = np.isfinite(r64) & np.isfinite(e64)
        loop_error, fix_error = np.where(finite, loop_error, 0.0), np.where(finite, fix_error, 0.0)
        errors.loop = max(errors.loop, float(loop_error.max(initial=0.0)))
        errors.rewrite = max(errors.rewrite, float(fix_error.max(initial=0.0)))
        rtol, atol = TOLERANCES.get(str(np.asarray(e).dtype), (2e-5, 2e-6))
        # Per leaf: the rewrite's worst error against the loop's worst, relative to the leaf's scale
        # (the loop's error at any one element may be small by chance).
        allowed = REFERENCE_FACTOR * float(loop_error.max(initial=0.0)) + atol + rtol * float(np.abs(r64).max(initial=0.0))
        if float(fix_error.max(initial=0.0)) > allowed:
            first = tuple(int(i) for i in np.unravel_index(int(np.argmax(fix_error)), fix_error.shape))
            result.equal = False
            result.reason = (
                f"{list(first)}: the rewrite is {fix_error[first]:.3g} from the float64 reference, while the "
                f"loop's largest error is {float(loop_error.max(initial=0.0)):.3g}"
            )
            return result, errors
    return result, errors
