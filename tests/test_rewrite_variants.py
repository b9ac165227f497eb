"""Loop shapes beyond the fixtures: each is flagged, fixed, and the fix runs equal to the original on JAX."""

from __future__ import annotations

import textwrap

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings, settings_from_table
from jaxloopfix.engine import apply_fixes, lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

HEADER = "import jax\nimport jax.numpy as jnp\n"

CASES = {
    "offset_start_and_stop": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            out = []
            for t in range(2, xs.shape[0]):
                h = h * 0.5 + xs[t]
                out.append(h)
            return jnp.stack(out)
        """,
    "step_two_with_index": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            out = []
            for t in range(0, xs.shape[0], 2):
                h = h * 0.5 + xs[t] * t
                out.append(h)
            return jnp.stack(out), h
        """,
    "reversed_offset": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            out = []
            for t in reversed(range(1, xs.shape[0])):
                h = h * 0.5 + xs[t]
                out.append(h)
            return jnp.stack(out)
        """,
    "descending_to_one_stack_axis1": """
        @jax.jit
        def f(xs):
            T = xs.shape[0]
            h = jnp.zeros(4)
            out = []
            for t in range(T - 1, 0, -1):
                h = h * 0.5 + xs[t] - xs[t - 1]
                out.append(h)
            return jnp.stack(out, axis=1)
        """,
    "axis1_reversed_stack_negative_axis": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(xs.shape[0])
            out = []
            for t in reversed(range(xs.shape[1])):
                h = jnp.tanh(h + xs[:, t])
                out.append(h)
            return jnp.stack(out[::-1], axis=-1)
        """,
    "trailing_axis_ellipsis": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(xs.shape[0])
            out = []
            for t in range(xs.shape[-1]):
                h = jnp.sin(h) + xs[..., t]
                out.append(h)
            return jnp.stack(out)
        """,
    "shape_unpack_and_buffer": """
        @jax.jit
        def f(xs):
            T, D = xs.shape
            h = jnp.zeros(D)
            buf = jnp.zeros((T, D))
            for t in range(T):
                h = h + xs[t]
                buf = buf.at[t].set(h * 2)
            return buf
        """,
    "append_before_update": """
        @jax.jit
        def f(xs):
            h = jnp.ones(4)
            outs = []
            for t in range(xs.shape[0]):
                outs.append(h)
                h = h * 0.9 + xs[t]
            return jnp.stack(outs), h
        """,
    "neighbour_reads": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0] - 1):
                h = h + xs[t + 1] - xs[t]
                outs.append(h * xs[t])
            return jnp.stack(outs)
        """,
    "enumerate_zip_start": """
        @jax.jit
        def f(xs: jax.Array):
            ys = xs[:, :2] * 3
            h = jnp.zeros(4)
            acc = jnp.zeros(2)
            out = []
            for i, (a, b) in enumerate(zip(xs, ys, strict=True), start=1):
                h = h + a / i
                acc = acc + b * i
                out.append(h.sum() + acc.sum())
            return jnp.array(out), acc
        """,
    "enumerate_name_start": """
        FIRST_ROW = 3

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(4)
            out = []
            for i, row in enumerate(xs, start=FIRST_ROW):
                h = h * 0.5 + row / i
                out.append(h)
            return jnp.stack(out), h
        """,
    "two_loops_same_names": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                x_t = xs[t]
                h = h + x_t
                outs.append(h)
            a = jnp.stack(outs)
            g = jnp.zeros(4)
            for t in range(xs.shape[0]):
                x_t = xs[t] * 2
                g = g + x_t * t
            return a, g, h
        """,
    "transitive_method_and_helpers": """
        from functools import partial

        def inner(xs):
            h = jnp.zeros(xs.shape[1])
            for t in range(xs.shape[0]):
                h = h + xs[t]
            return h

        def middle(xs):
            return inner(xs) * 2

        class Model:
            @partial(jax.jit, static_argnums=0)
            def __call__(self, xs):
                return self.helper(xs) + middle(xs)

            def helper(self, xs):
                acc = jnp.zeros(xs.shape[1])
                outs = []
                for x_t in xs:
                    acc = acc + x_t
                    outs.append(acc)
                return jnp.stack(outs).sum(0)

        def f(xs):
            return Model()(xs)
        """,
    "grad_of_loss_with_tuple_carry": """
        @jax.jit
        @jax.grad
        def f(xs):
            state = (jnp.zeros(4), jnp.ones(4))
            for t in range(xs.shape[0]):
                a, b = state
                state = (a + xs[t] * b, b * 0.5)
            return state[0].sum()
        """,
    "nested_layer_loop_inside_step": """
        @jax.jit
        def f(xs):
            Ws = [jnp.eye(4) * 0.5, jnp.eye(4) * 0.25]
            h = jnp.zeros(4)
            hs = []
            for t in range(xs.shape[0]):
                for W in Ws:
                    h = jnp.tanh(W @ h + xs[t])
                hs.append(h)
            return jnp.stack(hs)
        """,
    # Carries whose dtype and shape after one step are proven: safe fixes.
    "proven_offset_range": """
        from jaxtyping import Array, Float

        @jax.jit
        def f(xs: Float[Array, "T D"]):
            h = jnp.zeros(xs.shape[1:])
            out = []
            for t in range(2, xs.shape[0]):
                h = jnp.tanh(h * 0.5 + xs[t])
                out.append(h)
            return jnp.stack(out), h
        """,
    "proven_reversed_with_buffer": """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros_like(xs[0], dtype=float)
            buf = jnp.zeros(xs.shape)
            for t in reversed(range(xs.shape[0])):
                h = jnp.maximum(h * 0.9, xs[t].astype(h.dtype))
                buf = buf.at[t].set(h - xs[t])
            return buf
        """,
    "static_length_no_xs": """
        from functools import partial

        @partial(jax.jit, static_argnames=("n",))
        def f(xs: jax.Array, n=9):
            v = xs[0]
            for _ in range(n):
                v = v / jnp.linalg.norm(v) + 0.1
            return v
        """,
    # The finisher rebinds the list's name, and the stacked array is used after it.
    "rebinding_stack_then_used": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h * 0.5 + xs[t])
                outs.append(h)
            outs = jnp.stack(outs)
            outs = outs.at[:, :2].multiply(2.0)
            return outs, h
        """,
    "rebinding_stack_axis1": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                outs.append(h * 2.0)
            outs = jnp.stack(outs, axis=1)
            return outs
        """,
    "rebinding_reversed_then_array": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in reversed(range(xs.shape[0])):
                h = h * 0.9 + xs[t]
                outs.append(h)
            outs = outs[::-1]
            outs = jnp.array(outs)
            return outs.sum(axis=0), outs
        """,
    "rebinding_forward_then_reversed": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                h = h * 0.9 + xs[t]
                outs.append(h)
            outs = jnp.stack(outs[::-1])
            return outs
        """,
}

X = (jnp.arange(24.0).reshape(6, 4) / 10.0, jnp.sin(jnp.arange(35.0)).reshape(7, 5)[:, :4])


# Cases whose fix is safe: every carry provably keeps its dtype and shape. The others combine the
# carry with arrays of unknown shape (`jnp.zeros(4) * 0.5 + xs[t]` broadcasts if `xs` is 3-d), so
# their fixes are unsafe and say so.
SAFE = {"proven_offset_range", "proven_reversed_with_buffer"}
# Cases whose fix is unsafe also because the index is used as a value (a traced int32 in the scan).
UNSAFE = {"step_two_with_index", "enumerate_zip_start", "enumerate_name_start", "two_loops_same_names"}


def _load_pair(tmp_path, source: str, fixed: str, label: str):
    """The original and the fixed source, each imported as a module."""
    (tmp_path / "original.py").write_text(source)
    (tmp_path / "fixed.py").write_text(fixed)
    return load_module(tmp_path / "original.py", f"{label}_original"), load_module(tmp_path / "fixed.py", f"{label}_fixed")


def _assert_equal_on_jax(original, rewritten) -> None:
    """Same pytree, values and gradients of sum(sin(outputs)) for `f` of both modules on one 7x4 input."""
    x = jnp.sin(jnp.arange(28.0)).reshape(7, 4)
    expected, actual = original.f(x), rewritten.f(x)
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual)
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=2e-5, atol=2e-6)
    total = lambda out: sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(out))  # noqa: E731
    grad = lambda module: jax.grad(lambda v: total(module.f(v)))(x)  # noqa: E731
    np.testing.assert_allclose(np.asarray(grad(rewritten)), np.asarray(grad(original)), rtol=2e-5, atol=2e-6)


def _run(source: str):
    return lint_text(source, "case.py", Settings()), apply_fixes(source, "case.py", Settings(), unsafe=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_variant_is_flagged_and_fixed_equal_on_jax(name, tmp_path):
    source = HEADER + textwrap.dedent(CASES[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    assert diagnostics and all(d.fix is not None for d in diagnostics), [d.no_fix_reason for d in diagnostics]
    applicability = {d.fix.applicability.value for d in diagnostics}
    assert applicability == ({"safe"} if name in SAFE else {"unsafe"}), [d.fix.message for d in diagnostics]
    for diagnostic in diagnostics:
        if diagnostic.fix.applicability.value == "unsafe":
            message = diagnostic.fix.message
            assert "keeps its dtype and shape after one step" in message or "used as a value" in message, message
    if name in UNSAFE:
        assert any("used as a value" in d.fix.message for d in diagnostics)
    assert count == len(diagnostics)
    assert remaining == []
    assert apply_fixes(fixed, "case.py", Settings(), unsafe=True)[0] == fixed  # idempotent
    original, rewritten = _load_pair(tmp_path, source, fixed, f"variant_{name}")
    for x in X:
        expected, actual = original.f(x), rewritten.f(x)
        assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual)
        for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
            assert np.shape(e) == np.shape(a)
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=2e-5, atol=2e-6)


TRAPS = {
    "layers_and_containers": """
        @jax.jit
        def f(params, x, n):
            for W, b in params:
                x = jnp.tanh(x @ W + b)
            for k, v in params_dict().items():
                x = x + v
            for i in range(3):
                x = x * 2
            for i in range(n):
                x = x + 1
            for leaf in jax.tree_util.tree_leaves(params):
                x = x + leaf.sum()
            for size in (32, 64):
                x = x[:size]
            for i in range(x.ndim):
                x = x.sum(i, keepdims=True)
            for chunk in jnp.split(x, 4):
                x = x + chunk
            return x

        def params_dict():
            return {}
        """,
    "other_jits_and_host_code": """
        import numba
        from numba import jit as njit

        @numba.jit
        def g(xs):
            h = 0.0
            for t in range(xs.shape[0]):
                h = h + xs[t]
            return h

        @njit(nopython=True)
        def g2(xs):
            out = []
            for t in range(xs.shape[0]):
                out.append(xs[t])
            return out

        def host(xs):
            h = jnp.zeros(3)
            outs = []
            for t in range(xs.shape[0]):
                h = h + xs[t]
                outs.append(h)
            return jnp.stack(outs)
        """,
    "indexed_layer_lists": """
        NUM = 12

        @jax.jit
        def f(params, x):
            for i in range(len(params["layers"])):
                x = params["layers"][i]["W"] @ x
            for i in range(NUM):
                x = params[i]["W"] @ x
            for i in range(NUM):
                W, b = params[i]
                x = W @ x + b
            return x
        """,
    "loop_around_scan": """
        @jax.jit
        def f(h0, xs, num_layers: int = 12):
            for layer in range(num_layers):
                h, xs = jax.lax.scan(lambda c, x: (c + x, c), h0[layer], xs)
            return xs
        """,
}


def test_unannotated_argument_gives_an_unsafe_fix_with_the_reason():
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs, us):
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                h = h + xs[t] * us[t]
            return h
        """
    )
    (diagnostic,) = lint_text(source, "case.py", Settings())
    assert diagnostic.code == "JLF002"
    assert diagnostic.fix is not None and diagnostic.fix.applicability.value == "unsafe"
    assert "`us`" in diagnostic.fix.message and "jax.Array" in diagnostic.fix.message
    assert apply_fixes(source, "case.py", Settings())[2] == 0
    assert apply_fixes(source, "case.py", Settings(), unsafe=True)[2] == 1


