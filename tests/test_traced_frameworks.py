"""Framework entry points: Flax/Haiku/Equinox module methods, functions given to `lax` control flow,
custom derivative rules, numpyro models and configured base classes are traced, each with its reason;
layer loops stay clean. Sources are only analysed (never imported), so no framework is needed."""

from __future__ import annotations

import textwrap

import pytest

from jaxloopfix.config import ConfigError, Settings, settings_from_table
from jaxloopfix.engine import lint_text
from jaxloopfix.prefilter import may_have_findings

TIME_LOOP = """
    h = jnp.zeros(4)
    hs = []
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
        hs.append(h)
"""


def _body(indent: int, tail: str = "return jnp.stack(hs)") -> str:
    return textwrap.indent(textwrap.dedent(TIME_LOOP).strip() + "\n" + tail, " " * indent)


def _lint(source: str, settings: Settings | None = None, *, prefilter: bool = True):
    text = textwrap.dedent(source).lstrip()
    return lint_text(text, "m.py", settings or Settings(), prefilter=prefilter)


def _reasons(source: str, settings: Settings | None = None) -> list[str]:
    diagnostics = _lint(source, settings)
    # The prefilter is a superset: it never hides a finding.
    assert [d.message for d in diagnostics] == [d.message for d in _lint(source, settings, prefilter=False)]
    assert all(d.code in ("JLF001", "JLF002") for d in diagnostics)
    return [d.traced_reason or "" for d in diagnostics]


