"""Drive TensorFlow Probability's JAX substrate (`tensorflow_probability.substrates.jax`, installed
as tfp-nightly) under `jit`: every distribution class with a few parameter sets (sample, log_prob,
mean, variance, entropy), every bijector (forward, inverse, log-det-Jacobian), `tfp.math` and
`tfp.stats` functions on small arrays, and short MCMC / optimizer runs.

    python benchmarks/oracle/drive_tfp.py [SECONDS] [SECTION ...]

Each section runs in its own child process; every call is guarded by an alarm.
"""
from __future__ import annotations

import inspect

from drive_common import deadline_from_argv, make_guarded, run_sections

DEADLINE = deadline_from_argv(400.0)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

OK = [0, 0]
guarded = make_guarded(10, DEADLINE, OK)


seed = jax.random.PRNGKey(0)
v = jnp.asarray(np.linspace(0.2, 0.9, 4), jnp.float32)
m = jnp.eye(3) * 2.0 + 0.1
PARAMS = [
    {}, {"loc": 0.0, "scale": 1.0}, {"loc": v, "scale": v + 1}, {"concentration": v + 1.0}, {"concentration": 2.0, "rate": 1.0},
    {"probs": v / v.sum()}, {"logits": v}, {"probs": 0.3}, {"rate": 2.0}, {"df": 3.0}, {"df": 3.0, "loc": 0.0, "scale": 1.0},
    {"concentration1": 2.0, "concentration0": 3.0}, {"low": 0.0, "high": 2.0}, {"total_count": 5.0, "probs": v / v.sum()},
    {"total_count": 5.0, "probs": 0.3}, {"loc": jnp.zeros(3), "scale_diag": jnp.ones(3)}, {"loc": jnp.zeros(3), "scale_tril": m},
    {"loc": jnp.zeros(3), "covariance_matrix": m @ m.T}, {"concentration": 2.0, "scale": 1.0}, {"scale": 1.0},
    {"loc": 0.0, "scale": 1.0, "skewness": 0.5, "tailweight": 1.5}, {"df": 4.0, "scale_tril": m}, {"dimension": 3, "concentration": 2.0},
    {"mean_direction": jnp.array([0.0, 1.0]), "concentration": 2.0}, {"temperature": 0.5, "probs": v / v.sum()},
    {"loc": 0.0, "scale": 1.0, "low": -1.0, "high": 1.0}, {"peak": 0.5, "low": 0.0, "high": 1.0}, {"power": 2.0},
    {"concentration": 2.0}, {"loc": 0.0, "concentration": 2.0}, {"mean": 1.0, "concentration": 2.0}, {"alpha": 1.0, "beta": 2.0},
]


def _distributions(tfd, validate):
    """An instance of every distribution class for each parameter set its constructor takes
    (with `validate_args=True` where asked and accepted); classes that refuse are skipped."""
    for name in sorted(dir(tfd)):
        cls = getattr(tfd, name)
        if not inspect.isclass(cls) or not issubclass(cls, tfd.Distribution) or cls is tfd.Distribution:
            continue
        for params in PARAMS:
            try:
                sig = inspect.signature(cls.__init__)
                if any(k not in sig.parameters for k in params):
                    continue
                if validate and "validate_args" in sig.parameters:
                    d = cls(**params, validate_args=True)
                else:
                    d = cls(**params)
            except Exception:  # noqa: BLE001
                continue
            yield cls, d


