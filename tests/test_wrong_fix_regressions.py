"""Programs that once received a wrong safe fix: each is now fixed correctly, downgraded, or refused."""

from __future__ import annotations

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

H = "import jax\nimport jax.numpy as jnp\n\n"

# name -> (source, function, inputs): a fix must exist and compute the same values. It is safe, or
# unsafe only because the carry's dtype and shape after one step are not proven (these programs
# combine the carry with arguments of unknown shape; tests/test_purity.py has the proven ones).
EQUAL = {
    "generated_name_collides_with_body_local": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.ones(3)\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        xs_t = jnp.tanh(h)\n        h = h + xs[t] * xs_t\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "f", lambda: (jnp.arange(15.0).reshape(5, 3) / 10,),
    ),
    "generated_name_shadows_outer_local": (
        H + "@jax.jit\ndef f(xs):\n    xs_t = xs * 2.0\n    h = jnp.zeros(3)\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        h = h + xs[t] * xs_t[0]\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "f", lambda: (jnp.arange(9.0).reshape(3, 3) / 10,),
    ),
    "same_array_two_axes": (
        H + "@jax.jit\ndef f(A):\n    h = jnp.zeros(A.shape[0])\n    outs = []\n    for t in range(A.shape[0]):\n"
        "        h = 0.5 * h + A[t] - A[:, t]\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "f", lambda: (jnp.arange(9.0).reshape(3, 3),),
    ),
    "comprehension_rebinds_index": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.zeros(3)\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        h = h + xs[t] + sum([xs[t] for t in range(2)])\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "f", lambda: (jnp.arange(15.0).reshape(5, 3) / 10,),
    ),
    "index_compared_with_array_is_an_array": (
        H + "@jax.jit\ndef f(x, pos):\n    out = []\n    for k in range(x.shape[0]):\n        m = pos >= k\n"
        "        out.append(jnp.where(m[:, None], x[k], 0.0))\n    return jnp.stack(out)\n",
        "f", lambda: (jnp.arange(12.0).reshape(4, 3), jnp.array([0, 2, 3])),
    ),
    "range_may_be_empty": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.zeros(xs.shape[1:])\n    for t in range(xs.shape[0] - 10):\n"
        "        h = 0.5 * h + xs[t]\n    return h\n",
        "f", lambda: (jnp.arange(24.0).reshape(8, 3),),
    ),
    "static_trip_count_beyond_array_clamps": (
        H + "from functools import partial\n\n@partial(jax.jit, static_argnums=1)\ndef f(xs, n):\n"
        "    h = jnp.zeros(xs.shape[1:])\n    for t in range(n):\n        h = 0.5 * h + xs[t]\n    return h\n",
        "f", lambda: (jnp.arange(24.0).reshape(8, 3), 10),
    ),
    "parameter_shadows_lax_import": (
        H + "from jax import lax\n\n@jax.jit\ndef f(xs, lax=0.5):\n    h = jnp.zeros(3)\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        h = h * lax + xs[t]\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "f", lambda: (jnp.arange(15.0).reshape(5, 3) / 10,),
    ),
    "lax_and_jax_names_taken": (
        "import jax.numpy as jnp\nfrom jax import jit\n\nlax = 'not jax'\n\n@jit\ndef g(xs):\n    jax = 2.0\n"
        "    h = jnp.zeros(2)\n    for t in range(xs.shape[0]):\n        h = h * jax + xs[t]\n    return h\n",
        "g", lambda: (jnp.arange(6.0).reshape(3, 2),),
    ),
}

