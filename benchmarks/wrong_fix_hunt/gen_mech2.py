"""Rewrite mechanics, part 2: index arithmetic, .at[] buffers, output finishers, RNG keys.

Wrapped, negative and strided indices, buffers both read and written, and unusual ways of turning the
per-step list into an array are where a rewrite silently changes which rows it reads or writes.
"""
from hunt_common import P

P("mech_31_circular_prev", "range(T) reading xs[t - 1]: at t = 0 the loop reads the last row.", '''
@jax.jit
def circ(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + xs[t] * xs[t - 1]
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((9, 2), seed=3),), {})]
FUNC = "circ"
''')

P("mech_32_negative_index", "reads xs[-t]: xs[0], xs[-1], xs[-2], ...", '''
@jax.jit
def neg(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(xs[-t] * 2.0)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "neg"
''')

P("mech_33_mirror_index", "reads xs[T - 1 - t] with a carry.", '''
@jax.jit
def mirror(xs: Float32[Array, "T D"]):
    T = xs.shape[0]
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    outs = []
    for t in range(T):
        acc = 0.5 * acc + xs[T - 1 - t]
        outs.append(acc)
    return jnp.stack(outs)

CASES = [lambda: ((_arr((7, 3)),), {})]
FUNC = "mirror"
''')

P("mech_34_modulo_index", "reads xs[(t + 1) % T] (wraps to the first row at the end).", '''
@jax.jit
def nxt(xs: Float32[Array, "T D"]):
    T = xs.shape[0]
    out = []
    for t in range(T):
        out.append(xs[(t + 1) % T] - xs[t])
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "nxt"
''')

P("mech_35_half_index", "reads xs[t // 2] over range(2 * T') (each row twice).", '''
@jax.jit
def dup(xs: Float32[Array, "T D"], ys: Float32[Array, "S D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(ys.shape[0]):
        acc = acc * 0.5 + xs[t // 2] + ys[t]
    return acc

CASES = [lambda: ((_arr((4, 3)), _arr((8, 3), seed=1)), {})]
FUNC = "dup"
''')

P("mech_36_double_index", "reads xs[2 * t] over range(T // 2).", '''
@jax.jit
def ev(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0] // 2):
        out.append(xs[2 * t] + xs[2 * t + 1])
    return jnp.stack(out)

CASES = [lambda: ((_arr((8, 3)),), {}), lambda: ((_arr((9, 3)),), {})]
FUNC = "ev"
''')

P("mech_37_sequence_is_carry", "in-place prefix sum: xs is both the scanned array and updated with .at[t].set.", '''
@jax.jit
def prefix(xs: Float32[Array, "T D"]):
    for t in range(1, xs.shape[0]):
        xs = xs.at[t].set(xs[t] + xs[t - 1])
    return xs

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "prefix"
''')

P("mech_38_buffer_two_writes", "buffer written at t and t + 1 each step (overlapping .at[].add).", '''
@jax.jit
def smear(xs: Float32[Array, "T D"]):
    buf = jnp.zeros((xs.shape[0] + 1, xs.shape[1]), jnp.float32)
    for t in range(xs.shape[0]):
        buf = buf.at[t].add(xs[t])
        buf = buf.at[t + 1].add(0.5 * xs[t])
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "smear"
''')

P("mech_39_buffer_nonzero_init_partial", "ones buffer written only for t >= 1: row 0 keeps its ones.", '''
@jax.jit
def fill(xs: Float32[Array, "T D"]):
    buf = jnp.ones_like(xs)
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(1, xs.shape[0]):
        h = h + xs[t]
        buf = buf.at[t].set(h)
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "fill"
''')

P("mech_40_buffer_stride_write", "buffer written at even rows only: odd rows keep their initial value.", '''
@jax.jit
def ev(xs: Float32[Array, "T D"]):
    buf = jnp.full(xs.shape, -1.0, jnp.float32)
    for t in range(0, xs.shape[0], 2):
        buf = buf.at[t].set(xs[t] * 3.0)
    return buf

CASES = [lambda: ((_arr((7, 3)),), {}), lambda: ((_arr((8, 3)),), {})]
FUNC = "ev"
''')

