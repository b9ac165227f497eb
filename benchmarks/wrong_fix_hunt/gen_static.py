"""Static (hashable) number arguments of jit.

A static arg's runtime value (np.float64 vs float, int vs float) changes promotion at trace time,
so a fix cannot judge the carry dtype from the annotation alone.
"""
from hunt_common import P

P("static_01_float_annot_np64_f16", "static `decay: float` called with np.float64(0.9): strong float64 widens a float16 carry.", '''
@partial(jax.jit, static_argnames=("decay",))
def ema(xs: Float16[Array, "T D"], decay: float):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc * decay + x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "float16"),), {"decay": 0.9}),
         lambda: ((_arr((6, 3), "float16"),), {"decay": np.float64(0.9)})]
FUNC = "ema"
''')

P("static_02_float_annot_np32_bf16", "static float given np.float32: a bf16 carry becomes float32.", '''
@partial(jax.jit, static_argnames=("gain",))
def run(xs: BFloat16[Array, "T D"], gain: float):
    acc = jnp.zeros(xs.shape[1:], jnp.bfloat16)
    for x_t in xs:
        acc = acc + gain * x_t
    return acc

CASES = [lambda: ((_arr((6, 3), "bfloat16"),), {"gain": 0.5}),
         lambda: ((_arr((6, 3), "bfloat16"),), {"gain": np.float32(0.5)})]
FUNC = "run"
''')

P("static_03_int_annot_np_int64", "static `k: int` called with np.int64(3) times an int8 carry.", '''
@partial(jax.jit, static_argnames=("k",))
def mul(xs: Int8[Array, "T D"], k: int):
    acc = jnp.zeros(xs.shape[1:], jnp.int8)
    for x_t in xs:
        v = x_t * k
        acc = acc + v
    return acc

CASES = [lambda: ((_arr((6, 3), "int8"),), {"k": 3}), lambda: ((_arr((6, 3), "int8"),), {"k": np.int64(3)})]
FUNC = "mul"
''')

P("static_04_default_float", "static scale with a float default, called with the default and with np.float32.", '''
@partial(jax.jit, static_argnames=("scale",))
def run(xs: Float32[Array, "T D"], scale=0.5):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc * scale + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 3)),), {"scale": np.float32(0.25)}),
         lambda: ((_arr((6, 3)),), {"scale": np.float64(0.25)})]
FUNC = "run"
''')

P("static_05_trip_count_n", "static int n as the trip count over xs[t] (n <= T).", '''
@partial(jax.jit, static_argnames=("n",))
def first_n(xs: Float[Array, "T D"], n: int):
    acc = jnp.zeros(xs.shape[1:])
    for t in range(n):
        acc = acc + xs[t] * 2.0
    return acc

CASES = [lambda: ((_arr((9, 3)),), {"n": 9}), lambda: ((_arr((12, 3)),), {"n": 9})]
FUNC = "first_n"
''')

P("static_06_eps_kwarg_np64_f32", "float32 carry plus static eps given as np.float64 (float64 under x64).", '''
@partial(jax.jit, static_argnames=("eps",))
def smooth(xs: Float32[Array, "T D"], eps: float = 1e-3):
    acc = jnp.zeros(xs.shape[1:], dtype=jnp.float32)
    for x_t in xs:
        acc = acc + x_t + eps
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 3)),), {"eps": np.float64(1e-3)})]
FUNC = "smooth"
''')

P("static_07_bool_flag_branch", "static bool flag choosing the update inside the loop.", '''
@partial(jax.jit, static_argnames=("use_abs",))
def run(xs: Float32[Array, "T D"], use_abs: bool = False):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        if use_abs:
            acc = acc + jnp.abs(x_t)
        else:
            acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 3)),), {"use_abs": True})]
FUNC = "run"
''')

P("static_08_stride", "static stride in range(0, T, stride).", '''
@partial(jax.jit, static_argnames=("stride",))
def sub(xs: Float32[Array, "T D"], stride: int = 2):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(0, xs.shape[0], stride):
        acc = acc + xs[t]
    return acc

CASES = [lambda: ((_arr((9, 3)),), {}), lambda: ((_arr((10, 3)),), {"stride": 3})]
FUNC = "sub"
''')

P("static_09_fill_static_float", "carry initialised with jnp.full(D, fill) from a static float.", '''
@partial(jax.jit, static_argnames=("fill",))
def run(xs: Float32[Array, "T D"], fill: float = 1.0):
    acc = jnp.full(xs.shape[1:], fill)
    for x_t in xs:
        acc = acc * x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 3)),), {"fill": np.float32(2.0)})]
FUNC = "run"
''')

P("static_10_gamma_int_value", "static gamma annotated float, called with the Python int 1 and np.int32(1).", '''
@partial(jax.jit, static_argnames=("gamma",))
def disc(rs: Float16[Array, "T"], gamma: float = 0.5):
    g = jnp.zeros((), jnp.float16)
    for r_t in rs:
        g = r_t + gamma * g
    return g

CASES = [lambda: ((_arr((6,), "float16"),), {"gamma": 1}), lambda: ((_arr((6,), "float16"),), {"gamma": np.int32(1)})]
FUNC = "disc"
''')

P("static_11_static_float_positional", "static_argnums float given np.float64 with a float32 carry.", '''
@partial(jax.jit, static_argnums=(1,))
def decay(xs: Float32[Array, "T D"], rate: float):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc * rate + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)), 0.9), {}), lambda: ((_arr((6, 3)), np.float64(0.9)), {})]
FUNC = "decay"
''')

P("static_12_static_dim_zeros", "static int D sizes the carry; rows annotated with D.", '''
@partial(jax.jit, static_argnames=("d",))
def run(xs: Float32[Array, "T D"], d: int):
    acc = jnp.zeros(d, jnp.float32)
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {"d": 3}), lambda: ((_arr((6, 1)),), {"d": 4})]
FUNC = "run"
''')