# name -> (source, expected reason fragment): no safe fix may be offered.
NOT_SAFE = {
    "index_arithmetic_overflows_int32": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.zeros(xs.shape[1:])\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        h = h + xs[t] * ((t * t * 100000) / 1e9)\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "used as a value",
    ),
    "index_promotes_int8": (
        H + "@jax.jit\ndef f(xs):\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        outs.append(xs[t].astype(jnp.int8) + t)\n    return jnp.stack(outs)\n",
        "used as a value",
    ),
    "gradient_returns_a_list": (
        H + "@jax.jit\ndef f(frames):\n    grads = []\n    for t in range(frames.shape[0]):\n"
        "        grads.append(jnp.gradient(frames[t]))\n    return jnp.array(grads)\n",
        "single array",
    ),
    "numpy_sequence_used_statically": (
        H + "import numpy as np\n\n@jax.jit\ndef f(x):\n    widths = np.array([1, 2, 3])\n    total = jnp.zeros(())\n"
        "    for i in range(widths.shape[0]):\n        total = total + x[:widths[i]].sum()\n    return total\n",
        "NumPy",
    ),
    "scalar_default_argument_carry": (
        H + "@jax.jit\ndef ema(xs, init=0.0):\n    h = init\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        h = 0.9 * h + 0.1 * xs[t]\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "initial value of `h`",
    ),
    "integer_carry_gets_floats": (
        H + "@jax.jit\ndef f(xs):\n    c = jnp.zeros(xs.shape[1:], dtype=jnp.int32)\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        c = c + xs[t]\n        outs.append(c)\n    return jnp.stack(outs)\n",
        "the dtype of `c + xs[t]` is not known",
    ),
    "scalar_carry_broadcast_by_slices": (
        H + "@jax.jit\ndef f(xs):\n    s = jnp.zeros(())\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        s = s * 0.5 + xs[t]\n        outs.append(s)\n    return jnp.stack(outs)\n",
        "`s * 0.5 + xs[t]`",
    ),
    "tuple_carry_repacked_as_list": (
        H + "@jax.jit\ndef f(xs):\n    state = (jnp.zeros(3), jnp.zeros(3))\n    for t in range(xs.shape[0]):\n"
        "        h, c = state\n        c = c + xs[t]\n        h = h + c\n        state = [h, c]\n    return state\n",
        "pytree structure",
    ),
    "append_shares_a_line": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.ones(3)\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        h = jnp.tanh(h + xs[t]); outs.append(h)\n    return jnp.stack(outs)\n",
        "own line",
    ),
    "one_line_body": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.ones(3)\n    for t in range(xs.shape[0]): h = jnp.tanh(h + xs[t])\n    return h\n",
        "on the `for` line",
    ),
    "flax_module_called_in_the_loop": (
        H + "import flax.linen as nn\n\nclass RNN(nn.Module):\n    hidden: int\n\n    @nn.compact\n"
        "    def __call__(self, xs):\n        cell = nn.SimpleCell(self.hidden)\n        h = jnp.zeros(self.hidden)\n"
        "        outs = []\n        for t in range(xs.shape[0]):\n            h, y = cell(h, xs[t])\n"
        "            outs.append(y)\n        return jnp.stack(outs)\n",
        "module state",
    ),
    "haiku_module_built_in_the_loop": (
        H + "import haiku as hk\n\ndef forward(xs: jax.Array):\n    h = jnp.zeros(4)\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        h = hk.Linear(4)(h + xs[t])\n        outs.append(h)\n"
        "    return jnp.stack(outs)\n\nmodel = hk.transform(forward)\n",
        "module state",
    ),
    # A carry indexed in its own update may change shape every step (`jnp.diff` in jax).
    "carry_indexed_in_its_own_update": (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.zeros(xs.shape[0] + 1)\n    for t in range(xs.shape[0]):\n"
        "        h = h[1:] * 0.5 + xs[t]\n    return h\n",
        "changes shape every step (`h[1:]`)",
    ),
    # Found by the differential test: the step assigns a scalar to a carry that starts as a
    # vector and is never read in the loop; as a scan carry JAX rejects the changed type.
    "carry_kept_only_for_its_last_value": (
        H + "@jax.jit\ndef f(xs: jax.Array, w: jax.Array):\n    c = jnp.tanh(w[1])\n    outs = []\n"
        "    for t in range(len(xs)):\n        c = jnp.tanh(jnp.sin(t * 0.1))\n        outs.append(xs[t] * c)\n"
        "    return c, jnp.stack(outs)\n",
        "overwritten every step without reading its previous value",
    ),
    "descending_step_two": (
        H + "@jax.jit\ndef g(xs):\n    h = jnp.zeros(3)\n    outs = []\n    for t in range(xs.shape[0] - 1, -1, -2):\n"
        "        h = h * 0.5 + xs[t]\n        outs.append(h)\n    return jnp.stack(outs)\n",
        "step -1",
    ),
}