FLAGGED = {
    "flax_linen_call": (
        "import jax.numpy as jnp\nimport flax.linen as nn\n\nclass RNN(nn.Module):\n    def __call__(self, xs):\n"
        + _body(8),
        "method `__call__` of Flax module `RNN`",
    ),
    "flax_linen_from_import_alias": (
        "import jax.numpy as jnp\nfrom flax.linen import Module as M\n\nclass RNN(M):\n    def __call__(self, xs):\n"
        + _body(8),
        "method `__call__` of Flax module `RNN`",
    ),
    "flax_linen_compact_method": (
        "import jax.numpy as jnp\nfrom flax import linen as nn\n\nclass Enc(nn.Module):\n    @nn.compact\n"
        "    def encode(self, xs):\n" + _body(8),
        "method `encode` of Flax module `Enc` (decorated with `@nn.compact`)",
    ),
    "flax_linen_method_applied_by_name": (
        # Never called in its module: `model.apply(variables, xs, method=RNN.encode)` runs it.
        "import jax.numpy as jnp\nimport flax.linen as nn\n\nclass RNN(nn.Module):\n    def encode(self, xs):\n"
        + _body(8),
        "method `encode` of Flax module `RNN` (a linen method runs bound, under `init` or `apply(..., method=...)`)",
    ),
    "praxis_layer_method": (
        "import jax.numpy as jnp\nfrom praxis import base_layer\n\nclass Decoder(base_layer.BaseLayer):\n"
        "    def decode(self, xs):\n" + _body(8),
        "method `decode` of Praxis layer `Decoder`",
    ),
    "flax_linen_called_from_call": (
        "import jax.numpy as jnp\nimport flax.linen as nn\n\nclass RNN(nn.Module):\n"
        "    def __call__(self, xs):\n        return self.run(xs)\n\n    def run(self, xs):\n" + _body(8),
        "method `run` of Flax module `RNN` (a linen method runs bound",
    ),
    "flax_linen_local_base_class": (
        "import jax.numpy as jnp\nimport flax.linen as nn\n\nclass Base(nn.Module):\n    pass\n\n"
        "class RNN(Base):\n    def __call__(self, xs):\n" + _body(8),
        "method `__call__` of Flax module `RNN`",
    ),
    "flax_nnx_call": (
        "import jax.numpy as jnp\nfrom flax import nnx\n\nclass RNN(nnx.Module):\n    def __call__(self, xs):\n"
        + _body(8),
        "method `__call__` of Flax NNX module `RNN`",
    ),
    "flax_nn_scan_target": (
        "import jax.numpy as jnp\nimport flax.linen as nn\nfrom mylib import Base\n\nclass Cell(Base):\n"
        "    def __call__(self, xs):\n" + _body(8) + "\n\nScanned = nn.scan(Cell, variable_broadcast='params')\n",
        "method `__call__` of `Cell`, lifted by `nn.scan`",
    ),
    "haiku_module_method": (
        "import jax.numpy as jnp\nimport haiku as hk\n\nclass Enc(hk.Module):\n    def encode(self, xs):\n"
        + _body(8),
        "method `encode` of Haiku module `Enc`",
    ),
    "haiku_transform_call": (
        "import jax.numpy as jnp\nimport haiku as hk\n\ndef net(xs):\n" + _body(4) + "\n\nmodel = hk.transform(net)\n",
        "transformed by `hk.transform`",
    ),
    "haiku_transform_with_state_decorator": (
        "import jax.numpy as jnp\nimport haiku as hk\n\n@hk.transform_with_state\ndef net(xs):\n" + _body(4),
        "decorated with `@hk.transform_with_state`",
    ),
    "equinox_module_method": (
        "import jax.numpy as jnp\nimport equinox as eqx\n\nclass Cell(eqx.Module):\n    def __call__(self, xs):\n"
        + _body(8),
        "method `__call__` of Equinox module `Cell`",
    ),
    "lax_scan_body": (
        "import jax.numpy as jnp\nfrom jax import lax\n\ndef chunk(c, xs):\n" + _body(4, "return c, jnp.stack(hs)")
        + "\n\ndef run(c, xss):\n    return lax.scan(chunk, c, xss)\n",
        "the body of `lax.scan`",
    ),
    "lax_scan_partial_body": (
        "import functools\nimport jax\nimport jax.numpy as jnp\n\ndef chunk(w, c, xs):\n"
        + _body(4, "return c, jnp.stack(hs) * w")
        + "\n\ndef run(c, xss):\n    return jax.lax.scan(functools.partial(chunk, 2.0), c, xss)\n",
        "the body of `jax.lax.scan`",
    ),
    "fori_loop_body": (
        "import jax.numpy as jnp\nfrom jax import lax\n\ndef body(i, xs):\n" + _body(4)
        + "\n\ndef run(xs):\n    return lax.fori_loop(0, 3, body, xs)\n",
        "the body of `lax.fori_loop`",
    ),
    "while_loop_body_keyword": (
        "import jax.numpy as jnp\nfrom jax import lax\n\ndef body(xs):\n" + _body(4)
        + "\n\ndef run(xs):\n    return lax.while_loop(lambda s: False, body_fun=body, init_val=xs)\n",
        "a function of `lax.while_loop`",
    ),
    "cond_branch": (
        "import jax.numpy as jnp\nimport jax\n\ndef yes(xs):\n" + _body(4)
        + "\n\ndef run(p, xs):\n    return jax.lax.cond(p, yes, lambda xs: xs, xs)\n",
        "a branch of `jax.lax.cond`",
    ),
    "switch_branches": (
        "import jax.numpy as jnp\nfrom jax import lax\n\ndef second(xs):\n" + _body(4)
        + "\n\ndef run(i, xs):\n    return lax.switch(i, [lambda xs: xs, second], xs)\n",
        "a branch of `lax.switch`",
    ),
    "lax_map": (
        "import jax.numpy as jnp\nfrom jax.lax import map as lmap\n\ndef per(xs):\n" + _body(4)
        + "\n\ndef run(xss):\n    return lmap(per, xss)\n",
        "the function of `lmap`",
    ),
    "custom_vjp_primal": (
        "import jax\nimport jax.numpy as jnp\n\n@jax.custom_vjp\ndef f(xs):\n" + _body(4),
        "decorated with `@jax.custom_vjp`",
    ),
    "custom_vjp_fwd_rule": (
        "import jax\nimport jax.numpy as jnp\n\n@jax.custom_vjp\ndef f(xs):\n    return xs\n\ndef f_fwd(xs):\n"
        + _body(4, "return jnp.stack(hs), xs")
        + "\n\ndef f_bwd(res, g):\n    return (g,)\n\nf.defvjp(f_fwd, f_bwd)\n",
        "a rule given to `f.defvjp`",
    ),
    "custom_vjp_assigned_fwd_rule": (
        "import jax\nimport jax.numpy as jnp\n\ndef g(xs):\n    return xs\n\nf = jax.custom_vjp(g)\n\ndef f_fwd(xs):\n"
        + _body(4, "return jnp.stack(hs), xs")
        + "\n\ndef f_bwd(res, g):\n    return (g,)\n\nf.defvjp(f_fwd, f_bwd)\n",
        "a rule given to `f.defvjp`",
    ),
    "custom_jvp_rule_decorator": (
        "import jax\nimport jax.numpy as jnp\n\n@jax.custom_jvp\ndef f(x):\n    return x\n\n@f.defjvp\n"
        "def f_jvp(primals, tangents):\n    (xs,) = primals\n" + _body(4, "return xs, jnp.stack(hs)"),
        "decorated with `@f.defjvp`",
    ),
    "shard_map": (
        "import jax\nimport jax.numpy as jnp\nfrom jax.experimental.shard_map import shard_map\n\ndef local(xs):\n"
        + _body(4) + "\n\ndef run(mesh, xs):\n    return shard_map(local, mesh, in_specs=None, out_specs=None)(xs)\n",
        "wrapped by `shard_map(local",
    ),
    "jax_shard_map_decorator": (
        "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"
        "@partial(jax.shard_map, in_specs=None, out_specs=None)\ndef local(xs):\n" + _body(4),
        "decorated with `@partial(jax.shard_map",
    ),
    "numpyro_nuts_model": (
        "import jax.numpy as jnp\nfrom numpyro.infer import MCMC, NUTS\n\ndef model(xs):\n" + _body(4)
        + "\n\nmcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10)\n",
        "the model of `NUTS`",
    ),
    "chex_all_variants": (
        "import chex\nimport jax.numpy as jnp\n\ndef run(xs):\n" + _body(4)
        + "\n\nclass T(chex.TestCase):\n    @chex.all_variants\n    def test_run(self):\n"
        "        self.variant(run)(jnp.ones((6, 4)))\n",
        "wrapped by `self.variant(run)`",
    ),
    "chex_variant_decorator_with_jit": (
        "import chex\nimport jax.numpy as jnp\n\nclass T(chex.TestCase):\n"
        "    @chex.variants(with_jit=True, without_jit=True)\n    def test_run(self):\n"
        "        @self.variant\n        def run(xs):\n" + _body(12) + "\n        run(jnp.ones((6, 4)))\n",
        "decorated with `@self.variant`",
    ),
    "chex_variant_decorator_with_static_arguments": (
        "import chex\nimport jax.numpy as jnp\n\nclass T(chex.TestCase):\n"
        "    @chex.variants(with_jit=True)\n    def test_run(self):\n"
        "        @self.variant(static_argnums=(1,))\n        def run(xs, n):\n" + _body(12) + "\n        run(jnp.ones((6, 4)), 2)\n",
        "decorated with `@self.variant(static_argnums=(1,))`",
    ),
    "brax_pipeline_env_step": (
        "import jax.numpy as jnp\nfrom brax.envs.base import PipelineEnv\n\nclass Walker(PipelineEnv):\n"
        "    def step(self, state, xs):\n" + _body(8),
        "method `step` of `Walker`, a subclass of the Brax environment `PipelineEnv`",
    ),
    "pgx_env_step_hook": (
        "import jax.numpy as jnp\nimport pgx\n\nclass Game(pgx.Env):\n"
        "    def _step(self, state, xs):\n" + _body(8),
        "method `_step` of `Game`, a subclass of the pgx environment `Env`",
    ),
    "jumanji_env_reset_reaches_helpers": (
        "import jax.numpy as jnp\nfrom jumanji import Environment\n\nclass Maze(Environment):\n"
        "    def reset(self, key):\n        return self._walls(key)\n\n    def _walls(self, xs):\n" + _body(8),
        "called from traced function `reset`",
    ),
    "diffrax_term_of_an_instance": (
        "import jax.numpy as jnp\nimport diffrax\n\nclass Field:\n    def __call__(self, t, xs, args):\n" + _body(8)
        + "\n\ndef solve(y0):\n    term = diffrax.ODETerm(Field())\n    return term\n",
        "`__call__` of a `Field` instance given as the function of `diffrax.ODETerm`",
    ),
    "optimistix_objective_instance_by_name": (
        "import jax.numpy as jnp\nimport optimistix as optx\n\nclass Loss:\n    def __call__(self, xs, args):\n" + _body(8)
        + "\n\ndef fit(y0, solver):\n    loss = Loss()\n    return optx.minimise(loss, solver, y0)\n",
        "`__call__` of a `Loss` instance given as the function of `optx.minimise`",
    ),
    "numpyro_svi_guide": (
        "import jax.numpy as jnp\nimport numpyro\n\ndef model(xs):\n    pass\n\ndef guide(xs):\n" + _body(4)
        + "\n\nsvi = numpyro.infer.SVI(model, guide, None, None)\n",
        "a model or guide of `numpyro.infer.SVI`",
    ),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_framework_entry_point_is_traced_with_its_reason(name):
    source, reason = FLAGGED[name]
    reasons = _reasons(source)
    assert reasons, f"{name}: nothing reported"
    assert any(reason in r for r in reasons), reasons


CLEAN = {
    "linen_setup_is_not_traced": """
        import jax.numpy as jnp
        import flax.linen as nn

        class M(nn.Module):
            def setup(self):
                h = jnp.zeros(4)
                hs = []
                for t in range(self.xs.shape[0]):
                    h = jnp.tanh(h + self.xs[t])
                    hs.append(h)
                self.layers = [nn.Dense(4) for _ in range(self.num_layers)]
                cells = []
                for _ in range(self.num_layers):
                    cells.append(nn.Dense(4))
                self.cells = cells

            def __call__(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        """,
    "layer_loops_in_call": """
        import jax.numpy as jnp
        import flax.linen as nn

        class M(nn.Module):
            num_layers: int = 4

            @nn.compact
            def __call__(self, x):
                for _ in range(self.num_layers):
                    x = jnp.tanh(nn.Dense(4)(x))
                for i in range(self.num_layers + 1):
                    x = nn.Dense(4, name=f"d{i}")(x)
                for layer in [nn.Dense(4), nn.Dense(4)]:
                    x = layer(x)
                return x
        """,
    "haiku_and_equinox_constructors": """
        import jax
        import jax.numpy as jnp
        import equinox as eqx
        import haiku as hk

        class E(eqx.Module):
            layers: list

            def __init__(self, key, n):
                layers = []
                for k in jax.random.split(key, n):
                    layers.append(eqx.nn.Linear(4, 4, key=k))
                self.layers = layers

            def __call__(self, x):
                for layer in self.layers:
                    x = jnp.tanh(layer(x))
                return x

        class H(hk.Module):
            def __init__(self, n, name=None):
                super().__init__(name=name)
                self.n = n

            def __call__(self, x):
                for _ in range(self.n):
                    x = hk.Linear(4)(x)
                return x
        """,
    "other_libraries_module_and_scan": """
        import jax.numpy as jnp
        import torch

        def scan(f, xs):
            return [f(x) for x in xs]

        class M(torch.nn.Module):
            def forward(self, xs):
                h = jnp.zeros(4)
                hs = []
                for t in range(xs.shape[0]):
                    h = jnp.tanh(h + xs[t])
                    hs.append(h)
                return jnp.stack(hs)

        def step(xs):
            h = jnp.zeros(4)
            hs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h + xs[t])
                hs.append(h)
            return jnp.stack(hs)

        out = scan(step, [])
        """,
    "chex_variants_without_jit": (
        "import chex\nimport jax.numpy as jnp\n\ndef run(xs):\n" + _body(4)
        + "\n\nclass T(chex.TestCase):\n    @chex.variants(without_jit=True, with_device=True)\n"
        "    def test_run(self):\n        self.variant(run)(jnp.ones((6, 4)))\n\n"
        "    @chex.all_variants(with_jit=False, with_pmap=False)\n    def test_eager(self):\n"
        "        self.variant(run)(jnp.ones((6, 4)))\n"
    ),
    "function_given_to_a_host_callback_through_partial": """
        from functools import partial
        import jax
        import numpy as np

        def host_solve(x, scale=1.0):
            out = []
            for i in range(x.shape[0]):
                out.append(float(x[i]) * scale)
            return np.asarray(out, dtype=np.float32)

        def to_host(fn, *args):
            jax.debug.callback(fn, *args)

        @jax.jit
        def step(x):
            to_host(host_solve, x)
            cb = partial(host_solve, scale=3.0)
            jax.debug.callback(cb, x)
            return jax.pure_callback(partial(host_solve, scale=2.0), jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        """,
    "function_given_to_numpy_in_traced_code": """
        import jax
        import jax.numpy as jnp
        import numpy as np

        TABLE = np.arange(20.0).reshape(5, 4)

        def row_stat(row):
            total = 0.0
            for i in range(row.shape[0]):
                total = total + row[i] * row[i]
            return total

        @jax.jit
        def scaled(x):
            return x * jnp.asarray(np.apply_along_axis(row_stat, 1, TABLE)).sum()
        """,
    "environment_render_is_not_traced": (
        "import jax.numpy as jnp\nfrom brax.envs.base import PipelineEnv\n\nclass Walker(PipelineEnv):\n"
        "    def render(self, xs):\n" + _body(8)
    ),
    "mcmc_kernel_is_not_a_model": """
        import jax.numpy as jnp
        from numpyro.infer import MCMC

        def kernel(xs):
            h = jnp.zeros(4)
            hs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h + xs[t])
                hs.append(h)
            return jnp.stack(hs)

        mcmc = MCMC(kernel(None), num_warmup=1, num_samples=1)
        """,
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_layer_loops_and_untraced_code_stay_clean(name):
    assert _lint(CLEAN[name]) == []
    assert _lint(CLEAN[name], prefilter=False) == []


def test_scan_body_params_are_tracers_and_methods_are_not():
    from jaxloopfix.engine import parse
    from jaxloopfix.analysis.traced import find_traced_functions

    source = textwrap.dedent(
        """
        import functools
        import jax.numpy as jnp
        import flax.linen as nn
        from jax import lax

        def body(w, c, x):
            return c, x

        class M(nn.Module):
            def __call__(self, xs):
                return lax.scan(functools.partial(body, 2.0), 0.0, xs)
        """
    )
    traced = {t.name: t for t in find_traced_functions(parse(source, "m.py")).values()}
    assert traced["body"].transformed and traced["body"].static_params == {"w"}
    assert not traced["__call__"].transformed and traced["__call__"].module == "Flax module"


EXTRA_BASE = """
import jax.numpy as jnp
from mylib.nn import Layer

class Cell(Layer):
    def __init__(self, xs):
        h = jnp.zeros(4)
        hs = []
        for t in range(xs.shape[0]):
            h = jnp.tanh(h + xs[t])
            hs.append(h)

    def forward(self, xs):
""" + _body(8)


def test_extra_traced_base_classes():
    assert _lint(EXTRA_BASE) == []
    settings = settings_from_table({"extra-traced-base-classes": ["mylib.nn.Layer"]}, None)
    assert settings.extra_traced_base_classes == ("mylib.nn.Layer",)
    reasons = _reasons(EXTRA_BASE, settings)
    assert len(reasons) == 1  # `forward`, not the constructor
    assert "method `forward` of `Cell`, a subclass of `mylib.nn.Layer`" in reasons[0]
    assert may_have_findings(textwrap.dedent(EXTRA_BASE), (), ("mylib.nn.Layer",))


def test_extra_traced_base_classes_must_be_strings():
    with pytest.raises(ConfigError):
        settings_from_table({"extra-traced-base-classes": "mylib.Layer"}, None)


def test_prefilter_keeps_framework_files():
    assert may_have_findings("import flax.linen as nn\n\nclass M(nn.Module):\n    def f(self, xs):\n        for x in xs:\n            pass\n")
    assert may_have_findings(
        "from jax import lax\n\ndef body(c, xs):\n    for x in xs:\n        pass\n\nlax.scan(body, 0, [])\n"
    )
    assert may_have_findings("import numpyro\n\ndef m(xs):\n    for x in xs:\n        pass\n\nnumpyro.infer.NUTS(m)\n")
    assert not may_have_findings("import flax\n\nclass M:\n    def f(self, xs):\n        for x in xs:\n            pass\n")


def test_keywords_bound_by_a_partial_alias_are_static_under_the_transform():
    """`inner = partial(f, normalize=True, n_steps=4)` then `jax.vmap(inner)`: the bound keywords
    are Python values, so `if normalize:` and `range(n_steps)` trace fine; the rest of `f`'s
    parameters are tracers, so the loop over them is reported."""
    found = _lint(
        """
        import functools

        import jax
        import jax.numpy as jnp


        def attend(q, k, normalize, n_steps):
            if normalize:
                q = q / jnp.linalg.norm(q)
            s = jnp.zeros(k.shape[1:])
            for t in range(n_steps):
                s = jnp.tanh(s + q[t] * k[t])
            return s


        def batched(q, k):
            inner = functools.partial(attend, normalize=True, n_steps=4)
            return jax.vmap(inner)(q, k)
        """
    )
    assert [d.code for d in found] == ["JLF002"], [d.message for d in found]
    assert "wrapped by `jax.vmap(inner)`" in found[0].traced_reason


@pytest.mark.parametrize("qualified", sorted(__import__("jaxloopfix.analysis.traced", fromlist=["x"]).LIBRARY_FUNCTION_TAKERS))
def test_library_function_takers_match_the_installed_signatures(qualified):
    """Each library call's traced function is its first parameter, under the keyword the table
    names: read from the package itself where it is installed."""
    import inspect

    from jaxloopfix.analysis.traced import LIBRARY_FUNCTION_TAKERS

    module_name, _, name = qualified.rpartition(".")
    module = pytest.importorskip(module_name)
    obj = getattr(module, name)
    try:
        params = list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        pytest.skip(f"{qualified} has no signature to read")
    if params[:1] == ["args"] and hasattr(obj, "differentiable"):
        # blackjax's generated API object: calling it calls `differentiable`.
        params = list(inspect.signature(obj.differentiable).parameters)
    assert params[0] == LIBRARY_FUNCTION_TAKERS[qualified], params


def test_a_library_function_taker_traces_its_function():
    source = (
        "import diffrax\nimport jax.numpy as jnp\n\ndef field(t, xs, args):\n" + _body(4)
        + "\n\nterm = diffrax.ODETerm(field)\n"
    )
    assert _reasons(source) == ["`field` is traced: the function of `diffrax.ODETerm` on line 12"]


PASSED_AS_VALUE = '''
import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

SEEN = []


class Ops(NamedTuple):
    solve: Callable


def solve(xs, scale):
    SEEN.append(type(xs).__name__)
    h = jnp.zeros(xs.shape[1:])
    for t in range(xs.shape[0]):
        h = jnp.tanh(scale * h + xs[t])
    return h


def run_ops(ops, xs):
    return ops.solve(xs)


@jax.jit
def integrate(xs):
    return run_ops(Ops(solve=functools.partial(solve, scale=0.5)), xs)
'''


def test_a_function_passed_as_a_value_from_traced_code_is_traced():
    """`Ops(solve=partial(solve, ...))` in a jitted function: `solve` is called under the same
    trace by whatever receives it (checked on JAX: it sees tracers), so its loop is reported."""
    import jax.numpy as jnp

    namespace: dict = {}
    exec(compile(PASSED_AS_VALUE, "m.py", "exec"), namespace)  # noqa: S102
    namespace["integrate"](jnp.ones((6, 3)))
    assert namespace["SEEN"] and all("Tracer" in seen for seen in namespace["SEEN"])
    reasons = _reasons(PASSED_AS_VALUE)
    line = next(i for i, text in enumerate(PASSED_AS_VALUE.lstrip().splitlines(), 1) if "Ops(solve=" in text)
    assert reasons == [f"`solve` is traced: passed as a value to `Ops` in traced function `integrate` on line {line}"], reasons


def test_a_factory_default_overridden_where_the_factory_is_handed_on_is_not_a_count():
    """`partial(make_step, rounds=500)` and a method's closure (its class constructed with another
    value) call the factory with values this module does not pass it directly: no default count.
    Checked on JAX: the partial's step unrolls 499 `tanh`s."""
    import jax
    import jax.numpy as jnp

    source = textwrap.dedent(
        """
        import functools
        import jax
        import jax.numpy as jnp

        def make_step(w, rounds=2):
            def step(x):
                for _ in range(rounds - 1):
                    x = jnp.tanh(x @ w)
                return x
            return jax.jit(step)

        deep = functools.partial(make_step, rounds=500)
        """
    )
    namespace: dict = {}
    exec(compile(source, "m.py", "exec"), namespace)  # noqa: S102
    jaxpr = jax.make_jaxpr(namespace["deep"](jnp.eye(2)))(jnp.ones(2))
    assert str(jaxpr).count("tanh") == 499
    assert [d.code for d in _lint(source)] == ["JLF002"]
    plain = source.replace("deep = functools.partial(make_step, rounds=500)\n", "shallow = make_step(jnp.eye(2))\n")
    assert _lint(plain) == []  # called directly with the default: one step