def sec_distributions():
    import tensorflow_probability.substrates.jax as tfp
    tfd = tfp.distributions
    done = set()  # classes driven already: the first parameter set that samples is enough
    for cls, d in _distributions(tfd, validate=True):
        if cls in done:
            continue
        if guarded(lambda d=d: jax.jit(lambda s: d.sample(2, seed=s))(seed)):
            guarded(lambda d=d: jax.jit(lambda s: d.log_prob(d.sample(seed=s)))(seed))
            for meth in ("mean", "variance", "entropy", "stddev", "mode"):
                guarded(lambda d=d, meth=meth: jax.jit(lambda: getattr(d, meth)())())
            guarded(lambda d=d: jax.jit(lambda s: d.cdf(d.sample(seed=s)))(seed))
            done.add(cls)
    # composite distributions
    cases = [
        lambda: tfd.Independent(tfd.Normal(jnp.zeros(3), 1.0), 1), lambda: tfd.MixtureSameFamily(tfd.Categorical(probs=v / v.sum()), tfd.Normal(v, 1.0)),
        lambda: tfd.Mixture(tfd.Categorical(probs=[0.5, 0.5]), [tfd.Normal(0.0, 1.0), tfd.Normal(1.0, 2.0)]),
        lambda: tfd.TransformedDistribution(tfd.Normal(0.0, 1.0), tfp.bijectors.Exp()),
        lambda: tfd.JointDistributionSequential([tfd.Normal(0.0, 1.0), lambda a: tfd.Normal(a, 1.0), lambda b, a: tfd.Normal(a + b, 1.0)]),
        lambda: tfd.JointDistributionNamed(dict(a=tfd.Normal(0.0, 1.0), b=lambda a: tfd.Normal(a, 1.0))),
        lambda: tfd.JointDistributionSequentialAutoBatched([tfd.Normal(0.0, 1.0), lambda a: tfd.Normal(a, 1.0)]),
        lambda: tfd.Sample(tfd.Normal(0.0, 1.0), sample_shape=(3, 2)), lambda: tfd.BatchReshape(tfd.Normal(jnp.zeros(4), 1.0), (2, 2)),
        lambda: tfd.Blockwise([tfd.Normal(0.0, 1.0), tfd.MultivariateNormalDiag(jnp.zeros(2), jnp.ones(2))]),
        lambda: tfd.HiddenMarkovModel(tfd.Categorical(probs=[0.5, 0.5]), tfd.Categorical(probs=[[0.9, 0.1], [0.2, 0.8]]), tfd.Normal([0.0, 1.0], 1.0), num_steps=5),
        lambda: tfd.LinearGaussianStateSpaceModel(5, jnp.eye(2), tfd.MultivariateNormalDiag(scale_diag=jnp.ones(2)),
                                                  jnp.ones((1, 2)), tfd.MultivariateNormalDiag(scale_diag=jnp.ones(1)), tfd.MultivariateNormalDiag(scale_diag=jnp.ones(2))),
        lambda: tfd.GaussianProcess(tfp.math.psd_kernels.ExponentiatedQuadratic(), index_points=jnp.linspace(0, 1, 4)[:, None]),
        lambda: tfd.StudentTProcess(3.0, tfp.math.psd_kernels.MaternFiveHalves(), index_points=jnp.linspace(0, 1, 4)[:, None]),
        lambda: tfd.Autoregressive(lambda x: tfd.Independent(tfd.Normal(x * 0.5, 1.0), 1), sample0=jnp.zeros(3), num_steps=3),
        lambda: tfd.QuantizedDistribution(tfd.Normal(0.0, 3.0), low=-3.0, high=3.0),
        lambda: tfd.Masked(tfd.Normal(jnp.zeros(3), 1.0), validity_mask=jnp.array([True, False, True])),
        lambda: tfd.Empirical(jnp.arange(5.0)), lambda: tfd.FiniteDiscrete(jnp.arange(3.0), probs=jnp.ones(3) / 3),
        lambda: tfd.OrderedLogistic(jnp.array([-1.0, 1.0]), 0.0),
        lambda: tfd.LKJ(3, 2.0), lambda: tfd.CholeskyLKJ(3, 2.0), lambda: tfd.WishartTriL(4.0, m),
        lambda: tfd.MultivariateNormalLinearOperator(jnp.zeros(3), tfp.tf2jax.linalg.LinearOperatorLowerTriangular(m)),
        lambda: tfd.PlackettLuce(v), lambda: tfd.GeneralizedExtremeValue(0.0, 1.0, 0.2), lambda: tfd.ZeroInflatedNegativeBinomial(5.0, probs=0.3, inflated_loc_probs=0.2),
        lambda: tfd.VariationalGaussianProcess(tfp.math.psd_kernels.ExponentiatedQuadratic(), jnp.linspace(0, 1, 4)[:, None], jnp.linspace(0, 1, 2)[:, None], jnp.zeros(2), jnp.eye(2)),
    ]
    for make in cases:
        try:
            d = make()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda d=d: jax.jit(lambda s: d.log_prob(d.sample(seed=s)))(seed), 20)
        guarded(lambda d=d: jax.jit(lambda s: d.sample(3, seed=s))(seed), 20)
        for meth in ("mean", "variance", "entropy", "posterior_marginals", "posterior_mode"):
            guarded(lambda d=d, meth=meth: jax.jit(lambda: getattr(d, meth)() if meth in ("mean", "variance", "entropy") else getattr(d, meth)(jnp.zeros(5)))(), 20)