@pytest.mark.parametrize("name", sorted(EQUAL))
def test_safe_fix_computes_the_same(name, tmp_path):
    source, function, inputs = EQUAL[name]
    diagnostics = lint_text(source, "t.py", Settings())
    assert diagnostics and all(d.fix for d in diagnostics), [d.no_fix_reason for d in diagnostics]
    for diagnostic in diagnostics:
        if diagnostic.fix.applicability.value == "unsafe":
            reasons = diagnostic.fix.message.split("(unsafe: ", 1)[1]
            assert "keeps its dtype and shape after one step" in reasons, reasons
            assert "side effects" not in reasons and "used as a value" not in reasons, reasons
    fixed, remaining, count = apply_fixes(source, "t.py", Settings(), unsafe=True)
    assert count == len(diagnostics) and remaining == []
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(fixed)
    expected = getattr(load_module(tmp_path / "a.py", f"regress_a_{name}"), function)(*inputs())
    actual = getattr(load_module(tmp_path / "b.py", f"regress_b_{name}"), function)(*inputs())
    assert np.shape(expected) == np.shape(actual) and np.asarray(expected).dtype == np.asarray(actual).dtype
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(NOT_SAFE))
def test_no_safe_fix(name):
    source, reason = NOT_SAFE[name]
    diagnostics = lint_text(source, "t.py", Settings())
    assert diagnostics, "the loop must still be reported"
    for diagnostic in diagnostics:
        assert diagnostic.fix is None or diagnostic.fix.applicability.value == "unsafe"
    texts = [(d.no_fix_reason or "") + (d.fix.message if d.fix else "") for d in diagnostics]
    assert any(reason in text for text in texts), texts
    assert apply_fixes(source, "t.py", Settings())[2] == 0


def test_pytree_annotation_is_not_an_array():
    source = (
        H + "from jaxtyping import PyTree, Float, Array\n\n@jax.jit\n"
        "def mlp(weights: PyTree[Float[Array, 'd d']], x):\n    for W in weights:\n        x = jnp.tanh(x @ W)\n    return x\n"
    )
    assert lint_text(source, "t.py", Settings()) == []


def test_list_argument_stacked_only_after_the_loop_is_not_scanned():
    source = (
        H + "@jax.jit\ndef f(xs):\n    h = jnp.zeros(3)\n    hs = []\n    for t in range(len(xs)):\n"
        "        h = h * 0.5 + xs[t]\n        hs.append(h)\n    xs = jnp.stack(xs)\n    return jnp.stack(hs), xs.sum()\n"
    )
    assert apply_fixes(source, "t.py", Settings())[2] == 0


REAL_CODE_FALSE_POSITIVES = {
    # jax pallas attention kernels: static arguments of custom_vjp rules.
    "custom_vjp_rule_static_flag": (
        "import functools\nimport jax\n\n@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))\n"
        "def f(x, flag):\n    return x\n\ndef f_fwd(x, flag):\n    if flag:\n        raise NotImplementedError\n"
        "    return x, x\n\ndef f_bwd(flag, res, g):\n    return (g,)\n\nf.defvjp(f_fwd, f_bwd)\n"
    ),
    "custom_vjp_nondiff_range": (
        "import functools\nimport jax\n\n@functools.partial(jax.custom_vjp, nondiff_argnums=range(1, 2))\n"
        "def f(x, flag):\n    if flag:\n        return x\n    return 2 * x\n"
    ),
    # optax CTC loss under `jax.jit(loss)(...)`: a keyword with a literal default that the call
    # does not pass keeps its Python value.
    "literal_default_is_not_traced": (
        "import jax\n\ndef loss(logprobs, *, blank_id: int = 0):\n    return logprobs[:, blank_id : blank_id + 1]\n\n"
        "jitted = jax.jit(loss)\n"
    ),
    # jax.experimental.sparse: `jax.jit(lax.gather, static_argnames=static_argnames)` with the
    # names in a variable; statics that cannot be read mean no parameter is known to be traced.
    "static_argnames_from_a_variable": (
        "import jax\n\ndef gather(x, unique=None):\n    return bool(unique)\n\n"
        "def run(x, names):\n    return jax.jit(gather, static_argnames=names)(x, unique=True)\n"
    ),
    "static_argnames_from_kwargs": (
        "import jax\n\ndef gather(x, unique=None):\n    return bool(unique)\n\n"
        "def run(x, opts):\n    return jax.jit(gather, **opts)(x, unique=True)\n"
    ),
    # `jnp.diff` and `random._shuffle` in jax: a few deliberate steps over a static count with
    # nothing scanned and no possible fix are not reported.
    "static_count_shape_changing_carry": (
        "import jax\nimport operator\nfrom functools import partial\n\n@partial(jax.jit, static_argnames=('n',))\n"
        "def diff(arr, n):\n    s1, s2 = (slice(1, None),), (slice(None, -1),)\n    for _ in range(n):\n"
        "        arr = operator.sub(arr[s1], arr[s2])\n    return arr\n"
    ),
    # equinox adaptive pooling: an argument vmap leaves unmapped stays a Python int.
    "vmap_unmapped_argument": (
        "import jax\n\ndef g(x, n):\n    if n != 0:\n        return x[:n]\n    return x\n\nh = jax.vmap(g, (0, None))\n"
    ),
}


