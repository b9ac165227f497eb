"""Precision: per-step matmuls that vmap batches into one, low-precision dtypes.

Batching changes the reduction order and accumulation precision; these programs measure whether
the resulting differences stay within the harness tolerances for a fix marked safe.
"""
from hunt_common import P

P("prec_01_map_W_at_x", "map-only W @ xs[t] per step (vmap batches it into one matmul).", '''
@jax.jit
def proj(W: Float32[Array, "K D"], xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        out.append(W @ xs[t])
    return jnp.stack(out)

CASES = [lambda: ((_arr((4, 5)), _arr((8, 5), seed=1) * 100), {}), lambda: ((_arr((2, 3)), _arr((6, 3), seed=2)), {})]
FUNC = "proj"
''')

P("prec_02_map_dot_bf16", "map-only jnp.dot of bf16 rows with bf16 weights.", '''
@jax.jit
def proj(xs: BFloat16[Array, "T D"], W: BFloat16[Array, "D K"]):
    out = []
    for x_t in xs:
        out.append(jnp.dot(x_t, W))
    return jnp.stack(out)

CASES = [lambda: ((_arr((8, 6), "bfloat16"), _arr((6, 4), "bfloat16", seed=3)), {})]
FUNC = "proj"
''')

P("prec_03_map_einsum", "map-only einsum per step.", '''
@jax.jit
def proj(W: Float32[Array, "K D"], xs: Float32[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(jnp.einsum("kd,d->k", W, x_t))
    return jnp.stack(out)

CASES = [lambda: ((_arr((3, 4)), _arr((7, 4), seed=1)), {})]
FUNC = "proj"
''')

P("prec_04_f16_accumulate", "float16 carry accumulating x_t * w (long-ish sequence).", '''
@jax.jit
def acc16(xs: Float16[Array, "T D"], w: Float16[Array, "D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float16)
    for x_t in xs:
        acc = acc + x_t * w
    return acc

CASES = [lambda: ((_arr((12, 4), "float16") * 30, _arr((4,), "float16", seed=1)), {})]
FUNC = "acc16"
''')

P("prec_05_map_bf16_sum", "map-only bf16 row sums stacked.", '''
@jax.jit
def sums(xs: BFloat16[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(x_t.sum())
    return jnp.stack(out)

CASES = [lambda: ((_arr((8, 6), "bfloat16") * 10,), {})]
FUNC = "sums"
''')

P("prec_06_map_f16_matmul", "map-only float16 W @ x_t (batched matmul may accumulate differently).", '''
@jax.jit
def proj(W: Float16[Array, "K D"], xs: Float16[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(W @ x_t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((4, 6), "float16"), _arr((9, 6), "float16", seed=1) * 8), {})]
FUNC = "proj"
''')

P("prec_07_map_batched_matmul", "map-only x_t @ W with (B, D) rows.", '''
@jax.jit
def proj(xs: Float32[Array, "T B D"], W: Float32[Array, "D K"]):
    out = []
    for x_t in xs:
        out.append(jnp.matmul(x_t, W))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 2, 5)), _arr((5, 3), seed=4)), {})]
FUNC = "proj"
''')

P("prec_08_map_quadratic_form", "map-only x_t @ A @ x_t.", '''
@jax.jit
def qf(A: Float32[Array, "D D"], xs: Float32[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(x_t @ A @ x_t)
    return jnp.stack(out)

CASES = [lambda: ((_arr((4, 4)), _arr((7, 4), seed=1) * 50), {})]
FUNC = "qf"
''')

P("prec_09_map_softmax_logits", "map-only softmax(W @ x_t).", '''
@jax.jit
def probs(W: Float32[Array, "K D"], xs: Float32[Array, "T D"]):
    out = []
    for x_t in xs:
        out.append(jax.nn.softmax(W @ x_t))
    return jnp.stack(out)

CASES = [lambda: ((_arr((5, 3)), _arr((6, 3), seed=2) * 4), {})]
FUNC = "probs"
''')

P("prec_10_bf16_rnn_carry", "bf16 carry with bf16 weights: h = tanh(h @ W + x_t).", '''
@jax.jit
def rnn(W: BFloat16[Array, "H H"], xs: BFloat16[Array, "T H"]):
    h = jnp.zeros(xs.shape[1:], jnp.bfloat16)
    for x_t in xs:
        h = jnp.tanh(h @ W + x_t)
    return h

CASES = [lambda: ((_arr((4, 4), "bfloat16"), _arr((8, 4), "bfloat16", seed=1)), {})]
FUNC = "rnn"
''')

P("prec_11_map_dot_precision_mixed", "map-only jnp.dot of float32 rows with float16 weights (float32 out).", '''
@jax.jit
def proj(xs: Float32[Array, "T D"], W: Float16[Array, "D K"]):
    out = []
    for x_t in xs:
        out.append(jnp.dot(x_t, W))
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 5)), _arr((5, 3), "float16", seed=1)), {})]
FUNC = "proj"
''')
