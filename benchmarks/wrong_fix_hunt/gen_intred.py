"""Integer reductions into narrow integer carries.

JAX widens sums of small ints (int8/int16/uint8 -> int32/uint32, int64 under x64), so a scan carry
seeded as a narrow int changes type between steps; these programs check that the fixer proves the
carry dtype instead of trusting the initial value.
"""
from hunt_common import P

P("intred_01_int8_sum_temp", "int8 carry += xs[t].sum() via a temporary: JAX sums int8 into int32.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.int8)
    for t in range(xs.shape[0]):
        v = xs[t].sum()
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((9, 5), "int8", seed=1),), {})]
FUNC = "total"
''')

P("intred_02_int16_jnpsum_temp", "int16 carry plus jnp.sum of an int16 row (int32 in JAX).", '''
@jax.jit
def running(xs: Int16[Array, "T D"]):
    acc = jnp.zeros((), jnp.int16)
    for t in range(xs.shape[0]):
        s = jnp.sum(xs[t])
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((5, 4), "int16"),), {}), lambda: ((_arr((8, 2), "int16", seed=3),), {})]
FUNC = "running"
''')

P("intred_03_uint8_sum_temp", "uint8 carry; the row sum of uint8 is uint32 (uint64 under x64).", '''
@jax.jit
def count(pix: UInt8[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.uint8)
    for t in range(pix.shape[0]):
        row = pix[t].sum()
        acc = acc + row
    return acc

CASES = [lambda: ((_arr((7, 3), "uint8", hi=9),), {}), lambda: ((_arr((10, 4), "uint8", seed=2, hi=5),), {})]
FUNC = "count"
''')

P("intred_04_uint16_prod_temp", "uint16 carry times the row product (prod promotes to uint32).", '''
@jax.jit
def chain(xs: UInt16[Array, "T D"]):
    acc = jnp.ones((), jnp.uint16)
    for t in range(xs.shape[0]):
        p = xs[t].prod()
        acc = acc * p
    return acc

CASES = [lambda: ((_arr((5, 2), "uint16", lo=1, hi=3),), {}), lambda: ((_arr((6, 3), "uint16", seed=4, lo=1, hi=3),), {})]
FUNC = "chain"
''')

P("intred_05_int8_sum_direct", "int8 carry += xs[t].sum() written directly in the update.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.int8)
    for t in range(xs.shape[0]):
        acc = acc + xs[t].sum()
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "total"
''')

P("intred_06_int32_sum_x64", "int32 carry and int32 row sums: int64 under x64.", '''
@jax.jit
def total(xs: Int32[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.int32)
    for t in range(xs.shape[0]):
        s = jnp.sum(xs[t])
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 4), "int32"),), {}), lambda: ((_arr((11, 2), "int32", seed=5),), {})]
FUNC = "total"
''')

P("intred_07_bool_sum_into_int32", "count of true entries per step (sum of bool) into an int32 carry.", '''
@jax.jit
def hits(mask: Bool[Array, "T D"]):
    n = jnp.zeros((), jnp.int32)
    for t in range(mask.shape[0]):
        k = mask[t].sum()
        n = n + k
    return n

CASES = [lambda: ((_arr((6, 5), "bool"),), {}), lambda: ((_arr((9, 3), "bool", seed=7),), {})]
FUNC = "hits"
''')

P("intred_08_cumsum_int8_carry", "cumsum of int8 stays int8 in JAX (no promotion, unlike sum).", '''
@jax.jit
def prefix(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], dtype=jnp.int8)
    for t in range(xs.shape[0]):
        c = jnp.cumsum(xs[t])
        acc = acc + c
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((8, 5), "int8", seed=9),), {})]
FUNC = "prefix"
''')

P("intred_09_int8_elementwise_ok", "control: int8 carry updated elementwise by an int8 row and a weak int.", '''
@jax.jit
def acc8(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], dtype=jnp.int8)
    for t in range(xs.shape[0]):
        v = xs[t] * 3
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "int8", lo=-40, hi=40),), {}), lambda: ((_arr((12, 2), "int8", seed=1, lo=-40, hi=40),), {})]
FUNC = "acc8"
''')

P("intred_10_float_carry_int_sum", "default-float carry absorbing int8 row sums.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(())
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((9, 4), "int8", seed=2),), {})]
FUNC = "total"
''')

P("intred_11_f16_carry_int_sum", "float16 carry plus int8 row sums (int32; float16 wins).", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), jnp.float16)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "total"
''')

P("intred_12_uint8_max_temp", "control: uint8 carry with the row max (max keeps uint8).", '''
@jax.jit
def peak(xs: UInt8[Array, "T D"]):
    best = jnp.zeros((), jnp.uint8)
    for t in range(xs.shape[0]):
        m = xs[t].max()
        best = jnp.maximum(best, m)
    return best

CASES = [lambda: ((_arr((6, 3), "uint8", hi=200),), {}), lambda: ((_arr((10, 6), "uint8", seed=3, hi=250),), {})]
FUNC = "peak"
''')

P("intred_13_int16_jnpprod_temp", "int16 carry accumulating jnp.prod of an int16 row.", '''
@jax.jit
def prods(xs: Int16[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.int16)
    for t in range(xs.shape[0]):
        p = jnp.prod(xs[t])
        acc = acc + p
    return acc

CASES = [lambda: ((_arr((5, 3), "int16"),), {}), lambda: ((_arr((9, 2), "int16", seed=8),), {})]
FUNC = "prods"
''')

