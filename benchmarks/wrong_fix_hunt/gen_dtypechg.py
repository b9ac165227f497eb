"""Loop bodies whose result dtype differs from the carry's.

abs/real of complex, int -> float ufuncs, astype to another array's dtype: the unrolled loop just
rebinds the name, but lax.scan needs the carry type fixed, so a fix may only be safe when the
body provably keeps the dtype (the few `_ok` programs are such controls).
"""
from hunt_common import P

P("dtypechg_01_abs_complex_carry", "complex64 carry replaced by abs(carry * z_t): abs of complex is float32.", '''
@jax.jit
def mag(zs: Complex64[Array, "T D"]):
    acc = jnp.ones(zs.shape[1:], dtype=jnp.complex64)
    for t in range(zs.shape[0]):
        acc = jnp.abs(acc * zs[t])
    return acc

CASES = [lambda: ((_arr((5, 3), "complex64"),), {}), lambda: ((_arr((8, 2), "complex64", seed=1),), {})]
FUNC = "mag"
''')

P("dtypechg_02_absolute_complex_sum", "jnp.absolute(carry + z_t) on a complex carry.", '''
@jax.jit
def walk(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.complex64)
    for t in range(zs.shape[0]):
        acc = jnp.absolute(acc + zs[t])
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "walk"
''')

P("dtypechg_03_arctan2_int_carry", "int8 carry plus arctan2 of int8 rows (float32 in JAX).", '''
@jax.jit
def angles(xs: Int8[Array, "T D"], ys: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], dtype=jnp.int8)
    for x_t, y_t in zip(xs, ys, strict=True):
        a = jnp.arctan2(x_t, y_t)
        acc = acc + a
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"), _arr((6, 3), "int8", seed=1)), {})]
FUNC = "angles"
''')

P("dtypechg_04_hypot_int16", "int16 carry plus hypot of int16 rows (float32).", '''
@jax.jit
def dist(xs: Int16[Array, "T D"], ys: Int16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int16)
    for t, (x_t, y_t) in enumerate(zip(xs, ys, strict=True)):
        h = jnp.hypot(x_t, y_t)
        acc = acc + h
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"), _arr((6, 3), "int16", seed=2)), {})]
FUNC = "dist"
''')

P("dtypechg_05_logaddexp_float_carry", "default-float carry plus logaddexp of int32 rows (float).", '''
@jax.jit
def lse(xs: Int32[Array, "T D"], ys: Int32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t, y_t in zip(xs, ys, strict=True):
        acc = acc + jnp.logaddexp(x_t, y_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "int32"), _arr((6, 3), "int32", seed=3)), {})]
FUNC = "lse"
''')

P("dtypechg_06_copysign_int8", "int8 carry plus copysign of int8 values (float32).", '''
@jax.jit
def signs(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        c = jnp.copysign(x_t, x_t)
        acc = acc + c
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "signs"
''')

P("dtypechg_07_true_divide_int", "int32 carry plus true_divide of int rows (float).", '''
@jax.jit
def ratio(xs: Int32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int32)
    for x_t in xs:
        q = jnp.true_divide(x_t, 2)
        acc = acc + q
    return acc

CASES = [lambda: ((_arr((6, 3), "int32"),), {})]
FUNC = "ratio"
''')

P("dtypechg_08_power_int_ok", "control: int8 carry plus power(x_t, 2) (stays int8).", '''
@jax.jit
def sq(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        p = jnp.power(x_t, 2)
        acc = acc + p
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "sq"
''')

P("dtypechg_09_sqrt_int_into_f16", "float16 carry plus sqrt of an int8 row (float32).", '''
@jax.jit
def roots(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        r = jnp.sqrt(x_t)
        acc = acc + r
    return acc

CASES = [lambda: ((_arr((6, 3), "int8", lo=0, hi=9),), {})]
FUNC = "roots"
''')

P("dtypechg_10_exp_int_default_float", "default-float carry plus exp of int16 (float32/float64).", '''
@jax.jit
def expo(xs: Int16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t in xs:
        acc = acc + jnp.exp(x_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"),), {})]
FUNC = "expo"
''')