P("mech_41_buffer_shifted_write", "buffer of T + 1 rows: row 0 initial, row t + 1 the state after step t.", '''
@jax.jit
def traj(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    buf = jnp.zeros((xs.shape[0] + 1, xs.shape[1]), jnp.float32)
    buf = buf.at[0].set(h + 7.0)
    for t in range(xs.shape[0]):
        h = 0.9 * h + xs[t]
        buf = buf.at[t + 1].set(h)
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "traj"
''')

P("mech_42_buffer_reads_prev_row", "buffer row t computed from row t - 1 of the same buffer.", '''
@jax.jit
def rec(xs: Float32[Array, "T D"]):
    buf = jnp.zeros_like(xs)
    buf = buf.at[0].set(xs[0])
    for t in range(1, xs.shape[0]):
        buf = buf.at[t].set(0.5 * buf[t - 1] + xs[t])
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "rec"
''')

P("mech_43_buffer_column_write", "buffer columns written with .at[:, t].set.", '''
@jax.jit
def cols(xs: Float32[Array, "T D"]):
    buf = jnp.zeros((xs.shape[1], xs.shape[0]), jnp.float32)
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
        buf = buf.at[:, t].set(h)
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "cols"
''')

P("mech_44_buffer_dtype_cast", "int8 buffer set with float values (.at[].set casts to int8).", '''
@jax.jit
def q(xs: Float32[Array, "T D"]):
    buf = jnp.zeros(xs.shape, jnp.int8)
    for t in range(xs.shape[0]):
        buf = buf.at[t].set(xs[t] * 10.0)
    return buf

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "q"
''')

P("mech_45_stack_axis1", "per-step (D,) outputs stacked on axis 1.", '''
@jax.jit
def st(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = jnp.tanh(h + x_t)
        out.append(h)
    return jnp.stack(out, axis=1)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "st"
''')

P("mech_46_concatenate_finisher", "per-step (D,) outputs joined with jnp.concatenate (not stack).", '''
@jax.jit
def cat(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h * 0.5 + x_t
        out.append(h)
    return jnp.concatenate(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "cat"
''')

P("mech_47_stack_tail_slice", "outputs stacked from out[1:] (drops the first step).", '''
@jax.jit
def tail(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h * 0.5 + x_t
        out.append(h)
    return jnp.stack(out[1:])

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "tail"
''')

P("mech_48_asarray_dtype_finisher", "outputs finished by jnp.asarray(out, dtype=jnp.float16).", '''
@jax.jit
def lo(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h + x_t
        out.append(h)
    return jnp.asarray(out, dtype=jnp.float16)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "lo"
''')

P("mech_49_append_twice", "two appends per step to the same list (interleaved).", '''
@jax.jit
def two(xs: Float32[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(x_t)
        out.append(-x_t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "two"
''')

P("mech_50_append_in_branch", "appends to different lists on even and odd steps.", '''
@jax.jit
def split(xs: Float32[Array, "T D"]):
    ev, od = [], []
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            ev.append(xs[t])
        else:
            od.append(xs[t] * 2.0)
    return jnp.stack(ev), jnp.stack(od)

CASES = [lambda: ((_arr((8, 3)),), {})]
FUNC = "split"
''')

P("mech_51_temp_read_after_loop", "a temporary of the body read after the loop (its last value).", '''
@jax.jit
def last(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    v = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        v = x_t * 2.0
        acc = acc + v
    return acc + v

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "last"
''')

P("mech_52_list_returned", "the output list is returned as a list.", '''
@jax.jit
def lst(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = jnp.sin(h) + x_t
        out.append(h)
    return out

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "lst"
''')

