"""What each value of a traced function is at trace time: a small lattice of kinds.

A loop unrolls array work when it steps over array rows or carries arrays; it
does not when it steps over Python values (a static argument's tuple, a shape's
dimensions) or only computes Python ints and strings. Which it is follows from
what the values *are*, not from how the code spells them, so every expression
gets a kind:

- `static`: a Python value at trace time (literals, `len`, `.shape[i]`, `.ndim`,
  static arguments and fields, module constants, `int()`, arithmetic of these);
- `shape`: a shape tuple (`x.shape`, `x.shape[1:]`), a container of statics;
- `container`: a Python list, tuple or dict, with the kind of its items;
- `array`: a JAX array or tracer (results of `jnp`/`lax`/`jax.random`, arithmetic
  with an array, annotated `jax.Array` parameters);
- `unknown`: anything else (unannotated parameters, results of unknown calls).

Kinds flow through assignments, augmented assignments, unpacking, loop targets
and comprehensions; the analysis is flow-insensitive (a name's kind joins all
its bindings) and reaches a fixed point. `unknown` absorbs every disagreement:
a decision that needs `static` needs positive evidence for every binding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import libcst as cst

from jaxloopfix.analysis.array_fields import ArrayFields, array_fields
from jaxloopfix.analysis.host_libraries import computes_on_host
from jaxloopfix.analysis.names import assigned_names, parameters

# Methods only arrays have (no list, dict, tuple or module has them): a traced argument they are
# called on is an array, not a pytree of arrays.
ARRAY_ONLY_METHODS: frozenset[str] = frozenset({
    "reshape", "astype", "transpose", "squeeze", "flatten", "ravel", "cumsum", "cumprod", "swapaxes",
    "argmax", "argmin", "conj", "clip", "mean", "std", "var",
})
from jaxloopfix.analysis.source import ParsedModule, shorten
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.tuple_results import returns_tuple
from jaxloopfix.analysis.traced_values import STATIC_ATTRIBUTES, declared_fields, static_fields
from jaxloopfix.analysis.traced_values import STATIC_RESULTS as TRACED_STATIC_RESULTS
from jaxloopfix.analysis.walk import walk

STATIC, SHAPE, CONTAINER, ARRAY, UNKNOWN = "static", "shape", "container", "array", "unknown"
# An argument a transform traces: an array, or a pytree (list, tuple, dict) of arrays.
TRACED = "traced"


@dataclass(frozen=True)
class Kind:
    """A value's kind; `item` is the kind of a container's items, `why` the evidence in words."""

    name: str
    item: Kind | None = None
    why: str = ""
    # A host value made by a call that computes on the host (`np.zeros(...)`,
    # `scipy.spatial.cKDTree(points)`): its methods compute on the host too.
    host: bool = False
    # Text (`"w_" + name`): what is added to it, or formatted into it, becomes text too.
    text: bool = False

    @property
    def python(self) -> bool:
        """A Python value at trace time, all the way down (statics, shapes, containers of them)."""
        if self.name in (STATIC, SHAPE):
            return True
        return self.name == CONTAINER and self.item is not None and self.item.python

    def items(self) -> Kind:
        """The kind of what iterating a value of this kind yields."""
        if self.name == SHAPE:
            return Kind(STATIC, why=f"a dimension of {self.why or 'a shape'}")
        if self.name == CONTAINER:
            return self.item or Kind(UNKNOWN)
        if self.name == STATIC:
            return Kind(STATIC, why=f"an item of {self.why or 'a static value'}", host=self.host)
        if self.name == ARRAY:
            return Kind(ARRAY, why=f"a row of {self.why or 'an array'}")
        if self.name == TRACED:
            return Kind(TRACED, why=f"a row or item of {self.why or 'a traced argument'}")
        return Kind(UNKNOWN)


UNKNOWN_KIND = Kind(UNKNOWN)


def join(a: Kind | None, b: Kind | None) -> Kind | None:
    """The kind of a name bound to values of kinds `a` and `b` (None: not yet known)."""
    if a is None:
        return b
    if b is None:
        return a
    if a.name == b.name:
        if a.name == CONTAINER:
            return Kind(CONTAINER, join(a.item, b.item) or UNKNOWN_KIND, a.why or b.why)
        return a if (a.host, a.text) == (b.host, b.text) else replace(a, host=a.host and b.host, text=a.text and b.text)
    if {a.name, b.name} == {STATIC, SHAPE}:
        return Kind(STATIC, why=a.why or b.why)
    if {a.name, b.name} == {SHAPE, CONTAINER}:
        # `dims = x.shape`, or `dims = sizes` (a declared `Sequence[int]`): a Python container of dimensions.
        container = a if a.name == CONTAINER else b
        return Kind(CONTAINER, join(Kind(STATIC, why="a dimension of a shape"), container.item) or UNKNOWN_KIND, container.why)
    if {a.name, b.name} == {STATIC, ARRAY}:
        return a if a.name == ARRAY else b  # a Python number that becomes an array (`total = 0.0`, then `total + x`)
    return UNKNOWN_KIND


def combine(a: Kind, b: Kind, operator: cst.BaseBinaryOp | None = None) -> Kind:
    """The kind of `a op b`: an array if either is one, static if both are Python values (a
    traced argument may be a list, and `list * 2` repeats it: unknown). Text added to anything,
    or formatted with `%`, is text: an array added to text raises, so no array comes of it."""
    if isinstance(operator, cst.Add) and (a.text or b.text) or isinstance(operator, cst.Modulo) and a.text:
        return Kind(STATIC, why=a.why if a.text else b.why, text=True)
    if isinstance(operator, cst.Multiply) and {a.name, b.name} == {CONTAINER, STATIC} and not (a.text or b.text):
        # `[2 * k + 1] * x.ndim`: a Python list repeated a Python number of times, same items.
        container = a if a.name == CONTAINER else b
        return Kind(CONTAINER, container.item, container.why)
    if isinstance(operator, cst.Add) and a.name == b.name == CONTAINER:
        return Kind(CONTAINER, join(a.item, b.item) or UNKNOWN_KIND, a.why or b.why)  # `hidden + [out]`
    if ARRAY in (a.name, b.name):
        return Kind(ARRAY, why=a.why if a.name == ARRAY else b.why)
    if a.python and b.python:
        if a.name == SHAPE or b.name == SHAPE:
            return Kind(SHAPE, why=a.why or b.why)  # `x.shape[:1] + (n,)`
        # `table.astype(int) - 1`: a NumPy array with a Python number is a NumPy array still.
        return Kind(STATIC, why=(a.why if a.host else b.why) if a.host or b.host else a.why or b.why, host=a.host or b.host)
    return UNKNOWN_KIND


# Builtins whose result is a Python value whatever they are given (or that raise under a trace).
STATIC_BUILTINS = frozenset({"len", "int", "float", "bool", "str", "repr", "round", "isinstance", "hasattr", "callable",
                             "type", "id", "hash", "format", "ord", "chr"})
# `itertools` functions whose items are tuples combining the items of their arguments.
COMBINATIONS = frozenset({"itertools.product", "itertools.permutations", "itertools.combinations",
                          "itertools.combinations_with_replacement"})
# Conversions to Python numbers: Python values only of Python values (of a tracer they raise).
CONVERSIONS = frozenset({"int", "float", "bool", "complex", "round"})
# Builtins that keep their arguments' kind (`max(a, b)`, `abs(n)`).
SAME_KIND_BUILTINS = frozenset({"max", "min", "abs", "sum", "divmod", "pow"})
# Builtins that build a container of their (first) argument's items.
CONTAINER_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset"})
# Array libraries whose calls return arrays (or tracers under a trace).
ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.random.", "jax.scipy.", "jax.image.", "jax.ops.",
                 "jax.nn.initializers.")
# Transforms whose transformed function returns only arrays (a pytree of them, the leaves of a
# `has_aux` auxiliary output included): `grads = jax.grad(loss)(params)`, `loss, grads =
# nnx.value_and_grad(f)(model)`. Not `make_jaxpr`, `eval_shape`, `vjp`, `linearize` (jaxprs,
# shapes, functions) nor `eqx.filter_jit` / `nnx.jit`, which pass non-array outputs through.
# `tests/test_value_kinds.py` calls each and checks every leaf of the result is a `jax.Array`.
ARRAY_RESULT_TRANSFORMS = frozenset(
    {"jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.jacobian", "jax.hessian", "jax.jit",
     "jax.vmap", "jax.pmap", "jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint", "equinox.filter_grad",
     "equinox.filter_value_and_grad", "flax.nnx.grad", "flax.nnx.value_and_grad"}
)
# Functions of those modules that return Python values: `traced_values`' list (shapes, dtypes,
# predicates on dtypes), and `split_list`, which splits a Python list.
STATIC_RESULTS = TRACED_STATIC_RESULTS | {"split_list"}
# Modules whose functions of Python values are Python values (`math.ceil(n / 2)`, `np.prod(shape)`).
PYTHON_VALUE_MODULES = ("math.", "numpy.", "scipy.", "operator.", "itertools.", "functools.reduce")
# Annotations of Python values and of arrays.
STATIC_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "builtins.int", "builtins.float", "builtins.bool",
                                "builtins.str"})
ARRAY_ANNOTATIONS = ("jax.Array", "jax.numpy.ndarray", "jaxtyping.", "chex.Array", "jax.typing.ArrayLike")
# Annotations those prefixes take in that are not arrays: pytrees of arrays (`chex.ArrayTree` is a
# union of an array, iterables and mappings of ArrayTrees; `jaxtyping.PyTree[...]` any pytree) and a dtype.
PYTREE_ANNOTATIONS = frozenset({"chex.ArrayTree", "chex.ArrayDeviceTree", "chex.ArrayNumpyTree", "chex.ArrayDType",
                                "jaxtyping.PyTree", "jaxtyping.PyTreeDef"})
# Framework labels (`TracedFunction.module`) whose modules' declared fields are Python values
# under the trace: Flax linen modules (dataclasses of hyperparameters) and NNX modules (whose
# attributes that are not arrays stay static).
HYPERPARAMETER_MODULES = frozenset({"Flax module", "Flax NNX module"})
# Annotations of sequences whose item type is the annotation's (first) argument.
SEQUENCE_ANNOTATIONS = frozenset({"typing.Tuple", "typing.Sequence", "typing.List", "typing.Iterable",
                                  "builtins.tuple", "builtins.list", "collections.abc.Sequence"})


def python_annotation_kind(parsed: ParsedModule, annotation: cst.BaseExpression) -> Kind | None:
    """The kind a value of a Python type annotation has: `int`, `Optional[float]`, `str | None`
    are static; `Tuple[int, ...]`, `Sequence[int]` are containers of statics; anything else
    (arrays, modules, callables, unknown names) None."""
    def named(expr: cst.BaseExpression) -> str | None:
        return _annotation_name(parsed, expr)

    if isinstance(annotation, cst.Name) and annotation.value == "None":
        return Kind(STATIC)
    if named(annotation) in STATIC_ANNOTATIONS:
        return Kind(STATIC)
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        left, right = python_annotation_kind(parsed, annotation.left), python_annotation_kind(parsed, annotation.right)
        return left if left is not None and right is not None and left.name == right.name == STATIC else None
    if isinstance(annotation, cst.Subscript) and annotation.slice:
        arguments = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        head = named(annotation.value)
        if head == "typing.Optional" and len(arguments) == 1:
            return python_annotation_kind(parsed, arguments[0])
        if head in SEQUENCE_ANNOTATIONS and arguments:
            items = [a for a in arguments if not (isinstance(a, cst.Ellipsis))]
            kinds = [python_annotation_kind(parsed, a) for a in items]
            if kinds and all(k is not None and k.name == STATIC for k in kinds):
                return Kind(CONTAINER, Kind(STATIC, why="an item of a declared sequence"))
    return None


# Comparisons whose truth Python must take of a Python value (`is`, `in` are answered otherwise).
VALUE_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


# Parts of a test whose comparisons are not the test's own truth.
OPAQUE_IN_TESTS = (cst.Call, cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)


def _not_a_number(expr: cst.BaseExpression) -> bool:
    """`None`, a string or a container display: compared with one, `==` on a tracer falls back
    to identity and asks for no Python value."""
    return (isinstance(expr, cst.Name) and expr.value == "None") or isinstance(
        expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple, cst.Dict, cst.Set))


def _int_operands(expr: cst.BaseExpression) -> set[str]:
    """The names `expr` is made of through `+`, `-`, `*`, `//` (`lmax + 1`, `2 * n - 1`): each
    must be a Python int for `range` to take the result (a tracer in any makes a tracer)."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
        return _int_operands(expr.left) | _int_operands(expr.right)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _int_operands(expr.expression)
    return set()