P("dtypechg_11_tanh_int_carry", "int32 carry set to tanh of an int row via a temporary.", '''
@jax.jit
def squash(xs: Int32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int32)
    for x_t in xs:
        h = jnp.tanh(x_t)
        acc = acc + h
    return acc

CASES = [lambda: ((_arr((6, 3), "int32"),), {})]
FUNC = "squash"
''')

P("dtypechg_12_mean_int_carry", "int32 carry plus the mean of an int row (float).", '''
@jax.jit
def avg(xs: Int32[Array, "T D"]):
    acc = jnp.zeros((), jnp.int32)
    for x_t in xs:
        m = x_t.mean()
        acc = acc + m
    return acc

CASES = [lambda: ((_arr((6, 3), "int32"),), {})]
FUNC = "avg"
''')

P("dtypechg_13_floor_divide_ok", "control: int16 carry plus floor_divide of int16 (stays int16).", '''
@jax.jit
def halves(xs: Int16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int16)
    for x_t in xs:
        h = jnp.floor_divide(x_t, 2)
        acc = acc + h
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"),), {})]
FUNC = "halves"
''')

P("dtypechg_14_sign_complex", "complex carry times sign(z_t) (complex stays complex).", '''
@jax.jit
def phase(zs: Complex64[Array, "T D"]):
    acc = jnp.ones(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = acc * jnp.sign(z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "phase"
''')

P("dtypechg_15_square_uint8", "control: uint8 carry plus square of uint8 (stays uint8, wraps).", '''
@jax.jit
def sq(xs: UInt8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.uint8)
    for x_t in xs:
        s = jnp.square(x_t)
        acc = acc + s
    return acc

CASES = [lambda: ((_arr((6, 3), "uint8", hi=30),), {})]
FUNC = "sq"
''')

P("dtypechg_16_real_into_f32", "float32 carry plus .real of a complex row.", '''
@jax.jit
def re(zs: Complex[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.float32)
    for z_t in zs:
        acc = acc + z_t.real
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {}), lambda: ((_arr((6, 3), "complex128"),), {})]
FUNC = "re"
''')

P("dtypechg_17_imag_default_float", "default-float carry plus .imag of a complex row (complex128 under x64).", '''
@jax.jit
def im(zs: Complex[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:])
    for z_t in zs:
        acc = acc + z_t.imag
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {}), lambda: ((_arr((5, 2), "complex128", seed=4),), {})]
FUNC = "im"
''')

P("dtypechg_18_angle_complex_carry", "complex carry plus jnp.angle of z_t (float).", '''
@jax.jit
def ang(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = acc + jnp.angle(z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "ang"
''')

P("dtypechg_19_conj_complex", "complex carry times conj(z_t).", '''
@jax.jit
def corr(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = acc + z_t * jnp.conj(z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "corr"
''')

P("dtypechg_20_norm_complex_carry", "complex scalar carry replaced by linalg.norm(z_t + carry): norm is real.", '''
@jax.jit
def nrm(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros((), jnp.complex64)
    for z_t in zs:
        acc = jnp.linalg.norm(z_t + acc)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "nrm"
''')

P("dtypechg_21_std_complex_carry", "complex scalar carry replaced by std(z_t * carry): std of complex is real.", '''
@jax.jit
def spread(zs: Complex64[Array, "T D"]):
    acc = jnp.ones((), jnp.complex64)
    for z_t in zs:
        acc = jnp.std(z_t * acc)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "spread"
''')

P("dtypechg_22_abs_int8_ok", "control: abs of int8 keeps int8 (abs(-128) wraps).", '''
@jax.jit
def l1(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        a = jnp.abs(x_t)
        acc = acc + a
    return acc

CASES = [lambda: ((_arr((6, 3), "int8", lo=-128, hi=-120),), {})]
FUNC = "l1"
''')

