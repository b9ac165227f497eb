"""Carries that start as Python scalars (acc = 0.0, gae = 0).

In the unrolled loop the first step folds the Python scalar in at Python precision; in the scan it
is a weak-typed array from step one. Overflow, rounding and dtype then differ.
"""
from hunt_common import P

P("pyscalar_01_gae_static", "GAE with gae = 0.0 and static gamma/lam over (T,) rewards.", '''
@partial(jax.jit, static_argnames=("gamma", "lam"))
def gae(rewards: Float[Array, "T"], values: Float[Array, "T"], gamma: float = 0.99, lam: float = 0.95):
    adv = 0.0
    out = []
    for t in reversed(range(rewards.shape[0] - 1)):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        adv = delta + gamma * lam * adv
        out.append(adv)
    return jnp.stack(out[::-1])

CASES = [lambda: ((_arr((8,)), _arr((8,), seed=1)), {}), lambda: ((_arr((8,), "float16"), _arr((8,), "float16", seed=1)), {})]
FUNC = "gae"
''')

P("pyscalar_02_one_times_floats", "acc = 1.0 multiplied by Python floats then by float16 rows.", '''
@jax.jit
def prodish(xs: Float16[Array, "T"]):
    acc = 1.0
    for x_t in xs:
        acc = acc * 0.9 * 1.1 + x_t
    return acc

CASES = [lambda: ((_arr((6,), "float16"),), {}), lambda: ((_arr((9,), "float16", seed=2),), {})]
FUNC = "prodish"
''')

P("pyscalar_03_big_constant_fold", "acc = 1e30 squared then scaled: constant-folded in float64 in the loop, inf in float32.", '''
@jax.jit
def huge(xs: Float32[Array, "T"]):
    acc = 1e30
    for x_t in xs:
        acc = acc * 1e30 * 1e-40 + x_t
    return acc

CASES = [lambda: ((_arr((5,)),), {})]
FUNC = "huge"
''')

P("pyscalar_04_total_zero_float", "total = 0 then adding float32 elements.", '''
@jax.jit
def s(xs: Float32[Array, "T"]):
    total = 0
    for x_t in xs:
        total = total + x_t
    return total

CASES = [lambda: ((_arr((7,)),), {})]
FUNC = "s"
''')

P("pyscalar_05_total_zero_uint8", "total = 0 then adding uint8 elements (wraps in uint8).", '''
@jax.jit
def s(xs: UInt8[Array, "T"]):
    total = 0
    for x_t in xs:
        total = total + x_t
    return total

CASES = [lambda: ((_arr((9,), "uint8", lo=100, hi=200),), {})]
FUNC = "s"
''')

P("pyscalar_06_done_false", "done = False, OR-ed with bool elements.", '''
@jax.jit
def any_(m: Bool[Array, "T"]):
    done = False
    for m_t in m:
        done = jnp.logical_or(done, m_t)
    return done

CASES = [lambda: ((_arr((6,), "bool"),), {})]
FUNC = "any_"
''')

P("pyscalar_07_count_bool", "count = 0 plus bool elements (weak int32).", '''
@jax.jit
def count(m: Bool[Array, "T"]):
    n = 0
    for m_t in m:
        n = n + m_t
    return n

CASES = [lambda: ((_arr((8,), "bool"),), {})]
FUNC = "count"
''')

P("pyscalar_08_neg_inf_max", "best = -jnp.inf then maximum with float16 elements.", '''
@jax.jit
def best(xs: Float16[Array, "T"]):
    b = -jnp.inf
    for x_t in xs:
        b = jnp.maximum(b, x_t)
    return b

CASES = [lambda: ((_arr((7,), "float16"),), {})]
FUNC = "best"
''')

P("pyscalar_09_zero_batched", "acc = 0.0 with batched rows: the carry becomes (B,).", '''
@jax.jit
def s(xs: Float32[Array, "T B"]):
    acc = 0.0
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "s"
''')

