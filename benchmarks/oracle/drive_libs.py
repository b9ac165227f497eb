"""Drive the libraries' public APIs under `jit`, more broadly in a few minutes than their test
suites can on two cores (see README): optax optimizers and losses, numpyro distributions and
inference, distrax distributions and bijectors, equinox layers, diffrax solvers, pgx games.

    python benchmarks/oracle/drive_libs.py [SECONDS]

run_all.sh puts the checkouts of optax, equinox, diffrax and distrax first on PYTHONPATH, so the
code measured is the same copy their test suites ran. Every failure is caught; each call has an
alarm.
"""
from __future__ import annotations

import inspect
import sys

import jax
import jax.numpy as jnp

from drive_common import deadline_from_argv, make_guarded

DEADLINE = deadline_from_argv(400.0)
key = jax.random.PRNGKey(0)
guarded = make_guarded(20, DEADLINE)


def optax_sweep():
    import optax

    params = {"a": jnp.ones(3), "b": jnp.ones((2, 2))}
    grads = jax.tree_util.tree_map(lambda x: 0.1 * x, params)
    ok = n = 0
    for name in sorted(dir(optax)) + [f"contrib.{x}" for x in dir(optax.contrib)]:
        mod, attr = (optax.contrib, name[8:]) if name.startswith("contrib.") else (optax, name)
        fn = getattr(mod, attr, None)
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        for args in ((1e-2,), (), (1e-2, 0.9)):
            try:
                tx = fn(*args)
            except BaseException:  # noqa: BLE001
                continue
            if not hasattr(tx, "update"):
                break
            n += 1

            def step(tx=tx):
                state = jax.jit(tx.init)(params)
                upd, state = jax.jit(lambda g, s, p: tx.update(g, s, p, value=jnp.ones(()), grad=g, value_fn=lambda p: 1.0) if False else tx.update(g, s, p))(grads, state, params)
                return optax.apply_updates(params, upd)

            ok += guarded(step)
            break
    v, w = jnp.linspace(0.1, 0.9, 6).reshape(2, 3), jnp.linspace(0.9, 0.1, 6).reshape(2, 3)
    labels = jnp.array([0, 2])
    for name in dir(optax.losses):
        fn = getattr(optax.losses, name)
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        for args in ((v, w), (v, labels), (v,)):
            if guarded(lambda fn=fn, args=args: jax.jit(fn)(*args)):
                break
    print(f"optax: {ok}/{n} transformations ran", flush=True)


def numpyro_sweep():
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO, autoguide

    ok = n = 0
    for name in sorted(dir(dist)):
        cls = getattr(dist, name)
        if not (inspect.isclass(cls) and issubclass(cls, dist.Distribution)) or inspect.isabstract(cls):
            continue
        try:
            sig = inspect.signature(cls.__init__)
        except (TypeError, ValueError):
            continue
        req = [p for p in list(sig.parameters.values())[1:] if p.default is p.empty and p.kind == p.POSITIONAL_OR_KEYWORD]
        n += 1
        for value in (jnp.full((3,), 0.5), jnp.full((), 0.5), jnp.eye(3) * 0.5 + 0.5):
            def run(cls=cls, value=value, req=req):
                def f(k):
                    d = cls(*[value] * len(req))
                    x = d.sample(k, (2,))
                    return x, d.log_prob(x)
                return jax.jit(f)(key)

            if guarded(run):
                ok += 1
                break

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
        with numpyro.plate("n", y.shape[0]):
            numpyro.sample("y", dist.Normal(mu, sigma), obs=y)

    y = jnp.linspace(-1.0, 1.0, 8)
    guarded(lambda: MCMC(NUTS(model), num_warmup=20, num_samples=20, progress_bar=False).run(key, y), 120)
    for guide in (autoguide.AutoNormal, autoguide.AutoDelta, autoguide.AutoMultivariateNormal, autoguide.AutoLowRankMultivariateNormal):
        guarded(lambda guide=guide: SVI(model, guide(model), numpyro.optim.Adam(1e-2), Trace_ELBO()).run(key, 20, y, progress_bar=False).params, 60)
    print(f"numpyro: {ok}/{n} distributions ran", flush=True)


