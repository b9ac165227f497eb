"""The wrong fixes issue 28 found, in general form: each class of program must not get a safe fix,
and where its unsafe fix is wrong, the fix's message names the cause. Every program is run on JAX,
loop against fix, with x64 off and on (what `check --fix --unsafe-fixes` would write)."""

from __future__ import annotations

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

H = (
    "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"
    "from jaxtyping import Array, Bool, Complex, Float, Float16, Float32, Int8, Int32, Int64, UInt8, UInt64\n\n"
)


def _loop(signature: str, setup: str, body: str, result: str = "h", decorator: str = "@jax.jit") -> str:
    lines = "\n".join("        " + line for line in body.splitlines())
    return f"{H}{decorator}\ndef f({signature}):\n    {setup}\n    for t in range(xs.shape[0]):\n{lines}\n    return {result}\n"


# name -> (source, inputs(x64), the words the fix's message or refusal must contain)
CASES = {
    # Integer reductions widen: int8/uint8 sums give int32/uint32, int32 gives int64 under x64.
    "int8_sum_in_a_temporary": (
        _loop('xs: Int8[Array, "T D"]', "h = jnp.zeros((), jnp.int8)", "s = xs[t].sum()\nh = h + s"),
        lambda x64: (jnp.arange(12, dtype=jnp.int8).reshape(4, 3),), "`int8`",
    ),
    "uint8_product": (
        _loop('xs: UInt8[Array, "T D"]', "h = jnp.ones((), jnp.uint8)", "h = h * xs[t].prod()"),
        lambda x64: (jnp.ones((4, 3), jnp.uint8) * 2,), "`uint8`",
    ),
    "int32_sum_under_x64": (
        _loop('xs: Int32[Array, "T D"]', "h = jnp.zeros((), jnp.int32)", "h = h + xs[t].sum()"),
        lambda x64: (jnp.arange(12, dtype=jnp.int32).reshape(4, 3),), "`int32`",
    ),
    # Functions whose output dtype is not their input's.
    "abs_of_complex_is_real": (
        _loop('xs: Complex[Array, "T D"]', "h = jnp.ones(xs.shape[1:], xs.dtype)", "h = jnp.abs(h * xs[t])"),
        lambda x64: ((jnp.arange(12.0).reshape(4, 3) + 1j).astype(jnp.complex64),), "dtype",
    ),
    "hypot_of_ints_is_float": (
        _loop('xs: Int32[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], jnp.int32)", "h = jnp.hypot(h, xs[t])"),
        lambda x64: (jnp.arange(12, dtype=jnp.int32).reshape(4, 3),), "dtype",
    ),
    "arctan2_of_ints_is_float": (
        _loop('xs: Int32[Array, "T D"]', "h = jnp.ones(xs.shape[1:], jnp.int32)", "h = jnp.arctan2(h, xs[t])"),
        lambda x64: (jnp.arange(12, dtype=jnp.int32).reshape(4, 3),), "dtype",
    ),
    "logaddexp_of_ints_is_float": (
        _loop('xs: Int32[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], jnp.int32)", "h = jnp.logaddexp(h, xs[t])"),
        lambda x64: (jnp.arange(12, dtype=jnp.int32).reshape(4, 3),), "dtype",
    ),
    # jnp.clip's bounds promote the result.
    "clip_bound_promotes": (
        _loop('xs: Float16[Array, "T D"], lo: Float32[Array, "D"]', "h = jnp.zeros(xs.shape[1:], jnp.float16)",
              "h = jnp.clip(h + xs[t], lo, 1.0)"),
        lambda x64: (jnp.ones((4, 3), jnp.float16) / 4, jnp.zeros(3, jnp.float32)), "`float16`",
    ),
    # A weak int times an array of bools is an int.
    "weak_int_times_bools": (
        _loop('xs: Bool[Array, "T D"]', "h = xs[0]", "h = h + xs[t] * 1"),
        lambda x64: (jnp.array([[True, False, True]] * 4),), "`bool`",
    ),
    # int64 + uint64 is float64 under x64.
    "int64_plus_uint64": (
        _loop('xs: UInt64[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], jnp.int64)", "h = h + xs[t]"),
        lambda x64: (jnp.ones((4, 3), jnp.uint64 if x64 else jnp.uint32),), "dtype",
    ),
    # A static argument annotated `float` may be a NumPy scalar, strongly typed.
    "numpy_scalar_for_a_float_argument": (
        _loop('xs: Float32[Array, "T D"], gamma: float', "h = jnp.zeros(xs.shape[1:], jnp.float32)",
              "h = h * gamma + xs[t]", decorator='@partial(jax.jit, static_argnames="gamma")'),
        lambda x64: (jnp.ones((4, 3), jnp.float32), np.float64(0.9)), "dtype",
    ),
    # A carry that starts as a Python float: the loop's first step computes in Python.
    "python_float_carry_rounds_in_python": (
        _loop('xs: Float32[Array, "T"]', "h = 0.1", "h = h * 3.0 + xs[t]"),
        lambda x64: (jnp.full(4, 1e-3, jnp.float32),), "Python (double) precision",
    ),
    # The loop index promotes a low-precision carry in the scan (a Python int in the loop).
    "index_promotes_int8_carry": (
        _loop('xs: Int8[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], jnp.int8)", "h = h + xs[t] + t"),
        lambda x64: (jnp.ones((4, 3), jnp.int8),), "index",
    ),
}
# Programs whose safe fix must stay safe (the proof still proves what it can) and equal.
PROVEN = {
    "float32_recurrence": (
        _loop('xs: Float32[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], jnp.float32)", "h = jnp.tanh(0.5 * h + xs[t])"),
        lambda x64: (jnp.linspace(0, 1, 12, dtype=jnp.float32).reshape(4, 3),),
    ),
    "carry_in_the_inputs_dtype": (
        _loop('xs: Float[Array, "T D"]', "h = jnp.zeros(xs.shape[1:], xs.dtype)", "h = h * 0.9 + jnp.abs(xs[t])"),
        lambda x64: (jnp.linspace(0, 1, 12, dtype=jnp.bfloat16).reshape(4, 3),),
    ),
    "python_zero_carry": (
        _loop('xs: Float32[Array, "T"]', "h = 0.0", "h = h * 0.9 + xs[t]"),
        lambda x64: (jnp.linspace(0, 1, 4, dtype=jnp.float32),),
    ),
    "int8_sum_cast_back": (
        _loop('xs: Int8[Array, "T D"]', "h = jnp.zeros((), jnp.int8)", "h = h + xs[t].sum().astype(h.dtype)"),
        lambda x64: (jnp.arange(12, dtype=jnp.int8).reshape(4, 3),),
    ),
}


@pytest.fixture(params=[False, True], ids=["x64-off", "x64-on"])
def x64(request):
    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", before)


def _run(path, name, inputs):
    try:
        return "ok", load_module(path, name).f(*inputs)
    except Exception as exc:  # noqa: BLE001 - the fix's failure is what is checked
        return "raised", exc


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=0, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_safe_fix_and_a_wrong_fix_names_its_cause(name, x64, tmp_path):
    source, inputs, cause = CASES[name]
    diagnostics = lint_text(source, "t.py", Settings())
    assert len(diagnostics) == 1
    (diagnostic,) = diagnostics
    assert diagnostic.fix is None or diagnostic.fix.applicability.value == "unsafe", diagnostic.fix.message
    said = (diagnostic.no_fix_reason or "") + (diagnostic.fix.message if diagnostic.fix else "")
    assert apply_fixes(source, "t.py", Settings())[2] == 0
    if diagnostic.fix is None:
        assert cause in said, said
        return
    fixed = apply_fixes(source, "t.py", Settings(), unsafe=True)[0]
    (tmp_path / "loop.py").write_text(source)
    (tmp_path / "fix.py").write_text(fixed)
    tag = f"{name}_{x64}"
    status, expected = _run(tmp_path / "loop.py", f"tp_loop_{tag}", inputs(x64))
    assert status == "ok", expected
    status, actual = _run(tmp_path / "fix.py", f"tp_fix_{tag}", inputs(x64))
    if status != "ok" or not _same(expected, actual):
        assert cause in said, (said, actual)


@pytest.mark.parametrize("name", sorted(PROVEN))
def test_proven_carries_keep_a_safe_and_equal_fix(name, x64, tmp_path):
    """The proofs are the scan's: with `linear-recurrences = "scan"` a proven carry's fix is safe
    (a linear recurrence's default, the associative form, regroups the arithmetic: never safe)."""
    source, inputs = PROVEN[name]
    scan = Settings(linear_recurrences="scan")
    (diagnostic,) = lint_text(source, "t.py", scan)
    assert diagnostic.fix is not None and diagnostic.fix.applicability.value == "safe", (
        diagnostic.fix.message if diagnostic.fix else diagnostic.no_fix_reason
    )
    (default,) = lint_text(source, "t.py", Settings())
    assert default.fix is not None and (default.fix.applicability.value == "safe") == (default.fix == diagnostic.fix)
    fixed = apply_fixes(source, "t.py", scan)[0]
    (tmp_path / "loop.py").write_text(source)
    (tmp_path / "fix.py").write_text(fixed)
    tag = f"{name}_{x64}"
    expected = load_module(tmp_path / "loop.py", f"tp_loop_{tag}").f(*inputs(x64))
    actual = load_module(tmp_path / "fix.py", f"tp_fix_{tag}").f(*inputs(x64))
    assert _same(expected, actual) or np.allclose(np.asarray(expected, np.float64), np.asarray(actual, np.float64), rtol=1e-6)
    assert np.asarray(expected).dtype == np.asarray(actual).dtype


MAP_WITH_A_PRODUCT = H + """@jax.jit
def f(W, xs):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(jnp.tanh({product}))
    return jnp.stack(outs)
"""


@pytest.mark.parametrize("product", ["W @ xs[t]", "jnp.dot(W, xs[t])", "jnp.einsum('ij,j->i', W, xs[t])"])
def test_a_batched_matrix_product_is_not_a_safe_vmap(product):
    """Per-step matrix-vector products batched by `jax.vmap` into one matrix product run in TF32 on
    GPUs at the default precision: the fix is unsafe and says why."""
    (diagnostic,) = lint_text(MAP_WITH_A_PRODUCT.format(product=product), "t.py", Settings())
    assert diagnostic.fix is not None and diagnostic.fix.applicability.value == "unsafe"
    assert "TF32" in diagnostic.fix.message and "jax.vmap" in diagnostic.fix.message


def test_a_product_at_highest_precision_stays_a_safe_vmap():
    source = MAP_WITH_A_PRODUCT.format(product="jnp.dot(W, xs[t], precision='highest')")
    (diagnostic,) = lint_text(source, "t.py", Settings())
    assert diagnostic.fix is not None and "TF32" not in diagnostic.fix.message


@pytest.mark.parametrize(
    "loop, words",
    [
        ("for t, x in zip(range(xs.shape[0]), xs):\n        h = h * 0.5 + x * t", "Python range"),
        ("for t in range(xs.shape[0]):\n        get = lambda a, i=t: a[i]\n        h = h * 0.5 + get(xs)", "`t`"),
    ],
)
def test_fixes_that_cannot_work_are_refused(loop, words):
    source = H + f"@jax.jit\ndef f(xs):\n    h = jnp.zeros(xs.shape[1:])\n    {loop}\n    return h\n"
    (diagnostic,) = lint_text(source, "t.py", Settings())
    assert diagnostic.fix is None and words in diagnostic.no_fix_reason, diagnostic.no_fix_reason