P("pyscalar_10_zero_plus_int8_sum", "s = 0 plus int8 row sums (int32 / int64 under x64).", '''
@jax.jit
def s(xs: Int8[Array, "T D"]):
    acc = 0
    for x_t in xs:
        acc = acc + x_t.sum()
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {})]
FUNC = "s"
''')

P("pyscalar_11_product_f16", "m = 1.0 times float16 elements.", '''
@jax.jit
def p(xs: Float16[Array, "T"]):
    m = 1.0
    for x_t in xs:
        m = m * x_t
    return m

CASES = [lambda: ((_arr((6,), "float16") * 0.5 + 1,), {})]
FUNC = "p"
''')

P("pyscalar_12_zero_plus_jnp_sum", "acc = 0.0 plus jnp.sum of a (D,) row.", '''
@jax.jit
def s(xs: Float32[Array, "T D"]):
    acc = 0.0
    for t in range(xs.shape[0]):
        acc = acc + jnp.sum(xs[t])
    return acc

CASES = [lambda: ((_arr((6, 4)),), {})]
FUNC = "s"
''')

P("pyscalar_13_complex_zero", "v = 0j plus complex64 elements.", '''
@jax.jit
def s(zs: Complex64[Array, "T"]):
    v = 0j
    for z_t in zs:
        v = v + z_t
    return v

CASES = [lambda: ((_arr((6,), "complex64"),), {})]
FUNC = "s"
''')

P("pyscalar_14_flag_true_and", "flag = True AND-ed with bool elements.", '''
@jax.jit
def all_(m: Bool[Array, "T"]):
    flag = True
    for m_t in m:
        flag = flag & m_t
    return flag

CASES = [lambda: ((_arr((6,), "bool"),), {}), lambda: ((jnp.ones(6, bool),), {})]
FUNC = "all_"
''')

P("pyscalar_15_zero_static_gamma_np32", "acc = 0.0 discounted by a static gamma given as np.float32 over float16 rewards.", '''
@partial(jax.jit, static_argnames=("gamma",))
def ret(rs: Float16[Array, "T"], gamma: float = 0.99):
    g = 0.0
    for r_t in reversed(rs):
        g = r_t + gamma * g
    return g

CASES = [lambda: ((_arr((6,), "float16"),), {}), lambda: ((_arr((6,), "float16"),), {"gamma": np.float32(0.99)})]
FUNC = "ret"
''')

P("pyscalar_16_zero_plus_f16", "acc = 0 (int) then float16 elements.", '''
@jax.jit
def s(xs: Float16[Array, "T"]):
    acc = 0
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((7,), "float16"),), {})]
FUNC = "s"
''')

P("pyscalar_17_half_plus_cast_bf16", "acc = 0.5 plus bfloat16-cast elements.", '''
@jax.jit
def s(xs: Float32[Array, "T"]):
    acc = 0.5
    for x_t in xs:
        acc = acc + x_t.astype(jnp.bfloat16)
    return acc

CASES = [lambda: ((_arr((7,)),), {})]
FUNC = "s"
''')

P("pyscalar_18_zero_gae_module_consts", "gae = 0.0 with module-level GAMMA/LAM and a float32 row.", '''
GAMMA = 0.99
LAM = 0.9


@jax.jit
def adv(deltas: Float32[Array, "T"]):
    g = 0.0
    out = []
    for d_t in reversed(deltas):
        g = d_t + GAMMA * LAM * g
        out.append(g)
    return jnp.stack(out[::-1])

CASES = [lambda: ((_arr((8,)),), {})]
FUNC = "adv"
''')

P("pyscalar_19_f16_overflow_first_step", "acc = 100.0; acc * 1000.0 / 1000.0 overflows float16 in the scan, not in the folded first step.", '''
@jax.jit
def sc(xs: Float16[Array, "T"]):
    acc = 100.0
    for x_t in xs:
        acc = acc * 1000.0 / 1000.0 + x_t
    return acc

CASES = [lambda: ((_arr((6,), "float16"),), {})]
FUNC = "sc"
''')