@pytest.mark.parametrize("name", sorted(REAL_CODE_FALSE_POSITIVES))
def test_static_values_in_real_code_patterns_are_not_flagged(name):
    assert lint_text(REAL_CODE_FALSE_POSITIVES[name], "t.py", Settings()) == []


def test_last_value_carry_gets_no_fix_even_unsafe(tmp_path):
    source, _ = NOT_SAFE["carry_kept_only_for_its_last_value"]
    (tmp_path / "a.py").write_text(source)
    f = load_module(tmp_path / "a.py", "regress_last_value").f
    c, outs = f(jnp.ones((4, 3)), jnp.ones((3, 3)))
    assert np.shape(c) == () and np.shape(outs) == (4, 3)  # the loop changes the carry's shape
    fixed, remaining, applied = apply_fixes(source, "t.py", Settings(), unsafe=True)
    assert applied == 0 and fixed == source
    assert [d.code for d in remaining] == ["JLF001"] and remaining[0].fix is None


def test_throwaway_underscore_read_after_the_loop_gets_no_fix():
    """`for _ in ...: _, x = f(x)` gets a fix (see fixtures/JLF002/throwaway_underscore.py), but only
    while nothing reads `_`: after the loop it holds the last step's value, which a scan would lose."""
    source = (
        H + "@jax.jit\ndef f(x):\n    for _ in range(x.shape[0]):\n        _, x = jnp.sin(x), jnp.cos(x)\n"
        "    return x + _\n"
    )
    diagnostics = lint_text(source, "f.py", Settings())
    assert [d.code for d in diagnostics] == ["JLF002"]
    assert diagnostics[0].fix is None
    assert "loop variable `_`" in diagnostics[0].no_fix_reason