def distrax_sweep():
    import distrax

    x = jnp.full((3,), 0.3)
    cases = [
        lambda: distrax.Normal(0.0, 1.0), lambda: distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.ones(3)),
        lambda: distrax.MultivariateNormalTri(jnp.zeros(3), jnp.eye(3)), lambda: distrax.Categorical(logits=jnp.zeros(3)),
        lambda: distrax.Bernoulli(logits=jnp.zeros(3)), lambda: distrax.Beta(2.0, 2.0), lambda: distrax.Gamma(2.0, 1.0),
        lambda: distrax.Laplace(0.0, 1.0), lambda: distrax.Logistic(0.0, 1.0), lambda: distrax.Uniform(0.0, 1.0),
        lambda: distrax.Independent(distrax.Normal(jnp.zeros(3), 1.0), 1),
        lambda: distrax.MixtureSameFamily(distrax.Categorical(logits=jnp.zeros(2)), distrax.Normal(jnp.zeros(2), 1.0)),
        lambda: distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.Tanh()),
        lambda: distrax.Transformed(distrax.Normal(jnp.zeros(3), 1.0), distrax.Chain([distrax.ScalarAffine(1.0, 2.0), distrax.Sigmoid()])),
        lambda: distrax.Transformed(distrax.MultivariateNormalDiag(jnp.zeros(4), jnp.ones(4)), distrax.MaskedCoupling(
            jnp.arange(4) % 2 == 0, lambda p: distrax.ScalarAffine(p, 1.0), lambda z: z)),
        lambda: distrax.Transformed(distrax.MultivariateNormalDiag(jnp.zeros(4), jnp.ones(4)), distrax.SplitCoupling(
            2, 1, lambda p: distrax.ScalarAffine(p, 1.0), lambda z: z)),
        lambda: distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.RationalQuadraticSpline(jnp.zeros(3 * 4 + 1), -2.0, 2.0)),
        lambda: distrax.Softmax(jnp.zeros(3)), lambda: distrax.EpsilonGreedy(jnp.zeros(3), 0.1), lambda: distrax.Greedy(jnp.zeros(3)),
        lambda: distrax.OneHotCategorical(logits=jnp.zeros(3)), lambda: distrax.Quantized(distrax.Normal(0.0, 1.0)),
        lambda: distrax.ClippedNormal(0.0, 1.0, -1.0, 1.0),
    ]
    ok = 0
    for make in cases:
        def run(make=make):
            def f(k):
                d = make()
                s = d.sample(seed=k, sample_shape=(2,))
                return s, d.log_prob(s), d.entropy() if hasattr(d, "entropy") else 0.0
            return jax.jit(f)(key)

        ok += guarded(run)
    print(f"distrax: {ok}/{len(cases)} distributions ran", flush=True)


def equinox_sweep():
    import equinox as eqx

    k = key
    x8 = jnp.ones(8)
    img = jnp.ones((3, 8, 8))
    seq = jnp.ones((5, 8))
    cases = [
        (lambda: eqx.nn.MLP(8, 4, 16, 3, key=k), x8), (lambda: eqx.nn.Linear(8, 4, key=k), x8),
        (lambda: eqx.nn.Conv2d(3, 4, 3, key=k), img), (lambda: eqx.nn.ConvTranspose2d(3, 4, 3, key=k), img),
        (lambda: eqx.nn.LayerNorm(8), x8), (lambda: eqx.nn.RMSNorm(8), x8), (lambda: eqx.nn.GroupNorm(1, 3), img),
        (lambda: eqx.nn.Sequential([eqx.nn.Linear(8, 8, key=k), eqx.nn.Lambda(jax.nn.relu), eqx.nn.Linear(8, 2, key=k)]), x8),
        (lambda: eqx.nn.MaxPool2d(2), img), (lambda: eqx.nn.AvgPool2d(2), img), (lambda: eqx.nn.AdaptiveAvgPool2d((2, 2)), img),
        (lambda: eqx.nn.Embedding(10, 4, key=k), jnp.array(3)), (lambda: eqx.nn.Identity(), x8),
        (lambda: eqx.nn.PReLU(), x8), (lambda: eqx.nn.Dropout(0.5, inference=True), x8),
        (lambda: eqx.nn.RotaryPositionalEmbedding(8), seq),
    ]
    ok = 0
    for make, x in cases:
        ok += guarded(lambda make=make, x=x: eqx.filter_jit(lambda m, x: m(x))(make(), x))
    cell_cases = [(lambda: eqx.nn.GRUCell(8, 8, key=k)), (lambda: eqx.nn.LSTMCell(8, 8, key=k))]
    for make in cell_cases:
        def run(make=make):
            cell = make()
            h0 = (jnp.zeros(8), jnp.zeros(8)) if isinstance(cell, eqx.nn.LSTMCell) else jnp.zeros(8)
            return eqx.filter_jit(lambda c, xs: jax.lax.scan(lambda h, x: (c(x, h), None), h0, xs)[0])(cell, seq)

        ok += guarded(run)
    mha = lambda: eqx.nn.MultiheadAttention(2, 8, key=k)  # noqa: E731
    ok += guarded(lambda: eqx.filter_jit(lambda m, x: m(x, x, x))(mha(), seq))
    ok += guarded(lambda: eqx.filter_jit(jax.vmap(lambda x: eqx.nn.MLP(8, 4, 16, 2, key=k)(x)))(seq))
    ok += guarded(lambda: eqx.filter_grad(lambda m, x: jnp.sum(m(x)))(eqx.nn.MLP(8, 4, 16, 2, key=k), x8))
    print(f"equinox: {ok} cases ran", flush=True)


