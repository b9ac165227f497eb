"""Linear recurrences (`h = a * h + b`) rewritten as `lax.associative_scan`, run on JAX.

Every function of `fixtures/recurrences/forms.py` is fixed, and the fixed module is run
against the original on the fixture's inputs: values and gradients, float32 and float64, two
trip counts. `associative_*` functions must get the associative form; the `scan_*` traps
must not (they get a `lax.scan` or no fix).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import libcst as cst
import numpy as np
import pytest

from fixture_tools import load_module
from jaxloopfix.analysis.linear_recurrence import ONE, ZERO, affine_parts
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text

FORMS = Path(__file__).resolve().parent.parent / "fixtures" / "recurrences" / "forms.py"


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory):
    text = FORMS.read_text(encoding="utf-8")
    fixed, _, _ = apply_fixes(text, str(FORMS), Settings(), unsafe=True)
    folder = tmp_path_factory.mktemp("recurrences")
    (folder / "forms_fixed.py").write_text(fixed, encoding="utf-8")
    original = load_module(FORMS, "recurrence_forms_original")
    rewritten = load_module(folder / "forms_fixed.py", "recurrence_forms_fixed")
    return original, rewritten, fixed


def _function_source(fixed: str, name: str) -> str:
    module = cst.parse_module(fixed)
    node = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)
    return module.code_for_node(node)


NAMES = [name for name in load_module(FORMS, "recurrence_forms_names").INPUTS]


@pytest.mark.parametrize("name", NAMES)
def test_form_chosen(modules, name: str) -> None:
    """Linear recurrences get `lax.associative_scan` (of `jnp.add`/`jnp.multiply` for running sums
    and products); the traps never do, nor (by default) the matrix recurrences."""
    _, _, fixed = modules
    source = _function_source(fixed, name)
    associative = "associative_scan(" in source
    assert associative is name.startswith("associative_"), source


def _loss(function, args):
    out = function(*args)
    return sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(out))


CASES = [(name, x64) for name in NAMES for x64 in ((False, True) if name.startswith("associative_") else (False,))]


@pytest.mark.parametrize(("name", "x64"), CASES, ids=[f"{n}-{'float64' if x else 'float32'}" for n, x in CASES])
def test_fix_runs_equal_to_the_loop(modules, name: str, x64: bool) -> None:
    """Values and gradients of the fixed function match the loop's (reversed and forward loops,
    a trip count per dtype), within a tolerance from the dtype and the trip count: every
    associative rewrite in float32 and float64, the traps' scans in float32."""
    original, rewritten, _ = modules
    with jax.enable_x64(x64):
        for T, B in ((7, 3),) if x64 else ((17, 2),):
            args = tuple(jnp.asarray(a, jnp.float64 if x64 else jnp.float32) for a in original.INPUTS[name](T, B))
            f, g = getattr(original, name), getattr(rewritten, name)
            eps = float(jnp.finfo(jnp.float64 if x64 else jnp.float32).eps)
            tolerance = 50 * eps * T
            for expected, actual in zip(jax.tree_util.tree_leaves(f(*args)), jax.tree_util.tree_leaves(g(*args))):
                assert expected.dtype == actual.dtype and expected.shape == actual.shape
                np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)
            first = [i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.floating) and a.ndim]
            # Each gradient under one `jit`: one compile instead of one per eager operation.
            grads_f = jax.jit(jax.grad(lambda *a: _loss(f, a), argnums=tuple(first)))(*args)
            grads_g = jax.jit(jax.grad(lambda *a: _loss(g, a), argnums=tuple(first)))(*args)
            for expected, actual in zip(grads_f, grads_g):
                np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", ["associative_gae", "associative_ema", "associative_ssm"])
def test_half_precision_rounds_within_the_verifiers_bar(modules, name: str) -> None:
    """In bfloat16 the regrouped arithmetic is judged as `verify` judges it: against the loop run
    in float64, the rewrite's error stays within `REFERENCE_FACTOR` times the loop's own
    (benchmarks/recurrence_precision.py has the table per dtype and trip count)."""
    from jaxloopfix.verify.compare import REFERENCE_FACTOR

    original, rewritten, _ = modules
    with jax.enable_x64(True), jax.disable_jit():
        exact = tuple(np.asarray(a, np.float64) for a in original.INPUTS[name](64, 3))
        reference = jax.tree_util.tree_leaves(getattr(original, name)(*exact))
    args = tuple(jnp.asarray(a, jnp.bfloat16) for a in exact)
    with jax.disable_jit():
        loop = jax.tree_util.tree_leaves(getattr(original, name)(*args))
    fixed = jax.tree_util.tree_leaves(getattr(rewritten, name)(*args))
    for r, l, f in zip(reference, loop, fixed, strict=True):
        assert f.dtype == l.dtype and r.dtype == jnp.float64
        r64 = np.asarray(r, np.float64)
        loop_error = np.abs(np.asarray(l, np.float64) - r64).max()
        fixed_error = np.abs(np.asarray(f, np.float64) - r64).max()
        assert fixed_error <= REFERENCE_FACTOR * loop_error + 1e-3 * np.abs(r64).max()