# name -> (source, reason fragment, function, inputs): the loop runs, but a scan step could not
# (its traced index would pick from a Python container or decide an identity test), so no fix
# at all is offered, not even an unsafe one; the loop itself is still reported.
NO_FIX = {
    "index_grid_of_a_shape": (
        H + "import numpy as np\n\n@jax.jit\ndef f(x):\n    acc = jnp.zeros(())\n    for index in np.ndindex(x.shape):\n"
        "        acc = acc + jnp.sin(x[index]) * acc\n    return acc\n",
        "index tuples", "f", lambda: (jnp.arange(6.0).reshape(2, 3),),
    ),
    "appends_objects_built_from_rows": (
        H + "from typing import NamedTuple\n\nclass Edge(NamedTuple):\n    feats: jax.Array\n    ids: jax.Array\n\n"
        "@jax.jit\ndef f(x):\n    ids = jnp.arange(x.shape[0])\n    out = []\n    for i in range(x.shape[0]):\n"
        "        out.append(Edge(x[i][None], ids[i][None]))\n    return out\n",
        "collects `Edge(...)` objects", "f", lambda: (jnp.arange(12.0).reshape(4, 3),),
    ),
    "series_over_a_literal_list_of_numbers": (
        H + "@jax.jit\ndef f(v):\n    coeffs = [1.0, -0.5, 0.25, -0.125, 0.0625, -0.03125]\n    prev = jnp.zeros_like(v)\n"
        "    cur = jnp.zeros_like(v)\n    for i in reversed(range(1, len(coeffs))):\n        prev, cur = cur, 2.0 * v * cur - prev + coeffs[i]\n"
        "    return cur - prev\n",
        "a Python list of numbers", "f", lambda: (jnp.linspace(-1.0, 1.0, 5),),
    ),
    "index_picks_from_module_tuple_in_identity_test": (
        H + "COLORS = (None, 1, None, 2, None, 3, None, 4)\n\n@jax.jit\ndef f(x):\n    acc = jnp.zeros(3)\n"
        "    for i in range(8):\n        if COLORS[i] is not None:\n            acc = acc + x[i]\n    return acc\n",
        "identity test", "f", lambda: (jnp.arange(24.0).reshape(8, 3),),
    ),
    "index_picks_from_list_of_text": (
        H + "@jax.jit\ndef f(x, masks):\n    names = ['a', 'b', 'c', 'd', 'e', 'f']\n    acc = jnp.zeros(3)\n"
        "    for i in range(6):\n        acc = acc + masks[names[i]] * x[i]\n    return acc\n",
        "selects items of `names`, a Python container of Python values", "f",
        lambda: (jnp.arange(18.0).reshape(6, 3), {k: jnp.float32(n) for n, k in enumerate("abcdef")}),
    ),
    "index_picks_from_static_tuple_of_sizes": (
        H + "SIZES = (1, 2, 3, 4, 5, 6)\n\n@jax.jit\ndef f(x):\n    acc = jnp.zeros(3)\n"
        "    for i in range(6):\n        acc = acc + x[i] * SIZES[i]\n    return acc\n",
        "a Python container of Python values", "f", lambda: (jnp.arange(18.0).reshape(6, 3),),
    ),
    "rows_copied_into_a_list": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    rows = list(x)\n    for r in rows:\n"
        "        h = jnp.tanh(0.5 * h + r)\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "rows_unstacked": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    for r in jnp.unstack(x):\n"
        "        h = jnp.tanh(0.5 * h + r)\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "rows_by_comprehension": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    rows = [x[t] * 2.0 for t in range(x.shape[0])]\n"
        "    for r in rows:\n        h = jnp.tanh(0.5 * h + r)\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "rows_of_a_list_indexed_per_step": (
        H + "@jax.jit\ndef f(x, w):\n    h = jnp.zeros(x.shape[1:])\n    rows = list(x)\n    for t in range(len(rows)):\n"
        "        h = jnp.tanh(h * w + jnp.asarray(rows[t]))\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10, 0.5),
    ),
    "unstacked_rows_indexed_per_step": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    rows = jnp.unstack(x)\n    for t in range(x.shape[0]):\n"
        "        h = jnp.tanh(0.5 * h + rows[t])\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "slice_of_rows_as_a_list": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    for r in list(x)[1:]:\n"
        "        h = jnp.tanh(0.5 * h + r)\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "rows_list_under_another_name": (
        H + "@jax.jit\ndef f(x):\n    h = jnp.zeros(x.shape[1:])\n    rows = list(x)\n    again = rows\n"
        "    for r in again[::-1]:\n        h = jnp.tanh(0.5 * h + r)\n    return h\n",
        "a Python list of an array's rows", "f", lambda: (jnp.arange(12.0).reshape(4, 3) / 10,),
    ),
    "chunks_of_a_split": (
        H + "from functools import partial\n\n@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    total = jnp.zeros(())\n"
        "    for c in jnp.split(x, n):\n        total = total + jnp.sum(c ** 2)\n    return total\n",
        "a Python list of an array's rows or pieces", "f", lambda: (jnp.arange(12.0).reshape(6, 2), 3),
    ),
}


def test_scan_over_a_list_of_rows_is_not_the_loop():
    """Why a list of rows gets no fix: `lax.scan` takes the list as a pytree and steps along each
    item's own first axis, so it neither runs one step per row nor computes the loop's value."""
    x = jnp.arange(12.0).reshape(4, 3) / 10

    def step(h, r):
        return jnp.tanh(0.5 * h + r), None

    h = jnp.zeros(3)
    for r in list(x):
        h, _ = step(h, r)
    with pytest.raises((TypeError, ValueError)):
        jax.lax.scan(step, jnp.zeros(3), list(x))  # each step gets a list of 4 scalars, not one row
    scanned, _ = jax.lax.scan(step, jnp.zeros(3), x)
    np.testing.assert_allclose(scanned, h, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(NO_FIX))
def test_python_selection_gets_no_fix(name, tmp_path):
    source, reason, function, inputs = NO_FIX[name]
    (tmp_path / "a.py").write_text(source)
    getattr(load_module(tmp_path / "a.py", f"regress_nofix_{name}"), function)(*inputs())  # the loop runs
    diagnostics = lint_text(source, "t.py", Settings())
    assert [d.code for d in diagnostics if d.code in ("JLF001", "JLF002")], "the loop must still be reported"
    assert all(d.fix is None for d in diagnostics), [d.fix.message for d in diagnostics if d.fix]
    assert any(reason in (d.no_fix_reason or "") for d in diagnostics), [d.no_fix_reason for d in diagnostics]
    assert apply_fixes(source, "t.py", Settings(), unsafe=True)[2] == 0