def sec_bijectors():
    import tensorflow_probability.substrates.jax as tfp
    tfb = tfp.bijectors
    x = jnp.asarray(np.linspace(0.1, 0.8, 4), jnp.float32)
    for name in sorted(dir(tfb)):
        cls = getattr(tfb, name)
        if not inspect.isclass(cls) or not issubclass(cls, tfb.Bijector) or cls is tfb.Bijector:
            continue
        for params in ({}, {"shift": 1.0}, {"scale": 2.0}, {"power": 2.0}, {"bijectors": [tfb.Exp(), tfb.Scale(2.0)]},
                       {"concentration": 2.0}, {"hinge_softness": 1.0}, {"diag_bijector": tfb.Exp()}, {"bijector": tfb.Exp()},
                       {"scale_tril": m}, {"permutation": jnp.array([1, 0, 3, 2])}, {"loc": 0.0, "scale": 1.0},
                       {"low": 0.0, "high": 1.0}, {"validate_args": False}):
            try:
                b = cls(**params)
            except Exception:  # noqa: BLE001
                continue
            ok = False
            for xx in (x, m, x[:3], x[0]):
                if guarded(lambda b=b, xx=xx: jax.jit(lambda y: (b.forward(y), b.forward_log_det_jacobian(y, event_ndims=b.forward_min_event_ndims)))(xx)):
                    guarded(lambda b=b, xx=xx: jax.jit(lambda y: b.inverse(b.forward(y)))(xx))
                    guarded(lambda b=b, xx=xx: jax.jit(lambda y: b.inverse_log_det_jacobian(b.forward(y), event_ndims=b.inverse_min_event_ndims))(xx))
                    ok = True
                    break
            if ok:
                break
    for b in (tfb.Chain([tfb.Shift(1.0), tfb.Scale(2.0), tfb.Exp()]), tfb.JointMap([tfb.Exp(), tfb.Softplus()]),
              tfb.Blockwise([tfb.Exp(), tfb.Sigmoid()], block_sizes=[2, 2]), tfb.Invert(tfb.Softplus()),
              tfb.RealNVP(num_masked=2, shift_and_log_scale_fn=lambda y, n: (y[..., :n] * 0 + 0.1, y[..., :n] * 0)),
              tfb.MaskedAutoregressiveFlow(shift_and_log_scale_fn=lambda y: (y * 0.1, y * 0.0)),
              tfb.Restructure({"a": 0, "b": 1}), tfb.Split(2), tfb.Reshape((2, 2)), tfb.Transpose(perm=[1, 0]),
              tfb.FillScaleTriL(), tfb.CorrelationCholesky(), tfb.FillTriangular(), tfb.SoftmaxCentered(), tfb.IteratedSigmoidCentered(),
              tfb.Pad(), tfb.ScaleMatvecTriL(m), tfb.ScaleMatvecLU(*jax.scipy.linalg.lu_factor(m)), tfb.MatvecLU(*jax.scipy.linalg.lu_factor(m)) if hasattr(tfb, "MatvecLU") else tfb.Identity(),
              tfb.CholeskyOuterProduct(), tfb.TransformDiagonal(tfb.Exp()), tfb.Ordered(), tfb.Ascending(), tfb.UnitVector() if hasattr(tfb, "UnitVector") else tfb.Identity(),
              tfb.DiscreteCosineTransform(), tfb.FrechetCDF(), tfb.GumbelCDF(), tfb.KumaraswamyCDF(), tfb.MoyalCDF(), tfb.RayleighCDF(), tfb.WeibullCDF(),
              tfb.SinhArcsinh(0.5, 1.5), tfb.GeneralizedPareto(0.0, 1.0, 0.2), tfb.PowerTransform(0.5), tfb.Householder(jnp.ones(4)) if hasattr(tfb, "Householder") else tfb.Identity(),
              tfb.BatchNormalization(), tfb.Permute([3, 2, 1, 0]), tfb.Cumsum(), tfb.ShiftedGompertzCDF(1.0), tfb.Softfloor(1.0)):
        for xx in (x, jnp.stack([x, x])[..., :4], m):
            if guarded(lambda b=b, xx=xx: jax.jit(lambda y: (b.forward(y), b.inverse(b.forward(y))))(xx)):
                guarded(lambda b=b, xx=xx: jax.jit(lambda y: b.forward_log_det_jacobian(y, event_ndims=b.forward_min_event_ndims))(xx))
                break


