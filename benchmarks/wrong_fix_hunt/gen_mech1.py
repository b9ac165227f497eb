"""Rewrite mechanics, part 1: index use, zip/enumerate, structured carries, helpers.

Bugs in how the rewrite maps the loop variable, the iterated sequence and the carried names onto
lax.scan show up as wrong values, not type errors, so they need running programs to catch.
"""
from hunt_common import P

P("mech_01_lambda_default_index", "index captured by a lambda default inside the loop.", '''
@jax.jit
def pick(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        f = lambda a, i=t: a[i] * 2.0
        out.append(f(xs))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "pick"
''')

P("mech_02_zip_range", "for t, x_t in zip(range(T), xs) with index arithmetic.", '''
@jax.jit
def ramp(xs: Float32[Array, "T D"]):
    out = []
    for t, x_t in zip(range(xs.shape[0]), xs):
        out.append(x_t * (t + 1))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "ramp"
''')

P("mech_03_enumerate_int8_times_index", "map-only: int8 row times its index (Python int in the loop, int32 in the rewrite).", '''
@jax.jit
def weight(xs: Int8[Array, "T D"]):
    out = []
    for i, x in enumerate(xs):
        out.append(x * i)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "weight"
''')

P("mech_04_enumerate_start_uint8_plus", "map-only: uint8 row plus its 1-based index.", '''
@jax.jit
def shift(xs: UInt8[Array, "T D"]):
    out = []
    for i, x in enumerate(xs, start=1):
        out.append(x + i)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "uint8", hi=250),), {})]
FUNC = "shift"
''')

P("mech_05_reversed_append", "reversed(range) append then [::-1].", '''
@jax.jit
def rev(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    outs = []
    for t in reversed(range(xs.shape[0])):
        acc = 0.5 * acc + xs[t]
        outs.append(acc)
    return jnp.stack(outs[::-1])

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "rev"
''')

P("mech_06_descending_at_set", "descending range with a .at[t].set buffer.", '''
@jax.jit
def back(xs: Float32[Array, "T D"]):
    buf = jnp.zeros_like(xs)
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0] - 1, -1, -1):
        acc = acc * 0.9 + xs[t]
        buf = buf.at[t].set(acc)
    return buf

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "back"
''')

P("mech_07_nested_inner_dim", "outer loop over T with an inner loop over D.", '''
@jax.jit
def nest(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        for d in range(xs.shape[1]):
            acc = acc.at[d].add(xs[t, d] * (d + 1))
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "nest"
''')

P("mech_08_stride_pairs", "range(0, T - 1, 2) reading xs[t] and xs[t + 1].", '''
@jax.jit
def pairs(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(0, xs.shape[0] - 1, 2):
        acc = acc + xs[t] * xs[t + 1]
    return acc

CASES = [lambda: ((_arr((8, 3)),), {}), lambda: ((_arr((9, 3)),), {})]
FUNC = "pairs"
''')

P("mech_09_at_set_buffer", "buffer filled with .at[t].set of a running state.", '''
@jax.jit
def run(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    buf = jnp.zeros_like(xs)
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
        buf = buf.at[t].set(h)
    return buf, h

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "run"
''')

P("mech_10_dict_carry", "dict carry {h, c} in an LSTM-ish update.", '''
@jax.jit
def lstm(xs: Float32[Array, "T D"]):
    st = {"h": jnp.zeros(xs.shape[1:], jnp.float32), "c": jnp.zeros(xs.shape[1:], jnp.float32)}
    for x_t in xs:
        c = st["c"] * 0.5 + jnp.tanh(x_t + st["h"])
        st = {"h": jnp.tanh(c), "c": c}
    return st

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "lstm"
''')

P("mech_11_tuple_carry", "tuple carry (h, n) unpacked and repacked.", '''
@jax.jit
def run(xs: Float32[Array, "T D"]):
    state = (jnp.zeros(xs.shape[1:], jnp.float32), jnp.zeros((), jnp.float32))
    for x_t in xs:
        h, n = state
        state = (h * 0.5 + x_t, n + 1.0)
    return state

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "run"
''')

P("mech_12_helper_with_branch", "module helper with control flow called per step.", '''
def squash(v, hard):
    if hard:
        return jnp.clip(v, -1.0, 1.0)
    return jnp.tanh(v)


@jax.jit
def run(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        h = squash(h + x_t, False)
    return h

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "run"
''')

P("mech_13_helper_takes_index", "module helper receives the array and the index.", '''
def row(a, i):
    return a[i] * 2.0


@jax.jit
def run(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + row(xs, t)
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "run"
''')

P("mech_14_diff_prev", "range(1, T) with xs[t] - xs[t - 1].", '''
@jax.jit
def tv(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(1, xs.shape[0]):
        acc = acc + jnp.abs(xs[t] - xs[t - 1])
    return acc

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "tv"
''')

P("mech_15_zip_unequal_lengths", "zip(xs, ys) without strict where ys is longer: the loop truncates.", '''
@jax.jit
def dot(xs: Float32[Array, "T D"], ys: Float32[Array, "S D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t, y_t in zip(xs, ys):
        acc = acc + x_t * y_t
    return acc

CASES = [lambda: ((_arr((6, 3)), _arr((6, 3), seed=1)), {}), lambda: ((_arr((6, 3)), _arr((9, 3), seed=1)), {})]
FUNC = "dot"
''')