def _annotation_name(parsed: ParsedModule, expr: cst.BaseExpression) -> str | None:
    """The qualified name an annotation's head names (`typing.Sequence`), else None."""
    return parsed.qualified_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None


def declared_sequence(parsed: ParsedModule, annotation: cst.BaseExpression) -> bool:
    """`Sequence[int]`, `list[jax.Array]`, `Optional[Tuple[int, ...]]`, `tuple[int, int] | None`:
    an annotation of a list or tuple (or nothing)."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [side for side in sides if not (isinstance(side, cst.Name) and side.value == "None")]
        return len(kept) == 1 and declared_sequence(parsed, kept[0])
    if isinstance(annotation, cst.Subscript) and annotation.slice:
        head = _annotation_name(parsed, annotation.value)
        arguments = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        if head == "typing.Optional" and len(arguments) == 1:
            return declared_sequence(parsed, arguments[0])
        return head in SEQUENCE_ANNOTATIONS and head != "typing.Iterable"  # an array is iterable too
    return False


# String literals: text, whatever it is combined with.
TEXT = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _binary(operator: cst.BaseAugOp) -> cst.BaseBinaryOp | None:
    """`+=` as `+`, `%=` as `%`: what the augmented assignment combines with."""
    return {cst.AddAssign: cst.Add(), cst.ModuloAssign: cst.Modulo()}.get(type(operator))  # type: ignore[return-value]


ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
# Methods that add items to a list, set or dict.
ADDS = frozenset({"append", "insert", "extend", "add", "update", "appendleft"})
# Names that hold configuration by convention: their attributes are hyperparameters.
CONFIG_ROOTS = frozenset({"config", "cfg", "conf", "hparams", "hps", "hp", "args", "opts", "options", "settings"})


class ValueKinds:
    """Kinds of the names and expressions of one traced function (nested functions excluded)."""

    def __init__(self, parsed: ParsedModule, traced: TracedFunction, constants: dict[str, int] | None = None) -> None:
        self.parsed = parsed
        self.traced = traced
        self.func = traced.node
        self.constants = constants or {}
        self.static_fields = static_fields(parsed, self.func)
        self.env: dict[str, Kind] = {}
        self._solve()

    # -- names -----------------------------------------------------------------------------
    @cached_property
    def _parameters(self) -> dict[str, Kind]:
        kinds: dict[str, Kind] = {}
        for param in parameters(self.func):
            name = param.name.value
            if name in self.traced.static_params:
                kinds[name] = Kind(STATIC, why=f"`{name}`, a static argument")
            elif param.annotation is not None:
                kinds[name] = self._annotated(param.annotation.annotation, name)
            elif name in self.traced.passed_through:
                kinds[name] = UNKNOWN_KIND  # unmapped by `vmap`: whatever the caller passes
            elif self.traced.transformed and name not in ("self", "cls") and param.star not in ("*", "**"):
                # A transform turns every leaf of a non-static argument into a tracer; the
                # argument itself may still be a list or dict of them.
                kinds[name] = Kind(TRACED, why=f"`{name}`, an argument the transform traces")
            else:
                kinds[name] = UNKNOWN_KIND
            if kinds[name] is UNKNOWN_KIND and name in self._range_bounds:
                kinds[name] = Kind(STATIC, why=f"`{name}`, a bound of `range(...)`, which takes Python ints only")
            elif kinds[name] is UNKNOWN_KIND and name in self._compared_in_tests:
                kinds[name] = Kind(STATIC, why=f"`{name}`, compared in an `if` test, which needs a Python value")
        return kinds

    @cached_property
    def _compared_in_tests(self) -> set[str]:
        """Names compared (`==`, `<`, ...) as a whole operand in the test of an `if` or `while` of
        the function's own code (`if multi == 0: break`). Python takes the truth of the test, which
        raises on a tracer, so whenever the function runs under a trace the name holds a Python
        value there (JLF004 reports a traced test where one is shown). An identity or membership
        test (`is None`, `in`) does not ask so much: those names are left alone."""
        found: set[str] = set()
        for node in walk(self.func.body, lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))):
            if not isinstance(node, (cst.If, cst.While)):
                continue
            # The test's own comparisons: not those inside a call, lambda or comprehension in it
            # (`any(v == 0 for v in vs)` takes the truth of something else).
            for part in walk(node.test, lambda n: not isinstance(n, OPAQUE_IN_TESTS)):
                if not isinstance(part, cst.Comparison) or not all(
                        isinstance(c.operator, VALUE_COMPARISONS) for c in part.comparisons):
                    continue
                operands = (part.left, *(c.comparator for c in part.comparisons))
                if any(_not_a_number(o) for o in operands):
                    continue  # `w != None`, `s == "auto"`: a tracer answers by identity, no Python value needed
                found |= {o.value for o in operands if isinstance(o, cst.Name)}
        return found

    @cached_property
    def _range_bounds(self) -> set[str]:
        """Names passed as arguments of `range(...)` in the function's own code. A helper's
        parameter used so is a Python int whenever the helper runs at all (`range` raises on a
        tracer; JLF003 reports that where a caller passes one)."""
        found: set[str] = set()
        for node in walk(self.func.body, lambda n: not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef))):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range":
                if self.parsed.qualified_name(node.func) in ("builtins.range", None, "range"):
                    for arg in node.args:
                        if not arg.keyword:
                            found |= _int_operands(arg.value)  # `range(1, lmax + 1)`: `lmax` too
        return found

    def _annotated(self, annotation: cst.BaseExpression, name: str) -> Kind:
        target = annotation.value if isinstance(annotation, cst.Subscript) else annotation
        qname = self.parsed.qualified_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        text = qname or self.parsed.code(target)
        if self.traced.transformed and text in STATIC_ANNOTATIONS:
            # A traced function's `int` parameter is still a tracer unless marked static.
            return UNKNOWN_KIND
        if text in STATIC_ANNOTATIONS:
            return UNKNOWN_KIND  # a helper's `n: int` may be passed a tracer all the same
        if text.startswith(ARRAY_ANNOTATIONS) and text not in PYTREE_ANNOTATIONS:
            return Kind(ARRAY, why=f"`{name}`, annotated `{self.parsed.code(annotation)}`")
        if declared_sequence(self.parsed, annotation):
            # `sizes: Sequence[int]`, `layers: list[jax.Array]`: a transform traces the leaves, never
            # the list itself, so the argument stays a Python container (of tracers, or of whatever
            # a helper's caller passes).
            return Kind(CONTAINER, UNKNOWN_KIND, why=f"`{name}`, annotated `{shorten(self.parsed.code(annotation), 30)}`")
        return UNKNOWN_KIND

    def of_name(self, name: str) -> Kind:
        if name in self.env:
            return self.env[name]
        if name in self._parameters:
            return self._parameters[name]
        if name in self.constants or name in self._module_literals:
            return Kind(STATIC, why=f"`{name}`, a module constant") if name in self.constants else self._module_literals[name]
        if name in ("True", "False", "None"):
            return Kind(STATIC, why=f"`{name}`")
        if self._defined_function(name) is not None:
            return Kind(STATIC, why=f"the function `{name}`")  # a Python object at trace time, never an array
        return UNKNOWN_KIND

    def _defined_function(self, name: str) -> cst.FunctionDef | None:
        """The `def` that binds `name` where this function reads it: nested in it or in a function
        enclosing it, or at module level (None when an assignment may bind it too)."""
        known = self.__dict__.setdefault("_defined", {})
        if name not in known:
            known[name] = self._find_defined_function(name)
        return known[name]

    def _find_defined_function(self, name: str) -> cst.FunctionDef | None:
        scopes = [a for a in self.parsed.ancestors(self.func) if isinstance(a, cst.FunctionDef)]
        for scope in [self.func, *scopes]:
            body = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else []
            found = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name]
            if found:
                return found[0] if name not in assigned_names([s for s in body if not isinstance(s, cst.FunctionDef)]) else None
        module = self.parsed.module.body
        found = [s for s in module if isinstance(s, cst.FunctionDef) and s.name.value == name]
        return found[0] if found and name not in assigned_names([s for s in module if not isinstance(s, cst.FunctionDef)]) else None

    def _helper_result(self, func: cst.FunctionDef) -> Kind | None:
        """What a helper of this module returns, when every `return` gives an array (or traced
        leaves) or a tuple of them whatever its parameters are (`return jnp.stack(rows)`, `return
        nnx.value_and_grad(loss)(model, x)`), from the helper's own kinds; else None."""
        kept = self.parsed.kept("helper result kinds")
        if func in kept:
            return kept[func]
        kept[func] = None  # a helper reached again while its own kinds are worked out: unknown
        helper = ValueKinds(self.parsed, TracedFunction(func, "a helper"), self.constants)
        returns = [n.value for n in walk(func.body, lambda n: type(n) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef))
                   if isinstance(n, cst.Return)]
        kinds = [helper.of(value) if value is not None else None for value in returns]
        found: Kind | None = None
        if kinds and all(k is not None and (k.name in (ARRAY, TRACED) or k.name == CONTAINER and k.items().name in (ARRAY, TRACED))
                         for k in kinds):
            found = replace(kinds[0], why=f"what `{func.name.value}` returns: {kinds[0].why}")  # type: ignore[union-attr]
        kept[func] = found
        return found

    def _aliases_function_builders(self, name: str) -> bool:
        """`_vmap = broadcasting_vmap if broadcasted else vmap`: every assignment of the local
        `name` (either branch of a conditional) names a JAX transform or a function of the
        module that returns a function, so calling it builds a function, a Python object. Worked
        out once per name (the kinds are solved in passes over every call)."""
        known = self.__dict__.setdefault("_function_builders", {})
        if name not in known:
            known[name] = self._find_function_builders(name)
        return known[name]

    def _find_function_builders(self, name: str) -> bool:
        values: list[cst.BaseExpression] = []
        for node in walk(self.func.body, lambda n: type(n) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                if len(node.targets) != 1:
                    return False
                value = node.value
                values += [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Name) and node.target.value == name:
                return False
        if not values:
            return False
        for value in values:
            if not isinstance(value, (cst.Name, cst.Attribute)):
                return False
            if self.parsed.qualified_name(value) in ARRAY_RESULT_TRANSFORMS:
                continue
            defined = self._defined_function(value.value) if isinstance(value, cst.Name) else None
            if defined is None or not self._returns_functions(defined):
                return False
        return True

    def _returns_functions(self, func: cst.FunctionDef) -> bool:
        """`def diff(f): return lambda t: ...`: every `return` gives a lambda or a function defined
        inside it: calling it builds a function, a Python object."""
        inner = {s.name.value for s in (func.body.body if isinstance(func.body, cst.IndentedBlock) else [])
                 if isinstance(s, cst.FunctionDef)}
        returns = [n for n in walk(func.body, lambda n: type(n) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef))
                   if isinstance(n, cst.Return)]
        return bool(returns) and all(
            isinstance(r.value, cst.Lambda) or (isinstance(r.value, cst.Name) and r.value.value in inner) for r in returns
        )

    @cached_property
    def _module_literals(self) -> dict[str, Kind]:
        """Module-level names bound once to a literal container of Python values (`SIZES = (2, 3)`)."""
        kept = self.parsed.kept("module literal kinds")
        if "found" not in kept:
            counts: dict[str, int] = {}
            values: dict[str, cst.BaseExpression] = {}
            for statement in self.parsed.module.body:
                if not isinstance(statement, cst.SimpleStatementLine):
                    # `if CUDA: SIZES = (...)`: bound in a compound statement, so not one literal
                    # (as `loops.module_constants` counts them).
                    for name in assigned_names([statement]):
                        counts[name] = counts.get(name, 0) + 2
                    continue
                for node in statement.body:
                    if isinstance(node, cst.Assign):
                        for target in node.targets:
                            if isinstance(target.target, cst.Name):
                                counts[target.target.value] = counts.get(target.target.value, 0) + 1
                                values[target.target.value] = node.value
            found: dict[str, Kind] = {}
            for name, value in values.items():
                if counts[name] == 1 and isinstance(value, (cst.Tuple, cst.List)) and all(
                    isinstance(e.value, (cst.Integer, cst.Float, cst.SimpleString)) for e in value.elements
                ):
                    found[name] = Kind(CONTAINER, Kind(STATIC, why=f"an item of `{name}`"), why=f"`{name}`, a module constant")
            kept["found"] = found
        return kept["found"]

    # -- expressions -----------------------------------------------------------------------
    def of(self, expr: cst.BaseExpression) -> Kind:  # noqa: C901 - one case per expression type
        """The kind of `expr`, from the kinds of the names it reads."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                             cst.FormattedString)):
            code = self.parsed.code(expr)
            return Kind(STATIC, why=f"the literal `{code}`" if len(code) < 30 else "a literal", text=isinstance(expr, TEXT))
        if isinstance(expr, cst.Name):
            return self.of_name(expr.value)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr)
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, cst.BinaryOperation):
            kind = combine(self.of(expr.left), self.of(expr.right), expr.operator)
            if kind.name == ARRAY and len(code := self.parsed.code(expr)) < 40:
                return Kind(ARRAY, why=f"`{code}`")  # the operation itself, not where its first array came from
            return kind
        if isinstance(expr, cst.UnaryOperation):
            return self.of(expr.expression)
        if isinstance(expr, (cst.Comparison, cst.BooleanOperation)):
            parts = [expr.left] + [c.comparator for c in expr.comparisons] if isinstance(expr, cst.Comparison) else [
                expr.left, expr.right]
            kinds = [self.of(part) for part in parts]
            if isinstance(expr, cst.Comparison) and all(isinstance(c.operator, ORDERINGS) for c in expr.comparisons) \
                    and any(k.name in (ARRAY, TRACED) for k in kinds) and all(k.name in (ARRAY, TRACED) or k.python for k in kinds):
                # `pos >= t`: a list or dict cannot be ordered against a number, so it runs only on arrays.
                code = self.parsed.code(expr)
                return Kind(ARRAY, why=f"`{code}`" if len(code) < 40 else "a comparison of arrays")
            kind = kinds[0]
            for part in kinds[1:]:
                kind = combine(kind, part)
            return Kind(STATIC, why=kind.why) if kind.python else kind
        if isinstance(expr, cst.IfExp):
            return join(self.of(expr.body), self.of(expr.orelse)) or UNKNOWN_KIND
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            item: Kind | None = None
            for element in expr.elements:
                value = element.value
                item = join(item, self.of(value).items() if isinstance(element, cst.StarredElement) else self.of(value))
            code = self.parsed.code(expr)
            return Kind(CONTAINER, item, why=f"`{code}`" if len(code) < 30 else "a Python container")
        if isinstance(expr, cst.Dict):
            item = None
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    item = join(item, self.of(element.value))
            return Kind(CONTAINER, item, why="a dict")
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return Kind(CONTAINER, self._comprehension_kind(expr, expr.elt), why="a comprehension")
        if isinstance(expr, cst.DictComp):
            return Kind(CONTAINER, self._comprehension_kind(expr, expr.value), why="a comprehension")
        return UNKNOWN_KIND

    def _attribute(self, expr: cst.Attribute) -> Kind:
        attr = expr.attr.value
        code = self.parsed.code(expr)
        if attr == "shape":
            return Kind(SHAPE, why=f"`{code}`")
        if attr in STATIC_ATTRIBUTES:
            return Kind(STATIC, why=f"`{code}`")
        root = expr.value
        if isinstance(root, cst.Name) and root.value == "self" and attr in self.static_fields:
            return Kind(STATIC, why=f"`{code}`, a static field")
        if isinstance(root, cst.Name) and root.value == "self" and attr in self._hyperparameters:
            return self._hyperparameters[attr]
        field = self._array_fields.of(expr)
        if field is not None:
            return Kind(ARRAY, why=f"`{code}`, {field}")
        while isinstance(root, cst.Attribute):
            if root.attr.value in CONFIG_ROOTS:
                return Kind(STATIC, why=f"`{code}`, a configuration value")
            root = root.value
        if isinstance(root, cst.Name) and root.value in CONFIG_ROOTS and self.of_name(root.value).name != ARRAY:
            return Kind(STATIC, why=f"`{code}`, a configuration value")
        if attr in ("T", "real", "imag", "mT") and self.of(expr.value).name == ARRAY:
            return self.of(expr.value)
        if isinstance(expr.value, cst.Name) and self.of_name(expr.value.value).name == TRACED:
            # `state.cars` of a traced `state`: a field of a pytree whose leaves are tracers.
            return Kind(TRACED, why=f"`{code}`, a field of a traced argument")
        return UNKNOWN_KIND

    @cached_property
    def _array_fields(self) -> ArrayFields:
        return array_fields(self.parsed, self.traced.node)

    @cached_property
    def _hyperparameters(self) -> dict[str, Kind]:
        """`features: Tuple[int, ...]` declared on a Flax module: a linen module is a dataclass of
        hyperparameters, never a pytree the transform traces, and an NNX module keeps attributes
        that are not arrays static; a field annotated with a Python type holds that Python value."""
        if self.traced.module not in HYPERPARAMETER_MODULES:
            return {}
        fields: dict[str, Kind] = {}
        for field in declared_fields(self.parsed, self.func):
            annotation = field.annotation.annotation
            kind = python_annotation_kind(self.parsed, annotation)
            if kind is not None:
                name = field.target.value  # type: ignore[union-attr]
                fields[name] = Kind(kind.name, kind.item, why=f"`self.{name}`, a field declared `{self.parsed.code(annotation)}`")
        return fields

    def _subscript(self, expr: cst.Subscript) -> Kind:
        base = self.of(expr.value)
        sliced = any(isinstance(e.slice, cst.Slice) for e in expr.slice)
        if base.name == SHAPE:
            return Kind(SHAPE if sliced else STATIC, why=f"`{self.parsed.code(expr)}`")
        if base.name in (ARRAY, TRACED):
            return base  # a row of an array, or a leaf or subtree of a traced pytree
        if base.name == STATIC:
            return base
        if base.name == CONTAINER:
            return base if sliced else (base.item or UNKNOWN_KIND)
        return UNKNOWN_KIND

    def _call(self, expr: cst.Call) -> Kind:
        func = expr.func
        qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        code = self.parsed.code(expr)
        shown = f"`{code}`" if len(code) < 40 else f"`{self.parsed.code(func)}(...)`"
        args = [a.value for a in expr.args if a.keyword is None]
        if isinstance(func, cst.Name) and func.value in self.env and self._aliases_function_builders(func.value):
            return Kind(STATIC, why=f"a function `{func.value}` builds")  # `_vmap = vmap if b else my_vmap`, `fun = _vmap(fun)`
        if isinstance(func, cst.Name) and func.value not in self.env and func.value not in self._parameters:
            defined = self._defined_function(func.value)
            if defined is not None and self._returns_functions(defined):
                return Kind(STATIC, why=f"a function `{func.value}` builds")
            if defined is not None and defined is not self.func:
                returned = self._helper_result(defined)
                if returned is not None:
                    return returned
        if qname is not None and qname.startswith("builtins."):
            name = qname.removeprefix("builtins.")
            if name in CONVERSIONS and not all(self.of(a).python for a in args):
                return UNKNOWN_KIND  # `float(x)` of a tracer raises (JLF006): no evidence of Python values
            if name in STATIC_BUILTINS:
                return Kind(STATIC, why=shown, text=name in ("str", "repr", "format", "chr"))
            if name == "range":
                return Kind(CONTAINER, Kind(STATIC, why="an int of a range"), why=shown)
            if name in SAME_KIND_BUILTINS and args:
                kind = self.of(args[0]) if name != "sum" else self.of(args[0]).items()
                for arg in args[1:] if name != "sum" else args[1:]:
                    kind = combine(kind, self.of(arg))
                return kind if kind.name != SHAPE else Kind(STATIC, why=shown)
            if name in CONTAINER_BUILTINS and args:
                return Kind(CONTAINER, self.of(args[0]).items(), why=shown)
            if name == "enumerate" and args:
                return Kind(CONTAINER, Kind(CONTAINER, join(Kind(STATIC), self.of(args[0]).items()) or UNKNOWN_KIND), why=shown)
            if name == "zip" and args:
                item: Kind | None = None
                for arg in args:
                    item = join(item, self.of(arg).items())
                return Kind(CONTAINER, Kind(CONTAINER, item or UNKNOWN_KIND), why=shown)
            return UNKNOWN_KIND
        if qname in COMBINATIONS:
            return Kind(CONTAINER, Kind(CONTAINER, self._combined_element(expr), why=shown), why=shown)
        transform = self.parsed.qualified_name(func.func) \
            if isinstance(func, cst.Call) and isinstance(func.func, (cst.Name, cst.Attribute)) else None
        if transform in ARRAY_RESULT_TRANSFORMS:
            # A pytree of arrays shaped like the function's output or input (gradients of a dict
            # of parameters are a dict): traced leaves, not known to be one array.
            why = f"{shown}, what a transformed function returns (arrays, or a pytree of them)"
            if transform.endswith("value_and_grad"):  # type: ignore[union-attr]
                return Kind(CONTAINER, Kind(TRACED, why=f"the value or the gradients of {why}"), why=f"{why} (value, gradients)")
            return Kind(TRACED, why=why)
        if qname is not None and qname.startswith(ARRAY_MODULES):
            last = qname.rsplit(".", 1)[-1]
            if last in STATIC_RESULTS:
                return Kind(STATIC, why=shown)
            tupled = returns_tuple(qname, expr)
            if tupled:
                # `jnp.linalg.eigh(m)`, `jnp.split(x, 4)`: a tuple or list of arrays (`tuple_results.py`).
                return Kind(CONTAINER, Kind(ARRAY, why=f"an item of {shown}"), why=f"{shown}, a tuple or list of arrays")
            if tupled is None:
                return UNKNOWN_KIND
            return Kind(ARRAY, why=shown)
        if qname is not None and qname.startswith(PYTHON_VALUE_MODULES):
            kinds = [self.of(a) for a in args]
            if computes_on_host(qname):
                # `np.linspace(0, 1, n)`, `np.zeros((n, n))`: NumPy computes it on the host (handed a
                # tracer it raises, at the call), so what it returns is a concrete host value.
                return Kind(STATIC, why=f"{shown}, computed on the host", host=True)
            if kinds and all(k.python for k in kinds):
                return Kind(STATIC, why=shown)
            return UNKNOWN_KIND
        if isinstance(func, cst.Attribute) and func.attr.value in ("items", "keys", "values") and not args:
            base = self.of(func.value)
            if func.attr.value == "keys":
                return Kind(CONTAINER, Kind(STATIC, why="a dict key"), why=shown)
            return Kind(CONTAINER, base.item if base.name == CONTAINER else UNKNOWN_KIND, why=shown)
        if isinstance(func, cst.Attribute) and func.attr.value in ("format", "join", "upper", "lower", "strip",
                                                                   "replace", "split", "startswith", "endswith"):
            if self.of(func.value).name == STATIC:
                return Kind(STATIC, why=shown)
        if not isinstance(func, cst.Attribute):
            return UNKNOWN_KIND
        receiver = self.of(func.value)
        if receiver.name == ARRAY:
            return Kind(ARRAY, why=shown)  # `x.sum()`, `x.at[t].set(v)`, `x.reshape(...)`
        if receiver.name == STATIC and receiver.host:
            # `tree.query_ball_point(points, r)` on `tree = cKDTree(...)`, `table.cumsum()` on a NumPy
            # array: a host object's method computes on the host (handed a tracer, it raises).
            return Kind(STATIC, why=f"{shown}, computed on the host", host=True)
        if func.attr.value in ARRAY_ONLY_METHODS and receiver.name == TRACED:
            return Kind(ARRAY, why=shown)  # `events.reshape(...)`: a traced argument with an array's method is one
        return UNKNOWN_KIND

    def _combined_element(self, call: cst.Call) -> Kind:
        """The kind of what the tuples of `itertools.product(a, b)` (or `product(*per_axis)`)
        hold: the items of their sources, when every source is a Python container (of
        containers, for a starred one); else unknown (a product of arrays steps over rows)."""
        element: Kind | None = None
        for arg in call.args:
            if arg.keyword is not None:
                continue  # `repeat=2`, `r=2`: a count
            source = self.of(arg.value)
            if arg.star == "*":
                if source.name != CONTAINER or source.items().name != CONTAINER:
                    return UNKNOWN_KIND
                source = source.items()
            elif source.name != CONTAINER:
                return UNKNOWN_KIND
            element = join(element, source.items())
        return element or UNKNOWN_KIND

    def _comprehension_kind(self, comp: cst.BaseComp, element: cst.BaseExpression) -> Kind:
        saved = dict(self.env)
        try:
            for clause in for_clauses(comp.for_in):
                self._bind_items(clause.target, clause.iter)
            return self.of(element)
        finally:
            self.env = saved

    def _bind_items(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        """Bind a comprehension's target to the items of what it iterates, each position of
        `enumerate(xs)` / `zip(a, b)` to its own source's items."""
        parts = self._per_position(target, iterable)
        if parts is None:
            self._bind(target, self.of(iterable).items())
            return
        for part, source in parts:
            self._bind(part, Kind(STATIC, why="the counter of `enumerate`") if source is None else self.of(source).items())

    # -- bindings --------------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, kind: Kind) -> None:
        if isinstance(target, cst.Name):
            if kind.name == UNKNOWN and target.value in self._compared_in_tests:
                kind = Kind(STATIC, why=f"`{target.value}`, compared in an `if` test, which needs a Python value")
            self.env[target.value] = join(self.env.get(target.value), kind) or UNKNOWN_KIND
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                if isinstance(element, cst.StarredElement):
                    self._bind(element.value, Kind(CONTAINER, kind.items(), why="a starred target, a list"))
                else:
                    self._bind(element.value, kind.items())

    def _solve(self) -> None:
        """Join every binding's kind into `env` until nothing changes (a few rounds)."""
        bindings: list[tuple[cst.BaseExpression, cst.CSTNode, str]] = []
        for node in walk(self.func.body, lambda n: type(n) not in (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if isinstance(node, cst.Assign):
                bindings.extend((t.target, node.value, "assign") for t in node.targets)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.AugAssign):
                bindings.append((node.target, node, "augment"))
            elif isinstance(node, cst.NamedExpr):
                bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.For):
                bindings.append((node.target, node.iter, "iterate"))
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) \
                    and node.func.attr.value in ADDS and node.args:
                bindings.append((node.func.value, node, "add"))  # `pos.append(v)`: `pos` holds `v`s
            elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) \
                    and isinstance(node.target.value, cst.Name):
                assign = self.parsed.parent(node)
                if isinstance(assign, cst.Assign):
                    bindings.append((node.target.value, assign.value, "store"))  # `out[k] = v`
            elif isinstance(node, (cst.With, cst.ExceptHandler)):
                for name in _as_names(node):
                    bindings.append((name, node, "unknown"))
        for _ in range(6):
            before = dict(self.env)
            self.env = {}
            for target, value, how in bindings:
                if how == "assign" and isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                        and len(target.elements) == len(value.elements) and not any(
                            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
                    for t, v in zip(target.elements, value.elements):
                        self._bind(t.value, self._in_round(v.value, before))
                    continue
                if how == "assign":
                    kind = self._in_round(value, before)  # type: ignore[arg-type]
                elif how == "iterate":
                    parts = self._per_position(target, value)  # type: ignore[arg-type]
                    if parts is not None:
                        for t, v in parts:
                            self._bind(t, Kind(STATIC, why="the counter of `enumerate`") if v is None
                                       else self._in_round(v, before).items())
                        continue
                    kind = self._in_round(value, before).items()  # type: ignore[arg-type]
                elif how == "augment":
                    assert isinstance(value, cst.AugAssign)
                    kind = combine(self._in_round(value.target, before), self._in_round(value.value, before), _binary(value.operator))
                elif how == "add":
                    assert isinstance(value, cst.Call)
                    added = self._in_round(value.args[-1].value, before)
                    method = value.func.attr.value  # type: ignore[attr-defined]
                    kind = Kind(CONTAINER, added.items() if method in ("extend", "update") else added)
                elif how == "store":
                    stored = self._in_round(value, before)  # type: ignore[arg-type]
                    held = (self.env.get(target.value) or before.get(target.value)) if isinstance(target, cst.Name) else None
                    # `w = np.zeros((n, n))`, then `w[0, k] = alpha[k]`: a Python value stored into a
                    # host value keeps it one; else `out[k] = v` makes a container of `v`s.
                    kind = held if held is not None and held.name == STATIC and stored.python else Kind(CONTAINER, stored)
                else:
                    kind = UNKNOWN_KIND
                if isinstance(target, (cst.Name, cst.Tuple, cst.List)):
                    self._bind(target, kind)
            if self.env == before:
                return
        self.env = {name: UNKNOWN_KIND for name in self.env}  # no fixed point: claim nothing

    def _per_position(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression
    ) -> list[tuple[cst.BaseExpression, cst.BaseExpression | None]] | None:
        """`for i, x in enumerate(xs)`, `for a, b in zip(as_, bs)`: each target position and
        what it takes its items from (None: `enumerate`'s counter, a Python int), so the
        positions keep kinds of their own instead of the join of all."""
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(iterable, cst.Call)
                and isinstance(iterable.func, cst.Name)):
            return None
        elements = [e.value for e in target.elements]
        if any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        args = [a.value for a in iterable.args]
        if any(a.star or a.keyword is not None for a in iterable.args):
            return None
        qname = self.parsed.qualified_name(iterable.func)
        if qname == "builtins.enumerate" and len(args) == 1 and len(elements) == 2:
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = [(elements[0], None)]
            pairs.extend(self._per_position(elements[1], args[0]) or [(elements[1], args[0])])
            return pairs
        if qname == "builtins.zip" and len(args) == len(elements):
            return list(zip(elements, args))
        return None

    def _in_round(self, expr: cst.BaseExpression, previous: dict[str, Kind]) -> Kind:
        """`of(expr)` with names bound in this function read from the previous round."""
        current = self.env
        self.env = {**previous, **{k: v for k, v in current.items() if k not in previous}}
        try:
            return self.of(expr)
        finally:
            self.env = current


def for_clauses(clause: cst.CompFor | None) -> list[cst.CompFor]:
    """A comprehension's `for` clauses, outermost first."""
    out: list[cst.CompFor] = []
    while clause is not None:
        out.append(clause)
        clause = clause.inner_for_in
    return out


def _as_names(node: cst.With | cst.ExceptHandler) -> list[cst.BaseExpression]:
    if isinstance(node, cst.ExceptHandler):
        return [node.name.name] if node.name is not None else []
    return [item.asname.name for item in node.items if item.asname is not None]