def sec_math():
    import tensorflow_probability.substrates.jax as tfp
    pats = [(v,), (m,), (v, v), (m, m), (m, v[:3]), (v, 2), (jnp.stack([v, v]),)]
    for modname in ("math", "stats", "math.psd_kernels"):
        mod = tfp
        for part in modname.split("."):
            mod = getattr(mod, part)
        for name in sorted(dir(mod)):
            fn = getattr(mod, name)
            if name.startswith("_") or not callable(fn) or inspect.ismodule(fn):
                continue
            if inspect.isclass(fn):
                if modname == "math.psd_kernels":
                    try:
                        k = fn()
                    except Exception:  # noqa: BLE001
                        continue
                    guarded(lambda k=k: jax.jit(lambda a: k.matrix(a, a))(m))
                    guarded(lambda k=k: jax.jit(lambda a: k.apply(a, a))(m))
                continue
            for args in pats:
                if guarded(lambda fn=fn, args=args: jax.jit(lambda *a: fn(*a))(*args)):
                    break
    tm = tfp.math
    guarded(lambda: jax.jit(lambda a: tm.ode.DormandPrince().solve(lambda t, y: -y, 0.0, a, solution_times=jnp.linspace(0.0, 1.0, 3)).states)(v), 30)
    guarded(lambda: jax.jit(lambda a: tm.ode.BDF().solve(lambda t, y: -y, 0.0, a, solution_times=jnp.linspace(0.0, 1.0, 3)).states)(v), 30)
    guarded(lambda: jax.jit(lambda a: tm.find_root_chandrupatla(lambda x: x ** 2 - a, 0.0, 2.0).estimated_root)(v))
    guarded(lambda: jax.jit(lambda a: tm.find_root_secant(lambda x: x ** 2 - a, a).estimated_root)(v))
    guarded(lambda: jax.jit(lambda a: tm.value_and_gradient(lambda x: jnp.sum(x ** 2), a))(v))
    guarded(lambda: jax.jit(lambda a: tm.cholesky_update(m @ m.T, a[:3]))(v))
    guarded(lambda: jax.jit(lambda a: tm.pivoted_cholesky(m @ m.T, 2))(v))
    guarded(lambda: jax.jit(lambda a: tm.lu_solve(*jax.scipy.linalg.lu_factor(m), a[:3, None]))(v))
    guarded(lambda: jax.jit(lambda a: tm.interp_regular_1d_grid(a, 0.0, 1.0, a))(v))
    guarded(lambda: jax.jit(lambda a: tm.batch_interp_regular_nd_grid(a[None, :2], [0.0, 0.0], [1.0, 1.0], jnp.ones((3, 3)), axis=-2))(v))
    guarded(lambda: jax.jit(lambda a: tm.scan_associative(jnp.add, a))(v))
    guarded(lambda: jax.jit(lambda a: tm.bessel_ive(a, a))(v))
    guarded(lambda: jax.jit(lambda a: tm.hypergeometric.hyp2f1_small_argument(1.0, 1.0, 2.0, a * 0.5))(v))
    guarded(lambda: jax.jit(lambda a: tfp.stats.quantiles(a, 4))(v))
    guarded(lambda: jax.jit(lambda a: tfp.stats.histogram(a, jnp.linspace(0, 1, 4)))(v))
    guarded(lambda: jax.jit(lambda a: tfp.stats.auto_correlation(a, max_lags=2))(v))
    guarded(lambda: jax.jit(lambda a: tfp.stats.percentile(a, 30.0, interpolation="linear"))(v))


