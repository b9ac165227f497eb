"""Type-promotion corners: weak Python scalars, bools, mixed widths, clip bounds.

Promotion decides the carry dtype after one step; these are the cases where the rule is easy to
get subtly wrong (weak types, uint overflow, keyword bounds of clip).
"""
from hunt_common import P

P("promo_01_weak_int_times_bool", "int32 carry plus 3 * bool row (weak int32).", '''
@jax.jit
def score(mask: Bool[Array, "T D"]):
    acc = jnp.zeros(mask.shape[1:], jnp.int32)
    for m_t in mask:
        acc = acc + 3 * m_t
    return acc

CASES = [lambda: ((_arr((6, 4), "bool"),), {})]
FUNC = "score"
''')

P("promo_02_weak_float_times_int8", "default-float carry plus 0.5 * int8 row (weak float32).", '''
@jax.jit
def half(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t in xs:
        acc = acc + 0.5 * x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "half"
''')

P("promo_03_f16_carry_weak_float_int8", "float16 carry plus 0.25 * int8 row: weak float32 meets float16 (stays float16).", '''
@jax.jit
def q(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc + 0.25 * x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "q"
''')

P("promo_04_bf16_weak_float", "control: bfloat16 carry decayed by a weak float and fed bf16 rows.", '''
@jax.jit
def ema(xs: BFloat16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.bfloat16)
    for x_t in xs:
        acc = 0.9 * acc + 0.1 * x_t
    return acc

CASES = [lambda: ((_arr((8, 3), "bfloat16"),), {})]
FUNC = "ema"
''')

P("promo_05_weak_complex_times_f16", "float16 carry times a weak complex (complex64).", '''
@jax.jit
def rot(xs: Float16[Array, "T D"]):
    acc = jnp.ones(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc * x_t * 1j
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "rot"
''')

P("promo_06_uint64_into_default_int", "default-int carry plus uint64 rows: int64 + uint64 is float64 under x64.", '''
@jax.jit
def tally(us: UInt64[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], dtype=int)
    for t in range(us.shape[0]):
        u = us[t]
        acc = acc + u
    return acc

CASES = [lambda: ((_arr((6, 3), "uint64", hi=9),), {})]
FUNC = "tally"
''')

P("promo_07_int_plus_uint32", "int32 carry plus uint32 rows (int64 under x64).", '''
@jax.jit
def tally(us: UInt32[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], jnp.int32)
    for u_t in us:
        acc = acc + u_t
    return acc

CASES = [lambda: ((_arr((6, 3), "uint32", hi=9),), {})]
FUNC = "tally"
''')

P("promo_08_default_int_plus_uint32", "default-int carry (jnp.int_) plus uint32 rows.", '''
@jax.jit
def tally(us: UInt32[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], dtype=jnp.int_)
    for t in range(us.shape[0]):
        v = us[t]
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "uint32", hi=9),), {})]
FUNC = "tally"
''')

P("promo_09_bf16_plus_f16", "bfloat16 carry plus float16 rows: bf16 + f16 is float32.", '''
@jax.jit
def mix(xs: Float16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.bfloat16)
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "mix"
''')

P("promo_10_default_float_bf16_f16", "default-float carry plus a bf16 row and a f16 row.", '''
@jax.jit
def mix(a: BFloat16[Array, "T D"], b: Float16[Array, "T D"]):
    acc = jnp.zeros(a.shape[1:])
    for a_t, b_t in zip(a, b, strict=True):
        acc = acc + a_t + b_t
    return acc

CASES = [lambda: ((_arr((6, 3), "bfloat16"), _arr((6, 3), "float16", seed=2)), {})]
FUNC = "mix"
''')

P("promo_11_f32_carry_complex", "float32 carry plus complex rows.", '''
@jax.jit
def mix(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.float32)
    for z_t in zs:
        acc = acc + z_t
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "mix"
''')

P("promo_12_clip_int8_float_bounds", "int8 carry clipped with float32 array bounds (clip promotes to float32).", '''
@jax.jit
def clipped(xs: Int8[Array, "T D"], lo: Float32[Array, "D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        s = acc + x_t
        acc = jnp.clip(s, lo, hi)
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"), jnp.full((3,), -2.5, jnp.float32), jnp.full((3,), 4.5, jnp.float32)), {})]
FUNC = "clipped"
''')