REBINDING_REFUSALS = {
    "read_between": ("print(len(outs))\n    outs = jnp.stack(outs)", "is read between the loop"),
    "rebound_in_branch": ("if xs.shape[0] > 2:\n        outs = jnp.stack(outs)", "is reassigned outside the loop"),
    "rebound_by_other_call": ("outs = jnp.concatenate(outs)", "other than as `jnp.stack(outs)`"),
}


@pytest.mark.parametrize("name", sorted(REBINDING_REFUSALS))
def test_rebinding_finisher_refuses_what_it_cannot_prove(name):
    after, reason = REBINDING_REFUSALS[name]
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                outs.append(h)
            AFTER
            return outs
        """
    ).replace("AFTER", after)
    (diagnostic,) = lint_text(source, "case.py", Settings())
    assert diagnostic.fix is None and reason in (diagnostic.no_fix_reason or ""), diagnostic.no_fix_reason


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_trap_is_not_flagged(name):
    source = HEADER + textwrap.dedent(TRAPS[name])
    # Traps for the loop rules; `range(n)` with a traced `n` is JLF003's (a real error), not theirs.
    loop_rules = settings_from_table({"select": ["JLF001", "JLF002"]}, None)
    assert lint_text(source, "trap.py", loop_rules) == []


# Carries that start as Python scalars. `lax.scan` casts a weakly typed initial value to the
# dtype of the carry its step returns: equal to the loop when every step keeps a 0-d array.
SCALAR_CARRIES = {
    # Proven: a float32 0-d value from the first step on, so the fix is safe.
    "discounted_return_safe": ("safe", """
        from jaxtyping import Array, Float32

        @jax.jit
        def f(xs: Float32[Array, "T D"]):
            ret = 0.0
            out = []
            for t in reversed(range(xs.shape[0])):
                ret = jnp.mean(xs[t]) + 0.9 * ret
                out.append(ret)
            return jnp.stack(out[::-1]), ret
        """),
    # The dtype of `jnp.sum(xs[t])` is not proven (`xs` unannotated): unsafe, and says why.
    "int_zero_total_unsafe": ("unsafe", """
        @jax.jit
        def f(xs):
            total = 0
            for t in range(xs.shape[0]):
                total = total + jnp.sum(xs[t]) * 0.5
            return total
        """),
    "running_max_unsafe": ("unsafe", """
        @jax.jit
        def f(xs):
            best = -1.0
            for t in range(xs.shape[0]):
                best = jnp.maximum(best, jnp.max(xs[t]))
            return best
        """),
}


@pytest.mark.parametrize("name", sorted(SCALAR_CARRIES))
def test_python_scalar_carry_is_fixed_and_runs_equal(name, tmp_path):
    pytest.importorskip("jaxtyping")
    kind, body = SCALAR_CARRIES[name]
    source = HEADER + textwrap.dedent(body)
    # The proofs are the scan's; a linear recurrence's default form is checked in
    # tests/test_linear_recurrence.py and the differential tests.
    scan = Settings(linear_recurrences="scan")
    diagnostics = lint_text(source, "case.py", scan)
    fixed, remaining, count = apply_fixes(source, "case.py", scan, unsafe=True)
    assert [d.fix.applicability.value if d.fix else None for d in diagnostics] == [kind], [
        d.no_fix_reason for d in diagnostics
    ]
    if kind == "unsafe":
        assert "starts as the Python value" in diagnostics[0].fix.message
    assert count == 1 and remaining == []
    original, rewritten = _load_pair(tmp_path, source, fixed, f"scalar_{name}")
    for x in X:
        for e, a in zip(jax.tree_util.tree_leaves(original.f(x)), jax.tree_util.tree_leaves(rewritten.f(x)), strict=True):
            assert np.shape(e) == np.shape(a) and np.asarray(e).dtype == np.asarray(a).dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=2e-5, atol=2e-6)


SCALAR_REFUSALS = {
    # A Python counter the body tests: a scan would trace it.
    "counter_in_test": ("""
        @jax.jit
        def f(xs):
            n = 0
            for t in range(xs.shape[0]):
                if n < 3:
                    xs = xs.at[t].set(0.0)
                n = n + 1
            return xs
        """, "uses it as a Python value (`n < 3`)"),
    # The step broadcasts the scalar to a row: no scan carry can hold both.
    "broadcast_to_row": ("""
        from jaxtyping import Array, Float32

        @jax.jit
        def f(xs: Float32[Array, "T D"]):
            acc = 0.0
            for t in range(xs.shape[0]):
                acc = acc * 0.5 + xs[t]
            return acc
        """, "makes it an array of shape (D,)"),
}


@pytest.mark.parametrize("name", sorted(SCALAR_REFUSALS))
def test_python_scalar_carry_refusals_say_why(name):
    pytest.importorskip("jaxtyping")
    body, reason = SCALAR_REFUSALS[name]
    (diagnostic,) = lint_text(HEADER + textwrap.dedent(body), "case.py", Settings())
    assert diagnostic.fix is None and reason in (diagnostic.no_fix_reason or ""), diagnostic.no_fix_reason


# A static branch on the loop index whose branches only assign: the step computes both and
# `jnp.where` keeps one (JAX clamps the read past the end in the branch not kept).
INDEX_SELECTS = {
    "gae_last_step": """
        @jax.jit
        def f(xs):
            values, rewards = xs[:, 0], xs[:, 1]
            last_value = xs[-1, 2]
            T = rewards.shape[0]
            adv = jnp.zeros(())
            out = []
            for t in reversed(range(T)):
                if t == T - 1:
                    next_v = last_value
                else:
                    next_v = values[t + 1]
                adv = rewards[t] + 0.9 * next_v - values[t] + 0.9 * adv
                out.append(adv)
            return jnp.stack(out[::-1])
        """,
    "first_step_default_without_else": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                prev = xs[t - 1]
                if t == 0:
                    prev = xs[0] * 0.0
                h = h * 0.5 + xs[t] - prev
            return h
        """,
    # No `else:`: the carry keeps its value on the last step. `actions[t, :]` slices, but no bound is traced.
    "carry_kept_on_last_step": """
        @jax.jit
        def f(xs):
            horizon = xs.shape[0]
            actions = jnp.zeros((horizon, 4))
            z_t = xs[0]
            for t in range(horizon):
                actions = actions.at[t, :].set(jnp.tanh(z_t * 0.5))
                if t < horizon - 1:
                    z_t = jnp.sin(z_t + actions[t, :] + xs[t + 1])
            return actions, z_t
        """,
}