def sec_mcmc():
    import tensorflow_probability.substrates.jax as tfp
    tfd = tfp.distributions
    target = tfd.MultivariateNormalDiag(jnp.zeros(2), jnp.ones(2)).log_prob
    kernels = [
        lambda: tfp.mcmc.HamiltonianMonteCarlo(target, 0.1, 3), lambda: tfp.mcmc.NoUTurnSampler(target, 0.1, max_tree_depth=3),
        lambda: tfp.mcmc.RandomWalkMetropolis(target), lambda: tfp.mcmc.MetropolisAdjustedLangevinAlgorithm(target, 0.1),
        lambda: tfp.mcmc.SliceSampler(target, 0.5, 3), lambda: tfp.mcmc.SimpleStepSizeAdaptation(tfp.mcmc.HamiltonianMonteCarlo(target, 0.1, 3), 3),
        lambda: tfp.mcmc.DualAveragingStepSizeAdaptation(tfp.mcmc.NoUTurnSampler(target, 0.1, max_tree_depth=3), 3),
        lambda: tfp.mcmc.TransformedTransitionKernel(tfp.mcmc.HamiltonianMonteCarlo(target, 0.1, 3), tfp.bijectors.Identity()),
        lambda: tfp.mcmc.ReplicaExchangeMC(target, inverse_temperatures=jnp.array([1.0, 0.5]), make_kernel_fn=lambda t: tfp.mcmc.HamiltonianMonteCarlo(t, 0.1, 2)),
        lambda: tfp.experimental.mcmc.PreconditionedHamiltonianMonteCarlo(target, 0.1, 3),
        lambda: tfp.experimental.mcmc.GradientBasedTrajectoryLengthAdaptation(tfp.mcmc.HamiltonianMonteCarlo(target, 0.1, 3), 3),
    ]
    for make in kernels:
        try:
            k = make()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda k=k: jax.jit(lambda s: tfp.mcmc.sample_chain(4, jnp.zeros(2), kernel=k, num_burnin_steps=2, seed=s, trace_fn=None))(seed), 60)
    guarded(lambda: jax.jit(lambda s: tfp.experimental.mcmc.windowed_adaptive_nuts(6, tfd.JointDistributionSequential([tfd.Normal(0.0, 1.0), lambda a: tfd.Normal(a, 1.0)]), num_adaptation_steps=6, seed=s, max_tree_depth=3)[0])(seed), 90)
    guarded(lambda: jax.jit(lambda a: tfp.mcmc.effective_sample_size(a))(jnp.stack([v, v, v]).T), 20)
    guarded(lambda: jax.jit(lambda a: tfp.mcmc.potential_scale_reduction(a))(jnp.stack([v, v * 2]).T), 20)
    for opt in (lambda f, x: tfp.optimizer.lbfgs_minimize(f, x, max_iterations=5), lambda f, x: tfp.optimizer.bfgs_minimize(f, x, max_iterations=5),
                lambda f, x: tfp.optimizer.nelder_mead_minimize(lambda y: f(y)[0], initial_vertex=x, max_iterations=5),
                lambda f, x: tfp.optimizer.differential_evolution_minimize(lambda y: f(y)[0], initial_position=x, max_iterations=3, seed=seed),
                lambda f, x: tfp.optimizer.bfgs_minimize(f, x, max_iterations=2, stopping_condition=tfp.optimizer.converged_any)):
        guarded(lambda opt=opt: jax.jit(lambda a: opt(lambda y: tfp.math.value_and_gradient(lambda z: jnp.sum((z - 1.0) ** 2), y), a).position)(v), 60)
    guarded(lambda: jax.jit(lambda s: tfp.vi.monte_carlo_variational_loss(target, tfd.MultivariateNormalDiag(jnp.zeros(2), jnp.ones(2)), sample_size=3, seed=s))(seed), 30)
    for div in ("kl_reverse", "kl_forward", "jensen_shannon", "squared_hellinger", "chi_square", "total_variation", "pearson", "t_power", "log1p_abs", "jeffreys", "modified_gan", "triangular", "symmetrized_csiszar_function", "amari_alpha", "arithmetic_geometric"):
        f = getattr(tfp.vi, div, None)
        if f is not None:
            guarded(lambda f=f: jax.jit(lambda a: f(a, self_normalized=True) if "self_normalized" in inspect.signature(f).parameters else f(a))(v))