P("promo_13_clip_f16_f32_bounds", "float16 carry clipped with float32 bounds: carry becomes float32.", '''
@jax.jit
def clipped(xs: Float16[Array, "T D"], lo: Float32[Array, "D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, lo, hi)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), -jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32)), {})]
FUNC = "clipped"
''')

P("promo_14_clip_broadcast_bounds", "scalar carry clipped with (D,) bounds: the carry broadcasts to (D,).", '''
@jax.jit
def clipped(xs: Float32[Array, "T"], lo: Float32[Array, "D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros((), jnp.float32)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, lo, hi)
    return acc

CASES = [lambda: ((_arr((6,), "float32"), -jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32)), {})]
FUNC = "clipped"
''')

P("promo_15_clip_int8_weak_float", "int8 carry clipped with Python bounds 0 and 1.5 (float32).", '''
@jax.jit
def clipped(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        s = acc + x_t
        acc = jnp.clip(s, 0, 1.5)
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "clipped"
''')

P("promo_16_clip_f16_np_scalar_bounds", "float16 carry clipped with jnp.float32 scalar bounds (strong: float32).", '''
@jax.jit
def clipped(xs: Float16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, jnp.float32(-1.0), jnp.float32(1.0))
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "clipped"
''')

P("promo_17_where_mixed_branches", "float16 carry replaced by where(m, carry, float32 row).", '''
@jax.jit
def gate(xs: Float32[Array, "T D"], mask: Bool[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t, m_t in zip(xs, mask, strict=True):
        acc = jnp.where(m_t, acc, x_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "float32"), _arr((6, 3), "bool", seed=1)), {})]
FUNC = "gate"
''')

P("promo_18_where_weak_zero", "control: float16 carry, where(m, carry + x, 0).", '''
@jax.jit
def gate(xs: Float16[Array, "T D"], mask: Bool[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t, m_t in zip(xs, mask, strict=True):
        acc = jnp.where(m_t, acc + x_t, 0)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), _arr((6, 3), "bool", seed=1)), {})]
FUNC = "gate"
''')

P("promo_19_where_int8_weak_float", "int8 carry, where(m, carry + x, 1.5): the weak float makes it float32.", '''
@jax.jit
def gate(xs: Int8[Array, "T D"], mask: Bool[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for t in range(xs.shape[0]):
        s = acc + xs[t]
        acc = jnp.where(mask[t], s, 1.5)
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"), _arr((6, 3), "bool", seed=1)), {})]
FUNC = "gate"
''')

P("promo_20_maximum_int8_uint8", "int8 carry = maximum(carry, uint8 row): int16.", '''
@jax.jit
def mx(us: UInt8[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], jnp.int8)
    for u_t in us:
        acc = jnp.maximum(acc, u_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=200),), {})]
FUNC = "mx"
''')

P("promo_21_minimum_f16_bf16", "float16 carry = minimum(carry, bf16 row): float32.", '''
@jax.jit
def mn(xs: BFloat16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = jnp.minimum(acc, x_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "bfloat16"),), {})]
FUNC = "mn"
''')

P("promo_22_uint8_wrap_weak", "control: uint8 carry minus 1 wraps identically.", '''
@jax.jit
def wrap(us: UInt8[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], jnp.uint8)
    for u_t in us:
        acc = acc - 1 + u_t
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=3),), {})]
FUNC = "wrap"
''')

P("promo_23_bool_or_carry", "bool carry OR-ed with a bool row through +.", '''
@jax.jit
def seen(mask: Bool[Array, "T D"]):
    acc = jnp.zeros(mask.shape[1:], dtype=bool)
    for t in range(mask.shape[0]):
        acc = acc + mask[t]
    return acc

CASES = [lambda: ((_arr((6, 3), "bool"),), {})]
FUNC = "seen"
''')

P("promo_24_int8_plus_true", "int8 carry plus True plus an int8 row.", '''
@jax.jit
def bump(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        v = x_t + True
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "bump"
''')

P("promo_25_int64_weak_float_x64", "default-float carry plus 0.1 * int64 row (float64 under x64).", '''
@jax.jit
def scaled(xs: Int64[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t in xs:
        acc = acc + x_t * 0.1
    return acc

CASES = [lambda: ((_arr((6, 3), "int64"),), {})]
FUNC = "scaled"
''')

