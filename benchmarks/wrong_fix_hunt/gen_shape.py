"""Shape corners: broadcasting carries, size-1 axes, squeeze/ravel/transpose.

A carry whose shape grows or shrinks after a step unrolls fine but breaks lax.scan; several only
do so for some input shapes, so each program has cases with both.
"""
from hunt_common import P

P("shape_01_gae_batch_opaque", "GAE with gae = zeros(rewards.shape[1:]) and rewards of shape (T,) or (T, B).", '''
@partial(jax.jit, static_argnames=("gamma", "lam"))
def gae(rewards: Float[Array, "T *B"], values: Float[Array, "T *B"], gamma: float = 0.99, lam: float = 0.95):
    adv = jnp.zeros(rewards.shape[1:])
    out = []
    for t in reversed(range(rewards.shape[0] - 1)):
        delta = rewards[t] + gamma * values[t + 1] - values[t]
        adv = delta + gamma * lam * adv
        out.append(adv)
    return jnp.stack(out[::-1])

CASES = [lambda: ((_arr((8,)), _arr((8,), seed=1)), {}), lambda: ((_arr((8, 3)), _arr((8, 3), seed=1)), {})]
FUNC = "gae"
''')

P("shape_02_gae_python_zero_batch", "GAE with gae = 0.0: rewards (T,) keep it 0-d, (T, B) make it (B,).", '''
@jax.jit
def gae(rewards: Float[Array, "T ..."], gamma: float = 0.99):
    adv = 0.0
    out = []
    for t in reversed(range(rewards.shape[0])):
        adv = rewards[t] + gamma * adv
        out.append(adv)
    return jnp.stack(out[::-1])

CASES = [lambda: ((_arr((8,)),), {}), lambda: ((_arr((8, 3)),), {})]
FUNC = "gae"
''')

P("shape_03_one_carry_broadcast", "carry starts (1,) and broadcasts against (D,) rows.", '''
@jax.jit
def prod(xs: Float32[Array, "T D"]):
    acc = jnp.ones((1,), jnp.float32)
    for x_t in xs:
        acc = acc * x_t
    return acc

CASES = [lambda: ((_arr((6, 1)),), {}), lambda: ((_arr((6, 3)),), {})]
FUNC = "prod"
''')

P("shape_04_keepdims_sum", "carry (D,) plus sum(axis=0, keepdims=True) of a (B, D) row: becomes (1, D).", '''
@jax.jit
def s(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[2:], jnp.float32)
    for x_t in xs:
        acc = acc + x_t.sum(axis=0, keepdims=True)
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {})]
FUNC = "s"
''')

P("shape_05_literal_one_dim", "rows annotated `T 1` and a (1,) carry.", '''
@jax.jit
def s(xs: Float32[Array, "T 1"]):
    acc = jnp.zeros((1,), jnp.float32)
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 1)),), {})]
FUNC = "s"
''')

P("shape_06_transpose_carry", "(N, M) carry plus the transpose of (M, N) rows.", '''
@jax.jit
def tsum(xs: Float32[Array, "T M N"]):
    acc = jnp.zeros((xs.shape[2], xs.shape[1]), jnp.float32)
    for x_t in xs:
        acc = acc + x_t.T
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((5, 4, 4)),), {})]
FUNC = "tsum"
''')

P("shape_07_rnn_matmul", "h = tanh(W @ h + x_t) with W (H, H).", '''
@jax.jit
def rnn(W: Float32[Array, "H H"], xs: Float32[Array, "T H"]):
    h = jnp.zeros(W.shape[0], jnp.float32)
    for x_t in xs:
        h = jnp.tanh(W @ h + x_t)
    return h

CASES = [lambda: ((_arr((3, 3)) * 0.5, _arr((6, 3), seed=1)), {}), lambda: ((_arr((5, 5)) * 0.3, _arr((9, 5), seed=2)), {})]
FUNC = "rnn"
''')

P("shape_08_rnn_batched_x", "h = zeros(H) with batched inputs (T, B, H): the carry becomes (B, H).", '''
@jax.jit
def rnn(W: Float32[Array, "H H"], xs: Float32[Array, "T ... H"]):
    h = jnp.zeros(W.shape[0], jnp.float32)
    for x_t in xs:
        h = jnp.tanh(h @ W + x_t)
    return h

CASES = [lambda: ((_arr((3, 3)) * 0.5, _arr((6, 3), seed=1)), {}), lambda: ((_arr((3, 3)) * 0.5, _arr((6, 2, 3), seed=1)), {})]
FUNC = "rnn"
''')

P("shape_09_literal_index_row", "carry (D,) plus x_t[0] of (B, D) rows.", '''
@jax.jit
def first(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[2:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + xs[t][0]
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((5, 4, 1)),), {})]
FUNC = "first"
''')