P("intred_14_dict_carry_int8_total", "dict carry whose int8 entry takes row sums through a temporary.", '''
@jax.jit
def stats(xs: Int8[Array, "T D"]):
    state = {"total": jnp.zeros((), jnp.int8), "peak": jnp.zeros((), jnp.int8)}
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        m = xs[t].max()
        state = {"total": state["total"] + s, "peak": jnp.maximum(state["peak"], m)}
    return state

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "stats"
''')

P("intred_15_int32_plus_uint8_sum", "int32 carry plus a uint8 row sum (uint32): int64 under x64.", '''
@jax.jit
def energy(xs: UInt8[Array, "T D"]):
    acc = jnp.zeros((), jnp.int32)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=50),), {})]
FUNC = "energy"
''')

P("intred_16_string_dtype_int16", "int16 carry spelled dtype='int16', sum through a temporary.", '''
@jax.jit
def total(xs: Int16[Array, "T D"]):
    acc = jnp.zeros((), dtype="int16")
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((7, 2), "int16"),), {})]
FUNC = "total"
''')

P("intred_17_int8_scalar_ctor", "carry starts as jnp.int8(0) and takes int8 row sums.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.int8(0)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((9, 4), "int8", seed=11),), {})]
FUNC = "total"
''')

P("intred_18_nansum_int8", "jnp.nansum of int8 promotes to int32 like sum.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), jnp.int8)
    for t in range(xs.shape[0]):
        s = jnp.nansum(xs[t])
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "total"
''')

P("intred_19_sum_dtype_kw", "sum(dtype=int8) keeps int8: a correct int8 carry.", '''
@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), jnp.int8)
    for t in range(xs.shape[0]):
        s = xs[t].sum(dtype=jnp.int8)
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "total"
''')

P("intred_20_helper_sum", "module helper returning v.sum(), applied to an int8 row, into an int8 carry.", '''
def row_total(v):
    return v.sum()


@jax.jit
def total(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), jnp.int8)
    for t in range(xs.shape[0]):
        s = row_total(xs[t])
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((10, 2), "int8", seed=4),), {})]
FUNC = "total"
''')

P("intred_21_bool_carry_any", "bool carry OR-ed with (row sum > 0).", '''
@jax.jit
def any_pos(xs: Int8[Array, "T D"]):
    seen = jnp.zeros((), dtype=bool)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        seen = seen | (s > 0)
    return seen

CASES = [lambda: ((_arr((6, 3), "int8", lo=-5, hi=1),), {}), lambda: ((_arr((8, 3), "int8", seed=2),), {})]
FUNC = "any_pos"
''')

P("intred_22_int8_range_temp", "control: int8 carry with max - min of an int8 row (stays int8).", '''
@jax.jit
def spread(xs: Int8[Array, "T D"]):
    acc = jnp.zeros((), jnp.int8)
    for t in range(xs.shape[0]):
        r = xs[t].max() - xs[t].min()
        acc = acc + r
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "spread"
''')

P("intred_23_uint8_bool_count", "uint8 carry plus a count of positives (sum of bool is int32).", '''
@jax.jit
def positives(xs: Float[Array, "T D"]):
    n = jnp.zeros((), jnp.uint8)
    for t in range(xs.shape[0]):
        k = jnp.sum(xs[t] > 0)
        n = n + k
    return n

CASES = [lambda: ((_arr((6, 4)),), {})]
FUNC = "positives"
''')

P("intred_24_int16_cumsum_last", "int16 carry with the last entry of a cumsum (cumsum stays int16).", '''
@jax.jit
def total(xs: Int16[Array, "T D"]):
    acc = jnp.zeros((), jnp.int16)
    for t in range(xs.shape[0]):
        cs = jnp.cumsum(xs[t])
        acc = acc + cs[-1]
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"),), {})]
FUNC = "total"
''')

P("intred_25_int32_int16_sum_x64", "int32 carry plus int16 row sums (int32, int64 under x64).", '''
@jax.jit
def total(xs: Int16[Array, "T D"]):
    acc = jnp.zeros((), dtype=jnp.int32)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"),), {})]
FUNC = "total"
''')

P("intred_26_int8_augassign_prod", "int8 carry *= row product through a temporary (AugAssign).", '''
@jax.jit
def chain(xs: Int8[Array, "T D"]):
    acc = jnp.ones((), jnp.int8)
    for t in range(xs.shape[0]):
        p = xs[t].prod()
        acc *= p
    return acc

CASES = [lambda: ((_arr((5, 2), "int8", lo=1, hi=3),), {})]
FUNC = "chain"
''')

P("intred_27_int8_vector_carry_rowsum", "(D,) int8 carry plus a broadcast scalar row sum.", '''
@jax.jit
def shift(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for t in range(xs.shape[0]):
        s = xs[t].sum()
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {}), lambda: ((_arr((7, 5), "int8", seed=6),), {})]
FUNC = "shift"
''')

P("intred_28_cumprod_uint8_out", "map-only: per-step cumprod of uint8 rows stacked (stays uint8).", '''
@jax.jit
def cp(xs: UInt8[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(jnp.cumprod(xs[t]))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "uint8", hi=6),), {})]
FUNC = "cp"
''')

P("intred_29_sum_bool_stack", "map-only: per-step sum of a bool row stacked (int32 / int64 under x64).", '''
@jax.jit
def counts(mask: Bool[Array, "T D"]):
    out = []
    for t in range(mask.shape[0]):
        out.append(mask[t].sum())
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 4), "bool"),), {})]
FUNC = "counts"
''')