P("promo_26_uint8_plus_int8", "int16 carry plus (uint8 row + int8 row) (int16).", '''
@jax.jit
def s(us: UInt8[Array, "T D"], xs: Int8[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], jnp.int16)
    for u_t, x_t in zip(us, xs, strict=True):
        acc = acc + (u_t + x_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=200), _arr((6, 3), "int8", seed=2)), {})]
FUNC = "s"
''')

P("promo_27_maximum_f16_bf16_map", "map-only: maximum of a f16 row and a bf16 row stacked (float32).", '''
@jax.jit
def mx(a: Float16[Array, "T D"], b: BFloat16[Array, "T D"]):
    out = []
    for a_t, b_t in zip(a, b, strict=True):
        out.append(jnp.maximum(a_t, b_t))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "float16"), _arr((6, 3), "bfloat16", seed=5)), {})]
FUNC = "mx"
''')

P("promo_28_default_float_where_f16", "default-float carry = where(m, f16 row, carry).", '''
@jax.jit
def keep(xs: Float16[Array, "T D"], mask: Bool[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t, m_t in zip(xs, mask, strict=True):
        acc = jnp.where(m_t, x_t, acc)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), _arr((6, 3), "bool", seed=3)), {})]
FUNC = "keep"
''')

P("promo_29_f16_carry_np_float32_scale", "float16 carry scaled by a module-level np.float32 constant (strong).", '''
SCALE = np.float32(0.5)


@jax.jit
def sc(xs: Float16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc * SCALE + x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "sc"
''')

P("promo_30_f16_weak_module_float", "control: float16 carry scaled by a module-level Python float.", '''
DECAY = 0.75


@jax.jit
def sc(xs: Float16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc * DECAY + x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "sc"
''')

P("promo_31_int8_times_np_int", "int8 carry times a module-level np.int32 constant (strong int32).", '''
GAIN = np.int32(2)


@jax.jit
def g(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        v = x_t * GAIN
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "g"
''')

P("promo_32_float32_ctor_carry_f16_rows", "carry starts as jnp.float32(0) and takes float16 rows (stays float32).", '''
@jax.jit
def s(xs: Float16[Array, "T"]):
    acc = jnp.float32(0)
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((7,), "float16"),), {})]
FUNC = "s"
''')

P("promo_33_weak_int_uint8_overflow_ctrl", "control: uint8 carry + 200 * uint8 row wraps identically.", '''
@jax.jit
def w(us: UInt8[Array, "T D"]):
    acc = jnp.zeros(us.shape[1:], jnp.uint8)
    for u_t in us:
        acc = acc + 200 * u_t
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=3),), {})]
FUNC = "w"
''')

P("promo_34_clip_max_keyword_wider", "float16 carry clipped with max= a float32 array (keyword upper bound only).", '''
@jax.jit
def cl(xs: Float16[Array, "T D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, max=hi)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), jnp.ones(3, jnp.float32)), {})]
FUNC = "cl"
''')

P("promo_35_clip_upper_wider_lower_same", "float16 carry clipped with a float16 lower and a float32 upper bound.", '''
@jax.jit
def cl(xs: Float16[Array, "T D"], lo: Float16[Array, "D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, lo, hi)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), -jnp.ones(3, jnp.float16), jnp.ones(3, jnp.float32)), {})]
FUNC = "cl"
''')

P("promo_36_clip_method_wider", "float16 carry clipped with the .clip method and float32 bounds.", '''
@jax.jit
def cl(xs: Float16[Array, "T D"], lo: Float32[Array, "D"], hi: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = (acc + x_t).clip(lo, hi)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), -jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32)), {})]
FUNC = "cl"
''')

P("promo_37_comparison_in_sum", "int8 carry plus (x_t > 0): bool promotes to int8.", '''
@jax.jit
def pos(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        acc = acc + (x_t > 0)
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "pos"
''')

P("promo_38_clip_min_keyword_broadcast", "scalar carry clipped with min= a (D,) array: the carry broadcasts to (D,).", '''
@jax.jit
def cl(xs: Float32[Array, "T"], lo: Float32[Array, "D"]):
    acc = jnp.zeros((), jnp.float32)
    for x_t in xs:
        acc = jnp.clip(acc + x_t, min=lo)
    return acc

CASES = [lambda: ((_arr((6,)), jnp.zeros(3, jnp.float32)), {})]
FUNC = "cl"
''')
