"""Every fixture pair: the fix equals the expected file, is idempotent, and computes the same values on JAX."""

from __future__ import annotations

import pytest

from fixture_tools import FIXTURES, fix, fixed_path, load_module, sources
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

FIXABLE = [(code, p) for code in ("JLF001", "JLF002") for p in sources(code)]
IDS = [f"{code}/{p.stem}" for code, p in FIXABLE]


def _diagnostics(path):
    return lint_text(path.read_text(encoding="utf-8"), str(path), Settings())


@pytest.mark.parametrize(("code", "path"), FIXABLE, ids=IDS)
def test_loop_is_reported_with_a_fix(code, path):
    diagnostics = _diagnostics(path)
    assert diagnostics, f"{path.name}: nothing reported"
    assert all(d.code == code for d in diagnostics), [d.code for d in diagnostics]
    assert all(d.fix is not None for d in diagnostics), [d.no_fix_reason for d in diagnostics]
    assert all(d.traced_reason for d in diagnostics)


@pytest.mark.parametrize(("code", "path"), FIXABLE, ids=IDS)
def test_fix_matches_expected_file(code, path):
    expected = fixed_path(path).read_text(encoding="utf-8")
    assert fix(path.read_text(encoding="utf-8"), str(path)) == expected


@pytest.mark.parametrize(("code", "path"), FIXABLE, ids=IDS)
def test_fix_is_idempotent_and_clean(code, path):
    fixed = fixed_path(path).read_text(encoding="utf-8")
    assert fix(fixed, str(path)) == fixed
    assert lint_text(fixed, str(path), Settings()) == []


def _float_leaves_only(tree) -> bool:
    leaves = jax.tree_util.tree_leaves(tree)
    return bool(leaves) and all(
        isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.floating) for leaf in leaves
    )


def _assert_same(expected, actual, what):
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual), what
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
        e, a = np.asarray(e), np.asarray(a)
        assert e.shape == a.shape, f"{what}: shape {e.shape} != {a.shape}"
        assert e.dtype == a.dtype, f"{what}: dtype {e.dtype} != {a.dtype}"
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=2e-6, err_msg=what)


def _bound_and_compiler(before, after, args, kwargs):
    """Both functions with the example's keyword arguments bound, and how to compile a function
    of them: `jax.jit` where the original traces as called (one compile per function and per
    gradient instead of one per eager operation; the fix must keep the function jittable), else
    run as written (Python values read as such)."""
    bound = [lambda *a, f=f: f(*a, **kwargs) for f in (before, after)]
    try:
        jax.jit(bound[0]).trace(*args)
    except Exception:  # noqa: BLE001 - not traceable as called: compare the plain calls
        return *bound, (lambda fn: fn)
    return *bound, jax.jit


@pytest.mark.parametrize(("code", "path"), FIXABLE, ids=IDS)
def test_fixed_code_computes_the_same_values_and_gradients(code, path):
    original = load_module(path, f"fixture_original_{code}_{path.stem}")
    rewritten = load_module(fixed_path(path), f"fixture_fixed_{code}_{path.stem}")
    examples = original.example_inputs()
    assert len(examples) >= 1
    differentiated: set[str] = set()
    for name, args, kwargs in examples:
        before, after, compiled = _bound_and_compiler(getattr(original, name), getattr(rewritten, name), args, kwargs)
        expected = compiled(before)(*args)
        actual = compiled(after)(*args)
        _assert_same(expected, actual, f"{path.name}::{name}")
        # Gradients of a scalar reduction with respect to every float argument, once per
        # function (the values above are compared at every trip count the fixture gives).
        argnums = tuple(i for i, a in enumerate(args) if _float_leaves_only(a))
        if not argnums or not _float_leaves_only(expected) or name in differentiated:
            continue
        differentiated.add(name)

        def gradient(fn):
            def scalar(*a):
                return sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(fn(*a)))
            return compiled(jax.grad(scalar, argnums=argnums))

        try:
            grad_expected = gradient(before)(*args)
        except (TypeError, ValueError):
            continue  # not differentiable as written (e.g. already a gradient with static args)
        grad_actual = gradient(after)(*args)
        _assert_same(grad_expected, grad_actual, f"{path.name}::{name} (gradient)")


@pytest.mark.parametrize("path", sources("ok"), ids=lambda p: p.stem)
def test_correct_code_is_not_flagged(path):
    assert _diagnostics(path) == []


REFUSALS = {
    "attribute_mutation": "attribute",
    "break_in_body": "`break`",
    "closure_captures_index": "closure",
    "continue_in_body": "`continue`",
    "discarded_results": "results are discarded",
    "for_else": "`else:`",
    "growing_carry": "changes shape",
    "object_items": "read as an object (`.value`, which arrays lack)",
    "generator_iterable": "is a generator (`hidden_states` yields)",
    "outer_list_mutation": "DEBUG_LOG",
    "print_in_body": "`print`",
    "return_in_body": "`return`",
    "scalar_init": "starts as the Python value `0.0` and the step makes it an array of shape (D,)",
    "try_in_body": "`try`",
    "with_in_body": "`with`",
}


@pytest.mark.parametrize("path", sources("refuse"), ids=lambda p: p.stem)
def test_unprovable_loops_are_reported_without_a_fix(path):
    diagnostics = _diagnostics(path)
    assert diagnostics, f"{path.name}: the loop should still be reported"
    for diagnostic in diagnostics:
        assert diagnostic.fix is None
        assert diagnostic.no_fix_reason
        assert "(no fix: " in diagnostic.message
    assert any(REFUSALS[path.stem] in d.no_fix_reason for d in diagnostics), [d.no_fix_reason for d in diagnostics]


def test_every_refusal_fixture_has_an_expected_reason():
    assert {p.stem for p in sources("refuse")} == set(REFUSALS)


def test_fixture_directories_exist():
    assert (FIXTURES / "ok").is_dir() and (FIXTURES / "JLF001").is_dir()
