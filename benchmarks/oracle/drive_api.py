"""Drive installed JAX, flax and haiku through their public APIs under `jax.jit`, so the recorder
sees the loops of their own source that run while tracing.

    python benchmarks/oracle/drive_api.py [SECONDS]

Each public function of jax.numpy (and linalg / fft), jax.nn, jax.lax, jax.scipy.*, jax.random is
called under `jit` (and a few under `grad` / `vmap`) with the first of a handful of argument
patterns it accepts (float vectors and matrices, an int, a PRNG key). A set of flax.linen and
haiku modules is initialised and applied under `jit`. Every failure is caught; each call has an
alarm. Stops after SECONDS (default 600).
"""
from __future__ import annotations

import inspect
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from drive_common import deadline_from_argv, make_guarded

DEADLINE = deadline_from_argv(600.0)
guarded = make_guarded(5)


rng = np.random.default_rng(0)
v = jnp.asarray(rng.normal(size=(5,)), jnp.float32)
w = jnp.asarray(rng.normal(size=(5,)), jnp.float32)
m = jnp.asarray(rng.normal(size=(4, 4)), jnp.float32)
spd = m @ m.T + 4 * jnp.eye(4)
b3 = jnp.asarray(rng.normal(size=(2, 3, 4)), jnp.float32)
iv = jnp.arange(5, dtype=jnp.int32)
pos = jnp.abs(v) + 0.5
key = jax.random.PRNGKey(0)

PATTERNS = [
    ("v", (v,)), ("m", (m,)), ("spd", (spd,)), ("v,w", (v, w)), ("m,m", (m, m)), ("pos", (pos,)),
    ("b3", (b3,)), ("iv", (iv,)), ("m,v4", (m, v[:4])), ("v,int", (v, 2)), ("m,int", (m, 1)),
    ("v,w,pos", (v, w, pos)), ("key", (key,)), ("key,shape", (key, (3, 2))), ("shape", ((3, 2),)),
    ("list", ([v, w],)), ("list,int", ([m, m], 0)),
]
STATIC_TYPES = (int, tuple)


def call_jitted(fn, args):
    static = tuple(i for i, a in enumerate(args) if isinstance(a, STATIC_TYPES))
    return guarded(lambda: jax.jit(fn, static_argnums=static)(*args))


def sweep(module, name, skip=()):
    ok = tried = 0
    for attr in sorted(dir(module)):
        if time.time() > DEADLINE:
            break
        if attr.startswith("_") or attr in skip:
            continue
        print(f"@@ {attr}", file=sys.stderr, flush=True)
        fn = getattr(module, attr, None)
        if not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
            continue
        tried += 1
        for label, args in PATTERNS:
            if call_jitted(fn, args):
                ok += 1
                # the same function under grad and vmap, where it takes a float vector
                if label in ("v", "m", "pos"):
                    guarded(lambda: jax.jit(jax.grad(lambda x: jnp.sum(jnp.real(jnp.asarray(fn(x), jnp.float32)))))(args[0]))
                    guarded(lambda: jax.vmap(fn)(jnp.stack([args[0], args[0]])))
                break
    print(f"{name}: {ok}/{tried} functions ran", flush=True)


def sweep_flax():
    try:
        import flax.linen as nn
    except Exception:  # noqa: BLE001
        return
    x2 = jnp.ones((2, 8))
    img = jnp.ones((1, 8, 8, 3))
    seq = jnp.ones((2, 5, 8))
    cases = [
        (lambda: nn.Dense(4), x2), (lambda: nn.DenseGeneral((2, 2)), x2), (lambda: nn.LayerNorm(), x2),
        (lambda: nn.RMSNorm(), x2), (lambda: nn.GroupNorm(num_groups=2), img),
        (lambda: nn.BatchNorm(use_running_average=True), x2), (lambda: nn.Conv(4, (3, 3)), img),
        (lambda: nn.ConvTranspose(4, (3, 3)), img), (lambda: nn.Embed(10, 4), jnp.arange(3)),
        (lambda: nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8), seq),
        (lambda: nn.SelfAttention(num_heads=2), seq), (lambda: nn.RNN(nn.LSTMCell(8)), seq),
        (lambda: nn.RNN(nn.GRUCell(8)), seq), (lambda: nn.Bidirectional(nn.RNN(nn.GRUCell(4)), nn.RNN(nn.GRUCell(4))), seq),
        (lambda: nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(2)]), x2), (lambda: nn.Dropout(0.5, deterministic=True), x2),
        (lambda: nn.Einsum((8, 4), "ab,bc->ac"), x2), (lambda: nn.WeightNorm(nn.Dense(4)), x2),
        (lambda: nn.SpectralNorm(nn.Dense(4)), x2), (lambda: nn.InstanceNorm(), img),
        (lambda: nn.ConvLSTMCell(4, (3, 3)), None),
    ]
    ran = 0
    for make, x in cases:
        if x is None or time.time() > DEADLINE:
            continue

        def run(make=make, x=x):
            mod = make()
            variables = jax.jit(lambda k, x: mod.init(k, x))(key, x)
            return jax.jit(lambda p, x: mod.apply(p, x, mutable=False) if not isinstance(mod, nn.SpectralNorm) else mod.apply(p, x, update_stats=False))(variables, x)

        ran += guarded(run, 30)
    print(f"flax: {ran}/{len(cases)} modules ran", flush=True)