P("mech_53_builtin_sum_of_list", "Python sum() over the output list after the loop.", '''
@jax.jit
def tot(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h * 0.5 + x_t
        out.append(h * h)
    return sum(out) / len(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "tot"
''')

P("mech_54_branch_last_step_cast", "carry cast to float16 at the last step only (static branch on the index).", '''
@jax.jit
def fin(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    T = xs.shape[0]
    for t in range(T):
        if t == T - 1:
            acc = (acc + xs[t]).astype(jnp.float16)
        else:
            acc = acc + xs[t]
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "fin"
''')

P("mech_55_iterate_transpose", "for col in xs.T (iterating the columns of a (D, T) array).", '''
@jax.jit
def cols(xs: Float32[Array, "D T"]):
    acc = jnp.zeros(xs.shape[0], jnp.float32)
    for c in xs.T:
        acc = 0.5 * acc + c
    return acc

CASES = [lambda: ((_arr((3, 6)),), {})]
FUNC = "cols"
''')

P("mech_56_iterate_slice", "for x_t in xs[1::2] (a strided slice).", '''
@jax.jit
def odd(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs[1::2]:
        acc = acc * 0.5 + x_t
    return acc

CASES = [lambda: ((_arr((7, 3)),), {}), lambda: ((_arr((8, 3)),), {})]
FUNC = "odd"
''')

P("mech_57_mixed_axis_reads", "reads xs[t] and ys[:, t] in the same loop.", '''
@jax.jit
def mix(xs: Float32[Array, "T D"], ys: Float32[Array, "D T"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + xs[t] * ys[:, t]
    return acc

CASES = [lambda: ((_arr((6, 3)), _arr((3, 6), seed=1)), {})]
FUNC = "mix"
''')

P("mech_58_pow_index_float", "map-only: row times 0.7 ** t (Python float power in the loop).", '''
@jax.jit
def dec(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(xs[t] * 0.7 ** t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((9, 3)),), {})]
FUNC = "dec"
''')

P("mech_59_two_pow_index_int", "map-only: int32 row times 2 ** t (Python int power in the loop).", '''
@jax.jit
def sh(xs: Int32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(xs[t] * 2 ** t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((9, 3), "int32"),), {})]
FUNC = "sh"
''')

P("mech_60_enumerate_zip_start", "enumerate(zip(xs, ys), start=1) with the index in a weight.", '''
@jax.jit
def w(xs: Float32[Array, "T D"], ys: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for i, (x_t, y_t) in enumerate(zip(xs, ys, strict=True), start=1):
        acc = acc + (x_t - y_t) / i
    return acc

CASES = [lambda: ((_arr((6, 3)), _arr((6, 3), seed=1)), {})]
FUNC = "w"
''')

P("mech_61_extend", "outputs added with out.extend([a, b]).", '''
@jax.jit
def ext(xs: Float32[Array, "T D"]):
    out = []
    for x_t in xs:
        out.extend([x_t, x_t * 2.0])
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "ext"
''')

P("mech_62_iadd_list", "outputs added with out += [h].", '''
@jax.jit
def ia(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h + x_t
        out += [h]
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "ia"
''')

P("mech_63_random_fold_in", "map-only: noise from fold_in(key, t) per step.", '''
@jax.jit
def noisy(key, xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        k = jax.random.fold_in(key, t)
        out.append(xs[t] + jax.random.normal(k, xs.shape[1:]))
    return jnp.stack(out)

CASES = [lambda: ((jax.random.PRNGKey(0), _arr((6, 3))), {})]
FUNC = "noisy"
''')

P("mech_64_split_keys_list", "keys from jax.random.split used as keys[t].", '''
@jax.jit
def noisy(key, xs: Float32[Array, "T D"]):
    keys = jax.random.split(key, xs.shape[0])
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        h = 0.5 * h + xs[t] + 0.1 * jax.random.normal(keys[t], xs.shape[1:])
    return h

CASES = [lambda: ((jax.random.PRNGKey(1), _arr((6, 3))), {})]
FUNC = "noisy"
''')