def diffrax_sweep():
    import diffrax

    def f(t, y, args):
        return -y

    ok = 0
    for name in ("Euler", "Heun", "Midpoint", "Ralston", "Bosh3", "Tsit5", "Dopri5", "Dopri8", "ImplicitEuler",
                 "Kvaerno3", "Kvaerno4", "Kvaerno5", "KenCarp3", "Sil3", "ReversibleHeun", "SemiImplicitEuler",
                 "LeapfrogMidpoint"):
        solver_cls = getattr(diffrax, name, None)
        if solver_cls is None:
            continue
        adaptive = name not in ("Euler", "Midpoint", "Ralston", "ReversibleHeun", "SemiImplicitEuler", "LeapfrogMidpoint")
        term = (diffrax.ODETerm(f), diffrax.ODETerm(f)) if name == "SemiImplicitEuler" else diffrax.ODETerm(f)
        y0 = (jnp.ones(2), jnp.ones(2)) if name == "SemiImplicitEuler" else jnp.ones(2)

        def run(solver_cls=solver_cls, adaptive=adaptive, term=term, y0=y0):
            ctrl = diffrax.PIDController(rtol=1e-3, atol=1e-6) if adaptive else diffrax.ConstantStepSize()
            return jax.jit(lambda y0: diffrax.diffeqsolve(
                term, solver_cls(), 0.0, 1.0, 0.1, y0, stepsize_controller=ctrl,
                saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 1.0, 4))).ys)(y0)

        ok += guarded(run, 90)
    print(f"diffrax: {ok} solvers ran", flush=True)


def nnx_sweep():
    import flax.nnx as nnx

    r = lambda: nnx.Rngs(0)  # noqa: E731
    x8 = jnp.ones((2, 8))
    img = jnp.ones((1, 8, 8, 3))
    seq = jnp.ones((2, 5, 8))
    cases = [
        (lambda: nnx.Linear(8, 4, rngs=r()), x8), (lambda: nnx.LinearGeneral(8, (2, 2), rngs=r()), x8),
        (lambda: nnx.Conv(3, 4, (3, 3), rngs=r()), img), (lambda: nnx.ConvTranspose(3, 4, (3, 3), rngs=r()), img),
        (lambda: nnx.LayerNorm(8, rngs=r()), x8), (lambda: nnx.RMSNorm(8, rngs=r()), x8),
        (lambda: nnx.BatchNorm(8, use_running_average=True, rngs=r()), x8), (lambda: nnx.GroupNorm(3, num_groups=1, rngs=r()), img),
        (lambda: nnx.Embed(10, 4, rngs=r()), jnp.arange(3)), (lambda: nnx.Dropout(0.5, deterministic=True), x8),
        (lambda: nnx.MultiHeadAttention(2, 8, decode=False, rngs=r()), seq),
        (lambda: nnx.RNN(nnx.LSTMCell(8, 8, rngs=r())), seq), (lambda: nnx.RNN(nnx.GRUCell(8, 8, rngs=r())), seq),
        (lambda: nnx.RNN(nnx.SimpleCell(8, 8, rngs=r())), seq),
        (lambda: nnx.Sequential(nnx.Linear(8, 8, rngs=r()), nnx.relu, nnx.Linear(8, 2, rngs=r())), x8),
        (lambda: nnx.LoRALinear(8, 4, lora_rank=2, rngs=r()), x8), (lambda: nnx.PReLU(), x8),
        (lambda: nnx.Einsum("ab,bc->ac", (8, 4), rngs=r()), x8),
    ]
    ok = 0
    for make, x in cases:
        def run(make=make, x=x):
            model = make()

            @nnx.jit
            def fwd(m, x):
                return m(x)

            @nnx.jit
            def loss_grad(m, x):
                return nnx.grad(lambda m: jnp.sum(jnp.asarray(m(x), jnp.float32) ** 2))(m)

            out = fwd(model, x)
            try:
                loss_grad(model, x)
            except Exception:  # noqa: BLE001
                pass
            return out

        ok += guarded(run, 60)
    print(f"flax.nnx: {ok}/{len(cases)} modules ran", flush=True)