def sweep_haiku():
    try:
        import haiku as hk
    except Exception:  # noqa: BLE001
        return
    x2 = jnp.ones((2, 8))
    img = jnp.ones((1, 8, 8, 3))
    seq = jnp.ones((5, 2, 8))
    cases = [
        (lambda x: hk.Linear(4)(x), x2), (lambda x: hk.nets.MLP([8, 4])(x), x2),
        (lambda x: hk.LayerNorm(-1, True, True)(x), x2), (lambda x: hk.RMSNorm(-1)(x), x2),
        (lambda x: hk.Conv2D(4, 3)(x), img), (lambda x: hk.Conv2DTranspose(4, 3)(x), img),
        (lambda x: hk.MultiHeadAttention(2, 4, w_init_scale=1.0)(x, x, x), x2[None]),
        (lambda x: hk.dynamic_unroll(hk.LSTM(8), x, hk.LSTM(8).initial_state(2))[0], seq),
        (lambda x: hk.static_unroll(hk.GRU(8), x, hk.GRU(8).initial_state(2))[0], seq),
        (lambda x: hk.deep_rnn_with_skip_connections([hk.LSTM(4), hk.LSTM(4)])(x[0], hk.deep_rnn_with_skip_connections([hk.LSTM(4), hk.LSTM(4)]).initial_state(2))[0], seq),
        (lambda x: hk.Sequential([hk.Linear(4), jax.nn.relu])(x), x2), (lambda x: hk.GroupNorm(2)(x), img),
        (lambda x: hk.nets.ResNet18(10)(x, is_training=False), jnp.ones((1, 32, 32, 3))),
        (lambda x: hk.BatchNorm(True, True, 0.9)(x, is_training=True), x2), (lambda x: hk.Embed(10, 4)(jnp.arange(3)), x2),
        (lambda x: hk.max_pool(x, 2, 2, "SAME"), img), (lambda x: hk.ConvND(2, 4, 3)(x), img),
        (lambda x: hk.nets.VectorQuantizer(4, 8, 0.25)(x, is_training=True)["quantize"], x2),
    ]
    ran = 0
    for body, x in cases:
        if time.time() > DEADLINE:
            continue

        def run(body=body, x=x):
            f = hk.transform_with_state(body)
            params, state = jax.jit(f.init)(key, x)
            return jax.jit(f.apply)(params, state, key, x)

        ran += guarded(run, 60)
    print(f"haiku: {ran}/{len(cases)} modules ran", flush=True)


def modules():
    import jax.scipy.linalg
    import jax.scipy.signal
    import jax.scipy.special
    import jax.scipy.stats as stats

    modules = [
        (jnp, "jax.numpy"), (jnp.linalg, "jax.numpy.linalg"), (jnp.fft, "jax.numpy.fft"), (jax.nn, "jax.nn"),
        (jax.scipy.special, "jax.scipy.special"), (jax.scipy.linalg, "jax.scipy.linalg"),
        (jax.scipy.signal, "jax.scipy.signal"), (jax.random, "jax.random"), (jax.lax, "jax.lax"),
        (jax.nn.initializers, "jax.nn.initializers"),
    ]
    for name in ("norm", "gamma", "beta", "t", "poisson", "multivariate_normal", "dirichlet", "logistic"):
        mod = getattr(stats, name, None)
        if mod is not None:
            modules.append((mod, f"jax.scipy.stats.{name}"))
    return modules


def main():
    """Each module's sweep runs in a child process: a call that crashes the interpreter (seen
    once in XLA) costs only that call, which the next child skips."""
    import subprocess

    if len(sys.argv) > 2 and sys.argv[2] == "--child":
        name, skip = sys.argv[3], set(sys.argv[4:])
        if name == "flax":
            sweep_flax()
        elif name == "haiku":
            sweep_haiku()
        else:
            sweep(dict((n, m) for m, n in modules())[name], name, skip)
        return
    names = ["flax", "haiku"] + [n for _, n in modules()]
    for name in names:
        skip: list[str] = []
        for _ in range(5):
            left = DEADLINE - time.time()
            if left <= 5:
                return
            proc = subprocess.run(
                [sys.executable, __file__, str(left), "--child", name, *skip], capture_output=True, text=True
            )
            print(proc.stdout, end="", flush=True)
            if proc.returncode >= 0:
                break
            marks = [l[3:] for l in proc.stderr.splitlines() if l.startswith("@@ ")]
            if not marks:
                break
            skip.append(marks[-1])
            print(f"{name}: crashed in {marks[-1]} (rc {proc.returncode}); skipping it", flush=True)


if __name__ == "__main__":
    main()