P("shape_10_mT_batched", "carry (B, N, M) plus .mT of (B, M, N) rows.", '''
@jax.jit
def s(xs: Float32[Array, "T B M N"]):
    acc = jnp.zeros((xs.shape[1], xs.shape[3], xs.shape[2]), jnp.float32)
    for x_t in xs:
        acc = acc + x_t.mT
    return acc

CASES = [lambda: ((_arr((5, 2, 3, 4)),), {})]
FUNC = "s"
''')

P("shape_11_sum_axis", "carry (D,) plus jnp.sum(x_t, axis=0) of (B, D) rows.", '''
@jax.jit
def s(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[2:], jnp.float32)
    for x_t in xs:
        acc = acc + jnp.sum(x_t, axis=0)
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {})]
FUNC = "s"
''')

P("shape_12_bias_named_dim", "carry (D,) plus x_t plus a (D,) bias.", '''
@jax.jit
def s(xs: Float32[Array, "T D"], b: Float32[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc + x_t + b
    return acc

CASES = [lambda: ((_arr((6, 3)), _arr((3,), seed=1)), {})]
FUNC = "s"
''')

P("shape_13_literal_three", "rows annotated `T 3` and a jnp.zeros(3) carry.", '''
@jax.jit
def s(xs: Float[Array, "T 3"]):
    acc = jnp.zeros(3)
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 3), "float16"),), {})]
FUNC = "s"
''')

P("shape_14_ones1_times_rows", "acc = ones(1) times rows (T, D): (1,) becomes (D,) when D > 1.", '''
@jax.jit
def p(xs: Float[Array, "T D"]):
    acc = jnp.ones(1)
    for t in range(xs.shape[0]):
        acc = acc * xs[t]
    return acc

CASES = [lambda: ((_arr((6, 1)),), {}), lambda: ((_arr((6, 4)),), {})]
FUNC = "p"
''')

P("shape_15_shape_index_carry", "carry zeros(xs.shape[1]) plus rows.", '''
@jax.jit
def s(xs: Float[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1])
    for x_t in xs:
        acc = acc + x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {}), lambda: ((_arr((6, 5), "bfloat16"),), {})]
FUNC = "s"
''')

P("shape_16_last_dim_carry", "carry zeros(xs.shape[-1]) plus x_t[0] of (B, D) rows.", '''
@jax.jit
def s(xs: Float[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[-1])
    for x_t in xs:
        acc = acc + x_t[0]
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((6, 3, 3)),), {})]
FUNC = "s"
''')

P("shape_17_ellipsis_annotation", "rows annotated `T ...` with carry zeros(xs.shape[1:]); called (T,) and (T, B, D).", '''
@jax.jit
def s(xs: Float[Array, "T ..."]):
    acc = jnp.zeros(xs.shape[1:])
    for x_t in xs:
        acc = acc + x_t * x_t
    return acc

CASES = [lambda: ((_arr((6,)),), {}), lambda: ((_arr((6, 2, 3)),), {})]
FUNC = "s"
''')

P("shape_18_zeros_like_first", "carry zeros_like(xs[0]) over rows (T, B, D).", '''
@jax.jit
def s(xs: Float[Array, "T B D"]):
    acc = jnp.zeros_like(xs[0])
    for x_t in xs:
        acc = jnp.maximum(acc, x_t)
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((6, 2, 3), "float16"),), {})]
FUNC = "s"
''')

P("shape_19_column_read", "reads xs[:, t] over a (B, T) array.", '''
@jax.jit
def s(xs: Float32[Array, "B T"]):
    acc = jnp.zeros(xs.shape[0], jnp.float32)
    for t in range(xs.shape[1]):
        acc = 0.5 * acc + xs[:, t]
    return acc

CASES = [lambda: ((_arr((3, 7)),), {}), lambda: ((_arr((1, 9)),), {})]
FUNC = "s"
''')

P("shape_20_last_axis_read", "reads xs[..., t] over a (B, D, T) array.", '''
@jax.jit
def s(xs: Float32[Array, "B D T"]):
    acc = jnp.zeros(xs.shape[:2], jnp.float32)
    for t in range(xs.shape[-1]):
        acc = acc + xs[..., t]
    return acc

CASES = [lambda: ((_arr((2, 3, 6)),), {})]
FUNC = "s"
''')

P("shape_21_einsum_step", "carry (D,) updated with an einsum per step.", '''
@jax.jit
def s(W: Float32[Array, "D D"], xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        h = jnp.einsum("ij,j->i", W, h) * 0.5 + x_t
    return h

CASES = [lambda: ((_arr((3, 3)), _arr((6, 3), seed=1)), {})]
FUNC = "s"
''')