def sec_more():
    """More methods of every distribution (slicing, cdf, quantile, KL, default event-space bijector),
    structural time series, GLMs, experimental distributions and bijectors."""
    import tensorflow_probability.substrates.jax as tfp
    tfd = tfp.distributions
    built = []
    for name in sorted(dir(tfd)):
        cls = getattr(tfd, name)
        if not inspect.isclass(cls) or not issubclass(cls, tfd.Distribution) or cls is tfd.Distribution:
            continue
        for params in PARAMS[2:] + PARAMS[:2]:
            try:
                sig = inspect.signature(cls.__init__)
                if any(k not in sig.parameters for k in params):
                    continue
                d = cls(**params)
                built.append(d)
                break
            except Exception:  # noqa: BLE001
                continue
    for d in built:
        for meth in ("log_cdf", "survival_function", "log_survival_function", "prob", "quantile"):
            guarded(lambda d=d, meth=meth: jax.jit(lambda s: getattr(d, meth)(d.sample(seed=s) if meth != "quantile" else 0.3))(seed))
        guarded(lambda d=d: jax.jit(lambda: tfd.kl_divergence(d, d))())
        guarded(lambda d=d: jax.jit(lambda s: d[..., :1].sample(seed=s) if d.batch_shape.rank else d.copy().sample(seed=s))(seed))
        guarded(lambda d=d: jax.jit(lambda s: d.experimental_default_event_space_bijector().forward(d.sample(seed=s)))(seed))
        guarded(lambda d=d: jax.jit(lambda s: d.experimental_sample_and_log_prob(2, seed=s))(seed))
    y = jnp.sin(jnp.arange(12.0))
    for make in (lambda: tfp.sts.LocalLinearTrend(observed_time_series=y), lambda: tfp.sts.Seasonal(3, observed_time_series=y),
                 lambda: tfp.sts.Sum([tfp.sts.LocalLevel(observed_time_series=y), tfp.sts.Autoregressive(2, observed_time_series=y)], observed_time_series=y),
                 lambda: tfp.sts.SemiLocalLinearTrend(observed_time_series=y), lambda: tfp.sts.SmoothSeasonal(6.0, [1, 2], observed_time_series=y),
                 lambda: tfp.sts.LinearRegression(jnp.ones((12, 2))), lambda: tfp.sts.DynamicLinearRegression(jnp.ones((12, 2)), observed_time_series=y)):
        try:
            model = make()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda model=model: jax.jit(lambda s: model.joint_distribution(y).log_prob(model.joint_distribution(y).sample(seed=s)))(seed), 40)
        guarded(lambda model=model: jax.jit(lambda s: model.make_state_space_model(12, [p.prior.sample(seed=s) for p in model.parameters]).log_prob(y))(seed), 40)
    for fam in ("Normal", "Bernoulli", "Poisson", "LogNormal"):
        f = getattr(tfp.glm, fam, None)
        if f is not None:
            guarded(lambda f=f: jax.jit(lambda x: tfp.glm.fit(x, jnp.abs(x[:, 0]) > 0.5 if "Bern" in str(f) else jnp.abs(x[:, 0]), f(), maximum_iterations=3)[0])(jnp.stack([v, v * 2, v + 1]).T), 30)
    ed = tfp.experimental.distributions
    for make in (lambda: ed.MultivariateNormalPrecisionFactorLinearOperator(jnp.zeros(3), tfp.tf2jax.linalg.LinearOperatorLowerTriangular(m)),
                 lambda: ed.JointDistributionPinned(tfd.JointDistributionSequential([tfd.Normal(0.0, 1.0), lambda a: tfd.Normal(a, 1.0)]), 0.5),
                 lambda: ed.IncrementLogProb(1.0)):
        try:
            d = make()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda d=d: jax.jit(lambda s: d.log_prob(d.sample(seed=s)))(seed), 20)
    eb = tfp.experimental.bijectors
    for make in (lambda: eb.ScalarFunctionWithInferredInverse(lambda x: x + x ** 3), lambda: eb.build_trainable_highway_flow(4, seed=seed),
                 lambda: tfp.bijectors.Exp()):
        try:
            b = make()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda b=b: jax.jit(lambda x: b.inverse(b.forward(x)))(v), 20)
    for name in dir(tfp.math.psd_kernels):
        cls = getattr(tfp.math.psd_kernels, name)
        if inspect.isclass(cls):
            for params in ({"amplitude": 1.0, "length_scale": 0.5}, {"bias_amplitude": 1.0, "slope_amplitude": 1.0, "shift": 0.0},
                           {"exponent": 2.0}, {"kernel": tfp.math.psd_kernels.ExponentiatedQuadratic()},
                           {"kernels": [tfp.math.psd_kernels.ExponentiatedQuadratic(), tfp.math.psd_kernels.Linear()]}):
                try:
                    k = cls(**params)
                except Exception:  # noqa: BLE001
                    continue
                guarded(lambda k=k: jax.jit(lambda a: (k.matrix(a, a), k.tensor(a, a, 1, 1)))(m))
                break