@pytest.mark.parametrize("name", sorted(INDEX_SELECTS))
def test_static_index_branch_becomes_where_and_runs_equal(name, tmp_path):
    source = HEADER + textwrap.dedent(INDEX_SELECTS[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None, [d.no_fix_reason for d in diagnostics]
    assert "becomes `jnp.where`" in diagnostics[0].fix.message
    assert count == 1 and remaining == [] and "jnp.where(t " in fixed
    original, rewritten = _load_pair(tmp_path, source, fixed, f"select_{name}")
    _assert_equal_on_jax(original, rewritten)


def test_index_branch_that_is_not_a_selection_is_refused():
    # `elif`, and branches that assign different names, stay refused with the reason.
    for branch in (
        "if t == 0:\n            v = xs[0]\n        elif t == 1:\n            v = xs[1]\n        else:\n            v = xs[t]",
        "if t == 0:\n            v = xs[0]\n        else:\n            u = xs[t]\n            v = u",
        # A slice bound read by the index in any branch value, even after one that computes.
        "if t == 0:\n            v = jnp.tanh(xs[0])\n        else:\n            v = xs[t:t + 1].sum(0)",
    ):
        source = HEADER + textwrap.dedent(
            """
            @jax.jit
            def f(xs):
                h = jnp.zeros(4)
                for t in range(xs.shape[0]):
                    BRANCH
                    h = h * 0.5 + v
                return h
            """
        ).replace("BRANCH", branch)
        (diagnostic,) = lint_text(source, "case.py", Settings())
        assert diagnostic.fix is None and "control flow" in (diagnostic.no_fix_reason or ""), diagnostic.no_fix_reason


TREE_MAP_READS = {
    "dict_of_sequences": """
        @jax.jit
        def f(xs):
            inputs = {"a": xs, "b": jnp.cos(xs)}
            h = jnp.zeros(4)
            outs = []
            for t in range(xs.shape[0]):
                step_in = jax.tree.map(lambda x: x[t], inputs)
                h = jnp.tanh(h * step_in["a"] + step_in["b"])
                outs.append(h)
            return jnp.stack(outs)
        """,
    "leaf_function_reads_a_step_value": """
        @jax.jit
        def f(xs):
            pair = (xs, xs * 2.0)
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                scale = jnp.sum(h)
                a, b = jax.tree_util.tree_map(lambda x: x[t] * scale, pair)
                h = jnp.sin(h + a - b)
            return h
        """,
}


@pytest.mark.parametrize("name", sorted(TREE_MAP_READS))
def test_tree_map_lambda_reading_the_step_is_fixed_and_runs_equal(name, tmp_path):
    source = HEADER + textwrap.dedent(TREE_MAP_READS[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None, [d.no_fix_reason for d in diagnostics]
    assert count == 1 and remaining == [] and "lax.scan(" in fixed and "jnp.arange(" in fixed
    original, rewritten = _load_pair(tmp_path, source, fixed, f"treemap_{name}")
    _assert_equal_on_jax(original, rewritten)


@pytest.mark.parametrize(
    "line, reason",
    [
        # Kept for later: it may run after the step, when `t` has moved on.
        ("pick = lambda x: x[t]\n        v = pick(xs)", "closure in the body captures the loop variable `t`"),
        # `map` is lazy: the lambda runs whenever the iterator is consumed.
        ("v = sum(map(lambda x: x[t], [xs]))", "closure in the body captures the loop variable `t`"),
        # A traced bound cannot size a slice.
        ("v = jax.tree.map(lambda x: x[: t + 1].sum(0), xs)", "slice"),
    ],
)
def test_lambdas_that_may_escape_or_need_a_python_index_stay_refused(line, reason):
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                LINE
                h = h * 0.5 + v
            return h
        """
    ).replace("LINE", line)
    diagnostics = lint_text(source, "case.py", Settings())
    assert len(diagnostics) == 1 and diagnostics[0].fix is None
    assert reason in diagnostics[0].no_fix_reason, diagnostics[0].no_fix_reason


KEPT_AS_LIST = {
    "returned": """
        @jax.jit
        def f(xs):
            h = jnp.zeros(4)
            hs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h * 0.5 + xs[t])
                hs.append(h)
            return h, hs
        """,
    "indexed_and_summed": """
        @jax.jit
        def f(xs):
            hs = []
            for x in xs:
                hs.append(jnp.sin(x) * 2.0)
            return hs[-1] + sum(hs) / len(hs)
        """,
    "reversed_range": """
        @jax.jit
        def f(xs):
            acc = jnp.zeros(4)
            outs = []
            for t in reversed(range(xs.shape[0])):
                acc = acc * 0.9 + xs[t]
                outs.append(acc)
            return [o * 1.0 for o in outs], outs[0]
        """,
}


@pytest.mark.parametrize("name", sorted(KEPT_AS_LIST))
def test_list_used_as_a_list_after_the_loop_is_rebuilt_and_runs_equal(name, tmp_path):
    source = HEADER + textwrap.dedent(KEPT_AS_LIST[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    # A comprehension over the per-step list (`[o * 1.0 for o in outs]`) unrolls as many steps:
    # it is reported on its own, without a fix (`per_step_lists`), while the loop fills the list.
    per_step = [d for d in diagnostics if "a list holding one array per step" in d.message]
    diagnostics = [d for d in diagnostics if d not in per_step]
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None, [d.no_fix_reason for d in diagnostics]
    assert "stays a list" in diagnostics[0].fix.message
    assert all(d.fix is None for d in per_step)
    assert count == 1 and remaining == [] and " = list(" in fixed
    assert apply_fixes(fixed, "case.py", Settings(), unsafe=True)[0] == fixed
    original, rewritten = _load_pair(tmp_path, source, fixed, f"aslist_{name}")
    _assert_equal_on_jax(original, rewritten)


def test_list_read_before_the_loop_ends_stays_refused():
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs):
            hs = []
            n = len(hs)
            for x in xs:
                hs.append(jnp.sin(x) + n)
            return hs
        """
    )
    (diagnostic,) = lint_text(source, "case.py", Settings())
    # The read between `hs = []` and the loop: the list is not created just before the loop.
    assert diagnostic.fix is None and "`hs` is not created as a list literal" in diagnostic.no_fix_reason


def test_an_instance_of_a_haiku_module_class_defined_here_is_module_state():
    # `Block` derives from hk.Module in this file: calling an instance per step needs hk.scan.
    source = textwrap.dedent(
        """
        import haiku as hk
        import jax
        import jax.numpy as jnp


        class Block(hk.Module):
            def __call__(self, x):
                return jnp.tanh(hk.Linear(x.shape[-1])(x))


        def forward(x, steps):
            block = Block(name="block")
            outputs = []
            for t in range(steps.shape[0]):
                x = block(x + steps[t])
                outputs.append(x)
            return jnp.stack(outputs)


        model = hk.transform(forward)
        """
    )
    diagnostics = [d for d in lint_text(source, "case.py", Settings()) if d.location.row == 15]
    assert len(diagnostics) == 1 and diagnostics[0].fix is None
    assert "the body calls `block`, which uses Flax/Haiku module state" in diagnostics[0].no_fix_reason


# Python lists of arrays read by the index: stacked before the scan when nothing else needs the list.
STACKED_LISTS = {
    "list_display": """
        @jax.jit
        def f(xs):
            scales = [xs[0] * 0.0 + 1.0, xs[1] * 0.5, xs[2] * 0.25, xs[0] + 2.0, xs[1] - 1.0, xs[2] * 3.0, xs[0]]
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                h = jnp.tanh(h * scales[t] + xs[t])
            return h
        """,
    "comprehension": """
        @jax.jit
        def f(xs):
            gates = [jnp.cos(row) for row in xs]
            h = jnp.zeros(4)
            for t in range(xs.shape[0]):
                h = jnp.tanh(h + gates[t] * xs[t])
            return h
        """,
}


@pytest.mark.parametrize("name", sorted(STACKED_LISTS))
def test_a_list_read_by_the_index_is_stacked_and_runs_equal(name, tmp_path):
    source = HEADER + textwrap.dedent(STACKED_LISTS[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    # A comprehension over the rows unrolls too: reported on its own, without a fix.
    loops = [d for d in diagnostics if d.message.startswith("Python `for` loop")]
    assert len(loops) == 1 and loops[0].fix is not None, [d.no_fix_reason for d in diagnostics]
    # Items of a list display are not proven to share a shape: the fix says what it assumes.
    assert "assumes its items are arrays of one shape and dtype" in loops[0].fix.message
    assert all(d.fix is None and "comprehension" in d.message for d in [*remaining, *(d for d in diagnostics if d not in loops)])
    assert count == 1 and "= jnp.stack(" in fixed
    original, rewritten = _load_pair(tmp_path, source, fixed, f"stacked_{name}")
    _assert_equal_on_jax(original, rewritten)


def test_a_list_of_keys_read_after_the_loop_stays_refused():
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs, key):
            key, *keys = jax.random.split(key, xs.shape[0] + 1)
            h = jnp.zeros(xs.shape[1])
            for t in range(xs.shape[0]):
                h = jnp.tanh(h + jax.random.normal(keys[t], h.shape) + xs[t])
            return h, keys
        """
    )
    (diagnostic,) = lint_text(source, "case.py", Settings())
    # Returned as a list: stacking it would change what the function returns.
    assert diagnostic.fix is None
    assert "`keys` is a Python list (the starred target `*keys`)" in diagnostic.no_fix_reason


def test_per_step_keys_from_a_split_are_stacked_without_an_assumption():
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(xs, key):
            key, *keys = jax.random.split(key, xs.shape[0] + 1)
            h = jnp.zeros(xs.shape[1])
            for t in range(xs.shape[0]):
                h = jnp.tanh(h + jax.random.normal(keys[t], h.shape) + xs[t])
            return h
        """
    )
    (diagnostic,) = lint_text(source, "case.py", Settings())
    assert diagnostic.fix is not None
    assert "jnp.stack" not in (diagnostic.fix.message or "")  # rows of one split: nothing assumed


def test_an_at_get_read_names_the_array_in_its_assumption():
    source = HEADER + textwrap.dedent(
        """
        @jax.jit
        def f(batch, values):
            g = values[-1]
            for t in reversed(range(values.shape[0] - 1)):
                g = batch.reward.at[t].get() + 0.9 * g
            return g
        """
    )
    (diagnostic,) = lint_text(source, "case.py", Settings())
    assert diagnostic.fix is not None
    assert "cannot prove `batch.reward` is an array" in diagnostic.fix.message
    assert "`batch.reward.at`" not in diagnostic.fix.message


# `reversed(xs)` inside `zip`/`enumerate`: the scan steps over `xs[::-1]`, never the iterator.
REVERSED_ELEMENTS = {
    "enumerate": """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1])
            outs = []
            for t, x in enumerate(reversed(xs)):
                h = jnp.tanh(h * 0.5 + x) + t * 0.1
                outs.append(h)
            return jnp.stack(outs)
        """,
    "zip": """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1])
            outs = []
            for x, y in zip(reversed(xs), xs, strict=True):
                h = jnp.tanh(h * 0.5 + x - 0.5 * y)
                outs.insert(0, h)
            return h, jnp.stack(outs)
        """,
}


@pytest.mark.parametrize("name", sorted(REVERSED_ELEMENTS))
def test_reversed_elements_scan_the_rows_backwards_and_run_equal(name, tmp_path):
    source = HEADER + textwrap.dedent(REVERSED_ELEMENTS[name])
    diagnostics, (fixed, remaining, count) = _run(source)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None, [d.no_fix_reason for d in diagnostics]
    assert "`xs` (last row first)" in diagnostics[0].message
    assert count == 1 and remaining == [] and "xs[::-1]" in fixed and "reversed(" not in fixed
    original, rewritten = _load_pair(tmp_path, source, fixed, f"reversed_{name}")
    _assert_equal_on_jax(original, rewritten)
