"""Drive the installed flax (linen and nnx) through more of its API under tracing than drive_api.py
and drive_libs.py do: linen lifted transforms (scan, vmap, remat, jit, cond, while_loop, map_variables),
pooling, recurrent cells, attention with masks and decoding, `tabulate`; nnx transforms (scan, vmap,
remat, cond, split / merge / state under jit), the nnx Optimizer, and nnx layers with more options.

    python benchmarks/oracle/drive_flax.py [SECONDS]

Every failure is caught; each case has an alarm.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from drive_common import deadline_from_argv, make_guarded

DEADLINE = deadline_from_argv(400.0)
key = jax.random.PRNGKey(0)
OK = [0, 0]
guarded = make_guarded(40, DEADLINE, OK)


def linen():
    import flax.linen as nn

    x2 = jnp.ones((2, 8))
    img = jnp.ones((2, 8, 8, 3))
    seq = jnp.ones((2, 5, 8))

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, c, x):
            h = nn.tanh(nn.Dense(8)(c) + x)
            return h, h

    class Scanned(nn.Module):
        @nn.compact
        def __call__(self, x):
            S = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False}, in_axes=1, out_axes=1)
            return S()(jnp.zeros((x.shape[0], 8)), x)

    class Stacked(nn.Module):
        @nn.compact
        def __call__(self, x):
            Block = nn.scan(type("B", (nn.Module,), {"__call__": nn.compact(lambda self, c, _: (nn.relu(nn.Dense(8)(c)), None))}),
                            length=3, variable_axes={"params": 0}, split_rngs={"params": True})
            return Block()(x, None)[0]

    class VMapped(nn.Module):
        @nn.compact
        def __call__(self, x):
            V = nn.vmap(nn.Dense, in_axes=0, out_axes=0, variable_axes={"params": 0}, split_rngs={"params": True})
            return V(4)(x)

    class Remat(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.remat(nn.Dense)(4)(x) + nn.checkpoint(nn.Dense, static_argnums=())(4)(x)

    class Jitted(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.jit(nn.Dense)(4)(x)

    class Cond(nn.Module):
        @nn.compact
        def __call__(self, x):
            a, b = nn.Dense(8), nn.Dense(8)
            return nn.cond(x.sum() > 0, lambda m, y: a(y), lambda m, y: b(y), self, x)

    class While(nn.Module):
        @nn.compact
        def __call__(self, x):
            d = nn.Dense(8)
            d(x)
            return nn.while_loop(lambda m, c: c[0] < 3, lambda m, c: (c[0] + 1, d(c[1])), self, (0, x))[1]

    class MapVars(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.map_variables(nn.Dense, "params", lambda t: t, lambda t: t, init=True)(4)(x)

    class Setup(nn.Module):
        def setup(self):
            self.layers = [nn.Dense(8) for _ in range(3)]
            self.bn = nn.BatchNorm(use_running_average=False)

        def __call__(self, x):
            for l in self.layers:
                x = l(x)
            return self.bn(x)

    class Pools(nn.Module):
        @nn.compact
        def __call__(self, x):
            return (nn.avg_pool(x, (2, 2), (1, 1), "SAME").sum() + nn.max_pool(x, (3, 3), padding=((1, 1), (1, 1))).sum()
                    + nn.min_pool(x, (2, 2)).sum() + nn.pool(x, 0.0, jax.lax.add, (2, 2), (2, 2), "VALID").sum()
                    + nn.avg_pool(x, (2, 2), count_include_pad=False, padding="SAME").sum())

    cases = [
        (Scanned, seq), (Stacked, x2), (VMapped, jnp.ones((3, 2, 8))), (Remat, x2), (Jitted, x2), (Cond, x2), (While, x2),
        (MapVars, x2), (Setup, x2), (Pools, img),
        (lambda: nn.RNN(nn.OptimizedLSTMCell(8)), seq), (lambda: nn.RNN(nn.MGUCell(8)), seq), (lambda: nn.RNN(nn.SimpleCell(8)), seq),
        (lambda: nn.RNN(nn.LSTMCell(8), reverse=True, keep_order=True, return_carry=True), seq),
        (lambda: nn.Bidirectional(nn.RNN(nn.LSTMCell(4)), nn.RNN(nn.LSTMCell(4)), merge_fn=lambda a, b: a + b), seq),
        (lambda: nn.RNN(nn.ConvLSTMCell(4, (3, 3))), jnp.ones((1, 3, 6, 6, 2))),
        (lambda: nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8, dropout_rate=0.0, normalize_qk=True), seq),
        (lambda: nn.MultiHeadAttention(num_heads=2, qkv_features=8, out_features=4, use_bias=False), seq),
        (lambda: nn.Conv(4, (3,), strides=2, padding="CIRCULAR"), jnp.ones((2, 8, 3))),
        (lambda: nn.Conv(4, (3, 3), feature_group_count=3, kernel_dilation=2, padding="SAME"), img),
        (lambda: nn.ConvLocal(4, (2, 2)), img), (lambda: nn.ConvTranspose(4, (3, 3), strides=(2, 2), transpose_kernel=True), img),
        (lambda: nn.DenseGeneral((2, 4), axis=(-2, -1), batch_dims=()), jnp.ones((2, 3, 8))),
        (lambda: nn.LayerNorm(reduction_axes=(1, 2), feature_axes=-1), img), (lambda: nn.GroupNorm(num_groups=None, group_size=1), img),
        (lambda: nn.BatchNorm(use_running_average=False, axis_name=None, axis=(0, 1)), img),
        (lambda: nn.InstanceNorm(feature_axes=(-1,)), img), (lambda: nn.RMSNorm(reduction_axes=(-2, -1)), seq),
        (lambda: nn.SpectralNorm(nn.Conv(4, (3, 3))), img), (lambda: nn.WeightNorm(nn.Conv(4, (3, 3))), img),
        (lambda: nn.Dropout(0.5, deterministic=False, broadcast_dims=(1,)), seq),
        (lambda: nn.Sequential([nn.Conv(4, (3, 3)), nn.BatchNorm(use_running_average=True), nn.relu, lambda x: x.reshape(x.shape[0], -1), nn.Dense(3)]), img),
        (lambda: nn.Embed(10, 4), jnp.arange(6).reshape(2, 3)),
    ]
    for make, x in cases:

        def run(make=make, x=x):
            mod = make()
            rngs = {"params": key, "dropout": key}
            variables = jax.jit(lambda x: mod.init(rngs, x))(x)
            out = jax.jit(lambda v, x: mod.apply(v, x, rngs={"dropout": key}, mutable=["batch_stats", "intermediates", "cache"]))(variables, x)
            jax.jit(jax.grad(lambda p, x: jnp.sum(jnp.asarray(jax.tree_util.tree_leaves(mod.apply(p, x, rngs={"dropout": key}, mutable=["batch_stats"]))[0], jnp.float32))))(variables, x)
            return out

        guarded(run)
        guarded(lambda make=make, x=x: make().tabulate(key, x) and jnp.zeros(()))  # tabulate traces under eval_shape
    # decoding with a cache
    mha = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8, decode=True)
    guarded(lambda: jax.jit(lambda x: mha.apply(mha.init(key, x), x[:, :1], mutable=["cache"]))(jnp.ones((2, 5, 8))))
    guarded(lambda: jax.jit(lambda x: nn.make_attention_mask(x > 0, x > 0) * nn.make_causal_mask(x))(jnp.ones((2, 5))))
    guarded(lambda: jax.jit(lambda x: nn.dot_product_attention(x, x, x, mask=nn.make_causal_mask(jnp.ones((2, 5)))))(jnp.ones((2, 5, 2, 4))))


def nnx():
    from flax import nnx
    import optax

    r = nnx.Rngs(0)

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.layers = nnx.List([nnx.Linear(8, 8, rngs=rngs) for _ in range(3)])
            self.bn = nnx.BatchNorm(8, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)

        def __call__(self, x):
            for l in self.layers:
                x = nnx.relu(l(x))
            return self.drop(self.bn(x))

    x = jnp.ones((4, 8))

    def run_opt():
        model = MLP(nnx.Rngs(0))
        opt = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

        @nnx.jit
        def step(model, opt, x):
            loss, g = nnx.value_and_grad(lambda m: jnp.mean(m(x) ** 2))(model)
            opt.update(model, g)
            return loss

        step(model, opt, x)
        return step(model, opt, x)

    guarded(run_opt, 90)

    def run_split():
        model = MLP(nnx.Rngs(1))
        gd, state = nnx.split(model)
        f = jax.jit(lambda s, x: nnx.merge(gd, s)(x))
        nnx.state(model, nnx.Param)
        nnx.split(model, nnx.Param, nnx.BatchStat, ...)
        return f(state, x)

    guarded(run_split)

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.lin = nnx.Linear(8, 8, rngs=rngs)

        def __call__(self, x):
            return nnx.tanh(self.lin(x))

    def run_scan():
        @nnx.split_rngs(splits=4)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def create(rngs):
            return Block(rngs)

        blocks = create(nnx.Rngs(0))

        @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
        def fwd(b, c):
            return b(c)

        return nnx.jit(lambda b, x: fwd(b, x))(blocks, x)

    guarded(run_scan, 90)
    guarded(lambda: nnx.jit(lambda m, x: nnx.remat(lambda mm, y: mm(y))(m, x))(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.cond(x.sum() > 0, lambda mm, y: mm(y), lambda mm, y: -mm(y), m, x))(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.vmap(lambda mm, y: mm(y), in_axes=(None, 0))(m, x))(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.grad(lambda mm: mm(x).sum(), argnums=nnx.DiffState(0, nnx.Param))(m))(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.fori_loop(0, 3, lambda i, c: (c[0], c[0](c[1])), (m, x))[1])(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.while_loop(lambda c: c[2] < 3, lambda c: (c[0], c[0](c[1]), c[2] + 1), (m, x, 0))[1])(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.jit(lambda m, x: nnx.switch(1, [lambda mm, y: mm(y), lambda mm, y: -mm(y)], m, x))(Block(nnx.Rngs(0)), x))
    guarded(lambda: nnx.eval_shape(lambda: MLP(nnx.Rngs(0))))
    guarded(lambda: nnx.jit(lambda m: nnx.state(m).flat_state() and jnp.zeros(()))(MLP(nnx.Rngs(0))))
    guarded(lambda: jax.jit(lambda s: nnx.State(s).filter(nnx.Param))(nnx.state(MLP(nnx.Rngs(0)))))
    mha = nnx.MultiHeadAttention(2, 8, qkv_features=8, decode=True, rngs=r)
    guarded(lambda: (mha.init_cache((2, 5, 8)), nnx.jit(lambda m, y: m(y))(mha, jnp.ones((2, 1, 8))))[1])
    for make, xx in [
        (lambda: nnx.Conv(3, 4, (3, 3), strides=2, padding="CIRCULAR", rngs=nnx.Rngs(0)), jnp.ones((1, 8, 8, 3))),
        (lambda: nnx.ConvTranspose(3, 4, (3, 3), strides=(2, 2), transpose_kernel=True, rngs=nnx.Rngs(0)), jnp.ones((1, 8, 8, 3))),
        (lambda: nnx.LayerNorm(8, reduction_axes=(-2, -1), feature_axes=-1, rngs=nnx.Rngs(0)), jnp.ones((2, 5, 8))),
        (lambda: nnx.BatchNorm(8, use_running_average=False, rngs=nnx.Rngs(0)), jnp.ones((2, 5, 8))),
        (lambda: nnx.InstanceNorm(8, rngs=nnx.Rngs(0)), jnp.ones((2, 5, 8))),
        (lambda: nnx.SpectralNorm(nnx.Linear(8, 4, rngs=nnx.Rngs(0)), rngs=nnx.Rngs(0)), jnp.ones((2, 8))),
        (lambda: nnx.RNN(nnx.OptimizedLSTMCell(8, 8, rngs=nnx.Rngs(0)), return_carry=True), jnp.ones((2, 5, 8))),
        (lambda: nnx.Bidirectional(nnx.RNN(nnx.GRUCell(8, 4, rngs=nnx.Rngs(0))), nnx.RNN(nnx.GRUCell(8, 4, rngs=nnx.Rngs(1)))), jnp.ones((2, 5, 8))),
        (lambda: nnx.LoRA(8, 2, 4, rngs=nnx.Rngs(0)), jnp.ones((2, 8))),
        (lambda: nnx.Sequential(nnx.Linear(8, 8, rngs=nnx.Rngs(0)), nnx.Dropout(0.3, rngs=nnx.Rngs(1)), nnx.gelu), jnp.ones((2, 8))),
    ]:
        guarded(lambda make=make, xx=xx: nnx.jit(lambda m, y: m(y))(make(), xx))
    try:
        from flax.nnx import bridge
        import flax.linen as nn
        guarded(lambda: nnx.jit(lambda m, y: m(y))(bridge.ToNNX(nn.Dense(4), rngs=nnx.Rngs(0)).lazy_init(jnp.ones((2, 8))), jnp.ones((2, 8))))
        lm = bridge.ToLinen(nnx.Linear, args=(8, 4))
        guarded(lambda: jax.jit(lambda x: lm.apply(lm.init(key, x), x))(jnp.ones((2, 8))))
    except Exception:  # noqa: BLE001
        pass


def main():
    for part in (linen, nnx):
        try:
            part()
        except Exception as exc:  # noqa: BLE001
            print(f"{part.__name__}: {type(exc).__name__}: {exc}", flush=True)
        print(f"{part.__name__}: {OK[0]}/{OK[1]} calls ran so far", flush=True)


if __name__ == "__main__":
    main()