P("shape_22_column_carry", "carry (D, 1) plus x_t[:, None].", '''
@jax.jit
def s(xs: Float32[Array, "T D"]):
    acc = jnp.zeros((xs.shape[1], 1), jnp.float32)
    for x_t in xs:
        acc = acc + x_t[:, None]
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "s"
''')

P("shape_23_vec_matmul_rect", "h (D,) = h @ M with M (D, K): keeps shape only when K == D.", '''
@jax.jit
def s(M: Float32[Array, "D K"], xs: Float32[Array, "T K"]):
    h = jnp.zeros(M.shape[0], jnp.float32)
    for x_t in xs:
        h = jnp.tanh(h @ M + x_t)
    return h

CASES = [lambda: ((_arr((3, 3)) * 0.5, _arr((6, 3), seed=1)), {})]
FUNC = "s"
''')

P("shape_24_scalar_quadratic", "scalar carry plus x_t.T @ x_t for 1-d rows.", '''
@jax.jit
def s(xs: Float32[Array, "T D"]):
    acc = jnp.zeros((), jnp.float32)
    for x_t in xs:
        acc = acc + x_t.T @ x_t
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "s"
''')

P("shape_25_outer_product_carry", "(D, D) carry plus an outer product per step.", '''
@jax.jit
def cov(xs: Float32[Array, "T D"]):
    C = jnp.zeros((xs.shape[1], xs.shape[1]), jnp.float32)
    for x_t in xs:
        C = C + jnp.outer(x_t, x_t)
    return C

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "cov"
''')

P("shape_26_bias_batch_broadcast", "carry (D,) plus rows plus a bias that may be (B, D).", '''
@jax.jit
def s(xs: Float32[Array, "T D"], b: Float32[Array, "*B D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc + x_t + b
    return acc

CASES = [lambda: ((_arr((6, 3)), _arr((3,), seed=1)), {}), lambda: ((_arr((6, 3)), _arr((2, 3), seed=1)), {})]
FUNC = "s"
''')

P("shape_27_reward_batch_scan_zeros_like0", "discounted return with g = zeros_like(rewards[0]) over (T,) and (T, B).", '''
@jax.jit
def ret(rewards: Float[Array, "T *B"], gamma: float = 0.9):
    g = jnp.zeros_like(rewards[0])
    out = []
    for r_t in reversed(rewards):
        g = r_t + gamma * g
        out.append(g)
    return jnp.stack(out[::-1])

CASES = [lambda: ((_arr((7,)),), {}), lambda: ((_arr((7, 3)),), {}), lambda: ((_arr((7, 3)),), {"gamma": 0.5})]
FUNC = "ret"
''')

P("shape_28_matmul_2d_carry", "(B, H) carry @ W (H, H) plus (B, H) rows.", '''
@jax.jit
def s(W: Float32[Array, "H H"], xs: Float32[Array, "T B H"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        h = jnp.tanh(h @ W + x_t)
    return h

CASES = [lambda: ((_arr((3, 3)) * 0.5, _arr((6, 2, 3), seed=1)), {}), lambda: ((_arr((4, 4)) * 0.5, _arr((5, 1, 4), seed=1)), {})]
FUNC = "s"
''')

P("shape_29_squeeze_batch_one", "carry (B, D) replaced by squeeze(carry + x_t): with B == 1 the carry loses an axis.", '''
@jax.jit
def sq(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = jnp.squeeze(acc + x_t)
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((6, 1, 3)),), {})]
FUNC = "sq"
''')

P("shape_30_squeeze_method_batch_one", "carry (B, D) plus x_t.squeeze(): with B == 1 the row is (D,) (broadcasts back).", '''
@jax.jit
def sq(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = (acc + x_t).squeeze() * 0.5
    return acc

CASES = [lambda: ((_arr((6, 2, 3)),), {}), lambda: ((_arr((6, 1, 3)),), {}), lambda: ((_arr((6, 2, 1)),), {})]
FUNC = "sq"
''')

P("shape_31_atleast_2d_carry", "carry (D,) replaced by atleast_2d(carry + x_t): becomes (1, D).", '''
@jax.jit
def a2(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = jnp.atleast_2d(acc + x_t)
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "a2"
''')

P("shape_32_ravel_carry", "carry (B, D) replaced by ravel: (B * D,).", '''
@jax.jit
def rv(xs: Float32[Array, "T B D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = (acc + x_t).ravel()
    return acc

CASES = [lambda: ((_arr((6, 1, 3)),), {}), lambda: ((_arr((6, 2, 3)),), {})]
FUNC = "rv"
''')

P("shape_33_transpose_square_named", "carry (M, M) plus transpose of (M, M) rows.", '''
@jax.jit
def tr(xs: Float32[Array, "T M M"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = 0.5 * acc.T + jnp.transpose(x_t)
    return acc

CASES = [lambda: ((_arr((6, 3, 3)),), {})]
FUNC = "tr"
''')