P("dtypechg_23_divide_f16_carry", "float16 carry plus divide of int16 rows (float32).", '''
@jax.jit
def frac(xs: Int16[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        q = jnp.divide(x_t, 3)
        acc = acc + q
    return acc

CASES = [lambda: ((_arr((6, 3), "int16"),), {})]
FUNC = "frac"
''')

P("dtypechg_24_hypot_into_bf16", "bfloat16 carry plus hypot of int8 rows (float32): carry widens.", '''
@jax.jit
def dist(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], dtype=jnp.bfloat16)
    for x_t in xs:
        h = jnp.hypot(x_t, x_t)
        acc = acc + h
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "dist"
''')

P("dtypechg_25_power_int_float_exp", "int32 carry plus power(x_t, 0.5) (float).", '''
@jax.jit
def pw(xs: Int32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int32)
    for x_t in xs:
        p = jnp.power(x_t, 0.5)
        acc = acc + p
    return acc

CASES = [lambda: ((_arr((6, 3), "int32", lo=0),), {})]
FUNC = "pw"
''')

P("dtypechg_26_abs_complex_into_float_map", "map-only: abs of complex rows stacked (float32 output).", '''
@jax.jit
def mags(zs: Complex64[Array, "T D"]):
    out = []
    for z_t in zs:
        out.append(jnp.abs(z_t) * 2)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "mags"
''')

P("dtypechg_27_exp_bool", "default-float carry plus exp of a bool mask.", '''
@jax.jit
def e(mask: Bool[Array, "T D"]):
    acc = jnp.zeros(mask.shape[1:])
    for m_t in mask:
        acc = acc + jnp.exp(m_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "bool"),), {})]
FUNC = "e"
''')

P("dtypechg_28_floor_int_carry", "int8 carry plus jnp.floor(x_t) (floor of int8 stays int8).", '''
@jax.jit
def fl(xs: Int8[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        f = jnp.floor(x_t)
        acc = acc + f
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "fl"
''')

P("dtypechg_29_abs_complex_real_carry", "complex carry plus abs(z_t): complex + float32 stays complex.", '''
@jax.jit
def addmag(zs: Complex64[Array, "T D"]):
    acc = jnp.zeros(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = acc + jnp.abs(z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "addmag"
''')

P("dtypechg_30_var_complex128_x64", "float64 carry plus var of a complex128 row (float64).", '''
@jax.jit
def v(zs: Complex128[Array, "T D"]):
    acc = jnp.zeros((), jnp.float64)
    for z_t in zs:
        acc = acc + jnp.var(z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex128"),), {})]
FUNC = "v"
''')

P("dtypechg_31_builtin_abs_complex", "complex carry replaced by builtin abs(carry * z_t) (float32).", '''
@jax.jit
def ab(zs: Complex64[Array, "T D"]):
    acc = jnp.ones(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = abs(acc * z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "ab"
''')

P("dtypechg_32_real_fn_complex_carry", "complex carry replaced by jnp.real(carry * z_t).", '''
@jax.jit
def re(zs: Complex64[Array, "T D"]):
    acc = jnp.ones(zs.shape[1:], jnp.complex64)
    for z_t in zs:
        acc = jnp.real(acc * z_t)
    return acc

CASES = [lambda: ((_arr((6, 3), "complex64"),), {})]
FUNC = "re"
''')

P("dtypechg_33_sum_of_bool_method_into_int32_carry_x64", "int32 carry plus (x_t > 0).sum(): int64 under x64.", '''
@jax.jit
def cnt(xs: Float32[Array, "T D"]):
    acc = jnp.zeros((), jnp.int32)
    for x_t in xs:
        acc = acc + (x_t > 0).sum()
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "cnt"
''')

P("dtypechg_34_astype_other_dtype", "float16 carry set to (carry + x_t).astype(w.dtype) where w may be float32.", '''
@jax.jit
def cast(xs: Float16[Array, "T D"], w: Float[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = (acc + x_t).astype(w.dtype)
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"), jnp.ones(3, jnp.float16)), {}),
         lambda: ((_arr((6, 3), "float16"), jnp.ones(3, jnp.float32)), {})]
FUNC = "cast"
''')
