"""Which functions run under a JAX trace, and why.

A function is traced when a JAX transform decorates it, wraps it at a call
site in the same module, or when it is defined inside or called from a traced
function. Transforms are matched by qualified name (libcst's
QualifiedNameProvider), so aliases (`import jax as jx`, `from jax import jit
as J`) match and other libraries' `jit` (numba) never does.

Frameworks add entry points: functions passed to `lax.scan`/`fori_loop`/
`while_loop`/`cond`/`switch`/`map`, `custom_vjp`/`custom_jvp` rules, the
methods of Flax (linen, NNX), Haiku and Equinox modules that run under a
trace (never linen's `setup` nor constructors), `hk.transform` targets and
numpyro models. Their callees follow by propagation. Within one module that
is all; with a `ModuleSite` (the project pass), functions other modules trace
are seeded here, and what this module's traced code reaches in project
modules it imports is recorded in `links` (see `cross_module`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import libcst as cst

from jaxloopfix.analysis.count_defaults import method_and_class, receiver_name
from jaxloopfix.analysis.framework_classes import NOT_LAYERS
from jaxloopfix.analysis.helper_structure import parse_function, traces_parameter
from jaxloopfix.analysis.library_methods import LIBRARY_METHODS
from jaxloopfix.analysis.backend_objects import BACKEND_ENTRIES, BACKEND_LIBRARIES, backend_transforms
from jaxloopfix.analysis.library_jits import HOST_COMPILERS, JAX_LIBRARIES, LIBRARY_JIT_NAMES, library_jit
from jaxloopfix.analysis.partials import PARTIAL, PARTIAL_NAMES
from jaxloopfix.prefilter import TRACING_ROOTS
from jaxloopfix.analysis.cross_module import (
    BY_NAME,
    EVERY_BY_NAME,
    ExternalTrace,
    ModuleClass,
    ModuleLinks,
    ModuleSite,
    TraceSeed,
)
from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import ParsedModule, descendants, shorten
from jaxloopfix.analysis.walk import walk

# Qualified names of transforms whose function argument is traced.
TRACING_TRANSFORMS: frozenset[str] = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.pjit",
        "jax.experimental.pjit.pjit",
        "jax.grad",
        "jax.value_and_grad",
        "jax.vmap",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.checkpoint",
        "jax.remat",
        "jax.ad_checkpoint.checkpoint",
        "jax.ad_checkpoint.remat",
        "equinox.filter_jit",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "equinox.filter_vmap",
        "equinox.filter_pmap",
        "equinox.filter_checkpoint",
        "jax.experimental.shard_map.shard_map",
        "jax.shard_map",
        "jax.custom_vjp",
        "jax.custom_jvp",
        # Other public JAX APIs that trace their function argument.
        "jax.custom_gradient",
        "jax.jvp",
        "jax.vjp",
        "jax.linearize",
        "jax.linear_transpose",
        "jax.eval_shape",
        "jax.make_jaxpr",
        "jax.closure_convert",
        "jax.xmap",
        "jax.experimental.maps.xmap",
        "jax.experimental.jax2tf.convert",
        "jax.experimental.ode.odeint",
        "jax.experimental.shard_map.shard_map",
        "jax.lax.custom_root",
        "jax.lax.custom_linear_solve",
        "jax.hessian",
        "jax.jacobian",
        # objax: `objax.Jit(f, vars)`, gradients and vectorisation of functions and modules.
        "objax.Jit",
        "objax.Grad",
        "objax.GradValues",
        "objax.Vectorize",
        "objax.Parallel",
        "objax.Function",
        # jax_dataclasses: `jax.jit` with the parameters annotated `jdc.Static[...]` static.
        "jax_dataclasses.jit",
    }
)
# Transforms that take their static parameters from annotations rather than arguments:
# `jax_dataclasses.jit` makes every parameter annotated `jax_dataclasses.Static[T]` static
# (its source reads the type hints' `Annotated` marker and passes them as `static_argnames`).
ANNOTATED_STATIC: frozenset[str] = frozenset({"jax_dataclasses.jit"})
# Wrappers that name a function without tracing it (`jax.named_call` opens a name scope; called
# outside a trace the function runs eagerly): a transform around one traces what it wraps.
NAMING_WRAPPERS: frozenset[str] = frozenset({"jax.named_call"})
# Equinox's transforms that trace only the array leaves of their arguments (the rest is static).
FILTER_TRANSFORMS: frozenset[str] = frozenset(
    {"equinox.filter_jit", "equinox.filter_grad", "equinox.filter_value_and_grad", "equinox.filter_vmap",
     "equinox.filter_pmap", "equinox.filter_checkpoint"}
)
# Functions whose first argument runs on the host with concrete values, not under the trace.
HOST_CALLBACKS: frozenset[str] = frozenset(
    {"jax.debug.callback", "jax.pure_callback", "jax.experimental.io_callback", "jax.experimental.host_callback.id_tap",
     "jax.experimental.host_callback.call", "jax.experimental.io_callback.io_callback"}
)
# Custom-derivative wrappers: `nondiff_argnums` are their static parameters, and their rules
# (`.defvjp(fwd, bwd)`, `.defjvp(jvp)`) are traced too.
CUSTOM_DERIVATIVES: frozenset[str] = frozenset({"jax.custom_vjp", "jax.custom_jvp"})
RULE_REGISTRATIONS: frozenset[str] = frozenset({"defvjp", "defjvp"})


# Library calls whose first argument (or that keyword) is a function they trace.
LIBRARY_FUNCTION_TAKERS: dict[str, str] = {
    "diffrax.ODETerm": "vector_field",
    "diffrax.ControlTerm": "vector_field",
    "optimistix.root_find": "fn",
    "optimistix.minimise": "fn",
    "optimistix.least_squares": "fn",
    "optimistix.fixed_point": "fn",
    "lineax.FunctionLinearOperator": "fn",
    "jax.scipy.optimize.minimize": "fun",
    "jaxopt.LBFGS": "fun",
    "jaxopt.BFGS": "fun",
    "jaxopt.GradientDescent": "fun",
    "jaxopt.ProximalGradient": "fun",
    "jaxopt.OptaxSolver": "fun",
    "blackjax.nuts": "logdensity_fn",
    "blackjax.hmc": "logdensity_fn",
    "blackjax.mala": "logdensity_fn",
}


@dataclass(frozen=True)
class _Taker:
    """A function that takes functions and traces them: which arguments, and whether their
    parameters are known to be tracers (`lax.scan`'s body) or not (a numpyro model)."""

    label: str
    positions: tuple[int, ...] = (0,)
    keywords: tuple[str, ...] = ()
    transformed: bool = True
    # Positions holding a list/tuple of functions (`lax.switch`'s branches).
    sequences: tuple[int, ...] = ()


_LAX_TAKERS: dict[str, _Taker] = {
    "scan": _Taker("the body of", (0,), ("f",)),
    "fori_loop": _Taker("the body of", (2,), ("body_fun",)),
    "while_loop": _Taker("a function of", (0, 1), ("cond_fun", "body_fun")),
    "cond": _Taker("a branch of", (1, 2), ("true_fun", "false_fun")),
    "switch": _Taker("a branch of", (), ("branches",), sequences=(1,)),
    "map": _Taker("the function of", (0,), ("f",)),
    "associative_scan": _Taker("the function of", (0,), ("fn",)),
}
FUNCTION_TAKERS: dict[str, _Taker] = {
    **{f"jax.lax.{name}": taker for name, taker in _LAX_TAKERS.items()},
    **{f"haiku.{name}": taker for name, taker in _LAX_TAKERS.items() if name != "associative_scan"},
    # Models and guides: traced by the inference algorithm, with the data passed to `run`.
    **{
        f"numpyro.infer.{name}": _Taker("the model of", (0,), ("model",), transformed=False)
        for name in ("NUTS", "HMC", "SA", "BarkerMH", "hmc.NUTS", "hmc.HMC")
    },
    "numpyro.infer.SVI": _Taker("a model or guide of", (0, 1), ("model", "guide"), transformed=False),
    "numpyro.infer.svi.SVI": _Taker("a model or guide of", (0, 1), ("model", "guide"), transformed=False),
    "numpyro.infer.Predictive": _Taker("the model of", (0,), ("model", "guide"), transformed=False),
    # Haiku: the function's parameters are what `apply` is given, not necessarily arrays.
    "haiku.transform": _Taker("transformed by", (0,), ("f",), transformed=False),
    "haiku.transform_with_state": _Taker("transformed by", (0,), ("f",), transformed=False),
    # Optax: a transformation's `update` runs inside the jitted train step that applies it
    # (`init` usually runs once, eagerly, so it is left out).
    **{
        f"optax.{name}": _Taker("the update function of", (1,), ("update",), transformed=False)
        for name in ("GradientTransformation", "GradientTransformationExtraArgs", "_src.base.GradientTransformation",
                     "_src.base.GradientTransformationExtraArgs")
    },
    # Solvers, integrators and samplers of other JAX libraries: they trace the function they
    # are given (a vector field, an objective, a log density) inside their own jitted loops.
    # `tests/test_traced_frameworks.py` checks each position and keyword against the installed package.
    **{name: _Taker("the function of", (0,), (keyword,), transformed=False) for name, keyword in LIBRARY_FUNCTION_TAKERS.items()},
    "optax.stateless": _Taker("the update function of", (0,), ("f",), transformed=False),
    "optax.stateless_with_tree_map": _Taker("the update function of", (0,), ("f",), transformed=False),
}
# Lifted transforms whose target is a module class (its `__call__` is traced) or a function
# taking modules (its parameters are modules and arrays: not known to be tracers).
LIFTED_TRANSFORMS: frozenset[str] = frozenset(
    {f"flax.linen.{name}" for name in ("scan", "remat", "checkpoint", "jit", "vmap", "remat_scan", "while_loop",
                                        "cond", "switch", "map_variables", "grad", "value_and_grad", "jvp", "vjp")}
    | {f"flax.nnx.{name}" for name in ("jit", "scan", "vmap", "remat", "grad", "value_and_grad", "pmap",
                                        "shard_map", "fori_loop", "while_loop", "cond", "switch")}
)


@dataclass(frozen=True)
class _Framework:
    label: str  # "Flax module"
    # "linen": every method but constructors, dunders, static and class methods and properties
    # (`@nn.compact` ones say so); "call": `__call__`; "methods": the same as "linen".
    entries: str


MODULE_BASES: dict[str, _Framework] = {
    "flax.linen.Module": _Framework("Flax module", "linen"),
    "flax.linen.module.Module": _Framework("Flax module", "linen"),
    "flax.nnx.Module": _Framework("Flax NNX module", "call"),
    "flax.nnx.module.Module": _Framework("Flax NNX module", "call"),
    "flax.experimental.nnx.Module": _Framework("Flax NNX module", "call"),
    "haiku.Module": _Framework("Haiku module", "methods"),
    "haiku.module.Module": _Framework("Haiku module", "methods"),
    "equinox.Module": _Framework("Equinox module", "methods"),
    "equinox._module.Module": _Framework("Equinox module", "methods"),
    "objax.Module": _Framework("objax module", "call"),
    "objax.module.Module": _Framework("objax module", "call"),
    "praxis.base_layer.BaseLayer": _Framework("Praxis layer", "linen"),  # a linen module
    "trax.layers.Layer": _Framework("trax layer", "forward"),
    "trax.layers.base.Layer": _Framework("trax layer", "forward"),
}
# Environment libraries: every training loop jits, vmaps or scans an environment's `step` and
# `reset`, and the library's own `step` calls the hooks a subclass overrides (gymnax's jitted
# `step` calls `step_env`, pgx's `step` calls `_step`). Those methods run traced wherever the
# environment is used, so a subclass's are entries (with `hooks:`, as a project base's hooks).
ENVIRONMENT_BASES: dict[str, tuple[str, str]] = {
    "gymnax.environments.environment.Environment": ("gymnax environment", "step_env,reset_env"),
    "gymnax.environments.Environment": ("gymnax environment", "step_env,reset_env"),
    "brax.envs.base.Env": ("Brax environment", "step,reset"),
    "brax.envs.base.PipelineEnv": ("Brax environment", "step,reset"),
    "brax.envs.Env": ("Brax environment", "step,reset"),
    "brax.envs.PipelineEnv": ("Brax environment", "step,reset"),
    "brax.envs.env.Env": ("Brax environment", "step,reset"),
    "jumanji.env.Environment": ("Jumanji environment", "step,reset"),
    "jumanji.Environment": ("Jumanji environment", "step,reset"),
    "pgx.core.Env": ("pgx environment", "_init,_step,_observe"),
    "pgx.Env": ("pgx environment", "_init,_step,_observe"),
    "mujoco_playground._src.mjx_env.MjxEnv": ("MuJoCo Playground environment", "step,reset"),
    "mujoco_playground.MjxEnv": ("MuJoCo Playground environment", "step,reset"),
    "jaxmarl.environments.multi_agent_env.MultiAgentEnv": ("JaxMARL environment", "step_env,reset"),
    "jaxmarl.environments.MultiAgentEnv": ("JaxMARL environment", "step_env,reset"),
}
# Packages whose capitalised names are layers, with the module base of each: `nn.Dense`,
# `hk.Linear`, `eqx.nn.MLP` are modules, and so is a class that subclasses one.
LAYER_PACKAGES: dict[str, str] = {
    "flax.linen.": "flax.linen.Module",
    "flax.nnx.": "flax.nnx.Module",
    "haiku.": "haiku.Module",
    "equinox.nn.": "equinox.Module",
    "objax.nn.": "objax.Module",
    "trax.layers.": "trax.layers.Layer",
}
# Names of earlier releases that the generated table (`framework_classes.py`, from the installed
# packages) cannot list: `nnx.VariableState` (flax < 0.11).
RETIRED_NOT_LAYERS: frozenset[str] = frozenset({"VariableState"})


def _layer_package(qname: str) -> str | None:
    """The `LAYER_PACKAGES` prefix `qname` lies under (`haiku.BatchApply` -> `haiku.`), else None."""
    return next((prefix for prefix in LAYER_PACKAGES if qname.startswith(prefix)), None)


def in_layer_package(qname: str) -> bool:
    """`haiku.BatchApply`, `flax.linen.attention.SelfAttention`: a name of a layer package."""
    return _layer_package(qname) is not None


def layer_base(qname: str | None) -> str | None:
    """The module base of a framework layer class (`flax.linen.Dense` -> `flax.linen.Module`),
    else None. Whether a capitalised name of a layer package is a layer is read from the package
    (`framework_classes.NOT_LAYERS`: `hk.BatchApply`, `nnx.Rngs` are not)."""
    if not qname:
        return None
    package, _, name = qname.rpartition(".")
    prefix = _layer_package(f"{package}.")
    if prefix is None or not name[:1].isupper() or name in RETIRED_NOT_LAYERS:
        return None
    return None if name in NOT_LAYERS.get(prefix.rstrip("."), frozenset()) else LAYER_PACKAGES[prefix]


COMPACT: frozenset[str] = frozenset({"flax.linen.compact", "flax.linen.module.compact"})
# Run at construction (or initialisation, for linen's `setup`), not under a trace.
CONSTRUCTORS: frozenset[str] = frozenset({"__init__", "__post_init__", "__check_init__", "__new__", "setup"})


@dataclass
class TracedFunction:
    node: cst.FunctionDef
    # Why it is traced; a callable when the text needs source positions (computed only if reported).
    why: str | Callable[[], str]
    # Parameters the transform marks static (static_argnames / static_argnums).
    static_params: set[str] = field(default_factory=set)
    # True when a transform applies directly (its non-static parameters are tracers).
    transformed: bool = False
    # For a method of a Flax/Haiku/Equinox module (or an extra base class's subclass): the
    # framework's label. Its `self.*` attributes are hyperparameters (`self.num_layers`), not arrays.
    module: str | None = None
    # True under one of equinox's filter transforms (`eqx.filter_jit`): only the array leaves of
    # its arguments are traced; Python values (`bool` flags, ints, objects) stay static.
    filtered: bool = False
    # Parameters `jax.vmap` leaves unmapped (`in_axes=None`) with no `jit` around it: passed
    # through unchanged, so whatever the caller gives (an array, or a Python int): neither
    # known tracers nor known static values.
    passed_through: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def reason(self) -> str:
        return self.why if isinstance(self.why, str) else self.why()


@dataclass(frozen=True)
class _Start:
    """What `TracedFinder._before_seeds` found, to resume from (kept with the text's syntax)."""

    traced: tuple[tuple[cst.FunctionDef, str | Callable[[], str], frozenset[str], bool, str | None, bool, frozenset[str]], ...]
    custom: tuple[tuple[cst.FunctionDef, int], ...]
    links: ModuleLinks  # never appended to: each lint resumes with a copy
    classes: tuple[cst.ClassDef, ...]
    # Methods a transform wraps as `self.name` (`jax.value_and_grad(self.loss_fn)`), by class:
    # a subclass's override runs under the same transform.
    wrapped_self: tuple[tuple[cst.ClassDef, str], ...] = ()
    # `TracedFinder._reached_from` per traced function, filled by the lints that resume here:
    # it depends on the text and the settings but the seeds, as the rest of this start does.
    reached: dict[cst.FunctionDef, tuple[list, list[ExternalTrace]]] = field(default_factory=dict, compare=False)


def _literal_strings(expr: cst.BaseExpression) -> list[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return [value] if isinstance(value, str) else []
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        out: list[str] = []
        for element in expr.elements:
            out.extend(_literal_strings(element.value))
        return out
    return []


def _literal_ints(expr: cst.BaseExpression) -> list[int]:
    if isinstance(expr, cst.Integer):
        return [int(expr.evaluated_value)]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return [-v for v in _literal_ints(expr.expression)]
    if isinstance(expr, (cst.List, cst.Tuple)):
        out: list[int] = []
        for element in expr.elements:
            out.extend(_literal_ints(element.value))
        return out
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range":
        bounds = [_literal_ints(a.value) for a in expr.args]
        if all(len(b) == 1 for b in bounds) and 1 <= len(bounds) <= 3:
            return list(range(*(b[0] for b in bounds)))
    return []


def _unmapped(in_axes: cst.BaseExpression) -> set[int]:
    """Positions `in_axes` leaves unmapped (`None`): those arguments pass through untraced by vmap."""
    if isinstance(in_axes, (cst.Tuple, cst.List)):
        return {i for i, e in enumerate(in_axes.elements) if isinstance(e.value, cst.Name) and e.value.value == "None"}
    return set()


@dataclass
class _Transform:
    name: str
    static_names: set[str] = field(default_factory=set)
    static_nums: set[int] = field(default_factory=set)
    # Positions `jax.vmap` leaves unmapped (`in_axes=None`): passed through, not static.
    passed: set[int] = field(default_factory=set)


# JAX's tree maps: they call the function they are given on the leaves, at trace time.
TREE_MAPS: frozenset[str] = frozenset({"jax.tree.map", "jax.tree_util.tree_map", "jax.tree.map_with_path",
                                       "jax.tree_util.tree_map_with_path", "jax.tree_map"})
# chex's test variants: in a test method decorated with one of these, `self.variant(f)` (or
# `@self.variant` on a nested function) runs `f` under each variant the decorator asks for, and
# `with_jit`/`with_pmap` trace it. `all_variants` asks for them unless it sets both to False.
CHEX_VARIANTS: frozenset[str] = frozenset({"chex.variants", "chex.all_variants"})
CHEX_TRACING_VARIANTS = ("with_jit", "with_pmap")


def _ends_in_jit(expr: cst.Name | cst.Attribute) -> bool:
    """`bm.jit`, `jit`: named like a library's `jit` (asked before resolving its name)."""
    return (expr.attr.value if isinstance(expr, cst.Attribute) else expr.value) in LIBRARY_JIT_NAMES


def _variants_trace(decorator: cst.BaseExpression, qname: str) -> bool:
    """Whether a chex variants decorator asks for a variant that traces (`with_jit=True`)."""
    flags = {
        a.keyword.value: a.value.value for a in (decorator.args if isinstance(decorator, cst.Call) else ())
        if a.keyword is not None and isinstance(a.value, cst.Name) and a.value.value in ("True", "False")
    }
    if qname == "chex.all_variants":
        return any(flags.get(name, "True") == "True" for name in CHEX_TRACING_VARIANTS)
    return any(flags.get(name) == "True" for name in CHEX_TRACING_VARIANTS)


# Outer transforms that trace every argument they are given: an argument an inner `vmap`
# passes through unmapped is a tracer under them.
TRACE_ALL: frozenset[str] = frozenset({"jax.jit", "jax.pjit", "jax.experimental.pjit.pjit", "jax.pmap"})


# In `static_names`: which parameters are static is not known (`static_argnames=names`,
# `**options`), so none is known to be a tracer.
UNKNOWN_STATIC = "*"


def _static_args(
    args: list[cst.Arg], resolve: Callable[[cst.BaseExpression], cst.BaseExpression] = lambda e: e
) -> tuple[set[str], set[int]]:
    names: set[str] = set()
    nums: set[int] = set()
    for arg in args:
        if arg.star == "**":
            names.add(UNKNOWN_STATIC)
        if arg.keyword is None:
            continue
        value = resolve(arg.value)
        if arg.keyword.value == "static_argnames":
            found = _literal_strings(value)
            names.update(found if found or _empty(value) else [UNKNOWN_STATIC])
        elif arg.keyword.value in ("static_argnums", "nondiff_argnums"):
            ints = _literal_ints(value)
            nums.update(ints)
            if not ints and not _empty(value):
                names.add(UNKNOWN_STATIC)
    return names, nums


def _empty(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.List, cst.Tuple)) and not expr.elements or (
        isinstance(expr, cst.Name) and expr.value == "None"
    )


class TracedFinder:
    """Finds traced functions of one module."""

    def __init__(
        self,
        parsed: ParsedModule,
        extra_decorators: tuple[str, ...] = (),
        extra_base_classes: tuple[str, ...] = (),
        site: ModuleSite | None = None,
    ) -> None:
        self.parsed = parsed
        self.site = site
        # What this module's traced code reaches in other project modules, and its framework classes.
        self.links = ModuleLinks()
        self._site_classes = {c.qualified: c for c in site.classes} if site is not None else {}
        # `K.jit` with `K = tc.set_backend("jax")`: a backend's transforms, named as JAX's.
        self._backend = backend_transforms(parsed) if parsed.imports_from(BACKEND_LIBRARIES) else {}
        self.transforms = TRACING_TRANSFORMS | frozenset(extra_decorators) | frozenset(self._backend)
        self._transform_or_partial = self.transforms | PARTIAL
        self.bases = {**MODULE_BASES, **ENVIRONMENT_FRAMEWORKS}
        for name in extra_base_classes:
            self.bases.setdefault(name, _Framework(f"subclass of `{name}` (extra-traced-base-classes)", "methods"))
        self.traced: dict[cst.FunctionDef, TracedFunction] = {}
        # Functions wrapped by `custom_vjp`/`custom_jvp`: their `nondiff_argnums` count.
        self._custom: dict[cst.FunctionDef, int] = {}
        # Methods a class's traced methods call on `self` (`self._ask(...)` in a jitted `ask`):
        # a subclass's override of one runs under the same trace.
        self._hooks: dict[cst.ClassDef, set[str]] = {}
        # `_reached_from` per traced function, kept with the text's syntax (`_Start.reached`).
        self._reached: dict[cst.FunctionDef, tuple[list, list[ExternalTrace]]] = {}
        self._wrapped_self: list[tuple[cst.ClassDef, str]] = []
        self._assignments_of: dict[cst.FunctionDef, dict[str, list[cst.BaseExpression]]] = {}
        self._bound_classes: dict[tuple[cst.FunctionDef, str], cst.ClassDef | None] = {}

    # -- transform recognition -------------------------------------------------
    def transform_of(self, expr: cst.BaseExpression) -> _Transform | None:
        """The transform an expression denotes when used as a decorator or wrapper."""
        parsed = self.parsed
        named = (cst.Name, cst.Attribute)
        if self._chex_variant(expr):
            return _Transform("chex.variant")
        qname = parsed.qualified_name(expr) if isinstance(expr, named) and parsed.may_be_named(expr, self.transforms) else None
        if qname in self.transforms:
            return _Transform(self._backend.get(qname, qname))
        if isinstance(expr, named) and self._library_jit(expr):
            return _Transform(parsed.qualified_name(expr) or "")  # `@bm.jit`
        if isinstance(expr, cst.Call):
            func = expr.func
            func_name = (
                parsed.qualified_name(func)
                if isinstance(func, named) and parsed.may_be_named(func, self._transform_or_partial)
                else None
            )
            positional = [a for a in expr.args if a.keyword is None and not a.star]
            if not positional and self._chex_variant(func):
                # `@self.variant(static_argnums=(1,))`: chex jits with these static arguments.
                names, nums = _static_args(list(expr.args), self._constant)
                return _Transform("chex.variant", names, nums)
            if func_name in PARTIAL and positional:
                inner = self.transform_of(positional[0].value)
                if inner is not None:
                    names, nums = _static_args(list(expr.args), self._constant)
                    inner.static_names |= names
                    inner.static_nums |= nums
                    if inner.name == "jax.vmap":  # `@partial(jax.vmap, in_axes=(0, None))`
                        for arg in expr.args:
                            if arg.keyword is not None and arg.keyword.value == "in_axes":
                                inner.passed |= _unmapped(self._constant(arg.value))
                    return inner
            if func_name in self.transforms and not positional:
                # `@jax.jit(static_argnames=...)` or `@jax.checkpoint(policy=...)`.
                names, nums = _static_args(list(expr.args), self._constant)
                return _Transform(self._backend.get(func_name, func_name), names, nums)
            if not positional and isinstance(func, named) and self._library_jit(func):
                names, nums = _static_args(list(expr.args), self._constant)  # `@bm.jit(static_argnums=1)`
                return _Transform(parsed.qualified_name(func) or "", names, nums)
        return None

    def _library_jit(self, expr: cst.Name | cst.Attribute) -> bool:
        """`bm.jit` with `bm` bound by imports alone (`import brainpy.math as bm`): a library's own
        `jit` (`library_jit`); not `K.jit` of a value the module computes (a backend object)."""
        if not _ends_in_jit(expr) or not library_jit(self.parsed.qualified_name(expr), LIFTED_TRANSFORMS):
            return False
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or (self.site is not None and self.parsed.may_import_from(root.value, self.site.roots)):
            return False  # a project's own `jit` is resolved as the project defines it
        bindings = self._bindings(root)
        if not bindings or not all(isinstance(getattr(a, "node", None), (cst.Import, cst.ImportFrom)) for a in bindings):
            return False
        return self.parsed.imports_from(TRACING_ROOTS) or self.parsed.imports_from(JAX_LIBRARIES)

    def _chex_variant(self, expr: cst.BaseExpression) -> bool:
        """`self.variant` inside a test method whose chex variants decorator traces (`with_jit`)."""
        if not (isinstance(expr, cst.Attribute) and expr.attr.value == "variant" and isinstance(expr.value, cst.Name)
                and expr.value.value == "self"):
            return False
        for ancestor in self.parsed.ancestors(expr):
            if not isinstance(ancestor, cst.FunctionDef):
                continue
            for decorator in ancestor.decorators:
                func = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
                if qname in CHEX_VARIANTS and _variants_trace(decorator.decorator, qname):
                    return True
        return False

    def wrapped_function(self, call: cst.Call) -> tuple[cst.FunctionDef, _Transform] | None:
        """For `jax.jit(f, ...)` / `partial(jax.jit, ...)(f)` / `jax.jit(jax.grad(f))`: f and the transform."""
        wrapped = self.wrapped_target(call)
        if wrapped is None:
            return None
        func = self.resolve_function(wrapped[0])
        return (func, wrapped[1]) if func is not None else None

    def wrapped_target(self, call: cst.Call) -> tuple[cst.BaseExpression, _Transform] | None:
        """The innermost expression a transform call wraps, with the transform's static arguments."""
        transform = self.transform_of(call.func)
        if transform is None:
            return None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if not positional:
            # `jax.value_and_grad(fun=loss_fn)`: the function passed by keyword.
            positional = [a for a in call.args if a.keyword is not None and a.keyword.value in FUNCTION_KEYWORDS]
        if not positional:
            return None
        names, nums = _static_args(list(call.args), self._constant)
        transform.static_names |= names
        transform.static_nums |= nums
        if transform.name == "jax.vmap":
            # `jax.vmap(g, (0, None))`, `in_axes=(0, None)`: arguments passed through unmapped.
            in_axes = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "in_axes"]
            in_axes += [positional[1].value] if len(positional) > 1 else []
            for value in in_axes:
                transform.passed |= _unmapped(self._constant(value))
        target = positional[0].value
        while isinstance(target, cst.Call) and self._qname_in(target.func, NAMING_WRAPPERS) and target.args \
                and target.args[0].keyword is None and not target.args[0].star:
            target = target.args[0].value  # `jax.jit(jax.named_call(f, name="step"))`: `f` is what `jit` traces
        if isinstance(target, cst.Call) and self._qname_in(target.func, PARTIAL) and target.args:
            # `jax.jit(partial(f, n=3))`, `jax.vmap(partial(f, w))`: bound arguments are Python values.
            first = target.args[0]
            if first.keyword is None and not first.star and not any(a.star for a in target.args[1:]):
                bound = [a for a in target.args[1:] if a.keyword is None]
                names = {a.keyword.value for a in target.args[1:] if a.keyword is not None}
                shifted = {n + len(bound) for n in transform.static_nums if n >= 0}
                return first.value, _Transform(
                    transform.name, transform.static_names | names, shifted | set(range(len(bound))),
                    {n + len(bound) for n in transform.passed if n >= 0},
                )
        if isinstance(target, cst.Call):
            inner = self.wrapped_target(target)
            if inner is None:
                return None
            expr, inner_transform = inner
            inner_transform.static_names |= transform.static_names
            inner_transform.static_nums |= transform.static_nums
            passed = set() if transform.name in TRACE_ALL else inner_transform.passed  # `jit(vmap(g, (0, None)))`
            return expr, _Transform(transform.name, inner_transform.static_names, inner_transform.static_nums, passed)
        return target, transform

    def resolve_function(self, expr: cst.BaseExpression) -> cst.FunctionDef | None:
        """The FunctionDef a Name refers to in this module: the one definition, or of several
        (`def sim_fn` in each branch of an `if`), the one that reaches the use."""
        found = self._definitions(expr, cst.FunctionDef)
        if len(found) > 1:
            found = self._reaching_definitions(found, expr)
        return found[0] if len(found) == 1 else None  # type: ignore[return-value]

    def _reaching_definitions(self, found: list[cst.CSTNode], use: cst.BaseExpression) -> list[cst.CSTNode]:
        """Of several `def`s of one name in a scope, the one Python runs last before `use`: among
        those in a block that holds the use (the use's branch, or a block around it) and written
        before it, the latest. None when no such `def` exists (the use may read any of them)."""
        owner = lambda node: next((a for a in self.parsed.ancestors(node)  # noqa: E731
                                   if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef))), None)
        if any(owner(d) is not owner(use) for d in found):
            # The use runs in a function called later (`def run(): jax.jit(step)` between two
            # `def step`): Python reads the name when it runs, so any of them may be the one.
            return []
        enclosing = {id(a) for a in self.parsed.ancestors(use)}
        line = self.parsed.position(use).start.line
        before = [d for d in found if id(self.parsed.parent(d)) in enclosing and self.parsed.position(d).end.line < line]
        return sorted(before, key=lambda d: self.parsed.position(d).start.line)[-1:]

    def resolve_class(self, expr: cst.BaseExpression) -> cst.ClassDef | None:
        """The ClassDef a Name refers to in this module, if exactly one."""
        found = self._definitions(expr, cst.ClassDef)
        return found[0] if len(found) == 1 else None  # type: ignore[return-value]

    def _definitions(self, expr: cst.BaseExpression, kind: type) -> list[cst.CSTNode]:
        if not isinstance(expr, cst.Name):
            return []
        if kind in (cst.FunctionDef, cst.ClassDef) and not self.parsed.may_define(expr.value, kind):
            return []  # no definition of that name: no scope to resolve
        scope = self.parsed.scope(expr)
        if scope is None:
            return []
        try:
            assignments = scope[expr.value]
        except Exception:  # noqa: BLE001 - a name libcst cannot look up is just unknown
            return []
        return [a.node for a in assignments if isinstance(getattr(a, "node", None), kind)]

    def _qname(self, expr: cst.BaseExpression) -> str | None:
        return self.parsed.qualified_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None

    def _qname_in(self, expr: cst.BaseExpression, targets: frozenset[str]) -> str | None:
        """`expr`'s qualified name when it is one of `targets`, else None (screened without scopes)."""
        if not isinstance(expr, (cst.Name, cst.Attribute)) or not self.parsed.may_be_named(expr, targets):
            return None
        name = self.parsed.qualified_name(expr)
        return name if name in targets else None

    def _may_name(self, expr: cst.BaseExpression, targets: frozenset[str]) -> bool:
        """False when `expr`'s qualified name cannot be one of `targets` (`ParsedModule.may_be_named`)."""
        return not isinstance(expr, (cst.Name, cst.Attribute)) or self.parsed.may_be_named(expr, targets)

    # -- frameworks --------------------------------------------------------------
    def framework_of(self, cls: cst.ClassDef, depth: int = 0) -> tuple[_Framework, str] | None:
        """The framework a class belongs to (through same-module base classes), and its base's name.
        A hook a base's traced methods call on `self` stays one for `cls` only while some caller
        still resolves to the base's method (see `_live_hooks`)."""
        found = self._framework_of_bases(cls, depth)
        if found is None or not found[0].entries.startswith(HOOKS):
            return found
        live = _live_hooks(found[0], cls)
        return (live, found[1]) if live is not None else None

    def _framework_of_bases(self, cls: cst.ClassDef, depth: int) -> tuple[_Framework, str] | None:
        if depth > 16:
            return None
        for base in cls.bases:
            if base.keyword is not None:
                continue
            # `class GridEnv(Environment[State, Params])`: the base is the subscripted class, as
            # Python's method resolution order has it (`__class_getitem__` returns an alias).
            value = base.value.value if isinstance(base.value, cst.Subscript) else base.value
            qname = self._qname(value)
            if qname in self.bases:
                return self.bases[qname], qname
            layer = layer_base(qname)
            if layer is not None and layer in self.bases:
                return self.bases[layer], qname  # `class MyDense(nn.Dense)`: a module like its base
            local = self.resolve_class(value)
            if local is not None and local is not cls:
                found = self.framework_of(local, depth + 1)
                own = self._hooks.get(local)
                if own and found is not None and found[0].entries.startswith(HOOKS):
                    return _merge_hooks(found[0], own), found[1]
                if found is not None:
                    return found
                if own:
                    return _hook_framework(local.name.value, own), local.name.value
            imported = self._imported(value) if local is None else None
            if imported is not None:
                qualified = ".".join(imported)
                known = self._site_classes.get(qualified)
                if known is not None:
                    return _Framework(known.label, known.entries), qualified
                self.links.wanted.add(qualified)
        return None

    def _module_entries(self, cls: cst.ClassDef, framework: _Framework) -> list[tuple[cst.FunctionDef, str]]:
        """Methods of a framework module that run under a trace, with the reason's suffix."""
        entries: list[tuple[cst.FunctionDef, str]] = []
        for statement in cls.body.body:
            if not isinstance(statement, cst.FunctionDef):
                continue
            name = statement.name.value
            decorators = [self._qname(d.decorator) for d in statement.decorators]
            if is_generator(statement):
                continue  # `apply(..., method=gen)` returns a generator: its body runs later, unbound
            if name == "__call__":
                entries.append((statement, ""))
            elif framework.entries == "linen":
                compact = next((d for d in statement.decorators if self._qname_in(d.decorator, COMPACT)), None)
                if compact is not None:
                    entries.append((statement, f" (decorated with `@{self.parsed.code(compact.decorator)}`)"))
                elif _runs_bound(name, decorators):
                    # A linen method runs only on a bound module, inside `init` or `apply`, as
                    # `__call__` does: called from it, or applied as `apply(..., method=...)`.
                    entries.append((statement, " (a linen method runs bound, under `init` or `apply(..., method=...)`)"))
            elif framework.entries == "forward" and name == "forward":
                entries.append((statement, ""))
            elif framework.entries.startswith(HOOKS) and name in _parse_hooks(framework.entries):
                entries.append((statement, ""))
            elif framework.entries == "methods" and _runs_bound(name, decorators):
                entries.append((statement, ""))
        return entries

    def _function_arguments(self, call: cst.Call) -> list[tuple[cst.FunctionDef, set[str], _Taker]]:
        """Functions a call to a `_Taker` traces, with parameters bound by `partial` (static):
        a function, an alias or partial of one, a method (`lax.scan(self.update, ...)`, its
        `self` static), or what a `lambda` in that place calls (its parameters' roles unknown)."""
        found: list[tuple[cst.FunctionDef, set[str], _Taker]] = []
        for item, taker in self._function_argument_exprs(call):
            resolved = self._function_and_bound(item)
            if resolved is not None:
                found.append((*resolved, taker))
            elif isinstance(item, cst.Attribute):
                method = self._method_value(item, call)
                if method is not None:
                    found.append((method, {"self"}, taker))
            elif (bound_method := self._partial_method(item, call)) is not None:
                found.append((*bound_method, taker))
            elif isinstance(item, (cst.Call, cst.Name)) and (made := self._taken_instance(item, call)) is not None:
                # `diffrax.ODETerm(Field(w))`, `lax.scan(cell, h, xs)` with `cell = Cell()`: the
                # library calls the object, so Python runs its class's `__call__` (the instance bound).
                params = [p.name.value for p in (*made[0].params.posonly_params, *made[0].params.params)]
                given = replace(taker, label=f"`__call__` of a `{made[1].name.value}` instance given as {taker.label}")
                found.append((made[0], set(params[:1]), given))
            elif isinstance(item, cst.Lambda):
                inside = replace(taker, label=f"called in a `lambda` that is {taker.label}", transformed=False)
                why = f"called in a `lambda` that is {taker.label} `{shorten(self.parsed.code(call.func), 40)}`"
                found.extend((func, set(), inside) for func in self._lambda_callees(item, call, why))
            else:
                found.extend((func, bound, taker) for func, bound in self._aliased_with_bound(item))
        return found

    def _partial_method(self, expr: cst.BaseExpression, node: cst.CSTNode) -> tuple[cst.FunctionDef, set[str]] | None:
        """`partial(self.ode, action=u)`: the method Python binds, with the parameters bound
        (`self`, and those `partial` gives: Python values when the library calls it)."""
        if not (isinstance(expr, cst.Call) and self._qname_in(expr.func, PARTIAL) and expr.args):
            return None
        first = expr.args[0]
        if first.keyword is not None or first.star or not isinstance(first.value, cst.Attribute) \
                or any(a.star for a in expr.args[1:]):
            return None
        method = self._method_value(first.value, node)
        if method is None:
            return None
        return method, _bound_by_partial(method, list(expr.args[1:]), first=1) | {"self"}

    def _taken_instance(self, expr: cst.Call | cst.Name, node: cst.CSTNode) -> tuple[cst.FunctionDef, cst.ClassDef] | None:
        """An instance of a class of this module in a function position of a `_Taker` call (made
        there, or bound to a name in the enclosing function): its class's `__call__`."""
        if isinstance(expr, cst.Call) and not isinstance(expr.func, cst.Name):
            return None
        if isinstance(expr, cst.Call):
            cls = self.resolve_class(expr.func)
            method = self._own_call(cls) if cls is not None else None
            return (method, cls) if method is not None and cls is not None else None
        caller = next((a for a in self.parsed.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        return self._called_instance(expr, caller) if caller is not None else None

    def _method_value(self, attr: cst.Attribute, node: cst.CSTNode) -> cst.FunctionDef | None:
        """`self.update` used as a value in a method: the method Python binds it to."""
        caller = next((a for a in self.parsed.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        return self.resolve_method(attr, caller) if caller is not None else None

    def _lambda_callees(self, lam: cst.Lambda, node: cst.CSTNode, why: str) -> list[cst.FunctionDef]:
        """`lambda q: impl(q, xs)`, `lambda c, x: self.step(c, x)`: the functions of this module
        a lambda's body calls (those of other project modules go to `links`, with `why`). A
        transform or loop that traces the lambda traces them too."""
        found: list[cst.FunctionDef] = []
        for inner in descendants(lam.body):
            if not isinstance(inner, cst.Call):
                continue
            resolved = self._function_and_bound(inner.func)
            func = resolved[0] if resolved is not None else None
            if func is None and isinstance(inner.func, cst.Attribute):
                func = self._method_value(inner.func, node)
            if func is not None and func not in found:
                found.append(func)
            elif func is None:
                self._external(inner.func, why, inner)
        return found

    def _aliased_functions(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.FunctionDef]:
        return [func for func, _ in self._aliased_with_bound(expr, depth)]

    def _aliased_with_bound(self, expr: cst.BaseExpression, depth: int = 0) -> list[tuple[cst.FunctionDef, set[str]]]:
        """`model = ar2_for_loop` (in any branch), `g = partial(f, k=v)`: the functions a local
        alias may name, with the parameters a `partial` binds (Python values, static under a
        transform). A parameter (`def run(model): NUTS(model)`) names what its callers pass."""
        if not isinstance(expr, cst.Name) or depth > 4:
            return []
        out: list[tuple[cst.FunctionDef, set[str]]] = []
        for name in self._definitions(expr, cst.Name):
            bound, position = self._bound_value(name)  # type: ignore[arg-type]
            if position is not None:
                # `p, s = make_density(mus)`: the function the factory returns at that position.
                if isinstance(bound, cst.Call):
                    out.extend((func, set()) for func in self._returned_functions(bound, position))
                continue
            if bound is None:
                continue
            options = [bound.body, bound.orelse] if isinstance(bound, cst.IfExp) else [bound]
            for value in options:
                resolved = self._function_and_bound(value)
                if resolved is not None:
                    out.append(resolved)
                elif isinstance(value, cst.Name):
                    out.extend(self._aliased_with_bound(value, depth + 1))
                elif isinstance(value, cst.Call):
                    out.extend((func, set()) for func in self._returned_functions(value))
                elif isinstance(value, cst.Lambda):
                    # `sim = lambda p, v: simulate(p, v, cfg)`: calling `sim` (or tracing it) runs what it calls.
                    why = f"called in the `lambda` bound to `{expr.value}`"
                    out.extend((func, set()) for func in self._lambda_callees(value, value, why))
        if not out:
            out.extend((func, set()) for func in self._passed_functions(expr, depth))
        return out

    def _probabilistic_primitives(self, calls: list[cst.Call]) -> dict[cst.FunctionDef, str]:
        """The first `numpyro.sample`-like call each function makes in its own body (nested
        functions aside), from the module's calls in document order."""
        parsed = self.parsed
        found: dict[cst.FunctionDef, str] = {}
        for call in calls:
            func = call.func
            if not isinstance(func, (cst.Name, cst.Attribute)) or not parsed.may_be_named(func, MODEL_PRIMITIVES):
                continue
            if parsed.qualified_name(func) not in MODEL_PRIMITIVES:
                continue
            owner = next((a for a in parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
            if owner is not None and owner not in found:
                found[owner] = parsed.code(func)
        return found

    def _wrapped_instance(self, call: cst.Call) -> tuple[cst.FunctionDef, cst.ClassDef] | None:
        """`jax.jit(Step(24))`, or `jax.jit(step)` with `step = Step(24)` in the enclosing
        function: a transform applied to an instance of a class of this module traces its
        `__call__` (its own or a base's), as Python calls it."""
        if self.transform_of(call.func) is None:
            return None
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        expr = positional[0] if positional else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            cls = self.resolve_class(expr.func)
            if cls is None:
                return None
            method = self._own_call(cls)
            return (method, cls) if method is not None else None
        caller = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if isinstance(expr, cst.Name) and caller is not None:
            return self._called_instance(expr, caller)
        return None

    def _factory_results(self, call: cst.Call) -> list[cst.FunctionDef]:
        """`jax.jit(build_kernel(cfg))`: a transform applied to what a factory of this module returns."""
        if self.transform_of(call.func) is None:
            return []
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        inner = positional[0] if positional else None
        if not isinstance(inner, cst.Call) or self.transform_of(inner.func) is not None or self._qname_in(inner.func, PARTIAL):
            return []
        return [func for func in self._returned_functions(inner) if func not in self.traced]

    def _returned_functions(self, call: cst.Call, position: int | None = None) -> list[cst.FunctionDef]:
        """`make_loss(cfg)`: the functions a factory defines inside itself and returns by name
        (at `position` of the tuple it returns, when the caller unpacks it)."""
        factory = self.resolve_function(call.func)
        return _returned_by(factory, position) if factory is not None else []

    def _unpacked(self, name: cst.Name) -> tuple[cst.Assign, int] | None:
        """`p, s = value` with `name` the target at position 1: (the statement, 1); None for any
        other binding, or when a starred target makes positions unknown."""
        element = self.parsed.parent(name)
        targets = self.parsed.parent(element) if isinstance(element, cst.Element) else None
        holder = self.parsed.parent(targets) if isinstance(targets, (cst.Tuple, cst.List)) else None
        assign = self.parsed.parent(holder) if isinstance(holder, cst.AssignTarget) else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        elements = list(targets.elements)  # type: ignore[union-attr]
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return assign, next(i for i, e in enumerate(elements) if e is element)

    def _imported_factory(self, call: cst.Call, text: str) -> None:
        """`jax.jit(make_step(cfg))` with `make_step` imported from a project module: that module's
        analysis traces the functions `make_step` defines and returns (`RETURNED` seeds)."""
        if self.transform_of(call.func) is None:
            return
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        first = positional[0] if positional else None
        made: list[tuple[cst.Call, int | None]] = [(first, None)] if isinstance(first, cst.Call) else []
        if isinstance(first, cst.Name):
            # `loss = make_loss(cfg)` or `p, s = make_density(mus)`, then `jax.grad(loss)`.
            wrapped = self.wrapped_target(call)
            made = self._bound_calls(wrapped[0]) if wrapped is not None else []
        for inner, position in made:
            if self.resolve_function(inner.func) is not None or self.transform_of(inner.func) is not None:
                continue
            target = self._imported(inner.func) if isinstance(inner.func, (cst.Name, cst.Attribute)) else None
            if target is None:
                continue
            names, nums = _static_args(list(call.args), self._constant)
            line = self.parsed.call_line(call)
            reason = f"returned by `{self.parsed.code(inner.func)}`, {text} on line {line} of {self.site.shown or self.parsed.filename}"  # type: ignore[union-attr]
            suffix = RETURNED if position is None else f"{RETURNED}{position}"
            self.links.external.append(
                ExternalTrace(target[0], target[1] + suffix, reason, True, frozenset(names), frozenset(nums))
            )

    def _bound_calls(self, expr: cst.BaseExpression) -> list[tuple[cst.Call, int | None]]:
        """The calls whose results the bindings of the name `expr` hold (in any branch), with the
        position each unpacks (`p, s = make(...)`: position 1 for `s`). A binding in the use's own
        statement (`p = jax.jit(jax.vmap(p))`) is the rebinding, not what the use reads."""
        found = self._definitions(expr, cst.Name) if isinstance(expr, cst.Name) else []
        where = next((a for a in self.parsed.ancestors(expr) if isinstance(a, cst.SimpleStatementLine)), None)
        line = self.parsed.position(expr).start.line
        calls: list[tuple[cst.Call, int | None]] = []
        for name in found:
            if where is not None and any(a is where for a in self.parsed.ancestors(name)):
                continue
            if self.parsed.position(name).start.line > line:
                continue  # bound after the use (`fn = make_report(...)` later): not what the transform took
            value, position = self._bound_value(name)  # type: ignore[arg-type]
            if isinstance(value, cst.Call):
                calls.append((value, position))
        return calls

    def _bound_value(self, name: cst.Name) -> tuple[cst.BaseExpression | None, int | None]:
        """What a binding occurrence of `name` binds: (value, None) for `name = value`, (value, 1)
        for `p, name = value` (the position it unpacks), (None, None) for any other binding."""
        unpacked = self._unpacked(name)
        if unpacked is not None:
            return unpacked[0].value, unpacked[1]
        assign = self._assignment(name)
        return (assign.value if assign is not None and len(assign.targets) == 1 else None), None

    def _passed_functions(self, expr: cst.Name, depth: int) -> list[cst.FunctionDef]:
        """For a parameter `model` of `run_inference`: the functions (or aliases of them) that
        calls of `run_inference` in this module pass in its place."""
        # The function whose parameter it is: the nearest enclosing one with a parameter of that
        # name (`def build(kernel): def run(x): return kernel(x)` reads `build`'s).
        caller = next((a for a in self.parsed.ancestors(expr) if isinstance(a, cst.FunctionDef)
                       and expr.value in [p.name.value for p in (*a.params.posonly_params, *a.params.params)]), None)
        if caller is None:
            return []
        params = [p.name.value for p in (*caller.params.posonly_params, *caller.params.params)]
        position = params.index(expr.value)
        out: list[cst.FunctionDef] = []
        for call, given in [(c, list(c.args)) for c in self._calls_of(caller)] + self._partials_of(caller):
            positional = [a for a in given if a.keyword is None and not a.star]
            args = [a.value for a in given if a.keyword is not None and a.keyword.value == expr.value]
            if position < len(positional):
                args.append(positional[position].value)
            for arg in args:
                resolved = self._function_and_bound(arg)
                if resolved is not None:
                    out.append(resolved[0])
                else:
                    out.extend(self._aliased_functions(arg, depth + 1))
        out.extend(self._passed_from_other_modules(caller, expr.value, position))
        return out

    def _partials_of(self, func: cst.FunctionDef) -> list[tuple[cst.Call, list[cst.Arg]]]:
        """`partial(func, losses=loss_fn)` in this module, with the arguments it binds: they
        reach `func`'s parameters as a call's do (the rest come when the partial is called)."""
        found: list[tuple[cst.Call, list[cst.Arg]]] = []
        for call in [c for name in PARTIAL_NAMES for c in self._calls_by_name.get(name, [])] + self._partial_attribute_calls:
            if call.args and call.args[0].keyword is None and not call.args[0].star and self._qname_in(call.func, PARTIAL) \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == func.name.value \
                    and self.resolve_function(call.args[0].value) is func:
                found.append((call, list(call.args[1:])))
        return found

    @cached_property
    def _partial_attribute_calls(self) -> list[cst.Call]:
        """`functools.partial(...)` calls (spelled through a module)."""
        return [n for n in self.parsed.nodes if type(n) is cst.Call and type(n.func) is cst.Attribute
                and n.func.attr.value in PARTIAL_NAMES]

    def _passed_from_other_modules(self, caller: cst.FunctionDef, param: str, position: int) -> list[cst.FunctionDef]:
        """For a parameter of a module-level function: the functions other project modules pass
        in its place (`relax(x, force=forces.spring)` in a host script, `relax` handing `force`
        to a jitted step that calls it). Asked of the project pass (`ModuleLinks.passings_asked`);
        a function of this module is returned, one of another module is traced there."""
        if self.site is None or self.site.module is None or not isinstance(self.parsed.parent(caller), cst.Module):
            return []
        name = caller.name.value
        self.links.passings_asked.add(name)
        out: list[cst.FunctionDef] = []
        for module, value, where in self.site.passed_to(name, param, position):
            reason = f"passed as `{param}` to `{name}` {where}, where traced code calls it"
            if module == self.site.module:
                function = self._module_function(value)
                if function is not None:
                    out.append(function)
            else:
                self.links.external.append(ExternalTrace(module, value, reason))
        return out

    def _calls_of(self, func: cst.FunctionDef) -> list[cst.Call]:
        """The calls `name(...)` of this module that resolve to `func`. A `def` binds only its own
        name, so calls spelled otherwise never resolve to it and are not looked up (each lookup
        builds a scope)."""
        return [c for c in self._calls_by_name.get(func.name.value, ()) if self.resolve_function(c.func) is func]

    @cached_property
    def _calls_by_name(self) -> dict[str, list[cst.Call]]:
        """The module's calls of a plain name, by that name."""
        found: dict[str, list[cst.Call]] = {}
        for node in self.parsed.nodes:
            if type(node) is cst.Call and type(node.func) is cst.Name:
                found.setdefault(node.func.value, []).append(node)
        return found

    def _function_argument_exprs(self, call: cst.Call) -> list[tuple[cst.BaseExpression, _Taker]]:
        """The expressions in a `_Taker` call's function positions (`lax.scan(step, ...)`: `step`)."""
        if not self._may_name(call.func, TAKER_NAMES):
            return []
        taker = FUNCTION_TAKERS.get(self._qname(call.func) or "")
        if taker is None:
            return []
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args):
            positional = []  # positions unknown after `*args`
        values: list[cst.BaseExpression] = []
        positions = taker.positions
        if self._qname(call.func) == "jax.lax.cond" and len(positional) == 5:
            positions = (2, 4)  # the old `cond(pred, true_operand, true_fun, false_operand, false_fun)`
        values += [positional[i] for i in positions if i < len(positional)]
        for i in taker.sequences:
            if i < len(positional):
                values.append(positional[i])
        values += [a.value for a in call.args if a.keyword is not None and a.keyword.value in taker.keywords]
        found: list[tuple[cst.BaseExpression, _Taker]] = []
        for value in values:
            items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
            found.extend((item, taker) for item in items)
        return found

    def _function_and_bound(self, expr: cst.BaseExpression) -> tuple[cst.FunctionDef, set[str]] | None:
        """`f` -> (f, {}); `partial(f, a, k=b)` -> (f, {f's first parameter, k})."""
        func = self.resolve_function(expr)
        if func is not None:
            return func, set()
        if isinstance(expr, cst.Call) and self._qname_in(expr.func, PARTIAL) and expr.args:
            first = expr.args[0]
            if first.keyword is not None or first.star:
                return None
            func = self.resolve_function(first.value)
            if func is None or any(a.star for a in expr.args[1:]):
                return None
            return func, _bound_by_partial(func, list(expr.args[1:]))
        return None

    def _lifted_target(self, call: cst.Call) -> cst.ClassDef | cst.FunctionDef | None:
        """`nn.scan(Cell, ...)` / `nn.remat(Block)`: the class (or module-taking function) it lifts."""
        if self._qname_in(call.func, LIFTED_TRANSFORMS) is None:
            return None
        target = self._lifted_expr(call)
        return (self.resolve_class(target) or self.resolve_function(target)) if target is not None else None

    def _lifted_expr(self, call: cst.Call) -> cst.BaseExpression | None:
        """What a lifted transform's call lifts: its first positional argument, or the function a
        `partial` there wraps (`nnx.jit(partial(step, config))`: bound arguments are Python values)."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if not positional:
            return None
        target = positional[0]
        if isinstance(target, cst.Call) and self._qname_in(target.func, PARTIAL) and target.args:
            return target.args[0].value
        return target

    def _custom_receiver(self, expr: cst.BaseExpression) -> int | None:
        """For `f.defvjp`: the `nondiff_argnums` count when `f` is a custom-derivative function."""
        func = self.resolve_function(expr)
        if func is not None:
            return self._custom.get(func)
        for name in self._definitions(expr, cst.Name):
            assign = self._assignment(name)  # type: ignore[arg-type]
            if assign is not None and isinstance(assign.value, cst.Call):
                wrapped = self.wrapped_function(assign.value)
                if wrapped is not None and wrapped[1].name in CUSTOM_DERIVATIVES:
                    return len(wrapped[1].static_nums)
        return None

    # -- the search ------------------------------------------------------------
    @property
    def settings_key(self) -> tuple:
        """What this finder's answers depend on besides the text and the seeds."""
        parsed = self.parsed
        return (
            parsed.filename, parsed.hidden, parsed.bound, self.transforms, tuple(self.bases.items()),
            replace(self.site, seeds=()) if self.site is not None else None,
        )

    def state_key(self) -> tuple:
        """`settings_key` with what `is_module_class` learnt while finding (the methods traced
        methods call on `self`, see `_collect_hooks`): the same key answers it the same way."""
        hooks = frozenset((cls, frozenset(names)) for cls, names in self._hooks.items() if names)
        return (self.settings_key, hooks)

    def find(self) -> dict[cst.FunctionDef, TracedFunction]:
        parsed = self.parsed
        # Everything before the seeds depends on the text and the settings but not on the
        # seeds: the project pass lints a file again each time other modules trace more of
        # it, so that part is kept with the text's syntax and taken up again from there.
        key = self.settings_key
        kept = parsed.kept("traced before seeds")
        start = kept.get(key)
        if start is None:
            start = kept[key] = self._before_seeds()
            while len(kept) > 2:  # settings other than the seeds rarely change between lints
                del kept[next(iter(kept))]
        self._reached = start.reached
        classes = self._resume(start)
        if self.site is not None:
            self._apply_seeds()

        # Propagate: nested definitions and same-module callees of traced functions, then the
        # overrides of methods that traced methods call on `self`, until nothing changes.
        work = list(self.traced.values())
        while work:
            while work:
                current = work.pop()
                for inner, reason in self._reached_from(current):
                    if inner not in self.traced and not self._host_compiled(inner):
                        traced = TracedFunction(inner, reason)
                        self.traced[inner] = traced
                        work.append(traced)
            before = set(self.traced)
            if self._collect_hooks():
                self._seed_overrides(classes)
            work = [t for f, t in self.traced.items() if f not in before]
        if self.site is not None and self.site.module is not None:
            for statement in parsed.module.body:
                if not isinstance(statement, cst.ClassDef):
                    continue
                found = self.framework_of(statement)
                own = self._hooks.get(statement)
                if found is None and own:
                    found = (_hook_framework(statement.name.value, own), "")
                elif found is not None and own and found[0].entries.startswith(HOOKS):
                    found = (_merge_hooks(found[0], own), found[1])
                if found is not None:
                    qualified = f"{self.site.module}.{statement.name.value}"
                    self.links.classes.append(ModuleClass(qualified, found[0].label, found[0].entries))
        for traced in self.traced.values():
            cls = self.parsed.parent(self.parsed.parent(traced.node) or traced.node)
            if isinstance(cls, cst.ClassDef):  # a method: FunctionDef <- IndentedBlock <- ClassDef
                found = self.framework_of(cls)
                traced.module = found[0].label if found is not None else None
        return self.traced

    def _before_seeds(self) -> _Start:
        """The traced functions and links found before the seeds are applied (see `find`)."""
        functions: list[cst.FunctionDef] = []
        calls: list[cst.Call] = []
        classes: list[cst.ClassDef] = []
        parsed = self.parsed

        function_type, call_type, class_type = cst.FunctionDef, cst.Call, cst.ClassDef
        for node in parsed.nodes:  # exact classes: `isinstance` on libcst's ABCs is slow
            kind = type(node)
            if kind is function_type:
                functions.append(node)
            elif kind is call_type:
                calls.append(node)
            elif kind is class_type:
                classes.append(node)

        for func in functions:
            for decorator in func.decorators:
                transform = self.transform_of(decorator.decorator)
                applies = ""
                if transform is None:
                    transform = self._tracing_decorator(decorator.decorator)
                    applies = f", which applies `{transform.name}` to it" if transform is not None else ""
                if transform is not None:
                    self._mark(
                        func,
                        f"decorated with `@{parsed.code(decorator.decorator)}`{applies}",
                        transform,
                    )
                    break
        for call in calls:
            wrapped = self.wrapped_function(call)
            if wrapped is None:
                wrapped = self._wrapped_method(call)
            if wrapped is not None and wrapped[0] not in self.traced:
                func, transform = wrapped
                self._mark(func, self._at_line(f"wrapped by `{shorten(parsed.code(call))}`", call), transform)
                owner = self.parsed.parent(self.parsed.parent(func) or func)
                if isinstance(owner, cst.ClassDef) and isinstance(self.wrapped_target(call)[0], cst.Attribute):  # type: ignore[index]
                    self._wrapped_self.append((owner, func.name.value))
            elif wrapped is None:
                made = self._wrapped_instance(call)
                if made is not None and made[0] not in self.traced:
                    # `jax.jit(Step(24))`, `step = Step(24); jax.jit(step)`: Python calls the class's `__call__`.
                    names, nums = _static_args(list(call.args), self._constant)
                    params = [p.name.value for p in (*made[0].params.posonly_params, *made[0].params.params)]
                    # The instance is bound, not an argument: its attributes are Python values.
                    names |= set(params[:1])
                    self._mark(made[0], self._at_line(
                        f"`__call__` of the `{made[1].name.value}` instance wrapped by `{shorten(parsed.code(call))}`", call),
                        _Transform(self.transform_of(call.func).name, names, {n + 1 for n in nums if n >= 0}, set()))  # type: ignore[union-attr]
                    continue
                for func in self._factory_results(call):
                    # `jax.jit(build_kernel(cfg))`: the function the factory defines and returns.
                    self._mark(func, self._at_line(f"returned by the factory wrapped by `{shorten(parsed.code(call))}`", call),
                               _Transform(self.transform_of(call.func).name, *_static_args(list(call.args), self._constant), set()))  # type: ignore[union-attr]
                if self.site is not None:
                    self._imported_factory(call, f"wrapped by `{shorten(parsed.code(call.func), 30)}`")
                # `loss_fn = make_loss(cfg)` then `jax.grad(loss_fn)`: what the alias may name.
                target = self.wrapped_target(call)
                if target is not None and isinstance(target[0], cst.Lambda):
                    why = f"called in the `lambda` wrapped by `{shorten(parsed.code(call))}`"
                    for func in self._lambda_callees(target[0], call, why):
                        self._seed(func, self._at_line(why, call), transformed=False)
                    continue
                for func, bound in self._aliased_with_bound(target[0]) if target is not None else ():
                    if func not in self.traced:
                        transform = _Transform(
                            target[1].name, target[1].static_names | bound, set(target[1].static_nums), set(target[1].passed)
                        )
                        self._mark(func, self._at_line(f"wrapped by `{shorten(parsed.code(call))}`", call), transform)
        self._mark_framework_entries(functions, calls, classes)
        if self.site is not None:
            self._calls_elsewhere(calls)
        assert not self._hooks  # collected only while propagating
        return _Start(
            tuple(
                (t.node, t.why, frozenset(t.static_params), t.transformed, t.module, t.filtered, t.passed_through)
                for t in self.traced.values()
            ),
            tuple(self._custom.items()),
            self.links.copy(),
            tuple(classes),
            tuple(self._wrapped_self),
        )

    def _resume(self, start: _Start) -> list[cst.ClassDef]:
        """This finder in the state `_before_seeds` left; the module's classes."""
        self.traced = {
            node: TracedFunction(node, why, set(static), transformed, module, filtered, passed)
            for node, why, static, transformed, module, filtered, passed in start.traced
        }
        self._custom = dict(start.custom)
        self._hooks = {}
        self._wrapped_self = list(start.wrapped_self)
        self.links = start.links.copy()
        return list(start.classes)

    def _at_line(self, text: str, node: cst.CSTNode) -> Callable[[], str]:
        return lambda: f"{text} on line {self.parsed.position(node).start.line}"

    def _constant(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """A name bound once, to a literal (`names = ("n", "axis")`), as that literal."""
        if not isinstance(expr, cst.Name):
            return expr
        targets = self._definitions(expr, cst.Name)
        if len(targets) != 1:
            return expr
        assign = self._assignment(targets[0])  # type: ignore[arg-type]
        return assign.value if assign is not None and len(assign.targets) == 1 else expr

    def _assignment(self, name: cst.Name) -> cst.Assign | None:
        """The `name = value` statement a binding occurrence of `name` belongs to, if it is one."""
        target = self.parsed.parent(name)
        assign = self.parsed.parent(target) if isinstance(target, cst.AssignTarget) else None
        return assign if isinstance(assign, cst.Assign) else None

    def _mark(self, func: cst.FunctionDef, reason: str | Callable[[], str], transform: _Transform) -> None:
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        all_params = {p.name.value for p in parameters(func)}
        static = all_params if UNKNOWN_STATIC in transform.static_names else set(transform.static_names) & all_params
        for num in transform.static_nums:
            if -len(params) <= num < len(params):
                static.add(params[num])
        if transform.name in FILTER_TRANSFORMS:
            static |= _python_scalar_parameters(func)
        if transform.name in ANNOTATED_STATIC:
            static |= self._annotated_static(func)
        passed = frozenset(params[n] for n in transform.passed if -len(params) <= n < len(params)) - static
        self.traced[func] = TracedFunction(
            func, reason, static, transformed=True, filtered=transform.name in FILTER_TRANSFORMS, passed_through=passed
        )
        if transform.name in CUSTOM_DERIVATIVES:
            self._custom[func] = len(transform.static_nums)

    def _annotated_static(self, func: cst.FunctionDef) -> set[str]:
        """Parameters annotated `jdc.Static[...]` (`n_steps: jdc.Static[int]`, or as a string):
        static under a transform that reads its statics from annotations (`ANNOTATED_STATIC`)."""
        from jaxloopfix.analysis.traced_values import _static_annotation

        return {p.name.value for p in parameters(func) if p.annotation is not None
                and _static_annotation(self.parsed, p.annotation.annotation)}

    def _seed(
        self, func: cst.FunctionDef, reason: str | Callable[[], str], *, transformed: bool, static: set[str] = frozenset()
    ) -> None:
        """An entry point found by a framework rule; an earlier (transform) finding wins."""
        if func not in self.traced:
            self.traced[func] = TracedFunction(func, reason, set(static) if transformed else set(), transformed)

    def _mark_framework_entries(
        self, functions: list[cst.FunctionDef], calls: list[cst.Call], classes: list[cst.ClassDef]
    ) -> None:
        parsed = self.parsed
        # Functions whose parameters are tracers: `lax.scan` bodies, branches, custom rules.
        for call in calls:
            for func, bound, taker in self._function_arguments(call):
                if taker.transformed:
                    callee = shorten(parsed.code(call.func), 40)
                    self._seed(func, self._at_line(f"{taker.label} `{callee}`", call), transformed=True, static=bound)
            func_expr = call.func
            if isinstance(func_expr, cst.Attribute) and func_expr.attr.value in RULE_REGISTRATIONS:
                nondiff = self._custom_receiver(func_expr.value)
                if nondiff is None:
                    continue
                primal = parsed.code(func_expr.value)
                for arg in call.args:
                    if arg.star:
                        continue
                    rule = self._function_and_bound(arg.value)
                    if rule is not None:
                        func, bound = rule
                        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
                        reason = self._at_line(f"a rule given to `{primal}.{func_expr.attr.value}`", call)
                        # Which parameters are static differs between fwd, bwd and jvp rules:
                        # not known to be tracers (precision first).
                        self._seed(func, reason, transformed=False, static=bound | set(params[:nondiff]))
        for func in functions:
            for decorator in func.decorators:
                expr = decorator.decorator
                if isinstance(expr, cst.Attribute) and expr.attr.value in RULE_REGISTRATIONS:
                    nondiff = self._custom_receiver(expr.value)
                    if nondiff is not None:
                        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
                        reason = f"decorated with `@{parsed.code(expr)}`"
                        self._seed(func, reason, transformed=False, static=set(params[:nondiff]))
        # Entry points whose parameters are not known to be tracers.
        samples = self._probabilistic_primitives(calls)
        for func in functions:
            sample = samples.get(func)
            if sample is not None:
                # MCMC, SVI and Predictive run a model under `jit`/`vmap` (NUTS traces its potential).
                self._seed(func, f"a NumPyro model (it calls `{sample}`): inference runs it under a trace", transformed=False)
        for cls in classes:
            found = self.framework_of(cls)
            if found is None:
                continue
            framework, _ = found
            for method, suffix in self._module_entries(cls, framework):
                reason = f"method `{method.name.value}` of {framework.label} `{cls.name.value}`{suffix}"
                if framework.label.startswith("subclass"):
                    reason = f"method `{method.name.value}` of `{cls.name.value}`, a {framework.label}"
                self._seed(method, reason, transformed=False)
        for func in functions:
            for decorator in func.decorators:
                expr = decorator.decorator
                target = expr.func if isinstance(expr, cst.Call) else expr
                if isinstance(target, cst.Call) and self._qname_in(target.func, PARTIAL) and target.args:
                    target = target.args[0].value  # `@partial(nn.jit, ...)(...)`
                elif isinstance(expr, cst.Call) and self._qname_in(expr.func, PARTIAL) and expr.args:
                    target = expr.args[0].value  # `@partial(nnx.jit, static_argnames=...)`
                name = self._qname(target)
                taker = FUNCTION_TAKERS.get(name or "")
                if name in LIFTED_TRANSFORMS or (taker is not None and not taker.transformed and taker.positions):
                    self._seed(func, f"decorated with `@{shorten(parsed.code(expr), 40)}`", transformed=False)
                    break
        for call in calls:
            for func, _bound, taker in self._function_arguments(call):
                if not taker.transformed:
                    reason = self._at_line(f"{taker.label} `{shorten(parsed.code(call.func), 40)}`", call)
                    self._seed(func, reason, transformed=False)
            initializer = self._parameter_initializer(call)
            if initializer is not None:
                reason = self._at_line(f"a parameter initializer given to `{shorten(parsed.code(call.func), 40)}`", call)
                self._seed(initializer, reason, transformed=False)
            wrapped = self.wrapped_target(call)
            if wrapped is not None and self._object_attribute(wrapped[0], call):
                # `jax.grad(self.loss_fn)` where `loss_fn` is no method: an object, whose `__call__` runs.
                for method, cls in self._callable_classes():
                    reason = self._at_line(
                        f"`__call__` of `{cls.name.value}`, whose instances `{shorten(parsed.code(call), 40)}` may wrap", call
                    )
                    self._seed(method, reason, transformed=False)
            target = self._lifted_target(call)
            lifted = shorten(parsed.code(call.func), 40) if target is not None else ""
            if isinstance(target, cst.FunctionDef):
                self._seed(target, self._at_line(f"lifted by `{lifted}`", call), transformed=False)
            elif isinstance(target, cst.ClassDef):
                for statement in target.body.body:
                    if isinstance(statement, cst.FunctionDef) and statement.name.value == "__call__":
                        reason = self._at_line(f"method `__call__` of `{target.name.value}`, lifted by `{lifted}`", call)
                        self._seed(statement, reason, transformed=False)

    def _tracing_decorator(self, expr: cst.BaseExpression) -> _Transform | None:
        """`@staged` where the project's `staged(method)` returns a wrapper around
        `jax.jit(method, ...)` (`helper_structure.traces_parameter`): a transform spelled by the
        project, defined in this module or imported from another (whose source the project
        pass hands over when asked). `@functools.partial(staged, static_argnums=1)` too: which
        parameters the options make static is the wrapper's to say (it may count `self` or not),
        so none is taken for a tracer when the partial passes static options."""
        if isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None \
                and self._qname_in(expr.func, PARTIAL) is not None:
            inner = self._tracing_decorator(expr.args[0].value)
            if inner is not None and any(
                a.keyword is not None and a.keyword.value in ("static_argnums", "static_argnames") for a in expr.args
            ):
                return _Transform(inner.name, {UNKNOWN_STATIC}, set())
            return inner
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        local = self.resolve_function(expr)
        if local is not None:
            wrapper = parse_function(self.parsed.code(local))
        else:
            imported = self._imported(expr)
            if imported is None or self.site is None:
                return None
            qualified = ".".join(imported)
            text = self.site.declared_type(qualified)
            if text is None:
                self.links.declarations.add(qualified)
                return None
            wrapper = parse_function(text)
        found = traces_parameter(wrapper) if wrapper is not None else None
        return _Transform(found[0], found[1], found[2]) if found is not None else None

    def _host_compiled(self, func: cst.FunctionDef) -> bool:
        """`@numba.njit`, `@nb.jit(nopython=True)`: compiled for the host by another compiler; a
        call from traced code runs it on concrete NumPy values, never under a JAX trace."""
        for decorator in func.decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if isinstance(expr, (cst.Name, cst.Attribute)) and (self._qname(expr) or "").split(".", 1)[0] in HOST_COMPILERS:
                return True
        return False

    def _reached_from(self, traced: TracedFunction) -> list[tuple[cst.FunctionDef, str | Callable[[], str]]]:
        """The functions a traced function's body traces, with why; what it reaches in other
        modules goes to `links`. It depends on the text and `settings_key` alone, so it is kept
        with the start the later lints of the same text resume from (`find`), which trace more
        functions."""
        outer = traced.node
        known = self._reached.get(outer)
        if known is None:
            before = len(self.links.external)
            found = self._reach_from(outer)
            known = self._reached[outer] = (found, self.links.external[before:])
        else:
            self.links.external.extend(known[1])
        return list(known[0])

    def _reach_from(self, outer: cst.FunctionDef) -> list[tuple[cst.FunctionDef, str | Callable[[], str]]]:
        found: list[tuple[cst.FunctionDef, str | Callable[[], str]]] = []
        finder = self

        host = finder._host_callbacks(outer)

        for node in walk(outer, lambda n: n is outer or type(n) is not cst.FunctionDef):
            if type(node) is cst.FunctionDef:
                if node is not outer and node.name.value not in host:  # `jax.debug.callback(f, ...)`: on the host
                    found.append((node, f"defined inside traced function `{outer.name.value}`"))
            elif isinstance(node, cst.Call) and not finder._builds_message(node, outer):
                callee = finder.resolve_function(node.func)
                if callee is None and isinstance(node.func, cst.Attribute):
                    callee = finder.resolve_method(node.func, outer) or finder._instance_method(node.func, outer)
                held = finder._attribute_functions(node, outer) if callee is None and isinstance(node.func, cst.Attribute) else None
                if held is not None:
                    found.extend(held)
                    continue
                if callee is None and isinstance(node.func, cst.Attribute):
                    declared = finder._declared_receiver_methods(node.func, outer)
                    for method, cls in declared:
                        if method is not outer:
                            found.append((method, finder._at_line(
                                f"called as `{shorten(finder.parsed.code(node.func), 40)}` on a `{cls}` "
                                f"(its declared type) from traced function `{outer.name.value}`", node)))
                    if declared:
                        continue
                    if finder._declared_import_method(node.func, outer, node):
                        continue
                    if finder._imported_instance_method(node.func, outer, node):
                        continue
                    finder._method_by_name(node.func, outer, node)
                if callee is not None and _is_property(callee, finder.parsed):
                    for function in finder._property_functions(callee, node, outer):
                        found.append((function, finder._at_line(
                            f"returned by property `{callee.name.value}` and called from traced function "
                            f"`{outer.name.value}`", node)))
                elif callee is not None and callee is not outer:
                    found.append((callee, finder._at_line(f"called from traced function `{outer.name.value}`", node)))
                elif callee is None and isinstance(node.func, cst.Name) and (named := finder._aliased_functions(node.func)):
                    # `op(a, b)` with `op` a parameter (`compare(a, b, less_eq)`), a local alias or a
                    # factory's result: Python calls what the name is bound to.
                    for function in named:
                        if function is not outer:
                            found.append((function, finder._at_line(
                                f"called as `{node.func.value}` (bound to it) from traced function `{outer.name.value}`", node)))
                elif callee is None and (made := finder._called_instance(node.func, outer)) is not None:
                    method, cls = made
                    if method is not outer:
                        found.append((method, finder._at_line(
                            f"`__call__` of `{cls.name.value}`, whose instance is called as "
                            f"`{shorten(finder.parsed.code(node), 30)}` in traced function `{outer.name.value}`", node)))
                elif callee is None and finder._has_called_objects and finder._calls_an_object(node, outer):
                    for method, made in finder._called_objects():
                        if method is not outer:
                            found.append((method, finder._at_line(
                                f"`__call__` of `{finder.parsed.code(made.func)}`, whose instance (made on line "
                                f"{finder.parsed.call_line(made)}) is called as `{shorten(finder.parsed.code(node), 30)}` "
                                f"in traced function `{outer.name.value}`", node)))
                elif callee is None and (made_class := finder.resolve_class(node.func)) is not None:
                    for method in finder._constructors(made_class):
                        if method is not outer:
                            found.append((method, finder._at_line(
                                f"`{method.name.value}` of `{made_class.name.value}`, constructed in traced function "
                                f"`{outer.name.value}`", node)))
                elif callee is None:
                    finder._external(node.func, f"called from traced function `{outer.name.value}`", node)
                if not finder._qname_in(node.func, HOST_CALLBACKS):
                    found.extend(finder._functions_passed_as_values(node, outer))
        return found

    def _functions_passed_as_values(self, call: cst.Call, outer: cst.FunctionDef) -> list[tuple[cst.FunctionDef, str | Callable[[], str]]]:
        """Functions of the project passed as values from traced code to the project's own
        functions and classes (`Ops(solve=partial(f, k=2))`, `helper(f, x)`) or to JAX's tree maps:
        what receives one calls it under the same trace. Their parameters are not known to be
        tracers. Other receivers are left out: NumPy, SciPy, threads, `atexit` and host callbacks
        (directly, through `partial` or through an alias) run what they are given on host values,
        and a project helper that hands the parameter to a host callback does too."""
        receiver = self._project_receiver(call, outer)
        if receiver is None:
            return []
        host = self._host_parameters(receiver) if isinstance(receiver, cst.FunctionDef) else set()
        found: list[tuple[cst.FunctionDef, str | Callable[[], str]]] = []
        shown = shorten(self.parsed.code(call.func), 30)
        positional = 0
        for arg in call.args:
            slot: int | str | None = arg.keyword.value if arg.keyword is not None else None if arg.star else positional
            if arg.keyword is None and not arg.star:
                positional += 1
            if slot in host:
                continue  # `to_host(write_rows, x)` with `def to_host(fn, *a): jax.debug.callback(fn, *a)`
            value = arg.value
            if isinstance(value, cst.Call) and self._qname_in(value.func, PARTIAL) and value.args:
                value = value.args[0].value  # `partial(f, n=3)` passes `f`
            if not isinstance(value, (cst.Name, cst.Attribute)):
                continue
            why = f"passed as a value to `{shown}` in traced function `{outer.name.value}`"
            function = self.resolve_function(value) if isinstance(value, cst.Name) else None
            if function is not None and function is not outer:
                found.append((function, self._at_line(why, call)))
            elif function is None and self.resolve_class(value) is None:
                self._external(value, why, call)
        return found

    def _project_receiver(self, call: cst.Call, outer: cst.FunctionDef) -> cst.FunctionDef | bool | None:
        """What `call` calls, when it is code that runs what it is given under the caller's trace:
        a function or class of this module (the FunctionDef, or True), a name imported from the
        project, a method of the enclosing class, or one of JAX's tree maps."""
        func = call.func
        if self._qname_in(func, TREE_MAPS) is not None:
            return True
        if isinstance(func, cst.Name):
            callee = self.resolve_function(func)
            if callee is not None:
                return callee
            if self.resolve_class(func) is not None:
                return True
        if isinstance(func, cst.Attribute):
            method = self.resolve_method(func, outer)
            if method is not None:
                return method
        return True if self._imported(func) is not None else None

    def _host_parameters(self, function: cst.FunctionDef) -> set[int | str]:
        """`function`'s parameters (by position and by name) that it hands to a host callback."""
        handed = self._host_callbacks(function)
        params = parameters(function, stars=False)
        if params and params[0].name.value in ("self", "cls") and any(isinstance(a, cst.ClassDef) for a in self.parsed.ancestors(function)):
            params = params[1:]
        return {slot for position, param in enumerate(params) if param.name.value in handed
                for slot in (position, param.name.value)}

    def _constructors(self, cls: cst.ClassDef) -> list[cst.FunctionDef]:
        """What constructing `cls` runs: the `__init__` Python finds (its own or a base's of this
        module) and a dataclass's `__post_init__`. Constructed in traced code, they run traced."""
        found = []
        for name in ("__init__", "__post_init__"):
            method = next((m for base in _mro(cls, self._module_classes) if (m := _method(base, name)) is not None), None)
            if method is not None:
                found.append(method)
        return found

    # -- calls on objects -------------------------------------------------------
    def _calls_an_object(self, call: cst.Call, caller: cst.FunctionDef) -> bool:
        """`t(x)` where `t` is an item of a container or an attribute (`for t in self.transforms`,
        `self.head(x)`, `layers[i](x)`): Python calls its class's `__call__`."""
        func = call.func
        if isinstance(func, cst.Subscript):
            return True
        if isinstance(func, cst.Attribute):
            return isinstance(func.value, cst.Name) and func.value.value == "self" and self.resolve_method(func, caller) is None
        if not isinstance(func, cst.Name) or self.resolve_function(func) or self.resolve_class(func):
            return False
        bindings = self._bindings(func)
        return any(isinstance(getattr(b, "node", None), cst.For) or isinstance(self.parsed.parent(getattr(b, "node", None) or func), cst.For) for b in bindings or ())

    def _called_instance(
        self, func: cst.BaseExpression, caller: cst.FunctionDef
    ) -> tuple[cst.FunctionDef, cst.ClassDef] | None:
        """`Cell()(x)`, `cell = Cell(); cell(x)`, `cell = make_cell(); cell(x)`, `def f(cell: Cell):
        cell(x)`: an instance of a class of this module called, so Python runs its class's
        `__call__` (its own or a base's)."""
        if not isinstance(func, (cst.Call, cst.Name)) or "__call__" not in self._method_names:
            return None
        cls = self._instance_class(func, caller, 0)
        if cls is None and isinstance(func, cst.Name) and self.resolve_class(func) is None:
            cls = self._declared_class(func.value, caller)
        if cls is None:
            return None
        method = self._own_call(cls)
        return (method, cls) if method is not None else None

    def _own_call(self, cls: cst.ClassDef) -> cst.FunctionDef | None:
        """The `__call__` Python runs on an instance of `cls`: its own or a base's of this module."""
        return next((m for base in _mro(cls, self._module_classes) if (m := _method(base, "__call__")) is not None), None)

    def _bindings(self, name: cst.Name) -> list | None:
        """The scope's assignments of `name` (None when libcst cannot look it up)."""
        scope = self.parsed.scope(name)
        try:
            return list(scope[name.value]) if scope is not None else []
        except Exception:  # noqa: BLE001 - a name libcst cannot look up is just unknown
            return None

    def _called_objects(self) -> list[tuple[cst.FunctionDef, cst.Call]]:
        """`__call__` methods of this module's classes (frameworks' aside: theirs are entries
        already) whose instances are made in this module, with a call that makes one."""
        kept = self.parsed.kept("called objects")
        key = self.settings_key  # the frameworks of base classes depend on the project's classes
        if key not in kept:
            calls = {cls: method for method, cls in self._callable_classes()}
            found: list[tuple[cst.FunctionDef, cst.Call]] = []
            for node in self.parsed.nodes if calls else ():
                if type(node) is cst.Call and isinstance(node.func, cst.Name):
                    cls = self.resolve_class(node.func)
                    if cls in calls and all(calls[cls] is not f for f, _ in found):
                        found.append((calls[cls], node))
            kept[key] = found
        return list(kept[key])

    def _parameter_initializer(self, call: cst.Call) -> cst.FunctionDef | None:
        """`self.param("w", init_fn, shape)` / `self.variable(col, name, init_fn)` in a framework
        module, `hk.get_parameter(name, shape, init=init_fn)`: the initializer runs under `init`."""
        func = call.func
        position, keyword = None, "init"
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            if func.attr.value in ("param", "variable"):
                cls = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.ClassDef)), None)
                if cls is None or self.framework_of(cls) is None:
                    return None
                position, keyword = (1, "init_fn") if func.attr.value == "param" else (2, "init_fn")
        elif (
            isinstance(func, (cst.Name, cst.Attribute))
            and (func.attr.value if isinstance(func, cst.Attribute) else func.value) in ("get_parameter", "get_state")
            and self._qname(func) in ("haiku.get_parameter", "haiku.get_state")
        ):
            position = 3  # the last part first: qualified names cost a scope analysis
        if position is None:
            return None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        chosen = positional[position].value if len(positional) > position else next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
        return self.resolve_function(chosen) if chosen is not None else None

    def _object_attribute(self, expr: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """`self.loss_fn` where the enclosing class defines no method `loss_fn`: an object."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        caller = next((a for a in self.parsed.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        return caller is not None and self.resolve_method(expr, caller) is None and any(
            isinstance(a, cst.ClassDef) for a in self.parsed.ancestors(caller)
        )

    def _callable_classes(self) -> list[tuple[cst.FunctionDef, cst.ClassDef]]:
        """This module's classes (frameworks' aside) that define `__call__`."""
        out = []
        for node in self.parsed.module.body:
            if isinstance(node, cst.ClassDef) and self.framework_of(node) is None:
                method = next((m for m in node.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "__call__"), None)
                if method is not None:
                    out.append((method, node))
        return out

    def _instance_method(self, attr: cst.Attribute, caller: cst.FunctionDef) -> cst.FunctionDef | None:
        """`Chain(...).apply(x)`, `build().apply(x)`, `c = Chain(...); c.apply(x)`: the method of
        the class the receiver is an instance of, when a call of this module makes it."""
        if attr.attr.value not in self._method_names:
            return None  # no class of this module defines it: nothing to resolve
        cls = self._instance_class(attr.value, caller, 0)
        if cls is None:
            return None
        return next((m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == attr.attr.value), None)

    @cached_property
    def _has_called_objects(self) -> bool:
        """Whether this module makes instances of a class with `__call__` (else no object call
        needs looking at)."""
        return bool(self._called_objects())

    @cached_property
    def _method_names(self) -> frozenset[str]:
        """Names of the methods this module's top-level classes define."""
        return frozenset(
            m.name.value for c in self.parsed.module.body if isinstance(c, cst.ClassDef)
            for m in c.body.body if isinstance(m, cst.FunctionDef)
        )

    def _simple_assignments(self, func: cst.FunctionDef) -> dict[str, list[cst.BaseExpression]]:
        """`name = value` statements of `func` by name, found in one walk per function."""
        found = self._assignments_of.get(func)
        if found is None:
            found = self._assignments_of[func] = {}
            for node in descendants(func):
                if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    found.setdefault(node.targets[0].target.value, []).append(node.value)
        return found

    def _instance_class(self, expr: cst.BaseExpression, caller: cst.FunctionDef, depth: int) -> cst.ClassDef | None:
        if depth > 3:
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            cls = self.resolve_class(expr.func)
            if cls is not None:
                return cls
            func = self.resolve_function(expr.func)
            if func is None:
                return None
            returned = {
                self._instance_class(r.value, func, depth + 1)
                for r in descendants(func) if isinstance(r, cst.Return) and r.value is not None
            }
            return returned.pop() if len(returned) == 1 else None
        if isinstance(expr, cst.Name):
            values = self._simple_assignments(caller).get(expr.value, [])
            if len(values) == 1:
                return self._instance_class(values[0], caller, depth + 1)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            found = {self._instance_class(value, method, depth + 1) for method, value in self._self_assignments(caller, expr.attr.value)}
            return found.pop() if len(found) == 1 else None
        return None

    def _attribute_functions(
        self, call: cst.Call, caller: cst.FunctionDef
    ) -> list[tuple[cst.FunctionDef, str | Callable[[], str]]] | None:
        """`self.act(...)` after `self.act = decode` in the class's `setup`/`__init__`, every
        assignment naming a function: Python calls the function the attribute holds. Those of
        this module are returned with why; imported ones are recorded for their module. None
        when an assignment is anything else (a module, a call's result, a lambda)."""
        attr = call.func
        if not (isinstance(attr, cst.Attribute) and isinstance(attr.value, cst.Name) and attr.value.value == "self"):
            return None
        values = [value for _, value in self._self_assignments(caller, attr.attr.value)]
        if not values or not all(isinstance(v, (cst.Name, cst.Attribute)) for v in values):
            return None
        local = [self.resolve_function(v) for v in values]
        imported = [self._imported(v) if f is None else None for v, f in zip(values, local)]
        if not all(f is not None or i is not None for f, i in zip(local, imported)):
            return None
        reason = f"called as `{shorten(self.parsed.code(attr), 40)}` (an attribute holding it) from traced function `{caller.name.value}`"
        for value, function in zip(values, local):
            if function is None:
                self._external(value, reason, call)
        return [(f, self._at_line(reason, call)) for f in local if f is not None and f is not caller]

    def _self_assignments(self, caller: cst.FunctionDef, attr: str) -> list[tuple[cst.FunctionDef, cst.BaseExpression]]:
        """`self.estimator = Exact()` in any method of the class `caller` is a method of (its
        `__init__`, `setup`): each (method, value) that assigns `self.<attr>`."""
        cls = self.parsed.parent(self.parsed.parent(caller) or caller)
        if not isinstance(cls, cst.ClassDef):
            return []
        found: list[tuple[cst.FunctionDef, cst.BaseExpression]] = []
        for method in cls.body.body:
            if not isinstance(method, cst.FunctionDef):
                continue
            for node in descendants(method):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else (
                    [node.target] if isinstance(node, cst.AnnAssign) and node.value is not None else [])
                for target in targets:
                    if isinstance(target, cst.Attribute) and target.attr.value == attr and isinstance(target.value, cst.Name) \
                            and target.value.value == "self":
                        found.append((method, node.value))  # type: ignore[arg-type]
        return found

    def _declared_receiver_methods(self, attr: cst.Attribute, caller: cst.FunctionDef) -> list[tuple[cst.FunctionDef, str]]:
        """`env.reset_level(...)` where a parameter is declared `env: 'JaxGravitar'` (in this
        function or one it is nested in): the method Python finds on that class (its own or a
        base's of this module), and every override in its subclasses here, with the class
        names: what the call may run."""
        if not (isinstance(attr.value, cst.Name) and attr.value.value not in ("self", "cls")):
            return []
        if attr.attr.value not in self._method_names:
            return []  # no class of this module defines it
        declaring = self._declaring_param(attr.value.value, caller)
        if declaring is not None and declaring[1].annotation is not None:
            every = self._declared_classes(declaring[1])  # each member of a union may be the receiver
        else:
            single = self._declared_class(attr.value.value, caller)
            every = [single] if single is not None else []
        classes = self._module_classes
        found: list[tuple[cst.FunctionDef, str]] = []
        for declared in every:
            for cls in _mro(declared, classes):
                method = _method(cls, attr.attr.value)
                if method is not None:
                    if all(method is not m for m, _ in found):
                        found.append((method, declared.name.value))
                    break
            for cls in classes.values():
                if cls is not declared and declared in _mro(cls, classes):
                    method = _method(cls, attr.attr.value)
                    if method is not None and all(method is not m for m, _ in found):
                        found.append((method, cls.name.value))
        return found

    def _declared_import_method(self, attr: cst.Attribute, caller: cst.FunctionDef, call: cst.Call) -> bool:
        """`module.step(...)` where a parameter is declared `module: Module` with `Module`
        imported from a project module: that module's analysis traces `Module.step` (what
        Python finds on the class there) and its overrides (`_apply_seeds`)."""
        if not (isinstance(attr.value, cst.Name) and attr.value.value not in ("self", "cls")) or self.site is None:
            return False
        traced = False
        for annotation in self._declared_annotations(attr.value.value, caller):
            if self._module_classes.get(self.parsed.code(annotation)) is not None:
                continue  # a class of this module: `_declared_receiver_methods`
            target = self._imported(annotation)
            if target is None:
                continue
            line = self.parsed.call_line(call)
            reason = (
                f"called as `{shorten(self.parsed.code(attr), 40)}` on a `{target[1]}` (its declared type) from "
                f"traced function `{caller.name.value}` on line {line} of {self.site.shown or self.parsed.filename}"
            )
            self.links.external.append(ExternalTrace(target[0], f"{target[1]}.{attr.attr.value}", reason))
            traced = True
        return traced

    def _imported_instance_method(self, attr: cst.Attribute, caller: cst.FunctionDef, call: cst.Call) -> bool:
        """`self.estimator.update(...)` where every binding of `self.estimator` makes an instance
        of one class imported from a project module (`Estimator(...)`, `ctor(...)` with
        `ctor = custom_ctor or Estimator`). That module's analysis traces `Estimator.update` and
        its overrides, as Python finds the method on the instance."""
        receiver = attr.value
        if self.site is None or attr.attr.value.startswith("__") or not (
            isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self"
        ):
            return False  # only objects a class holds: a local one is made where it is used, often in a test
        target = self._imported_instance(receiver, caller, 0)
        if target is None:
            return False
        reason = (
            f"called as `{shorten(self.parsed.code(attr), 40)}` on a `{target[1]}` instance made in this module, from "
            f"traced function `{caller.name.value}` on line {self.parsed.call_line(call)} of "
            f"{self.site.shown or self.parsed.filename}"
        )
        self.links.external.append(ExternalTrace(target[0], f"{target[1]}.{attr.attr.value}", reason))
        return True

    def _imported_instance(self, expr: cst.BaseExpression, caller: cst.FunctionDef, depth: int) -> tuple[str, str] | None:
        """(module, class) when every binding of `expr` calls one imported project class; `None`
        bindings (a placeholder before the object is made) aside."""
        if depth > 3:
            return None
        if isinstance(expr, cst.Call):
            return self._imported_class(expr.func, caller, depth + 1)
        if isinstance(expr, cst.Name):
            bound = [(caller, v) for v in self._simple_assignments(caller).get(expr.value, [])]
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            bound = self._self_assignments(caller, expr.attr.value)
        else:
            return None
        found = {
            self._imported_instance(value, method, depth + 1)
            for method, value in bound if not (isinstance(value, cst.Name) and value.value == "None")
        }
        return found.pop() if len(found) == 1 and None not in found else None

    def _imported_class(self, func: cst.BaseExpression, caller: cst.FunctionDef, depth: int) -> tuple[str, str] | None:
        """What a constructor expression names: an imported project name (`Estimator`,
        `estimators.Estimator`), a module-level alias of one, or a local `ctor = custom or
        Estimator` (its one operand that names a class: the default the code falls back to)."""
        if depth > 6 or not isinstance(func, (cst.Name, cst.Attribute, cst.BooleanOperation)):
            return None
        if isinstance(func, cst.BooleanOperation):
            if not isinstance(func.operator, cst.Or):
                return None
            found = {self._imported_class(side, caller, depth + 1) for side in (func.left, func.right)} - {None}
            return found.pop() if len(found) == 1 else None
        imported = self._imported(func)
        if imported is not None:
            return imported if imported[1][:1].isupper() else None
        if not isinstance(func, cst.Name):
            return None
        values = self._simple_assignments(caller).get(func.value)
        if values is None:
            constant = self._constant(func)
            values = [constant] if constant is not func else []
        return self._imported_class(values[0], caller, depth + 1) if len(values) == 1 else None

    def _method_by_name(self, attr: cst.Attribute, caller: cst.FunctionDef, call: cst.Call) -> None:
        """`model.post_cache.quad_mixture(...)` on an object nothing here types: the project pass
        traces the method of that name when one project class alone defines it and no library
        class has a method of that name (`library_methods.py`), as Python would find it on any
        object of that class (`project.TraceFlow`, `BY_NAME`)."""
        name = attr.attr.value
        receiver = self._untyped_root(attr)
        if receiver is None or receiver.value in ("self", "cls"):
            return
        # The other methods called on the same name here (`factor.marginalise(v)`): the object's
        # class defines them too, which tells classes with a method `name` apart.
        also = sorted({
            node.func.attr.value for node in walk(caller, lambda n: n is caller or type(n) is not cst.FunctionDef)
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
            and node.func.value.value == receiver.value and not node.func.attr.value.startswith("__")
        } - {name}) if attr.value is receiver else []
        reason = (
            f"called as `{shorten(self.parsed.code(attr), 40)}` from traced function `{caller.name.value}` on line "
            f"{self.parsed.call_line(call)} of {self.site.shown or self.parsed.filename} (one project class alone "
            f"defines `{name}`" + (f", or alone also `{'`, `'.join(also)}`, called on the same object" if also else "")
            + f"; no library class has `{name}`)"
        )
        self.links.external.append(ExternalTrace(BY_NAME, f"{BY_NAME}.{'&'.join([name, *also])}", reason))

    def _untyped_root(self, attr: cst.Attribute) -> cst.Name | None:
        """The name the receiver of `attr` starts from (`model` of `model.cache.m`), when a method
        of that name may be found by its name: no dunder, no library class has it (it may be
        meant: `library_methods.py`), and the name is no import (`jnp.linalg.solve` is resolved
        by what it names)."""
        name = attr.attr.value
        if self.site is None or name.startswith("__") or name in LIBRARY_METHODS:
            return None
        root = attr.value
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name):
            return None
        qualified = self.parsed.qualified_name(root)
        return root if qualified in (None, root.value) or "<locals>" in qualified else None

    def _transformed_method_by_name(self, expr: cst.BaseExpression, call: cst.Call) -> None:
        """`jax.jit(sim.integrate)` with `sim` from a registry or factory: nothing here says which
        class `sim` is, but the transform runs its `integrate`, so the project pass traces the
        `integrate` of every project class (`EVERY_BY_NAME`). Not for a name a library class also
        has (`model.apply`, `env.step`), nor for an object a constructor or a library call here
        made. Its parameters are not taken for tracers: the transform's static arguments count
        without `self`."""
        if not isinstance(expr, cst.Attribute) or self._untyped_root(expr) is None or self._imported(expr) is not None:
            return
        receiver = expr.value
        if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
            return  # the class's own method, or an object attribute (`_object_attribute`)
        caller = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        values = self._bound_values(receiver, caller)
        if any(isinstance(value, cst.Call) and (self.resolve_class(value.func) is not None or self._library_call(value))
               for value in values):
            return  # `sim = Pendulum()`, `net = hk.transform(f)`: the object's class is not unknown
        reason = (
            f"`{shorten(self.parsed.code(call), 40)}` on line {self.parsed.call_line(call)} of "
            f"{self.site.shown or self.parsed.filename} transforms a method of that name of an object whose class "
            "is not known there"
        )
        self.links.external.append(ExternalTrace(EVERY_BY_NAME, f"{EVERY_BY_NAME}.{expr.attr.value}", reason))

    def _bound_values(self, receiver: cst.BaseExpression, caller: cst.FunctionDef | None) -> list[cst.BaseExpression | None]:
        """The values assigned to `receiver` (None for a binding that is no plain assignment)."""
        if isinstance(receiver, cst.Name):
            values: list[cst.BaseExpression | None] = []
            for binding in self._bindings(receiver) or ():
                node = getattr(binding, "node", None)
                parent = self.parsed.parent(node) if isinstance(node, cst.Name) else None
                statement = self.parsed.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
                values.append(statement.value if isinstance(statement, (cst.Assign, cst.AnnAssign)) else None)
            return values
        if not (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name)
                and receiver.value.value == "self" and caller is not None):
            return []
        cls = next((a for a in self.parsed.ancestors(caller) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return []
        values = []
        for node in descendants(cls.body):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
                [node.target] if isinstance(node, (cst.AnnAssign, cst.AugAssign)) else []
            for target in targets:
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value == "self" and target.attr.value == receiver.attr.value:
                    values.append(node.value if isinstance(node, cst.Assign) and len(node.targets) == 1 else None)
        return values

    def _library_call(self, value: cst.BaseExpression | None) -> bool:
        """`hk.transform(f)`, `envs.create(...)`: a call of an imported name that is no project function."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return False
        qualified = self._qname(value.func)
        return not (qualified is None or "." not in qualified or "<locals>" in qualified
                    or self._imported(value.func) is not None or self.resolve_function(value.func) is not None
                    or self.resolve_class(value.func) is not None)

    def _declaring_param(self, name: str, caller: cst.FunctionDef) -> tuple[cst.FunctionDef, cst.Param] | None:
        """The parameter `name` of `caller`, or of the first function it is nested in that has one."""
        for func in (caller, *self.parsed.ancestors(caller)):
            if isinstance(func, cst.FunctionDef):
                param = next((p for p in parameters(func) if p.name.value == name), None)
                if param is not None:
                    return func, param
        return None

    def _declared_annotations(self, name: str, caller: cst.FunctionDef) -> list[cst.Name | cst.Attribute]:
        """The classes (names or dotted names) parameter `name` (`_declaring_param`) is annotated
        with: one, or each member of a union (`scf: MolecularSCF | PeriodicSCF`)."""
        found = self._declaring_param(name, caller)
        if found is None or found[1].annotation is None:
            return []
        return annotation_members(self.parsed, found[1].annotation.annotation, strings=False)

    def _declared_class(self, name: str, caller: cst.FunctionDef, depth: int = 0) -> cst.ClassDef | None:
        """The module class a parameter `name` of `caller` (or of a function it is nested in,
        the first that has one) is annotated with: `env: JaxGravitar` or `env: 'JaxGravitar'`;
        unannotated, the class of what the transform calls bind to it (`_bound_class`)."""
        found = self._declaring_param(name, caller)
        if found is None:
            return None
        func, param = found
        if param.annotation is None:
            return self._bound_class(func, name, depth)
        classes = self._declared_classes(param)
        return classes[0] if len(classes) == 1 else None

    def _declared_classes(self, param: cst.Param) -> list[cst.ClassDef]:
        """The classes of this module a parameter's annotation names: `env: JaxGravitar`,
        `env: 'JaxGravitar'`, or each of a union's members (`env: Gravitar | Asteroids`)."""
        if param.annotation is None:
            return []
        found = [self._module_classes.get(self.parsed.code(m)) for m in annotation_members(self.parsed, param.annotation.annotation)]
        return [cls for cls in found if cls is not None]

    def _bound_class(self, func: cst.FunctionDef, name: str, depth: int) -> cst.ClassDef | None:
        """`jax.grad(partial(_loss, model))` in `def train(model: CharRNN)`: the class of what
        calls of `func` inside a transform's or loop taker's arguments bind to its parameter
        `name` (a declared parameter, `Cls()`, a factory's instance), when they agree.

        Only those sites count: the pre-filter keeps every statement holding such a call, so
        the answer is the same whether or not it left unreached code out."""
        if depth > 2 or not isinstance(self.parsed.parent(func), cst.Module):
            return None
        key = (func, name)
        if key not in self._bound_classes:
            self._bound_classes[key] = None  # a cycle of partials reads as unknown
            self._bound_classes[key] = self._bound_class_uncached(func, name, depth)
        return self._bound_classes[key]

    def _bound_class_uncached(self, func: cst.FunctionDef, name: str, depth: int) -> cst.ClassDef | None:
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        position = params.index(name) if name in params else None
        found: set[cst.ClassDef] = set()
        for site, args in self._binding_sites(func):
            values = [a.value for a in args if a.keyword is not None and a.keyword.value == name]
            positional = [a.value for a in args if a.keyword is None and not a.star]
            if position is not None and position < len(positional) and not any(a.star for a in args):
                values.append(positional[position])
            for value in values:
                holder = next((a for a in self.parsed.ancestors(site) if isinstance(a, cst.FunctionDef)), None)
                if holder is None:
                    continue
                cls = self._instance_class(value, holder, depth + 1)
                if cls is None and isinstance(value, cst.Name):
                    cls = self._declared_class(value.value, holder, depth + 1)
                if cls is None:
                    return None  # a site binding something else: not known
                found.add(cls)
        return found.pop() if len(found) == 1 else None

    def _binding_sites(self, func: cst.FunctionDef) -> list[tuple[cst.Call, Sequence[cst.Arg]]]:
        """Calls `func(...)` and `partial(func, ...)` nested in the arguments of a transform or
        loop-taker call (`jax.value_and_grad(partial(_loss, model))`), with the arguments they
        bind to `func`'s parameters."""
        sites: list[tuple[cst.Call, Sequence[cst.Arg]]] = []
        for call in self._calls_of(func):
            sites.append((call, call.args))
        for node in self.parsed.nodes:
            if isinstance(node, cst.Call) and self._qname_in(node.func, PARTIAL) and node.args \
                    and node.args[0].keyword is None and not node.args[0].star \
                    and self.resolve_function(node.args[0].value) is func:
                sites.append((node, node.args[1:]))
        return [(site, args) for site, args in sites if self._inside_tracing_call(site)]

    def _inside_tracing_call(self, node: cst.CSTNode) -> bool:
        """Whether `node` is inside the arguments of a transform (`jax.grad(...)`) or a call
        that traces its function arguments (`lax.scan(...)`)."""
        for ancestor in self.parsed.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return False
            if isinstance(ancestor, cst.Call) and ancestor.func is not node and (
                self.transform_of(ancestor.func) is not None or self._function_argument_exprs(ancestor)
            ):
                return True
        return False

    @cached_property
    def _module_classes(self) -> dict[str, cst.ClassDef]:
        """This module's top-level classes by name."""
        return {c.name.value: c for c in self.parsed.module.body if isinstance(c, cst.ClassDef)}

    def _builds_message(self, call: cst.Call, outer: cst.FunctionDef) -> bool:
        """`str(pp_jaxpr(...))`, `f"{describe(x)}"`, a call in a `raise` or an `except:` block:
        it builds an error message or text, so what it calls is not followed as traced code."""
        child: cst.CSTNode = call
        for ancestor in self.parsed.ancestors(call):
            if ancestor is outer:
                return False
            if isinstance(ancestor, (cst.Raise, cst.ExceptHandler, cst.ExceptStarHandler, cst.FormattedStringExpression)):
                return True
            if isinstance(ancestor, cst.Call) and child is not ancestor.func and isinstance(ancestor.func, cst.Name):
                if ancestor.func.value in ("str", "repr") and self._qname_in(ancestor.func, STR_BUILTINS):
                    return True
            child = ancestor
        return False

    # -- other modules of the project ------------------------------------------
    def _calls_elsewhere(self, calls: list[cst.Call]) -> None:
        """Record what transforms and function takers here apply to functions of other modules."""
        for call in calls:
            wrapped = self.wrapped_target(call)
            if wrapped is not None and self.resolve_function(wrapped[0]) is None:
                expr, transform = wrapped
                text = f"wrapped by `{shorten(self.parsed.code(call))}`"
                alias = self._imported_alias(expr)
                if alias is not None:  # `step = partial(train_step, cfg=cfg)`, then `jax.jit(step)`
                    expr, names, bound = alias
                    nums = {n + bound if n >= 0 else n for n in transform.static_nums} | set(range(bound))
                    self._external(expr, text, call, True, transform.static_names | names, nums)
                    continue
                self._external(expr, text, call, True, transform.static_names, transform.static_nums)
                self._transformed_method_by_name(expr, call)
            for item, taker in self._function_argument_exprs(call):
                if self._function_and_bound(item) is not None:
                    continue
                names: set[str] = set()
                nums: set[int] = set()
                if isinstance(item, cst.Call) and self._qname_in(item.func, PARTIAL) and item.args:
                    if item.args[0].keyword is not None or any(a.star for a in item.args):
                        continue
                    bound = [a for a in item.args[1:] if a.keyword is None]
                    nums = set(range(len(bound)))
                    names = {a.keyword.value for a in item.args[1:] if a.keyword is not None}
                    item = item.args[0].value
                text = f"{taker.label} `{shorten(self.parsed.code(call.func), 40)}`"
                self._external(item, text, call, taker.transformed, names, nums)
            self._lifted_elsewhere(call)

    def _imported_alias(self, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, set[str], int] | None:
        """`step` bound once, in its scope, to `train_step` or `partial(train_step, cfg=cfg)` with
        `train_step` imported from a project module: the imported name, the parameters the
        partial binds by keyword, and how many it binds by position (Python values, static under
        the transform that wraps `step`)."""
        definitions = self._definitions(expr, cst.Name)
        if len(definitions) != 1:
            return None
        assign = self._assignment(definitions[0])  # type: ignore[arg-type]
        if assign is None or len(assign.targets) != 1:
            return None
        value, names, bound = assign.value, set(), 0
        if isinstance(value, cst.Call) and self._qname_in(value.func, PARTIAL) and value.args:
            first = value.args[0]
            if first.keyword is not None or any(a.star for a in value.args):
                return None
            bound = len([a for a in value.args[1:] if a.keyword is None])
            names = {a.keyword.value for a in value.args[1:] if a.keyword is not None}
            value = first.value
        if not isinstance(value, (cst.Name, cst.Attribute)) or self._imported(value) is None:
            return None
        return value, names, bound

    def _lifted_elsewhere(self, call: cst.Call) -> None:
        """`nnx.jit(step)`, `nnx.jit(partial(step, config))` with `step` imported from another
        project module: it runs traced there (its parameters are modules and arrays, not known to
        be tracers; a module class lifted from elsewhere is traced as a module already)."""
        if self._qname_in(call.func, LIFTED_TRANSFORMS) is None or self._lifted_target(call) is not None:
            return
        target = self._lifted_expr(call)
        if target is not None:
            self._external(target, f"lifted by `{shorten(self.parsed.code(call.func), 40)}`", call)

    def _apply_seeds(self) -> None:
        """Seed what other modules trace here (a re-export passes the seed on)."""
        assert self.site is not None
        for seed in self.site.seeds:
            if RETURNED in seed.name:
                self._apply_returned_seed(seed)
                continue
            if "." in seed.name:
                self._apply_method_seed(seed)
                continue
            func = self._module_function(seed.name)
            cls = self._module_classes.get(seed.name) if func is None else None
            if cls is not None:  # `k.Carma(...)` in another module's traced code constructs one
                for method in self._constructors(cls):
                    if method not in self.traced:
                        self._seed(method, f"`{method.name.value}` of `{seed.name}`, {seed.reason}", transformed=False)
            elif func is None:
                source = self._reexported(seed.name)
                if source is not None:  # a re-export: `from .layers import step` in `__init__.py`
                    module, name = source
                    self.links.external.append(
                        ExternalTrace(module, name, seed.reason, seed.transformed, seed.static_names, seed.static_nums)
                    )
            elif func not in self.traced:
                if seed.transformed:
                    self._mark(func, seed.reason, _Transform("", set(seed.static_names), set(seed.static_nums)))
                else:
                    self._seed(func, seed.reason, transformed=False)

    def _apply_returned_seed(self, seed: TraceSeed) -> None:
        """A seed `make_step()`: another module transforms what `make_step` returns here, the
        functions it defines and returns by name (a re-export passes the seed on)."""
        name, _, at = seed.name.partition(RETURNED)
        factory = self._module_function(name)
        if factory is None:
            source = self._reexported(name)
            if source is not None:
                self.links.external.append(ExternalTrace(
                    source[0], source[1] + RETURNED + at, seed.reason, seed.transformed, seed.static_names, seed.static_nums))
            return
        for func in _returned_by(factory, int(at) if at.isdigit() else None):
            if func not in self.traced:
                self._mark(func, seed.reason, _Transform("", set(seed.static_names), set(seed.static_nums)))

    def _reexported(self, name: str) -> tuple[str, str] | None:
        """(module, name) a module-level `from .layers import Step` or `Step = layers.Step`
        binds `name` to: a re-export, which passes a seed on to the defining module."""
        source = self._imported_from(name)
        if source is not None:
            return source
        for statement in self.parsed.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                        and small.targets[0].target.value == name and isinstance(small.value, cst.Attribute):
                    return self._imported(small.value)
        return None

    def _apply_method_seed(self, seed: TraceSeed) -> None:
        """A seed `Module.step` (another module calls `step` on a parameter declared `Module`):
        the method Python finds on the class here (its own or a base's of this module) and the
        overrides in its subclasses here run traced; a class imported here passes it on."""
        assert self.site is not None
        class_name, method_name = seed.name.split(".", 1)
        classes = self._module_classes
        declared = classes.get(class_name)
        if declared is None:
            source = self._reexported(class_name)
            if source is not None:
                module, name = source
                self.links.external.append(ExternalTrace(
                    module, f"{name}.{method_name}", seed.reason, seed.transformed, seed.static_names, seed.static_nums))
            return
        found: list[cst.FunctionDef] = []
        for cls in _mro(declared, classes):
            method = _method(cls, method_name)
            if method is not None:
                found.append(method)
                break
        found.extend(
            method for cls in classes.values()
            if cls is not declared and declared in _mro(cls, classes)
            and (method := _method(cls, method_name)) is not None and method not in found
        )
        for method in found:
            if method not in self.traced:
                self._seed(method, seed.reason, transformed=False)
        # Called from outside on any instance of the class: subclasses in other modules that
        # override the method run it traced too (a hook, as for `jax.jit(self.step)`).
        if (declared, method_name) not in self._wrapped_self:
            self._wrapped_self.append((declared, method_name))

    def _external(
        self,
        expr: cst.BaseExpression,
        text: str,
        node: cst.CSTNode,
        transformed: bool = False,
        static_names: set[str] | frozenset[str] = frozenset(),
        static_nums: set[int] | frozenset[int] = frozenset(),
    ) -> None:
        """Record `expr` when it names a function imported from a project module."""
        target = self._imported(expr)
        if target is None:
            return
        line = self.parsed.call_line(node) if isinstance(node, cst.Call) else self.parsed.position(node).start.line
        reason = f"{text} on line {line} of {self.site.shown or self.parsed.filename}"
        self.links.external.append(
            ExternalTrace(target[0], target[1], reason, transformed, frozenset(static_names), frozenset(static_nums))
        )

    def _none_placeholder(self, node: cst.CSTNode | None) -> bool:
        """`MultiAgentEnv = None` (the `else` of `if TYPE_CHECKING:`): a placeholder that names no
        class or function, beside the import that does."""
        assign = self.parsed.parent(node) if isinstance(node, cst.Name) else None
        if isinstance(assign, cst.AssignTarget):
            assign = self.parsed.parent(assign)
        return isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Name) and assign.value.value == "None"

    def _imported(self, expr: cst.BaseExpression) -> tuple[str, str] | None:
        """(module, name) for `step` / `layers.step` bound by an import of a project module."""
        if self.site is None:
            return None
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or not self.parsed.may_import_from(root.value, self.site.roots):
            return None
        bindings = self._bindings(root) or []
        assignments = [a for a in bindings if not self._none_placeholder(getattr(a, "node", None))]
        if not assignments or not all(isinstance(getattr(a, "node", None), (cst.Import, cst.ImportFrom)) for a in assignments):
            return None
        qualified = self._qname(expr)
        if qualified is None and len(assignments) < len(bindings) and isinstance(expr, (cst.Name, cst.Attribute)):
            # The placeholder's own name (`MultiAgentEnv`, local to this module) aside, what the import names.
            imported = self.parsed.qualified_names(expr) - {self.parsed.code(expr)}
            qualified = next(iter(imported)) if len(imported) == 1 else None
        absolute = self.site.absolute(qualified) if qualified else None
        if absolute is None or "." not in absolute:
            return None
        module, name = absolute.rsplit(".", 1)
        return module, name

    def _module_function(self, name: str) -> cst.FunctionDef | None:
        found = [s for s in self.parsed.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
        return found[-1] if found else None

    def _imported_from(self, name: str) -> tuple[str, str] | None:
        """(module, name) a module-level `from ... import` binds `name` to, resolved in the project."""
        assert self.site is not None
        for statement in self.parsed.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(bound, cst.Name) and bound.value == name and isinstance(alias.name, cst.Name):
                        dots = "." * len(small.relative)
                        module = self.parsed.code(small.module) if small.module is not None else ""
                        qualified = f"{dots}{module}.{alias.name.value}" if module else f"{dots}{alias.name.value}"
                        absolute = self.site.absolute(qualified)
                        if absolute is not None and "." in absolute:
                            module, imported = absolute.rsplit(".", 1)
                            return module, imported
        return None

    def _host_callbacks(self, func: cst.FunctionDef) -> set[str]:
        """Names of functions `func` hands to host callbacks: they run on NumPy values, untraced."""
        names: set[str] = set()
        for node in walk(func):
            if type(node) is cst.Call and self._qname_in(node.func, HOST_CALLBACKS):
                if node.args and isinstance(node.args[0].value, cst.Name):
                    names.add(node.args[0].value.value)
        return names

    def _wrapped_method(self, call: cst.Call) -> tuple[cst.FunctionDef, _Transform] | None:
        """`jax.vmap(self.run)`, `jax.value_and_grad(self.loss)`: the method, with static positions
        shifted by one for `self`."""
        wrapped = self.wrapped_target(call)
        if wrapped is None or not isinstance(wrapped[0], cst.Attribute):
            return None
        caller = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if caller is None:
            return None
        method = self.resolve_method(wrapped[0], caller)
        if method is None:
            return None
        transform = wrapped[1]
        return method, _Transform(
            transform.name, set(transform.static_names), {n + 1 if n >= 0 else n for n in transform.static_nums} | {0},
            {n + 1 if n >= 0 else n for n in transform.passed},
        )

    def _collect_hooks(self) -> bool:
        """Record the methods each traced method calls on `self`; whether any are new."""
        changed = False
        for cls, name in self._wrapped_self:
            known = self._hooks.setdefault(cls, set())
            if name not in known:
                known.add(name)  # `jax.jit(self.step)`: traced whoever calls it (no caller to override)
                changed = True
        for func in list(self.traced):
            # A method, or a function nested in one (`def body(...): self.step(...)` handed to
            # `lax.scan` in `rollout`): its calls on the method's `self` run on the instance.
            found_method = method_and_class(self.parsed, func)
            if found_method is None:
                continue
            method, cls = found_method
            receiver = receiver_name(method) if not any(
                isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
                for d in method.decorators
            ) else None
            if receiver is None:
                continue
            found = self.framework_of(cls)
            if found is not None and not found[0].entries.startswith(HOOKS):
                continue  # a framework module: its entries are known
            names = {
                f"{node.func.attr.value}{CALLED_FROM}{method.name.value}"
                for node in descendants(func)
                if isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.value.value == receiver
            }
            known = self._hooks.setdefault(cls, set())
            if not names <= known:
                known |= names
                changed = True
        return changed

    def _seed_overrides(self, classes: list[cst.ClassDef]) -> None:
        """Trace each subclass's override of a method its base's traced methods call on `self`."""
        for cls in classes:
            found = self.framework_of(cls)
            if found is None or not found[0].entries.startswith(HOOKS):
                continue
            for method, _ in self._module_entries(cls, found[0]):
                self._seed(method, f"method `{method.name.value}` of `{cls.name.value}`, a {found[0].label}", transformed=False)

    def is_module_class(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` names a Flax/Haiku/Equinox (or configured) module class, defined here or
        in a checked project module."""
        if self._qname(expr) in self.bases:
            return True
        # A class known only by its hooks (a base whose traced methods call `self.step`, an
        # environment) is no layer: building one per step is not a stack of modules.
        local = self.resolve_class(expr)
        if local is not None:
            found = self.framework_of(local)
            return found is not None and not found[0].entries.startswith(HOOKS)
        imported = self._imported(expr)
        if imported is None:
            return False
        qualified = ".".join(imported)
        if qualified in self._site_classes:
            return not self._site_classes[qualified].entries.startswith(HOOKS)
        # A class of another project module (`layers.ResnetBlock`, built in a loop): ask the
        # project pass for it; the file is analysed again once that module's classes are known.
        self.links.wanted.add(qualified)
        return False

    def resolve_method(self, attr: cst.Attribute, caller: cst.FunctionDef) -> cst.FunctionDef | None:
        """`self.method(...)` inside a class: that class's method."""
        if not (isinstance(attr.value, cst.Name) and attr.value.value == "self"):
            return None
        cls = next((a for a in self.parsed.ancestors(caller) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        for klass in _mro(cls, self._module_classes):  # as Python looks it up: the class, then its bases
            method = _method(klass, attr.attr.value)
            if method is not None:
                return method
        return None

    def _property_functions(self, prop: cst.FunctionDef, call: cst.Call, outer: cst.FunctionDef) -> list[cst.FunctionDef]:
        """`self._loop(...)` where `_loop` is a property returning a function (diffrax's lazily
        imported `loop`): Python calls what the property returns. This module's functions are
        returned; one imported from a project module (at module level or inside the property)
        goes to `links` as traced."""
        found: list[cst.FunctionDef] = []
        for node in walk(prop, lambda n: n is prop or type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if type(node) is not cst.Return or node.value is None:
                continue
            function = self.resolve_function(node.value)
            if function is not None:
                found.append(function)
            else:
                self._external(node.value, f"returned by property `{prop.name.value}`, called as "
                               f"`{shorten(self.parsed.code(call.func), 40)}` from traced function `{outer.name.value}`", call)
        return found




# Calls that make a function a NumPyro model, which inference always traces.
MODEL_PRIMITIVES: frozenset[str] = frozenset(
    {"numpyro.sample", "numpyro.primitives.sample", "numpyro.factor", "numpyro.primitives.factor"}
)

# Keywords transforms take their function by (`jax.grad(fun=f)`, `jax.vmap(fun=f)`).
FUNCTION_KEYWORDS: frozenset[str] = frozenset({"fun", "f", "fn", "func"})

# `_Framework.entries` of a class whose base's traced methods call methods on `self`: the
# names that follow, comma-separated, run traced in a subclass that overrides them.
# Annotations of Python scalars: under `eqx.filter_jit` (which traces array leaves only) a
# parameter declared one is the Python value the caller passes, static.
PYTHON_SCALARS = frozenset({"int", "float", "bool", "str"})


def _python_scalar_parameters(func: cst.FunctionDef) -> set[str]:
    """Parameters annotated `int`, `float`, `bool` or `str` (alone, not in a union)."""
    return {
        p.name.value for p in parameters(func)
        if p.annotation is not None and isinstance(p.annotation.annotation, cst.Name)
        and p.annotation.annotation.value in PYTHON_SCALARS
    }


def is_generator(func: cst.FunctionDef) -> bool:
    """A function whose own body yields: calling it returns a generator, so it is never a
    framework's entry (a transform or `apply` cannot return one); its body runs where the
    generator is iterated, traced when that is in traced code."""
    return any(isinstance(n, cst.Yield) for n in walk(func.body, lambda n: type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda)))


HOOKS = "hooks:"
# `hooks:step@run+update,reset`: `step` is called on `self` by the traced methods `run` and
# `update`; `reset` is traced whoever calls it (`jax.jit(self.reset)`).
CALLED_FROM, CALLERS_SEP = "@", "+"


def _environment_framework(name: str, label: str, hooks: str) -> _Framework:
    methods = ", ".join(f"`{m}`" for m in hooks.split(","))
    return _Framework(
        f"subclass of the {label} `{name.rsplit('.', 1)[-1]}`, whose {methods} run under training loops' traces",
        HOOKS + hooks,
    )


# `ENVIRONMENT_BASES` as framework bases, built once for every finder.
ENVIRONMENT_FRAMEWORKS: dict[str, _Framework] = {
    name: _environment_framework(name, label, hooks) for name, (label, hooks) in ENVIRONMENT_BASES.items()
}


def _parse_hooks(entries: str) -> dict[str, frozenset[str] | None]:
    """Each hook of a `hooks:` entry with the traced methods that call it (None: any caller)."""
    found: dict[str, frozenset[str] | None] = {}
    for item in entries[len(HOOKS):].split(","):
        if not item:
            continue
        name, _, callers = item.partition(CALLED_FROM)
        before = found.get(name, frozenset())
        found[name] = None if before is None or not callers else before | frozenset(callers.split(CALLERS_SEP))
    return found


def _encode_hooks(hooks: dict[str, frozenset[str] | None]) -> str:
    items = (name if callers is None else f"{name}{CALLED_FROM}{CALLERS_SEP.join(sorted(callers))}"
             for name, callers in hooks.items())
    return HOOKS + ",".join(sorted(items))


def _hook_framework(base: str, names: set[str]) -> _Framework:
    return _Framework(f"subclass of `{base}`, whose traced methods call it on `self`", _encode_hooks(_parse_hooks(HOOKS + ",".join(names))))


def _merge_hooks(framework: _Framework, names: set[str]) -> _Framework:
    return replace(framework, entries=_encode_hooks(_parse_hooks(framework.entries + "," + ",".join(names))))


def _live_hooks(framework: _Framework, cls: cst.ClassDef) -> _Framework | None:
    """The hooks that still run traced on instances of `cls`. A base's traced `run` calls
    `self.step`; a subclass that defines its own `run` replaces it, so on its instances the
    traced `run` never runs and its `step` is not reached through it (netket's NumPy sampler
    overrides both the jitted `_sample_chain` and the `_sample_next` it calls), unless the
    override calls the base's (`super().run(...)`). None when no hook is left."""
    kept: dict[str, frozenset[str] | None] = {}
    for name, callers in _parse_hooks(framework.entries).items():
        if callers is None:
            kept[name] = None
            continue
        left = frozenset(m for m in callers if (own := _method(cls, m)) is None or _calls_base_method(own, cls))
        if left:
            kept[name] = left
    return replace(framework, entries=_encode_hooks(kept)) if kept else None


def _calls_base_method(method: cst.FunctionDef, cls: cst.ClassDef) -> bool:
    """`super().run(...)`, `super(Cls, self).run(...)`, `Base.run(self, ...)`,
    `base.Algorithm.run(self, ...)`, `Grandparent.run(self, ...)` in `run`: any `run` reached
    other than through `self` may be an ancestor's (generous: dropping a hook wrongly loses a
    report)."""
    name = method.name.value
    for node in descendants(method):
        if type(node) is cst.Attribute and node.attr.value == name:
            value = node.value
            if isinstance(value, cst.Name) and value.value in ("self", "cls"):
                continue
            if isinstance(value, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)):
                return True
    return False


def find_traced_functions(
    parsed: ParsedModule,
    extra_decorators: tuple[str, ...] = (),
    extra_base_classes: tuple[str, ...] = (),
    site: ModuleSite | None = None,
) -> dict[cst.FunctionDef, TracedFunction]:
    return TracedFinder(parsed, extra_decorators, extra_base_classes, site).find()

STR_BUILTINS: frozenset[str] = frozenset({"builtins.str", "builtins.repr"})
# Qualified names of every `_Taker` (`ParsedModule.may_be_named` screens calls with them).
TAKER_NAMES: frozenset[str] = frozenset(FUNCTION_TAKERS)
# Qualified names that can start a trace in a module: without an expression that may have
# one (and without configured decorators, base classes or seeds from other modules), no
# function of the module is traced (`prefilter.scan` leaves such modules out).
ENTRY_NAMES: frozenset[str] = (
    TRACING_TRANSFORMS | TAKER_NAMES | LIFTED_TRANSFORMS | MODEL_PRIMITIVES | frozenset(MODULE_BASES) | frozenset(ENVIRONMENT_BASES)
    | CUSTOM_DERIVATIVES | COMPACT | CHEX_VARIANTS | BACKEND_ENTRIES
)


def _runs_bound(name: str, decorators: list[str | None]) -> bool:
    """A module method that runs on the module's variables: not a constructor, dunder, static
    method, class method or property."""
    if name in CONSTRUCTORS or (name.startswith("__") and name.endswith("__")):
        return False
    return not any(d in ("builtins.staticmethod", "builtins.classmethod", "builtins.property") for d in decorators)


def _is_property(func: cst.FunctionDef, parsed: ParsedModule) -> bool:
    """Decorated `@property` (or `functools.cached_property`): reading the attribute runs it."""
    return any(
        parsed.qualified_name(d.decorator) in ("builtins.property", "functools.cached_property")
        for d in func.decorators if isinstance(d.decorator, (cst.Name, cst.Attribute))
    )


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    return next((m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == name), None)


def _mro(cls: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> list[cst.ClassDef]:
    """`cls` and its bases among `classes`, nearest first (as Python's order has them for a
    hierarchy without diamonds)."""
    order: list[cst.ClassDef] = []
    pending = [cls]
    while pending:
        current = pending.pop(0)
        if any(current is c for c in order):
            continue
        order.append(current)
        for base in current.bases:
            value = base.value.value if isinstance(base.value, cst.Subscript) else base.value
            if isinstance(value, cst.Name) and value.value in classes:
                pending.append(classes[value.value])
    return order

def _bound_by_partial(func: cst.FunctionDef, given: list[cst.Arg], first: int = 0) -> set[str]:
    """The parameters `partial(func, *given)` binds: one per positional argument, after the
    `first` the call itself binds (a bound method's `self`), and every keyword."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    positional = [a for a in given if a.keyword is None]
    return set(params[: first + len(positional)]) | {a.keyword.value for a in given if a.keyword is not None}


def _returned_by(factory: cst.FunctionDef, position: int | None = None) -> list[cst.FunctionDef]:
    """The functions `factory` defines in its own body and returns by name: `return loss`, or
    with `position`, the name at that position of a returned tuple (`return p, b, s`)."""
    inner = {
        s.name.value: s for s in factory.body.body if isinstance(s, cst.FunctionDef)
    } if isinstance(factory.body, cst.IndentedBlock) else {}
    found: list[cst.FunctionDef] = []
    for node in descendants(factory):
        if not isinstance(node, cst.Return) or node.value is None:
            continue
        value = node.value
        if position is not None:
            items = value.elements if isinstance(value, (cst.Tuple, cst.List)) else ()
            plain = [e for e in items if not isinstance(e, cst.StarredElement)]
            value = items[position].value if len(plain) == len(items) and position < len(items) else None
        if isinstance(value, cst.Name) and value.value in inner and inner[value.value] not in found:
            found.append(inner[value.value])
    return found


# A seed's name suffix: trace what the named factory returns, not the factory itself; a
# position after it (`make_pair()1`) names the function at that position of a returned tuple.
RETURNED = "()"


# Heads of a union annotation, as written (`Union[A, B]`, `typing.Optional[A]`): the text, as a
# string annotation's names are not the module's and have no qualified name.
UNION_HEADS = frozenset({"Union", "Optional"})


def annotation_members(
    parsed: ParsedModule, annotation: cst.BaseExpression, strings: bool = True, depth: int = 0
) -> list[cst.Name | cst.Attribute]:
    """The names a parameter annotation declares it may be: `A` itself, each member of `A | B`,
    `Union[A, B]` and `Optional[A]` (`None` left out), and with `strings` the same written as a
    string (`'A'`; those names are parsed apart from the module, so only their text can be
    looked up). What Python may bind there is an instance of any of them."""
    if depth > 4:
        return []
    if isinstance(annotation, cst.SimpleString):
        if not strings:
            return []
        try:
            inner = cst.parse_expression(str(annotation.evaluated_value))
        except (cst.ParserSyntaxError, TypeError):
            return []
        return annotation_members(parsed, inner, False, depth + 1)
    if isinstance(annotation, cst.Name) and annotation.value == "None":
        return []
    if isinstance(annotation, (cst.Name, cst.Attribute)):
        return [annotation]
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return annotation_members(parsed, annotation.left, strings, depth + 1) + annotation_members(parsed, annotation.right, strings, depth + 1)
    if isinstance(annotation, cst.Subscript) and isinstance(annotation.value, (cst.Name, cst.Attribute)) \
            and parsed.code(annotation.value).rsplit(".", 1)[-1] in UNION_HEADS:
        return [m for e in annotation.slice if isinstance(e.slice, cst.Index)
                for m in annotation_members(parsed, e.slice.value, strings, depth + 1)]
    return []