def test_overflow_of_growing_factors_is_a_difference_verify_reports(modules) -> None:
    """With `|a| > 1` both versions overflow; where the loop's carry becomes inf the composed
    maps give NaN (`inf * 0`), and the comparison `verify` runs says so instead of passing."""
    from jaxloopfix.verify.compare import compare_trees

    original, rewritten, _ = modules
    xs = jnp.abs(jax.random.normal(jax.random.PRNGKey(0), (160, 2))) + 0.5
    gains = jnp.full((160, 2), 2.0)
    with jax.disable_jit():
        loop = original.associative_factored(xs, gains)
    fixed = rewritten.associative_factored(xs, gains)
    assert bool(jnp.isinf(loop).all())
    comparison = compare_trees(loop, fixed)
    assert not comparison.equal and "NaN" in comparison.reason


MATRIX = [name for name in NAMES if name.startswith("matrix_")]


@pytest.mark.slow  # measures every candidate form of every matrix recurrence
def test_matrix_recurrences_compose_by_matrix_products_where_tuned(modules, tmp_path: Path) -> None:
    """`h = A @ h + b` stays a `lax.scan` by default (a product of matrices per composition costs
    O(n^3)); where `--tune` chose the associative form (a form override), the rewrite composes the
    steps by matrix products and runs equal to the loop in float64, forward and reversed, vector
    and matrix carries, values and gradients, with a trip count equal to the state size too."""
    text = FORMS.read_text(encoding="utf-8")
    default = modules[2]
    tuned_settings = Settings(form_overrides=tuple((name, "associative") for name in MATRIX))
    tuned, _, _ = apply_fixes(text, str(FORMS), tuned_settings, unsafe=True)
    for name in MATRIX:
        assert "associative_scan(" not in _function_source(default, name)
        assert "associative_scan(" in _function_source(tuned, name), _function_source(tuned, name)
    (tmp_path / "matrix_fixed.py").write_text(tuned, encoding="utf-8")
    original = load_module(FORMS, "matrix_forms_original")
    rewritten = load_module(tmp_path / "matrix_fixed.py", "matrix_forms_fixed")
    with jax.enable_x64(True), jax.default_matmul_precision("highest"):
        eps = float(jnp.finfo(jnp.float64).eps)
        for name in MATRIX:
            for T, B in ((3, 3), (4, 2)):
                args = tuple(jnp.asarray(a, jnp.float64) for a in original.INPUTS[name](T, B))
                f, g = getattr(original, name), getattr(rewritten, name)
                tolerance = 200 * eps * T
                for expected, actual in zip(jax.tree_util.tree_leaves(f(*args)), jax.tree_util.tree_leaves(g(*args))):
                    assert expected.shape == actual.shape and expected.dtype == actual.dtype
                    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)
                grads_f = jax.grad(lambda *a: _loss(f, a), argnums=(0, 1))(*args)
                grads_g = jax.grad(lambda *a: _loss(g, a), argnums=(0, 1))(*args)
                for expected, actual in zip(grads_f, grads_g):
                    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)