def jax_extras_sweep():
    from jax.example_libraries import optimizers, stax
    from jax.experimental import sparse

    init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(4), stax.LogSoftmax)
    _, params = init(key, (-1, 3))
    guarded(lambda: jax.jit(jax.grad(lambda p, x: jnp.sum(apply(p, x))))(params, jnp.ones((2, 3))))
    init2, apply2 = stax.serial(stax.Conv(4, (3, 3)), stax.BatchNorm(), stax.Relu, stax.Flatten, stax.Dense(2))
    _, params2 = init2(key, (1, 8, 8, 3))
    guarded(lambda: jax.jit(apply2)(params2, jnp.ones((1, 8, 8, 3))))
    for name in ("sgd", "momentum", "adam", "adagrad", "rmsprop", "sm3", "adamax", "nesterov", "rmsprop_momentum"):
        def run(name=name):
            opt_init, opt_update, get_params = getattr(optimizers, name)(1e-2)
            st = opt_init(params)
            st = jax.jit(lambda i, g, s: opt_update(i, g, s))(0, params, st)
            return get_params(st)

        guarded(run)
    m = jnp.eye(4).at[0, 1].set(2.0)
    for fn in (lambda a: (a @ jnp.ones(4)), lambda a: a.sum(0).todense(), lambda a: (a.T @ a).todense(),
               lambda a: sparse.sparsify(jnp.sin)(a).todense(), lambda a: a.reshape(2, 8).todense()):
        for fmt in (sparse.BCOO, sparse.BCSR):
            guarded(lambda fn=fn, fmt=fmt: jax.jit(lambda d: fn(fmt.fromdense(d)))(m))
    print("jax extras ran", flush=True)


def blackjax_sweep():
    import blackjax

    logdensity = lambda x: -0.5 * jnp.sum(x ** 2)  # noqa: E731
    x0 = jnp.ones(3)
    algos = [
        lambda: blackjax.nuts(logdensity, 0.1, jnp.ones(3)), lambda: blackjax.hmc(logdensity, 0.1, jnp.ones(3), 5),
        lambda: blackjax.mala(logdensity, 0.1), lambda: blackjax.additive_step_random_walk(logdensity, blackjax.mcmc.random_walk.normal(0.1)),
        lambda: blackjax.barker_proposal(logdensity, 0.1), lambda: blackjax.elliptical_slice(lambda x: 0.0, mean=jnp.zeros(3), cov=jnp.eye(3)),
        lambda: blackjax.ghmc(logdensity, 0.1, jnp.ones(3), 0.5, 0.1), lambda: blackjax.mclmc(logdensity, L=1.0, step_size=0.1),
        lambda: blackjax.dynamic_hmc(logdensity, 0.1, jnp.ones(3)),
    ]
    ok = 0
    for make in algos:
        def run(make=make):
            algo = make()
            state = algo.init(x0, key) if "mclmc" in repr(make.__code__.co_consts) else algo.init(x0)
            return jax.jit(algo.step)(key, state)

        ok += guarded(run, 60)
    ok += guarded(lambda: blackjax.window_adaptation(blackjax.nuts, logdensity).run(key, x0, num_steps=10), 120)
    print(f"blackjax: {ok} algorithms ran", flush=True)


def pgx_sweep():
    """Every pgx game: `init`, a few legal random `step`s and `observe`, each under `jit` (the
    games' rules are Python over a board, traced once per shape)."""
    import pgx

    ok = 0
    for env_id in pgx.available_envs():

        def play(env_id=env_id):
            env = pgx.make(env_id)
            state = jax.jit(env.init)(key)
            step = jax.jit(env.step)
            for i in range(3):
                legal = state.legal_action_mask
                action = jax.random.categorical(jax.random.fold_in(key, i), jnp.log(legal.astype(jnp.float32)))
                state = step(state, action, jax.random.fold_in(key, 100 + i))
            return jax.jit(env.observe)(state, state.current_player)

        ok += guarded(play, 90)
    print(f"pgx: {ok} games ran", flush=True)


def main():
    only = set(sys.argv[2:])
    for sweep in (optax_sweep, equinox_sweep, distrax_sweep, numpyro_sweep, diffrax_sweep, nnx_sweep, jax_extras_sweep,
                  blackjax_sweep, pgx_sweep):
        if only and sweep.__name__ not in only:
            continue
        try:
            sweep()
        except BaseException as exc:  # noqa: BLE001
            print(f"{sweep.__name__}: {type(exc).__name__}: {exc}", flush=True)


if __name__ == "__main__":
    main()