def sec_exp():
    """tfp.experimental: particle filters, sequential Monte Carlo, ensemble / extended Kalman filters,
    surrogate posteriors, linear algebra helpers."""
    import tensorflow_probability.substrates.jax as tfp
    tfd = tfp.distributions
    te = tfp.experimental
    prior = lambda: tfd.Normal(jnp.zeros(()), 1.0)  # noqa: E731
    trans = lambda _, x: tfd.Normal(x, 1.0)  # noqa: E731
    obs = lambda _, x: tfd.Normal(x, 1.0)  # noqa: E731
    ys = jnp.sin(jnp.arange(5.0))
    guarded(lambda: jax.jit(lambda s: te.mcmc.particle_filter(ys, prior(), trans, obs, num_particles=8, seed=s)[0])(seed), 60)
    guarded(lambda: jax.jit(lambda s: te.mcmc.infer_trajectories(ys, prior(), trans, obs, num_particles=8, seed=s)[0])(seed), 60)
    guarded(lambda: jax.jit(lambda s: te.mcmc.sample_sequential_monte_carlo(
        lambda x: tfd.Normal(0.0, 1.0).log_prob(x), lambda x: tfd.Normal(1.0, 1.0).log_prob(x), jnp.zeros(8), max_num_steps=3, seed=s)[2])(seed), 60)
    guarded(lambda: jax.jit(lambda s: te.mcmc.sample_snaper_hmc(tfd.MultivariateNormalDiag(jnp.zeros(2), jnp.ones(2)), 6, num_burnin_steps=4, seed=s)[0])(seed), 60)
    seq = getattr(te, "sequential", None)
    if seq is not None:
        guarded(lambda: jax.jit(lambda x: seq.extended_kalman_filter(ys[:, None], tfd.MultivariateNormalDiag(jnp.zeros(1), jnp.ones(1)),
                                                                     lambda z: tfd.MultivariateNormalDiag(z, jnp.ones(1)),
                                                                     lambda z: tfd.MultivariateNormalDiag(z, jnp.ones(1)))[0])(ys), 60)
    model = tfd.JointDistributionNamed(dict(a=tfd.Normal(0.0, 1.0), b=lambda a: tfd.Normal(a, 1.0)))
    pinned = model.experimental_pin(b=0.5)
    for build in (lambda: te.vi.build_factored_surrogate_posterior(event_shape={"a": ()}),
                  lambda: te.vi.build_affine_surrogate_posterior(event_shape={"a": ()}, operators="diag"),
                  lambda: te.vi.build_asvi_surrogate_posterior(tfd.JointDistributionSequential([tfd.Normal(0.0, 1.0), tfd.Normal(0.0, 2.0)])),):
        try:
            q = build()
        except Exception:  # noqa: BLE001
            continue
        guarded(lambda q=q: jax.jit(lambda s: q.log_prob(q.sample(seed=s)))(seed), 30)
    guarded(lambda: jax.jit(lambda s: pinned.unnormalized_log_prob(pinned.sample_unpinned(seed=s)))(seed), 30)
    guarded(lambda: jax.jit(lambda s: pinned.experimental_default_event_space_bijector().forward(pinned.sample_unpinned(seed=s)))(seed), 30)
    for f in (lambda a: te.linalg.simple_robustified_cholesky(a @ a.T) if hasattr(te.linalg, "simple_robustified_cholesky") else a,
              lambda a: te.linalg.no_pivot_ldl(a @ a.T), lambda a: tfp.math.fill_triangular(a[0]), lambda a: tfp.math.fill_triangular_inverse(a),
              lambda a: tfp.math.lbeta(a, a), lambda a: tfp.math.log_add_exp(a, a), lambda a: tfp.math.reduce_weighted_logsumexp(a, a, axis=0),
              lambda a: tfp.math.soft_sorting_matrix(a, 1.0), lambda a: tfp.math.sparse_or_dense_matmul(a, a),
              lambda a: tfp.math.trapz(a), lambda a: tfp.math.smootherstep(a), lambda a: tfp.math.round_exponential_bump_function(a)):
        guarded(lambda f=f: jax.jit(f)(m), 20)


