"""Drive more of the installed haiku under `transform` + `jit` than drive_api.py: lifted transforms
(layer_stack, scan, vmap, remat, cond, switch, fori_loop, while_loop, lift, multi_transform),
recurrent cores (DeepRNN, ResetCore, Conv LSTMs, static / dynamic unroll), more conv / pooling /
normalisation layers, moving averages, `hk.experimental` summaries.

    python benchmarks/oracle/drive_haiku.py [SECONDS]
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from drive_common import deadline_from_argv, make_guarded

DEADLINE = deadline_from_argv(300.0)
key = jax.random.PRNGKey(0)
OK = [0, 0]
guarded = make_guarded(40, DEADLINE, OK)


def main():
    import haiku as hk

    x2 = jnp.ones((2, 8))
    img = jnp.ones((1, 8, 8, 3))
    seq = jnp.ones((5, 2, 8))
    vol = jnp.ones((1, 4, 4, 4, 2))
    cases = [
        (lambda x: hk.layer_stack(3)(lambda y: hk.Linear(8)(y))(x), x2),
        (lambda x: hk.layer_stack(2, with_per_layer_inputs=True)(lambda y, z: (hk.Linear(8)(y) + z, y))(x, jnp.ones((2, 2, 8)))[0], x2),
        (lambda x: hk.scan(lambda c, y: (hk.Linear(8)(c) + y, c), x[0], x)[0], seq),
        (lambda x: hk.vmap(lambda y: hk.Linear(4)(y), split_rng=False)(x), x2),
        (lambda x: hk.remat(lambda y: hk.Linear(4)(y))(x), x2),
        (lambda x: hk.cond(x.sum() > 0, lambda y: hk.Linear(4, name="a")(y), lambda y: hk.Linear(4, name="b")(y), x), x2),
        (lambda x: hk.switch(1, [lambda y: hk.Linear(4, name="a")(y), lambda y: hk.Linear(4, name="b")(y)], x), x2),
        (lambda x: hk.fori_loop(0, 3, lambda i, y: y + hk.get_parameter("w", [8], init=jnp.ones), x), x2),
        (lambda x: hk.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1], x2),
        (lambda x: hk.lift(hk.transform(lambda y: hk.Linear(4)(y)).init, name="inner")(hk.next_rng_key(), x), x2),
        (lambda x: hk.BatchApply(hk.Linear(4))(x), seq),
        (lambda x: hk.DeepRNN([hk.LSTM(8), jax.nn.relu, hk.GRU(8)])(x[0], hk.DeepRNN([hk.LSTM(8), jax.nn.relu, hk.GRU(8)]).initial_state(2))[0], seq),
        (lambda x: hk.dynamic_unroll(hk.DeepRNN([hk.VanillaRNN(8), hk.LSTM(8)]), x, hk.DeepRNN([hk.VanillaRNN(8), hk.LSTM(8)]).initial_state(2))[0], seq),
        (lambda x: hk.static_unroll(hk.ResetCore(hk.LSTM(8)), (x, jnp.zeros((5, 2), bool)), hk.ResetCore(hk.LSTM(8)).initial_state(2))[0], seq),
        (lambda x: hk.dynamic_unroll(hk.IdentityCore(), x, ())[0], seq),
        (lambda x: hk.static_unroll(hk.Conv2DLSTM((6, 6), 4, 3), x, hk.Conv2DLSTM((6, 6), 4, 3).initial_state(1))[0], jnp.ones((3, 1, 6, 6, 2))),
        (lambda x: hk.Conv1DLSTM((6,), 4, 3)(x[0], hk.Conv1DLSTM((6,), 4, 3).initial_state(1))[0], jnp.ones((3, 1, 6, 2))),
        (lambda x: hk.DepthwiseConv2D(2, 3)(x), img), (lambda x: hk.SeparableDepthwiseConv2D(2, 3)(x), img),
        (lambda x: hk.Conv1D(4, 3, stride=2, rate=1)(x), jnp.ones((2, 8, 3))), (lambda x: hk.Conv3D(4, 2)(x), vol),
        (lambda x: hk.Conv1DTranspose(4, 3, stride=2)(x), jnp.ones((2, 8, 3))), (lambda x: hk.Conv3DTranspose(2, 2)(x), vol),
        (lambda x: hk.Conv2D(4, 3, padding=lambda k: (1, 1), feature_group_count=3, mask=jnp.ones((3, 3, 1, 4)))(x), img),
        (lambda x: hk.avg_pool(x, (1, 2, 2, 1), 2, "VALID"), img), (lambda x: hk.AvgPool(2, 1, "SAME", channel_axis=-1)(x), img),
        (lambda x: hk.MaxPool((2, 2), (1, 1), "VALID")(x), img),
        (lambda x: hk.InstanceNorm(True, True)(x), img), (lambda x: hk.LayerNorm((1, 2), True, True, param_axis=-1)(x), img),
        (lambda x: hk.GroupNorm(3, axis=(1, 2, 3))(x), img),
        (lambda x: hk.BatchNorm(True, True, 0.9, cross_replica_axis=None)(x, is_training=False, test_local_stats=True), img),
        (lambda x: hk.SpectralNorm()(jnp.ones((4, 3))) + hk.SNParamsTree(ignore_regex=".*b")({"a": {"w": jnp.ones((3, 3)), "b": jnp.ones(3)}})["a"]["w"].sum(), x2),
        (lambda x: hk.ExponentialMovingAverage(0.9)(x), x2), (lambda x: hk.EMAParamsTree(0.9)({"a": {"w": x}})["a"]["w"], x2),
        (lambda x: hk.nets.MobileNetV1(num_classes=3, width_multiplier=0.25)(x, is_training=False), jnp.ones((1, 32, 32, 3))),
        (lambda x: hk.nets.VectorQuantizerEMA(4, 8, 0.25, 0.9)(x, is_training=True)["quantize"], x2),
        (lambda x: hk.nets.MLP([8, 8, 4], activate_final=True, dropout_rate=None)(x), x2),
        (lambda x: hk.Reshape((2, 4), preserve_dims=1)(x), x2), (lambda x: hk.Flatten(preserve_dims=2)(x), img),
        (lambda x: hk.Bias(bias_dims=[-1])(x), img),
        (lambda x: hk.MultiHeadAttention(2, 4, w_init=hk.initializers.VarianceScaling(1.0))(x, x, x, mask=jnp.ones((1, 2, 3, 3))), jnp.ones((1, 3, 8))),
        (lambda x: hk.dropout(hk.next_rng_key(), 0.5, x), x2),
        (lambda x: hk.RMSNorm(-1, scale_init=jnp.ones)(x), x2), (lambda x: hk.Embed(vocab_size=10, embed_dim=4, lookup_style="ONE_HOT")(jnp.arange(3)), x2),
    ]
    for body, x in cases:
        def run(body=body, x=x):
            f = hk.transform_with_state(body)
            params, state = jax.jit(f.init)(key, x)
            return jax.jit(f.apply)(params, state, key, x)

        guarded(run)
    # multi_transform and summaries
    def mt():
        def f():
            lin = hk.Linear(4)
            return lin, (lambda x: lin(x), lambda x: lin(x) * 2)
        return f()[1]

    mtf = hk.multi_transform(mt)
    guarded(lambda: jax.jit(lambda x: mtf.apply[1](mtf.init(key, x), key, x))(x2))
    guarded(lambda: hk.experimental.tabulate(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)))(x2) and jnp.zeros(()))
    guarded(lambda: hk.experimental.eval_summary(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)), x2) and jnp.zeros(()))
    guarded(lambda: hk.experimental.make_model_info(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).apply)(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2), key, x2) and jnp.zeros(()))
    guarded(lambda: hk.experimental.to_dot(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).apply)(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2), key, x2) and jnp.zeros(()))
    guarded(lambda: jax.jit(lambda p: hk.data_structures.filter(lambda m, n, v: n == "w", p))(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2)))
    guarded(lambda: jax.jit(lambda p: hk.data_structures.partition(lambda m, n, v: n == "w", p)[0])(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2)))
    guarded(lambda: jax.jit(lambda p: hk.data_structures.merge(p, p))(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2)))
    guarded(lambda: jax.jit(lambda p: hk.data_structures.map(lambda m, n, v: v * 2, p))(hk.transform(lambda x: hk.nets.MLP([8, 4])(x)).init(key, x2)))
    print(f"haiku: {OK[0]}/{OK[1]} calls ran", flush=True)


if __name__ == "__main__":
    main()
