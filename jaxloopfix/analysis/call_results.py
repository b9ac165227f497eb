"""What a call returns at trace time, from what it is given: the tables `TracedValues` decides calls by.

The rule (see `TracedValues.call_result`): a call that receives a traced argument returns a
traced value, whatever it calls (a JAX function, `optax.softmax_cross_entropy`, the project's
own helper, a transformed function `jax.grad(f)(x)`, a flax module `model.apply(params, x)`):
array code maps tracers to tracers, and a library cannot turn a tracer into a Python value
without concretizing it, which raises at that call. The exceptions are the calls known to
return something else whatever they are given, listed here:

- Python values: shapes, dtypes, tree structures, abstract evaluation (`jax.eval_shape`),
  host libraries (`numpy`, `math`: given a tracer they raise at the call itself), assertions
  and logging that return `None`;
- functions, not values: transforms and partial application (`jax.jit(f)`, `jax.grad(f)`,
  `functools.partial(f, x)`); calling what they return is a call like any other;
- Python containers of traced leaves (`jax.tree_util.tree_leaves`): indexing them gives tracers,
  but `if leaves:` is a Python truth test on a list.

A helper defined in the same module is not guessed at: its own returns are analysed with the
parameters that receive traced arguments traced (`TracedValues.helper_result`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

# Kinds of call results.
TRACED = "traced"  # a tracer (or a pytree of them whose truth value is not a Python one)
CONTAINER = "container"  # a Python list/tuple/dict of tracers: traced items, Python truth value
PYTHON = "python"  # a Python value at trace time
FUNCTION = "function"  # a function: not a value until it is called

# Functions whose result is a Python value whatever their arguments.
PYTHON_RESULTS = frozenset(
    {
        "jax.tree_util.tree_structure", "jax.tree.structure", "jax.tree_util.treedef_is_leaf",
        "jax.tree_util.all_leaves", "jax.tree_util.keystr", "jax.eval_shape", "jax.ShapeDtypeStruct",
        "jax.typeof", "jax.core.get_aval", "jax.devices", "jax.local_devices", "jax.device_count",
        "jax.local_device_count", "jax.process_index", "jax.process_count", "jax.default_backend",
        "jax.dtypes.result_type", "jax.dtypes.canonicalize_dtype", "jax.dtypes.issubdtype",
        "jax.numpy.shape", "jax.numpy.ndim", "jax.numpy.size", "jax.numpy.result_type",
        "jax.numpy.dtype", "jax.numpy.iinfo", "jax.numpy.finfo", "jax.numpy.issubdtype",
        "jax.numpy.isdtype", "jax.numpy.can_cast", "jax.numpy.promote_types", "jax.numpy.broadcast_shapes",
        "dataclasses.fields", "dataclasses.is_dataclass", "typing.get_type_hints",
    }
)
# Module prefixes whose functions return Python values, `None`, or raise at the call on a tracer.
PYTHON_RESULT_PREFIXES = (
    "numpy.", "math.", "cmath.", "jax.debug.", "chex.assert", "logging.", "warnings.",
    "jax.dtypes.", "absl.logging.", "inspect.", "os.", "sys.", "time.", "string.", "re.", "json.",
)
# Functions that return functions (transforms, partial application, custom derivative wrappers).
FUNCTION_RESULTS = frozenset(
    {
        "jax.jit", "jax.pjit", "jax.experimental.pjit.pjit", "jax.grad", "jax.value_and_grad", "jax.vmap",
        "jax.pmap", "jax.jacfwd", "jax.jacrev", "jax.jacobian", "jax.hessian", "jax.checkpoint", "jax.remat",
        "jax.custom_jvp", "jax.custom_vjp", "jax.named_call", "jax.make_jaxpr", "jax.shard_map",
        "jax.experimental.shard_map.shard_map", "jax.xla_computation", "jax.tree_util.Partial", "jax.closure_convert",
        "functools.partial", "functools.wraps", "functools.lru_cache", "functools.cache",
        "equinox.filter_jit", "equinox.filter_grad", "equinox.filter_value_and_grad", "equinox.filter_vmap",
        "equinox.filter_pmap", "equinox.filter_checkpoint", "equinox.filter_custom_jvp", "equinox.filter_custom_vjp",
        "flax.linen.jit", "flax.linen.vmap", "flax.linen.scan", "flax.linen.remat", "flax.linen.checkpoint",
        "flax.linen.grad", "flax.linen.value_and_grad", "flax.linen.map_variables", "flax.nnx.jit",
        "flax.nnx.vmap", "flax.nnx.grad", "flax.nnx.value_and_grad", "flax.nnx.scan", "flax.nnx.remat",
        "haiku.transform", "haiku.transform_with_state", "haiku.vmap", "haiku.jit", "haiku.remat",
    }
)
# Calls of functions made by these return Python values (`jax.make_jaxpr(f)(x)` is a jaxpr).
PYTHON_FACTORIES = frozenset({"jax.make_jaxpr", "jax.xla_computation"})
# Functions returning a Python container of the argument's leaves.
CONTAINER_RESULTS = frozenset(
    {
        "jax.tree_util.tree_leaves", "jax.tree.leaves", "jax.tree_util.tree_leaves_with_path",
        "jax.tree.leaves_with_path", "jax.tree_util.tree_flatten", "jax.tree.flatten",
        "jax.tree_util.tree_flatten_with_path", "jax.tree.flatten_with_path",
    }
)
# Functions returning a tuple whose items have known kinds, by position (`leaves, treedef = ...`).
TUPLE_RESULTS: dict[str, tuple[str, ...]] = {
    "jax.tree_util.tree_flatten": (CONTAINER, PYTHON),
    "jax.tree.flatten": (CONTAINER, PYTHON),
    "jax.tree_util.tree_flatten_with_path": (CONTAINER, PYTHON),
    "jax.tree.flatten_with_path": (CONTAINER, PYTHON),
    "jax.vjp": (TRACED, FUNCTION),
    "jax.linearize": (TRACED, FUNCTION),
}
# (Helpers of the module get theirs from their `return a, b` statements: `TracedValues.helper_result`.)
# Functions mapping a function over the leaves of trees: their result is traced when the
# function returns a traced value given traced leaves (`tree_map(lambda x: x.shape, tree)` is not).
TREE_MAPS = frozenset(
    {"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_util.tree_map_with_path", "jax.tree.map_with_path"}
)
# Names of predicates: outside JAX's array modules (whose `isnan`/`isfinite` the module tables
# cover) a function called `is_sde(terms)`, `has_aux(fn)`, `is_tuple_of_ints(shape)` answers a
# question about structure or types with a Python bool. Only for calls the module cannot analyse.
PREDICATE_PREFIXES = ("is_", "has_", "are_", "_is_", "_has_")
# Builtins whose result is a Python container of their arguments' items.
CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "zip", "enumerate"})
# Methods whose result is a Python value whatever the receiver (`str.format`, `", ".join(...)`).
STRING_RECEIVERS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


@dataclass(frozen=True)
class CallResult:
    """What one call returns at trace time and the evidence for it.

    `kind` is one of TRACED, CONTAINER, PYTHON, FUNCTION, or None (nothing traced reaches it);
    `via` says which rule decided ('module': a JAX array function, 'method': a method of a
    traced value, 'builtin', 'helper': a function of this module, 'call': any other call);
    `evidence` is the traced argument (or receiver) that makes the result traced."""

    kind: str | None
    via: str = ""
    evidence: cst.BaseExpression | None = None
    # For a tuple of known length, the kind of each item (`leaves, treedef = tree_flatten(x)`).
    positions: tuple[str, ...] | None = None

    @property
    def traced(self) -> bool:
        return self.kind in (TRACED, CONTAINER)


NOT_TRACED = CallResult(None)
PYTHON_VALUE = CallResult(PYTHON)
A_FUNCTION = CallResult(FUNCTION)


def predicate(func: cst.BaseExpression) -> bool:
    """Whether `func` is named like a predicate (`is_sde`, `utils.has_aux`)."""
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name.startswith(PREDICATE_PREFIXES)


def python_result(qname: str) -> bool:
    """Whether the function named `qname` returns a Python value whatever it is given."""
    return qname in PYTHON_RESULTS or qname.startswith(PYTHON_RESULT_PREFIXES)
