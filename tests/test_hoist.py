"""Scans whose step input products (`xs_t @ W`) are computed before the scan: the form `--tune`
may write for an RNN. Each rewrite runs on JAX against the loop, values and gradients."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes
from jaxloopfix.verify.measure import choose_unroll
from jaxloopfix.verify.targets import variant_settings

jax = pytest.importorskip("jax")
jnp = jax.numpy

HEADER = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\n"


def rewrite(source: str, variant: int) -> str:
    """The function `f`'s fix as `--tune` renders variant `variant` (-k: hoisted, unroll k)."""
    fixed, _, applied = apply_fixes(HEADER + textwrap.dedent(source), "m.py", variant_settings(Settings(), "f", variant, tuning=True), unsafe=True)
    assert applied == 1
    return fixed


def run(text: str, args: tuple):
    namespace: dict = {}
    exec(compile(text, "m.py", "exec"), namespace)
    f = namespace["f"]
    loss = lambda *a: sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(f(*a)))  # noqa: E731
    return f(*args), jax.grad(loss, argnums=tuple(range(len(args))))(*args)


def assert_same_as_loop(source: str, args: tuple) -> str:
    text = rewrite(source, -4)
    with jax.default_matmul_precision("highest"):
        expected, got = run(HEADER + textwrap.dedent(source), args), run(text, args)
    for e, g in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(got), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-6)
    return text


def normal(*shape: int, seed: int = 0) -> jax.Array:
    return jnp.asarray(np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(np.float32))


def test_elman_input_projection_moves_before_the_scan():
    text = assert_same_as_loop(
        """
        def f(W_x, W_h, xs):
            h = jnp.zeros((xs.shape[1], W_h.shape[0]))
            outs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ W_x + h @ W_h)
                outs.append(h)
            return jnp.stack(outs)
        """,
        (normal(3, 4) * 0.5, normal(4, 4, seed=1) * 0.5, normal(9, 2, 3)),
    )
    assert "xs_projected = jax.vmap(lambda xs_t: xs_t @ W_x)(xs)" in text
    assert "h @ W_h" in text and "unroll=4" in text
    assert "lax.scan(step, h, xs_projected, unroll=4)" in text  # the raw slice is no longer scanned


def test_a_reversed_loop_with_jnp_dot_on_a_bound_slice():
    assert_same_as_loop(
        """
        def f(params, xs):
            h = jnp.zeros(params["U"].shape[0])
            for t in reversed(range(xs.shape[0])):
                x_t = xs[t]
                h = jnp.tanh(jnp.dot(x_t, params["W"]) + jnp.dot(h, params["U"]))
            return h
        """,
        ({"W": normal(3, 4) * 0.5, "U": normal(4, 4, seed=2) * 0.5}, normal(7, 3)),
    )


def test_left_products_and_three_axis_weights_keep_their_per_step_meaning():
    """`W @ x_t` and `x_t @ W3` with `W3` of three axes: `xs @ W3` would broadcast the step axis
    against `W3`'s first; the hoisted `jax.vmap` form is the per-step product."""
    text = assert_same_as_loop(
        """
        def f(W, W3, xs):
            h = jnp.zeros((W3.shape[0], xs.shape[1], W3.shape[2]))
            g = jnp.zeros(W.shape[0])
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ W3 + h)
                g = jnp.sin(W @ xs[t][0] + g)
            return h, g
        """,
        (normal(5, 3), normal(4, 3, 2, seed=3), normal(4, 2, 3, seed=4)),
    )
    assert "lambda xs_t: xs_t @ W3" in text


def test_a_slice_read_elsewhere_stays_among_the_scanned_inputs():
    text = assert_same_as_loop(
        """
        def f(W, xs):
            h = jnp.zeros(W.shape[1])
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ W + h) + xs[t].sum()
            return h
        """,
        (normal(3, 4), normal(6, 3)),
    )
    assert "(xs, xs_projected)" in text


@pytest.mark.parametrize(
    "body",
    [
        "h = jnp.tanh(xs[t] @ (W * h.sum()) + h)",  # reads the carry
        "h = jnp.tanh(xs[t] @ jnp.ones((3, 4)) + h)",  # a call: it could draw random numbers
        "h = jnp.tanh(xs[t] @ Ws[t] + h)",  # indexed by the step
        "V = W * 0.5\n        h = jnp.tanh(xs[t] @ V + h)",  # assigned in the loop
        "h = jnp.tanh((lambda v: v @ W)(xs[t]) + h)",  # inside a scope of its own
    ],
)
def test_products_that_change_between_steps_stay_in_the_step(body):
    source = f"""
def f(W, Ws, xs):
    h = jnp.zeros(4)
    for t in range(xs.shape[0]):
        {body}
    return h
"""
    assert rewrite(source, -4) == rewrite(source, 4)  # nothing hoisted: the variant is the plain scan


@pytest.mark.parametrize(
    ("medians", "expected"),
    [
        ({0: 1.0, 1: 1.0, -1: 0.98}, 0),  # hoisting 2% faster: noise, the loop's rounding is kept
        ({1: 1.0, 16: 0.6, -16: 0.4}, -16),
        ({1: 1.0, -1: 0.99, -16: 0.99}, 1),
    ],
)
def test_tune_prefers_per_step_products_unless_hoisting_is_clearly_faster(medians, expected):
    assert choose_unroll(medians) == expected


def test_the_hoisted_fix_says_what_it_regroups_and_why_it_is_unsafe():
    from jaxloopfix.engine import lint_text

    source = HEADER + textwrap.dedent(
        """
        def f(W, xs):
            h = jnp.zeros(W.shape[1])
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ W + h)
            return h
        """
    )
    (plain,) = lint_text(source, "m.py", Settings())
    (hoisted,) = lint_text(source, "m.py", variant_settings(Settings(), "f", -4, tuning=True))
    assert not any("TF32" in a for a in plain.fix.assumptions)
    assert any("TF32" in a for a in hoisted.fix.assumptions)
    assert "input products are computed for every step before the scan" in hoisted.fix.title