P("pyscalar_20_f32_overflow_first_step", "acc = 1e20; acc * 1e20 / 1e20 overflows float32 in the scan's first step only.", '''
@jax.jit
def sc(xs: Float32[Array, "T"]):
    acc = 1e20
    for x_t in xs:
        acc = acc * 1e20 / 1e20 + x_t
    return acc

CASES = [lambda: ((_arr((6,)),), {})]
FUNC = "sc"
''')

P("pyscalar_21_f16_subnormal_first_step", "acc = 1.0; acc * 1e-7 * 1e7: float16 subnormal rounding in the scan's first step.", '''
@jax.jit
def sc(xs: Float16[Array, "T"]):
    acc = 1.0
    for x_t in xs:
        acc = acc * 1e-7 * 1e7 + 0.01 * x_t
    return acc

CASES = [lambda: ((_arr((6,), "float16"),), {})]
FUNC = "sc"
''')

P("pyscalar_22_bf16_chain_first_step", "acc = 1.0 times 1.004 four times: bf16 rounds each product in the scan.", '''
@jax.jit
def sc(xs: BFloat16[Array, "T"]):
    acc = 1.0
    for x_t in xs:
        acc = acc * 1.004 * 1.004 * 1.004 * 1.004 * 1.004 * 1.004 * 1.004 * 1.004 + x_t * 0.0
    return acc

CASES = [lambda: ((_arr((1,), "bfloat16"),), {}), lambda: ((_arr((5,), "bfloat16"),), {})]
FUNC = "sc"
''')

P("pyscalar_23_gae_f16_big_reward_scale", "gae = 0.0 discounted by 0.99 over float16 rewards (reversed).", '''
@jax.jit
def g(rs: Float16[Array, "T"]):
    adv = 0.0
    for r_t in reversed(rs):
        adv = r_t + 0.99 * adv
    return adv

CASES = [lambda: ((_arr((8,), "float16"),), {})]
FUNC = "g"
''')

P("pyscalar_24_int_zero_times_f16", "acc = 0 then acc * 0.5 + float16 rows.", '''
@jax.jit
def s(xs: Float16[Array, "T"]):
    acc = 0
    for x_t in xs:
        acc = acc * 0.5 + x_t
    return acc

CASES = [lambda: ((_arr((6,), "float16"),), {})]
FUNC = "s"
''')

P("pyscalar_25_exp_python_first", "acc = 0.0; acc = jnp.exp(acc) * x_t (the first step exponentiates a Python 0).", '''
@jax.jit
def s(xs: Float16[Array, "T"]):
    acc = 0.0
    for x_t in xs:
        acc = jnp.exp(acc * 0.1) * x_t
    return acc

CASES = [lambda: ((_arr((6,), "float16"),), {})]
FUNC = "s"
''')

P("pyscalar_26_uint8_zero_minus", "n = 0 then n - 1 + uint8 elements (wraps in uint8).", '''
@jax.jit
def s(us: UInt8[Array, "T"]):
    n = 0
    for u_t in us:
        n = n - 1 + u_t
    return n

CASES = [lambda: ((_arr((6,), "uint8", hi=3),), {})]
FUNC = "s"
''')

P("pyscalar_27_int8_big_python_start", "acc = 300 (out of int8 range) then + int8 elements.", '''
@jax.jit
def s(xs: Int8[Array, "T"]):
    acc = 300
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6,), "int8"),), {})]
FUNC = "s"
''')

P("pyscalar_28_start_minus_first_half", "acc = 0.5; acc = acc - acc * 0.5 + x (first step folds 0.25 exactly).", '''
@jax.jit
def s(xs: Float32[Array, "T D"]):
    acc = 0.5
    for x_t in xs:
        acc = acc - acc * 0.5 + x_t.sum()
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "s"
''')