def sec_wide():
    """Every distribution with every parameter set it accepts (validate_args off), every math /
    stats function with every argument pattern: other branches of the same code."""
    import tensorflow_probability.substrates.jax as tfp
    tfd = tfp.distributions
    for _, d in _distributions(tfd, validate=False):
        guarded(lambda d=d: jax.jit(lambda s: d.log_prob(d.sample((2, 1), seed=s)))(seed))
        guarded(lambda d=d: jax.jit(jax.grad(lambda s: jnp.sum(d.log_prob(d.sample(seed=jax.random.PRNGKey(1)) + s * 0))))(0.0))
    pats = [(v,), (m,), (v, v), (m, m), (m, v[:3]), (v, 2), (jnp.stack([v, v]),), (v, 0.5), (m, 1), (jnp.stack([m, m]),)]
    for modname in ("math", "stats"):
        mod = getattr(tfp, modname)
        for name in sorted(dir(mod)):
            fn = getattr(mod, name)
            if name.startswith("_") or not callable(fn) or inspect.ismodule(fn) or inspect.isclass(fn):
                continue
            for args in pats:
                guarded(lambda fn=fn, args=args: jax.jit(lambda *a: fn(*a))(*args), 6)


SECTIONS = {f.__name__[4:]: f for f in (sec_distributions, sec_bijectors, sec_math, sec_mcmc, sec_more, sec_exp, sec_wide)}


def main():
    run_sections(__file__, SECTIONS, [n for n in SECTIONS if n not in ("more", "exp", "wide")], DEADLINE, OK)


if __name__ == "__main__":
    main()
