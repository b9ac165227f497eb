"""`verify` judges values beyond its fixed tolerance against a float64 run of the original: a
rewrite as close to the float64 answer as the loop is passes, one further away does not."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxloopfix.verify.compare import compare_trees, compare_with_reference  # noqa: E402
from jaxloopfix.verify.inputs import Case  # noqa: E402
from jaxloopfix.verify.worker import against_reference, check_case  # noqa: E402


def test_an_error_like_the_loops_own_passes_and_a_larger_one_fails():
    reference = np.linspace(1.0, 2.0, 50)
    rng = np.random.default_rng(0)
    loop = (reference + rng.normal(0, 1e-4, 50)).astype(np.float32)
    alike = (reference + rng.normal(0, 1e-4, 50)).astype(np.float32)
    worse = (reference + rng.normal(0, 1e-2, 50)).astype(np.float32)
    assert not compare_trees(loop, alike).equal  # beyond the fixed float32 tolerance
    passed, errors = compare_with_reference(loop, alike, reference)
    assert passed.equal and 0 < errors.loop < 1e-3 and 0 < errors.rewrite < 1e-3
    failed, errors = compare_with_reference(loop, worse, reference)
    assert not failed.equal and "float64 reference" in failed.reason and errors.rewrite > 4 * errors.loop


def _sum_in_order(xs):
    total = jnp.zeros((), xs.dtype)
    for t in range(xs.shape[0]):
        total = total + xs[t]
    return total


def _sum_pairwise(xs):
    return jnp.sum(xs)


def test_reference_run_is_float64_and_judges_summation_order():
    """A sum in loop order and a pairwise sum of 3,000 float32 terms differ beyond the fixed
    tolerance, and both are a few ulps from the float64 sum; a sum 1e-4 off is not."""
    xs = jnp.asarray(np.random.default_rng(1).uniform(0.0, 1.0, 3000).astype(np.float32) * 1e4)
    case = Case("T=3000", (xs,), {})
    loop, pairwise = _sum_in_order(xs), _sum_pairwise(xs)
    fixed = compare_trees(loop, pairwise)
    judged = against_reference(_sum_in_order, case, loop, pairwise, fixed)
    assert judged is not None
    comparison, errors = judged
    assert comparison.equal, comparison.reason
    assert errors["rewrite"] <= errors["loop"] and not jax.config.read("jax_enable_x64")
    off = pairwise * (1 + 1e-4)
    comparison, errors = against_reference(_sum_in_order, case, loop, off, compare_trees(loop, off))
    assert not comparison.equal and errors["rewrite"] > 4 * errors["loop"]


def test_check_case_reports_the_reference_errors():
    """Cancellation: float32 absorbs the ones between +1e8 and -1e8, so the loop is 100 off; a
    rewrite 100 off on the other side is as good, though it differs from the loop by 200."""
    xs = jnp.asarray(np.array([1e8] + [1.0] * 100 + [-1e8], np.float32))

    def mirrored(values):
        exact = np.sum(np.asarray(values, np.float64))
        return jnp.asarray(np.float32(2 * exact - float(_sum_in_order(values))))

    result = check_case(_sum_in_order, mirrored, Case("T=102", (xs,), {}), want_grad=False)
    assert not compare_trees(_sum_in_order(xs), mirrored(xs)).equal
    assert result["outputs"].equal, result["outputs"].reason
    assert result["reference"] == {"loop": 100.0, "rewrite": 100.0}


def _returns_in_order(xs, gains):
    g = jnp.zeros(xs.shape[1:], xs.dtype)
    for t in range(xs.shape[0]):
        g = gains[t] * g + xs[t]
    return g


def _returns_regrouped(xs, gains):
    def compose(earlier, later):
        (c, d), (a, b) = earlier, later
        return a * c, a * d + b

    scale, shift = jax.lax.associative_scan(compose, (gains, xs))
    return scale[-1] * 0.0 + shift[-1]


def test_gradients_beyond_the_fixed_tolerance_are_judged_against_float64():
    """A recurrence with growing factors (|a| up to 8) regrouped as an associative scan: its
    float32 gradient differs from the loop's beyond the fixed tolerance, and is as close to the
    float64 gradient as the loop's own; a gradient 1e-3 off is not."""
    rng = np.random.default_rng(3)
    xs = jnp.asarray(rng.normal(size=(9, 4)).astype(np.float32))
    gains = jnp.asarray(rng.uniform(-8.0, 8.0, (9, 4)).astype(np.float32))
    case = Case("T=9", (xs, gains), {})
    result = check_case(_returns_in_order, _returns_regrouped, case, want_grad=True)
    assert result["gradients"].equal, result["gradients"].reason
    reference = result["gradients_reference"]  # beyond the fixed tolerance: the float64 gradient decided
    assert 0 < reference["rewrite"] <= 4 * reference["loop"]
    assert "gradient error against a float64 reference" in result["gradients"].reason

    def skewed(xs, gains):
        return _returns_regrouped(xs * (1 + 1e-3), gains)

    skewed_result = check_case(_returns_in_order, skewed, case, want_grad=True)
    assert not skewed_result["gradients"].equal
