"""A list an unrolled loop appends an array to in each step holds per-step data: a later loop
or comprehension over it unrolls as many copies of its own work (`per_step_lists`). Such a loop
is reported without a fix (a scan would take the list as a pytree of separate arrays); a list
filled by a loop of a few static steps stays a Python container."""

from __future__ import annotations

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

SOURCE = '''
import jax
import jax.numpy as jnp


@jax.jit
def rounds(state):
    exp_z = []
    exp_x = []
    out = []
    for k in range({steps}):
        state = jnp.tanh(state @ state.T)
        if k % 2 == 0:
            exp_z.append(jnp.trace(state))
        else:
            exp_z.append(-jnp.trace(state))
        exp_x.append(jnp.sum(state))
    for z, x in zip(exp_z, exp_x):
        out.append(0.5 * z + 0.5 * x)
    avg = jnp.array([0.5 * z + 0.5 * x for z, x in zip(exp_z, exp_x)])
    return jnp.stack(out), avg
'''


def _loop_lines(source: str) -> dict:
    return {d.location.row: d for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")}


def test_loops_over_per_step_lists_are_reported_without_a_fix() -> None:
    found = _loop_lines(SOURCE.format(steps=40))
    assert sorted(found) == [11, 18, 20]  # the filling loop, the loop over its lists, the comprehension
    assert found[18].fix is None and "(a list holding one array per step of the unrolled loop on line 11)" in found[18].no_fix_reason
    assert "one array per step of the unrolled loop on line 11" in found[20].message


def test_the_lists_hold_one_array_per_step_when_run() -> None:
    """What the evidence claims, on JAX: as many items as the filling loop's steps, each traced."""
    namespace: dict[str, object] = {}
    exec(compile(SOURCE.format(steps=40), "m.py", "exec", dont_inherit=True), namespace)
    out, avg = namespace["rounds"](jnp.eye(3) * 0.1)  # type: ignore[operator]
    assert out.shape == avg.shape == (40,) and jnp.allclose(out, avg)


def test_a_list_filled_in_a_few_static_steps_stays_a_container() -> None:
    found = _loop_lines(SOURCE.format(steps=3))
    assert sorted(found) == []


@pytest.mark.parametrize(
    "between, loop",
    [
        ("    hs = jnp.stack(hs)\n", "    for row in hs:\n        acc = jnp.sin(acc * 0.9 + row)\n"),  # stacked: rows of an array
        ("    hs = [h, h * 2.0]\n", "    for row in hs:\n        acc = jnp.sin(acc * 0.9 + row)\n"),  # rebound: two items
    ],
)
def test_a_list_rebound_after_the_loop_is_not_per_step(between: str, loop: str) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs):\n    h = jnp.zeros(3)\n    acc = jnp.zeros(3)\n"
        "    hs = []\n    for x in xs:\n        h = jnp.tanh(h + x)\n        hs.append(h)\n" + between + loop + "    return acc\n"
    )
    found = _loop_lines(source)
    assert all("a list holding one array per step" not in (d.no_fix_reason or "") + d.message for d in found.values())
    if "stack" in between:
        assert found[14].fix is not None  # the loop over the stacked rows keeps its fix


def test_a_list_emptied_in_each_step_or_filled_in_a_nested_function_is_not_per_step() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs, p):\n    total = 0.0\n    for x in xs:\n"
        "        norms = []\n        for name in ('w', 'b'):\n            norms.append(jnp.sum(p * x))\n"
        "        total = total + norms[0]\n    out = [n * 2.0 for n in norms]\n\n"
        "    def body(y):\n        parts = []\n        for k in range(40):\n            parts.append(jnp.sin(y * k))\n        return parts\n\n"
        "    parts = [body(xs[0]), body(xs[1])]\n    return total, out, [q[0] * 2.0 for q in parts]\n"
    )
    found = _loop_lines(source)
    assert all("a list holding one array per step" not in d.message for d in found.values()), [d.message for d in found.values()]


OBJECTS = '''
import jax
import jax.numpy as jnp
from haiku._src.data_structures import FlatMap


def loss(w, batch):
    return jnp.mean((batch["image"] @ w - batch["label"]) ** 2)


@jax.jit
def local_updates(w, images, labels):
    chunks_x = images.reshape({steps}, -1, images.shape[-1])
    chunks_y = labels.reshape({steps}, -1)
    batches = []
    for i in range({steps}):
        batches.append(FlatMap({{"image": chunks_x[i], "label": chunks_y[i]}}))
    losses = []
    for batch in batches:
        l, g = jax.value_and_grad(loss)(w, batch)
        w = w - 0.1 * g
        losses.append(l)
    return w, jnp.stack(losses)
'''


def test_a_list_of_per_step_objects_is_per_step_data() -> None:
    """`batches.append(FlatMap({...: chunks_x[i]}))` in an unrolled loop: each item holds one step's
    arrays (a pytree), so the loop over `batches` unrolls a gradient step per item; the message
    says to stack the pytrees, not `jnp.stack` them. Run on JAX, each item is a pytree of tracers."""
    pytest.importorskip("haiku")
    source = OBJECTS.format(steps=8)
    found = _loop_lines(source)
    second = next(d for d in found.values() if "loop over `batches`" in d.message)
    assert second.fix is None and "a list holding one value per step of the unrolled loop" in second.no_fix_reason
    assert "jax.tree.map" in second.no_fix_reason
    namespace: dict[str, object] = {}
    exec(compile(source, "m.py", "exec", dont_inherit=True), namespace)
    w, losses = namespace["local_updates"](jnp.zeros(3), jnp.ones((16, 3)), jnp.ones(16))  # type: ignore[operator]
    assert losses.shape == (8,)
    assert _loop_lines(OBJECTS.format(steps=3)) == {}  # a few static steps: neither loop is reported


def test_keys_made_from_the_index_are_not_per_step_data(tmp_path) -> None:
    """`tags.append(describe(i))` with `describe` another module's helper (its result unknown
    here): values made from the index alone are keys or names, not the step's slices, so the
    loop over `tags` stays clean."""
    source = '''
import jax
import jax.numpy as jnp
from helpers import describe


@jax.jit
def f(xs, table):
    tags = []
    for i in range(xs.shape[0]):
        xs = xs.at[i].set(jnp.tanh(xs[i]) * 2.0)
        tags.append(describe(i))
    total = 0.0
    for tag in tags:
        total = total + table[tag]
    return xs, total
'''
    found = _loop_lines(source)
    assert list(found) == [10]  # the filling loop only