def _affine(text: str, carry: str = "h") -> tuple[str, str] | None:
    found = affine_parts(cst.parse_expression(text), carry, lambda node: cst.Module([]).code_for_node(node))
    return None if found is None else (found.scale, found.shift)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a * h + b", ("a", "b")),
        ("b + a * h", ("a", "b")),
        ("h * a + b", ("a", "b")),
        ("a * (h + c)", ("a", "a * c")),
        ("0.5 * h + x + (x > 0)", ("0.5", "x + (x > 0)")),  # brackets kept where precedence needs them
        ("g * h + (1.0 if flag else 2.0) - x", ("g", "(1.0 if flag else 2.0) - x")),
        ("b - a * h", ("-a", "b")),
        ("h + x", (ONE, "x")),
        ("h * x", ("x", ZERO)),
        ("(h - c) / tau", (f"{ONE} / tau", "(-c) / tau")),
        ("gamma * lam * (1 - done) * h + delta", ("(gamma * lam * (1 - done))", "delta")),
        ("h * h + b", None),
        ("jnp.tanh(a * h) + b", None),
        ("b / h", None),
        ("h ** 2", None),
        ("W @ h + b", None),
    ],
)
def test_affine_parts(text: str, parts: tuple[str, str] | None) -> None:
    assert _affine(text) == parts


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("jnp.maximum(h, x)", ("maximum", "x", 1)),
        ("jnp.minimum(2.0 * x - 1.0, h)", ("minimum", "2.0 * x - 1.0", 0)),
        ("jax.numpy.maximum(h, jnp.sum(x))", ("maximum", "jnp.sum(x)", 1)),
        ("jnp.maximum(0.9 * h, x)", None),  # the carry is scaled first
        ("jnp.maximum(h, h * x)", None),
        ("np.maximum(h, x)", None),  # NumPy's, not a traced operation
        ("jnp.fmax(h, x)", None),
        ("max(h, x)", None),
    ],
)
def test_extremum_part(text: str, found: tuple[str, str, int] | None) -> None:
    """A running maximum or minimum is read from `jnp.maximum`/`jnp.minimum` as the import names
    them, with the carry a bare argument and the other free of it."""
    from jaxloopfix.analysis.linear_recurrence import extremum_part
    from jaxloopfix.analysis.source import ParsedModule

    parsed = ParsedModule(f"import jax\nimport jax.numpy as jnp\nimport numpy as np\nvalue = {text}\n", "m.py")
    statement = parsed.module.body[-1]
    result = extremum_part(statement.body[0].value, "h", parsed)
    assert (None if result is None else (result.operation, parsed.code(result.value), result.position)) == found


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("A @ h + b", ("A", "b")),
        ("b + A[t] @ h", ("A[t]", "b")),
        ("(W * 0.5) @ h - x", ("(W * 0.5)", "-x")),
        ("A @ h", ("A", ZERO)),
        ("h @ A + b", None),  # the carry on the left: not read
        ("A @ h + h", None),
        ("(A @ h) @ B", None),
        ("x - A @ h", None),
        ("A @ jnp.tanh(h) + b", None),
    ],
)
def test_matrix_parts(text: str, parts: tuple[str, str] | None) -> None:
    from jaxloopfix.analysis.linear_recurrence import matrix_parts

    found = matrix_parts(cst.parse_expression(text), "h", lambda node: cst.Module([]).code_for_node(node))
    assert (None if found is None else (found.scale, found.shift)) == parts


def test_message_and_title_name_the_associative_form() -> None:
    text = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def ema(xs):
            h = jnp.zeros_like(xs[0])
            for t in range(xs.shape[0]):
                h = 0.9 * h + xs[t]
            return h
        """
    )
    (found,) = [d for d in lint_text(text, "m.py", Settings()) if d.code == "JLF002"]
    assert found.fix is not None and found.fix.applicability.value == "unsafe"
    assert "`lax.associative_scan`" in found.fix.message and "rounding" in found.fix.message
    scan_only = Settings(linear_recurrences="scan")
    (as_scan,) = [d for d in lint_text(text, "m.py", scan_only) if d.code == "JLF002"]
    assert "associative" not in as_scan.fix.message
    fixed = apply_fixes(text, "m.py", scan_only, unsafe=True)[0]
    assert "lax.scan" in fixed and "associative_scan" not in fixed


def test_a_recurrence_without_per_step_input_is_fixed_as_a_scan_that_runs_equal(tmp_path: Path) -> None:
    """`for _ in range(k): w = w - 0.1 * g` is linear in `w`, but nothing changes from step to
    step except `w`: there is nothing for the parallel form to scan over, so the fix is the
    sequential scan, and it runs equal to the loop (the parallel form once rendered a step
    that did not parse)."""
    text = textwrap.dedent(
        """
        import functools

        import jax


        @functools.partial(jax.jit, static_argnums=2)
        def descend(w, g, steps):
            for _ in range(steps):
                w = w - 0.1 * g
            return w
        """
    )
    (found,) = [d for d in lint_text(text, "m.py", Settings()) if d.code == "JLF002"]
    assert found.fix is not None and "associative" not in found.fix.message
    fixed = apply_fixes(text, "m.py", Settings(), unsafe=True)[0]
    assert "lax.scan" in fixed and "associative_scan" not in fixed
    (tmp_path / "loop.py").write_text(text)
    (tmp_path / "fixed.py").write_text(fixed)
    loop, rewritten = load_module(tmp_path / "loop.py", "no_input_loop"), load_module(tmp_path / "fixed.py", "no_input_fixed")
    w, g = jnp.linspace(-1.0, 1.0, 5), jnp.cos(jnp.arange(5.0))
    np.testing.assert_allclose(np.asarray(rewritten.descend(w, g, 7)), np.asarray(loop.descend(w, g, 7)), rtol=1e-6)