P("mech_16_index_times_dt", "index times a static dt in the step.", '''
@partial(jax.jit, static_argnames=("dt",))
def integ(xs: Float32[Array, "T D"], dt: float = 0.1):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + jnp.sin(t * dt) * xs[t]
    return acc

CASES = [lambda: ((_arr((7, 3)),), {}), lambda: ((_arr((7, 3)),), {"dt": 0.37})]
FUNC = "integ"
''')

P("mech_17_lookahead", "range(T - 1) reading xs[t + 1].", '''
@jax.jit
def ahead(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0] - 1):
        out.append(xs[t + 1] - 0.5 * xs[t])
    return jnp.stack(out)

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "ahead"
''')

P("mech_18_tree_map_read", "per-step read through jax.tree.map over a dict batch.", '''
@jax.jit
def run(batch):
    h = jnp.zeros(batch["x"].shape[1:], jnp.float32)
    for t in range(batch["x"].shape[0]):
        step = jax.tree.map(lambda a: a[t], batch)
        h = h * step["g"] + step["x"]
    return h

CASES = [lambda: (({"x": _arr((6, 3)), "g": _arr((6, 3), seed=1)},), {})]
FUNC = "run"
''')

P("mech_19_reversed_xs", "for x_t in reversed(xs) with a carry and outputs.", '''
@jax.jit
def back(xs: Float32[Array, "T D"]):
    g = jnp.zeros(xs.shape[1:], jnp.float32)
    outs = []
    for x_t in reversed(xs):
        g = x_t + 0.9 * g
        outs.append(g)
    return jnp.stack(outs)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "back"
''')

P("mech_20_insert_front", "list built front-to-back with insert(0, g).", '''
@jax.jit
def ret(rs: Float32[Array, "T"]):
    g = jnp.zeros((), jnp.float32)
    G = []
    for t in reversed(range(rs.shape[0])):
        g = rs[t] + 0.9 * g
        G.insert(0, g)
    return jnp.stack(G)

CASES = [lambda: ((_arr((7,)),), {})]
FUNC = "ret"
''')

P("mech_21_list_starts_with_h", "hs = [h] then appended per step and stacked.", '''
@jax.jit
def traj(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    hs = [h]
    for x_t in xs:
        h = 0.5 * h + x_t
        hs.append(h)
    return jnp.stack(hs)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "traj"
''')

P("mech_22_at_add_int8_index", "int8 buffer .at[t].add(xs[t] * t): Python int in the loop, int32 in the scan.", '''
@jax.jit
def buf(xs: Int8[Array, "T D"]):
    b = jnp.zeros_like(xs)
    for t in range(xs.shape[0]):
        b = b.at[t].add(xs[t] * t)
    return b

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "buf"
''')

P("mech_23_full_index_x64", "map-only: jnp.full(D, t) + row, int32 rows (index dtype under x64).", '''
@jax.jit
def stamp(xs: Int32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(jnp.full(xs.shape[1:], t) + xs[t])
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "int32"),), {})]
FUNC = "stamp"
''')

P("mech_24_parity_branch", "static branch on the index parity becoming jnp.where.", '''
@jax.jit
def alt(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            acc = acc + xs[t]
        else:
            acc = acc - xs[t]
    return acc

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "alt"
''')

P("mech_25_last_step_branch", "if t == T - 1 branch on the index.", '''
@jax.jit
def last(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    T = xs.shape[0]
    for t in range(T):
        if t == T - 1:
            acc = acc * 10.0 + xs[t]
        else:
            acc = acc + xs[t]
    return acc

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "last"
''')

P("mech_26_index_over_T_float", "map-only: row times t / T (true division of Python ints in the loop).", '''
@jax.jit
def ramp(xs: Float16[Array, "T D"]):
    out = []
    T = xs.shape[0]
    for t in range(T):
        out.append(xs[t] * (t / T))
    return jnp.stack(out)

CASES = [lambda: ((_arr((7, 3), "float16"),), {})]
FUNC = "ramp"
''')

P("mech_27_index_in_int_carry_ok", "int32 carry plus t * 2 (index arithmetic into an int carry).", '''
@jax.jit
def tri(xs: Int32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int32)
    for t in range(xs.shape[0]):
        acc = acc + xs[t] * t
    return acc

CASES = [lambda: ((_arr((6, 3), "int32"),), {})]
FUNC = "tri"
''')

P("mech_28_enumerate_f16_index_scale", "map-only: float16 row times index: stays float16.", '''
@jax.jit
def w(xs: Float16[Array, "T D"]):
    out = []
    for i, x in enumerate(xs):
        out.append(x * i + 1)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "w"
''')

P("mech_29_index_output_list", "map-only: the index itself appended (t * 1 + row.sum() * 0).", '''
@jax.jit
def idx(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(xs[t].sum() * 0 + t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "idx"
''')

P("mech_30_index_bool_carry", "bool carry OR-ed with (t > 2) & row: the index in a comparison.", '''
@jax.jit
def late(mask: Bool[Array, "T D"]):
    seen = jnp.zeros(mask.shape[1:], bool)
    for t in range(mask.shape[0]):
        seen = seen | (mask[t] & (t > 2))
    return seen

CASES = [lambda: ((_arr((6, 3), "bool"),), {})]
FUNC = "late"
''')
