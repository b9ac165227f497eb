"""Which expressions of a traced function are tracers (abstract values) at trace time.

A value is traced when it is derived from a non-static parameter of a
function a transform applies to directly: through assignments, arithmetic,
subscripts, attribute access, methods of traced values and calls of JAX's
array modules. Shapes, dtypes, `len()`, static parameters, module constants
and literals are Python values at trace time and never traced.

Precision first: the analysis is flow-insensitive (a name assigned a traced
value anywhere counts as traced), but it only starts from what is known to be
a tracer. Parameters of functions that are traced only because a traced
function calls them (helpers) or defines them (scan bodies) are not known to
be tracers, so nothing in them is traced.

A call that receives a traced argument returns a traced value whatever it calls (a library
function such as `optax.softmax_cross_entropy`, a transformed function `jax.grad(f)(x)`, a
helper): the exceptions, calls known to return Python values, functions or Python containers,
are the tables of `call_results`, and a helper of this module is judged by its own returns
(`helper_result`). Containers (`(a, b)`, `[x]`, `dict(w=x)`, `jax.tree_util.tree_leaves(p)`) are
traced (their items are tracers) but their truth value is a Python one: `is_tracer` tells them
apart for truth tests. `derivation` words the chain of calls that made a value traced.
"""

from __future__ import annotations

import builtins

import libcst as cst
from libcst.metadata import ComprehensionScope

from jaxloopfix.analysis.arrays import returns_array
from jaxloopfix.analysis.call_results import (
    A_FUNCTION,
    CONTAINER,
    CONTAINER_BUILTINS,
    CONTAINER_RESULTS,
    FUNCTION_RESULTS,
    NOT_TRACED,
    PYTHON,
    PYTHON_FACTORIES,
    PYTHON_VALUE,
    STRING_RECEIVERS,
    TRACED,
    TREE_MAPS,
    TUPLE_RESULTS,
    CallResult,
    predicate,
    python_result,
)
from jaxloopfix.analysis.names import parameters, stored_names
from jaxloopfix.analysis.source import ParsedModule, shorten
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.walk import walk

# Qualified-name prefixes of functions whose result is traced when an argument is.
TRACING_MODULES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.nn.",
    "jax.random.",
    "jax.scipy.",
    "jax.tree_util.tree_map",
    "jax.tree.map",
)
# Functions of those modules that return static Python values (shapes, dtypes, predicates on dtypes).
STATIC_RESULTS = frozenset(
    {
        "shape", "ndim", "size", "result_type", "promote_types", "dtype", "iinfo", "finfo", "issubdtype",
        "isscalar", "can_cast", "broadcast_shapes", "isdtype",
    }
)
# Attributes of arrays that are static at trace time.
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "sharding", "weak_type"})
# Field declarations that keep a pytree class's attribute out of its leaves (aux data: a Python
# value at trace time): `flax.struct.field(pytree_node=False)`, `eqx.field(static=True)`.
FIELD_FUNCTIONS = frozenset({"flax.struct.field", "equinox.field", "equinox.static_field", "dataclasses.field"})


def declared_fields(parsed: ParsedModule, func: cst.FunctionDef) -> list[cst.AnnAssign]:
    """The annotated fields (`name: T` or `name: T = value`) that `func`'s class declares in its
    body, when `func` is a method of a class in this module."""
    block = parsed.parent(func)
    owner = parsed.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(owner, cst.ClassDef):
        return []
    return class_fields(owner)


def class_fields(owner: cst.ClassDef) -> list[cst.AnnAssign]:
    """The annotated fields a class declares in its body."""
    return [
        small
        for statement in owner.body.body if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
    ]


def static_fields(parsed: ParsedModule, func: cst.FunctionDef) -> set[str]:
    """Attributes that `func`'s class declares static, when `func` is a method of a class in this
    module: by the field's declaration (`field(pytree_node=False)`, `eqx.static_field()`) or by its
    annotation (`layout: jdc.Static[Layout]`, which `jax_dataclasses` leaves out of the pytree)."""
    return _static_of(parsed, declared_fields(parsed, func))


def _static_of(parsed: ParsedModule, fields: list[cst.AnnAssign]) -> set[str]:
    return {
        field.target.value for field in fields  # type: ignore[union-attr]
        if _static_field(parsed, field.value) or _static_annotation(parsed, field.annotation.annotation)
    }


def parameter_static_fields(parsed: ParsedModule, func: cst.FunctionDef) -> dict[str, set[str]]:
    """For each parameter annotated with a class of this module (`other: "Assignments"`), the
    fields that class declares static: `other.layout` is a Python value under the trace, as
    `self.layout` is."""
    from jaxloopfix.analysis.traced import annotation_members

    classes = {s.name.value: s for s in parsed.module.body if isinstance(s, cst.ClassDef)}
    found: dict[str, set[str]] = {}
    for param in parameters(func):
        if param.annotation is None:
            continue
        # One class, or each member of a union (`c: Cfg | None`): a field static in every member.
        members = [classes.get(parsed.code(m)) for m in annotation_members(parsed, param.annotation.annotation)]
        if not members or any(owner is None for owner in members):
            continue
        fields = set.intersection(*(_static_of(parsed, class_fields(owner)) for owner in members))  # type: ignore[arg-type]
        if fields:
            found[param.name.value] = fields
    return found


# Annotations that mark a dataclass field, or a `jax_dataclasses.jit` parameter, static.
STATIC_ANNOTATIONS = frozenset({"jax_dataclasses.Static"})


def _static_annotation(parsed: ParsedModule, annotation: cst.BaseExpression) -> bool:
    """`jdc.Static[T]`: a field (or parameter) `jax_dataclasses` keeps out of the pytree; also
    written as a string (`"jdc.Static[int]"`, which `jax_dataclasses` resolves from the module's
    names: its head then has no qualified name, so it is read by its text in a module that
    imports `jax_dataclasses`)."""
    if isinstance(annotation, cst.SimpleString):
        try:
            inner = cst.parse_expression(str(annotation.evaluated_value))
        except (cst.ParserSyntaxError, TypeError):
            return False
        return isinstance(inner, cst.Subscript) and isinstance(inner.value, (cst.Name, cst.Attribute)) \
            and parsed.code(inner.value).rsplit(".", 1)[-1] == "Static" and parsed.imports_from(STATIC_ANNOTATION_ROOTS)
    return isinstance(annotation, cst.Subscript) and isinstance(annotation.value, (cst.Name, cst.Attribute)) \
        and parsed.qualified_name(annotation.value) in STATIC_ANNOTATIONS


STATIC_ANNOTATION_ROOTS = frozenset(name.split(".", 1)[0] for name in STATIC_ANNOTATIONS)


def _static_field(parsed: ParsedModule, value: cst.BaseExpression | None) -> bool:
    if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
        return False
    name = parsed.qualified_name(value.func)
    if name not in FIELD_FUNCTIONS:
        return False
    if name == "equinox.static_field":
        return True
    for arg in value.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "pytree_node" and isinstance(arg.value, cst.Name) and arg.value.value == "False":
            return True
        if keyword == "static" and isinstance(arg.value, cst.Name) and arg.value.value == "True":
            return True
        if keyword == "metadata" and isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if (
                    isinstance(element, cst.DictElement)
                    and isinstance(element.key, cst.SimpleString)
                    and element.key.evaluated_value in ("static", "pytree_node")
                    and isinstance(element.value, cst.Name)
                    and element.value.value == ("True" if element.key.evaluated_value == "static" else "False")
                ):
                    return True
    return False
# Builtins whose result is a Python value (when they succeed at all: on a tracer they raise,
# which JLF006 reports at the call, so their result does not propagate tracedness).
STATIC_BUILTINS = frozenset({"len", "int", "float", "bool", "complex", "str", "repr", "isinstance", "type", "id",
                             "hash", "callable", "hasattr", "range"})
# Methods of traced values that leave the trace (reported by JLF006) or return static values.
HOST_METHODS = frozenset({"item", "tolist", "__array__", "__index__", "__int__", "__float__", "__bool__"})
# Builtins whose result carries the tracedness of their arguments.
PROPAGATING_BUILTINS = frozenset({"abs", "max", "min", "sum", "round", "pow", "divmod", "tuple", "list", "reversed",
                                  "sorted"})


class TracedValues:
    """Tracer tracking for the body of one traced function (nested functions excluded).

    `seeds`, when given, are the traced parameters (a helper analysed for one call's traced
    arguments); `through_calls=False` keeps to JAX's array functions, methods and helpers that
    return arrays (what is known to be an array, for fix safety)."""

    def __init__(
        self, parsed: ParsedModule, traced: TracedFunction, seeds: frozenset[str] | None = None,
        *, through_calls: bool = True,
    ) -> None:
        self.parsed = parsed
        self.traced = traced
        self.func = traced.node
        self.through_calls = through_calls
        self.names: set[str] = set()
        # Traced names bound only to Python containers of traced values (Python truth values).
        self.containers: set[str] = set()
        # Why each derived name is traced: the value of its first traced binding and the binding's kind.
        self.origins: dict[str, tuple[cst.BaseExpression, str]] = {}
        self.receiver: str | None = None
        self.static_fields: set[str] = set()
        # Static fields of parameters annotated with a class of this module (`parameter_static_fields`).
        self.parameter_fields: dict[str, set[str]] = {}
        self._strict: TracedValues | None = None
        if seeds is not None:
            self.names = set(seeds)
        elif not traced.transformed:
            return
        else:
            params = parameters(self.func)
            if params and params[0].name.value in ("self", "cls"):
                self.receiver = params[0].name.value
                self.static_fields = static_fields(parsed, self.func)
            self.parameter_fields = parameter_static_fields(parsed, self.func)
            # A parameter with a Python literal default (`blank_id: int = 0`, `training=False`) keeps
            # that value when a call does not pass it: `jit` traces only what is passed.
            self.names = {
                p.name.value for p in parameters(self.func) if p.default is None or not _literal(p.default)
            } - set(traced.static_params) - traced.passed_through
        self._params = set(self.names)
        self._fixed_point()

    @property
    def strict(self) -> TracedValues:
        """The same function's values traced through JAX's array functions only (no other calls):
        what is known to be an array, for the safety of fixes."""
        if not self.through_calls:
            return self
        if self._strict is None:
            seeds = frozenset(self._params) if not self.traced.transformed else None
            self._strict = TracedValues(self.parsed, self.traced, seeds, through_calls=False)
        return self._strict

    # -- flow ------------------------------------------------------------------
    def _fixed_point(self) -> None:
        bindings: list[tuple[cst.BaseExpression, cst.BaseExpression | None, str]] = []
        func = self.func

        for node in walk(func.body, _own):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    bindings.append((target.target, node.value, "assign"))
            elif isinstance(node, cst.AugAssign):
                bindings.append((node.target, node.value, "augment"))
            elif isinstance(node, cst.NamedExpr):
                bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.AnnAssign):
                if node.value is not None:
                    bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.For):
                bindings.append((node.target, node.iter, "for"))
            elif isinstance(node, cst.WithItem):
                if node.asname is not None:
                    bindings.append((node.asname.name, node.item, "with"))
        changed = True
        while changed:
            changed = False
            for target, value, kind in bindings:
                for name, origin, _ in self._bound(target, value, kind):
                    if name not in self.names:
                        self.names.add(name)
                        self.origins[name] = (origin, kind)
                        changed = True
        self._find_containers(bindings)

    def _find_containers(self, bindings: list[tuple[cst.BaseExpression, cst.BaseExpression | None, str]]) -> None:
        """Traced names whose every traced binding is a Python container (greatest fixed point:
        `acc = acc + [x]` is a container when `acc` is one). Parameters are never containers."""
        self.containers = set(self.names) - self._params
        while self.containers:
            evidence: dict[str, list[bool]] = {}
            for target, value, kind in bindings:
                for name, _, container in self._bound(target, value, kind):
                    evidence.setdefault(name, []).append(container)
            kept = {n for n in self.containers if evidence.get(n) and all(evidence[n])}
            if kept == self.containers:
                break
            self.containers = kept

    def _bound(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, kind: str
    ) -> list[tuple[str, cst.BaseExpression, bool]]:
        """The names a binding makes traced: (name, the value it comes from, whether that is a Python container)."""
        if value is None:
            return []
        if kind == "for":
            return [(name, value, False) for name in self._loop_targets(target, value)]
        if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in target.elements):
            if isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements) and not any(
                isinstance(e, cst.StarredElement) for e in value.elements
            ):
                out: list[tuple[str, cst.BaseExpression, bool]] = []
                for t, v in zip(target.elements, value.elements):
                    out += self._bound(t.value, v.value, kind)
                return out
            positions = self._tuple_result(value)
            if positions is not None and len(positions) == len(target.elements):
                if not self._traced(value):
                    return []
                return [
                    (name, value, position == CONTAINER and isinstance(element.value, cst.Name))
                    for element, position in zip(target.elements, positions)
                    if position in (TRACED, CONTAINER)
                    for name in stored_names(element.value)
                ]
        if not self._traced(value):
            return []
        container = isinstance(target, cst.Name) and kind in ("assign", "augment") and self._container(value)
        return [(name, value, container) for name in stored_names(target)]

    def _tuple_result(self, value: cst.BaseExpression) -> tuple[str, ...] | None:
        """Kinds by position of a call known to return a tuple (`leaves, treedef = tree_flatten(x)`,
        a helper's `return params, n_steps`)."""
        if not isinstance(value, cst.Call):
            return None
        for qname in self._qualified(value.func):
            if qname in TUPLE_RESULTS:
                return TUPLE_RESULTS[qname]
        if isinstance(value.func, cst.Name) and self.through_calls:
            return self.call_result(value).positions
        return None

    def _loop_targets(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> set[str]:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
            builtin = iterable.func.value
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if builtin == "range":
                return set()  # Python ints (or an error at the range call, which JLF003 reports)
            if builtin == "enumerate" and args and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                return stored_names(target.elements[1].value) if self.is_traced(args[0]) else set()
            if builtin == "zip" and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(args) and not any(
                isinstance(e, cst.StarredElement) for e in target.elements
            ):
                out: set[str] = set()
                for element, arg in zip(target.elements, args):
                    if self.is_traced(arg):
                        out |= stored_names(element.value)
                return out
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
            # Dict iteration: keys are static Python values, values are traced with the dict.
            method = iterable.func.attr.value
            if method == "keys":
                return set()
            if method == "items":
                if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                    return stored_names(target.elements[1].value) if self.is_traced(iterable.func.value) else set()
                return set()
        return stored_names(target) if self.is_traced(iterable) else set()

    # -- expressions -----------------------------------------------------------
    def _qualified(self, func: cst.BaseExpression) -> set[str]:
        if isinstance(func, (cst.Name, cst.Attribute)):
            return self.parsed.qualified_names(func)
        return set()

    def _builtin(self, func: cst.BaseExpression) -> str | None:
        if not isinstance(func, cst.Name):
            return None
        qnames = self.parsed.qualified_names(func)
        if f"builtins.{func.value}" in qnames or (not qnames and hasattr(builtins, func.value)):
            # Unresolved names default to builtins only when nothing local shadows them.
            if func.value in self.names:
                return None
            return func.value
        return None

    def _shadowed_by_comprehension(self, name: cst.Name) -> bool:
        scope = self.parsed.scope(name)
        while isinstance(scope, ComprehensionScope):
            if name.value in scope.assignments:
                return True
            scope = scope.parent
        return False

    def is_traced(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` evaluates to a tracer (or a container holding one) at trace time."""
        if not self.names:
            return False
        return self._traced(expr)

    def is_tracer(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is traced and not a Python container of traced values: what `bool()`
        (an `if`, `while`, `and`/`or`) cannot be applied to under a trace."""
        return self.is_traced(expr) and not self._container(expr)

    def _traced(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.names and not self._shadowed_by_comprehension(expr)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in STATIC_ATTRIBUTES:
                return False
            if self._static_field(expr):
                return False  # a static field of the pytree `self`: aux data, a Python value under jit
            return self._traced(expr.value)
        if isinstance(expr, cst.Subscript):
            return self._traced(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Modulo) and isinstance(expr.left, STRING_RECEIVERS):
                return False  # `"%s" % x`: string formatting, a Python string
            return self._traced(expr.left) or self._traced(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self._traced(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return self._traced(expr.left) or self._traced(expr.right)
        if isinstance(expr, cst.Comparison):
            return self._traced(expr.left) or any(self._traced(c.comparator) for c in expr.comparisons)
        if isinstance(expr, cst.IfExp):
            return self._traced(expr.body) or self._traced(expr.orelse)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return any(self._traced(e.value) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self._traced(e.value) for e in expr.elements)
        if isinstance(expr, cst.NamedExpr):
            return self._traced(expr.value)
        if isinstance(expr, cst.Call):
            return self.call_result(expr).traced
        return False

    def _static_field(self, expr: cst.Attribute) -> bool:
        if not isinstance(expr.value, cst.Name):
            return False
        if expr.value.value == self.receiver and expr.attr.value in self.static_fields:
            return True
        return expr.attr.value in self.parameter_fields.get(expr.value.value, ())

    def _container(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is a Python container (tuple, list, dict, set): its truth value is Python's."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)):
            return True
        if isinstance(expr, cst.Name):
            return expr.value in self.containers and not self._shadowed_by_comprehension(expr)
        if isinstance(expr, cst.Call):
            return self.call_result(expr).kind == CONTAINER
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply)):
            return self._container(expr.left) or self._container(expr.right)  # `acc + [x]`, `[x] * n`
        if isinstance(expr, cst.IfExp):
            return self._container(expr.body) and self._container(expr.orelse)
        if isinstance(expr, cst.Subscript):
            sliced = len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice)
            return sliced and self._container(expr.value)
        if isinstance(expr, cst.NamedExpr):
            return self._container(expr.value)
        return False

    # -- calls -----------------------------------------------------------------
    def _traced_argument(self, call: cst.Call, *, receiver_fields: bool = True) -> cst.BaseExpression | None:
        """The first traced argument of `call` (positional, keyword or starred). Without
        `receiver_fields`, `self.x` arguments do not count: a method's fields are often static
        hyperparameters (the same guard as JLF004's `self.flag`)."""
        for arg in call.args:
            if not receiver_fields and self._receiver_field(arg.value):
                continue
            if self._traced(arg.value):
                return arg.value
        return None

    def _receiver_field(self, expr: cst.BaseExpression) -> bool:
        root = expr
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        return root is not expr and isinstance(root, cst.Name) and root.value in ("self", "cls")

    def _received(self, call: cst.Call, via: str, kind: str = TRACED, *, receiver_fields: bool = True) -> CallResult:
        evidence = self._traced_argument(call, receiver_fields=receiver_fields)
        return CallResult(kind, via, evidence) if evidence is not None else NOT_TRACED

    def call_result(self, call: cst.Call) -> CallResult:
        """What `call` returns at trace time (see `call_results` for the rule and its exceptions).

        In order: functions known by name (transforms return functions; shapes, dtypes, tree
        structures and host libraries Python values; tree leaves Python containers; JAX's array
        functions tracers of traced arguments), builtins, methods (of a string: Python values;
        `.item()`: a host value, which JLF006 reports; of a traced value: a tracer), helpers of this
        module (their own returns decide), then any other call: traced when an argument is."""
        func = call.func
        if isinstance(func, cst.Call):
            # A function made by a call: `jax.grad(f)(x)`, `jax.vmap(f)(xs)`, `nn.Dense(4)(x)`.
            if self._qualified(func.func) & PYTHON_FACTORIES:
                return PYTHON_VALUE
            return self._received(call, "call") if self.through_calls else NOT_TRACED
        qnames = self._qualified(func)
        for qname in qnames:
            if qname in FUNCTION_RESULTS:
                return A_FUNCTION
            if qname in CONTAINER_RESULTS:
                return self._received(call, "module", CONTAINER) if self.through_calls else NOT_TRACED
            if qname in TREE_MAPS and self.through_calls and not self._mapped_function_traced(call):
                return PYTHON_VALUE  # `tree_map(lambda x: x.shape, tree)`: a tree of Python values
            if qname.startswith(TRACING_MODULES):
                if qname.rsplit(".", 1)[-1] in STATIC_RESULTS:
                    return PYTHON_VALUE
                return self._received(call, "module")
            if python_result(qname):
                return PYTHON_VALUE
        builtin = self._builtin(func)
        if builtin is not None:
            if builtin in STATIC_BUILTINS:
                return PYTHON_VALUE
            if not self.through_calls:  # the strict view keeps to the builtins it always followed
                return self._received(call, "builtin") if builtin in PROPAGATING_BUILTINS else NOT_TRACED
            if builtin in CONTAINER_BUILTINS:
                return self._received(call, "builtin", CONTAINER)
            if builtin in PROPAGATING_BUILTINS:
                return self._received(call, "builtin")
            return NOT_TRACED  # `print`, `getattr`, `setattr`, ...: not values of the arguments
        if isinstance(func, cst.Attribute):
            if func.attr.value in HOST_METHODS:
                return PYTHON_VALUE
            if isinstance(func.value, STRING_RECEIVERS):
                return PYTHON_VALUE  # `"{}".format(x)`, `", ".join(names)`
            # A method of a traced value (`x.sum()`, `x.reshape(...)`, `x.at[i].set(v)`).
            if self._traced(func.value):
                return CallResult(TRACED, "method", func.value)
        if isinstance(func, cst.Name):
            helper = _module_function(self.parsed, func)
            if helper is not None:
                result = self.helper_result(helper, call)
                if result.traced or not self.through_calls:
                    return result
                if returns_array(self.parsed, func):
                    return self._received(call, "helper")  # every return is an array
                return result
        if not self.through_calls or predicate(func):
            return NOT_TRACED
        return self._received(call, "call", receiver_fields=False)

    def _mapped_function_traced(self, call: cst.Call) -> bool:
        """Whether the function a tree map applies returns a traced value given traced leaves: a
        lambda's body, or a function of this module's returns. Unknown functions: yes."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return True
        func = call.args[0].value
        if isinstance(func, cst.Lambda):
            params = {p.name.value for p in parameters(func)}
            before = self.names
            self.names = before | params
            try:
                return self._traced(func.body)
            finally:
                self.names = before
        if isinstance(func, cst.Name):
            helper = _module_function(self.parsed, func)
            if helper is not None:
                kind, _ = _helper_kind(self.parsed, helper, frozenset(p.name.value for p in parameters(helper)))
                return kind is not None
        return True

    def helper_result(self, helper: cst.FunctionDef, call: cst.Call) -> CallResult:
        """What a call of a function of this module returns: its own returns, analysed with the
        parameters that receive traced arguments traced. A helper that returns `len(x)`, a shape
        or nothing returns no tracer, however traced its arguments."""
        if not self.through_calls:
            if isinstance(call.func, cst.Name) and returns_array(self.parsed, call.func):
                return self._received(call, "helper")
            return NOT_TRACED
        seeds = self._traced_parameters(helper, call)
        if not seeds:
            return NOT_TRACED
        kind, positions = _helper_kind(self.parsed, helper, seeds)
        if kind is None:
            return NOT_TRACED
        return CallResult(kind, "helper", self._traced_argument(call), positions)

    def _traced_parameters(self, helper: cst.FunctionDef, call: cst.Call) -> frozenset[str]:
        """The parameters of `helper` that `call` passes traced arguments to."""
        params = helper.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        every = {p.name.value for p in parameters(helper)}
        star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        star_kwarg = params.star_kwarg.name.value if params.star_kwarg is not None else None
        seeds: set[str] = set()
        index = 0
        for arg in call.args:
            traced = self._traced(arg.value)
            if arg.star:
                if traced:
                    return frozenset(every)  # `f(*xs)`: which parameters it fills is unknown
                continue
            if arg.keyword is not None:
                name = arg.keyword.value
                if traced:
                    if name in every:
                        seeds.add(name)
                    elif star_kwarg is not None:
                        seeds.add(star_kwarg)
                continue
            if traced:
                if index < len(positional):
                    seeds.add(positional[index])
                elif star is not None:
                    seeds.add(star)
            index += 1
        return frozenset(seeds)

    # -- explanations ------------------------------------------------------------
    def derivation(self, expr: cst.BaseExpression, limit: int = 3) -> str | None:
        """Why `expr` is traced when a call made it so, as a chain for a diagnostic's note:
        "`loss` is traced: returned by `optax.l2_loss(pred, y)`, which received the traced `pred`;
        `pred` is traced: ...". None for a parameter, for values computed from parameters without
        calls, and for a JAX array function or method applied to a parameter directly (the
        message already shows it)."""
        links: list[tuple[str, bool]] = []  # (text, whether it names a call)
        informative = isinstance(expr, cst.Name)
        subject: cst.BaseExpression | None = expr
        seen: set[str] = set()
        while subject is not None and len(links) < limit:
            if isinstance(subject, cst.Name):
                name = subject.value
                if name in seen or name not in self.origins:
                    break  # a parameter, or a loop of bindings
                seen.add(name)
                value, kind = self.origins[name]
                cause = self._cause(value)
                if cause is None:
                    break
                text, after, via, call = cause
                if text is None:
                    text = f"computed from the traced `{self._code(after)}`"
                if kind == "for":
                    text = f"an item of `{self._code(value)}`" + ("" if value is after else f", {text}")
                links.append((f"`{name}` is traced: {text}", call is not None))
            else:
                cause = self._cause(subject)
                if cause is None:
                    break
                text, after, via, call = cause
                if call is subject and via in ("call", "helper"):
                    # The message shows the call; say what made it traced.
                    text = f"it received the traced `{self._code(after)}`"
                if text is not None and (call is not subject or via in ("call", "helper")):
                    links.append((f"`{self._code(subject)}` is traced: {text}", call is not None))
            informative = informative or via in ("call", "helper")
            if after is subject:
                break
            subject = after
        while links and not links[-1][1]:
            links.pop()  # "`logits` is traced: computed from the traced `features`" ends the chain: no call
        if not links or not informative:
            return None
        return "; ".join(text for text, _ in links)

    def _cause(
        self, expr: cst.BaseExpression
    ) -> tuple[str | None, cst.BaseExpression, str, cst.Call | None] | None:
        """(how `expr` is traced, the traced value it comes from, the rule's `via`, the call) for the
        first traced part of `expr`; the text is None when `expr` is a traced name (its binding says more)."""
        if not self._traced(expr):
            return None
        if isinstance(expr, cst.Name):
            return None, expr, "", None
        if isinstance(expr, cst.Call):
            result = self.call_result(expr)
            if result.evidence is None:
                return None
            if result.via == "method":
                inner = self._cause(result.evidence)
                if inner is not None and inner[0] is not None:
                    return inner  # `optax.l2_loss(p, y).mean()`: the call inside says why
                return (
                    f"returned by `{self._code(expr)}`, a method of the traced `{self._code(result.evidence)}`",
                    result.evidence,
                    result.via,
                    expr,
                )
            return (
                f"returned by `{self._code(expr)}`, which received the traced `{self._code(result.evidence)}`",
                result.evidence,
                result.via,
                expr,
            )
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return self._cause(expr.value)
        if isinstance(expr, cst.NamedExpr):
            return self._cause(expr.value)
        parts: list[cst.BaseExpression] = []
        if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
            parts = [expr.left, expr.right]
        elif isinstance(expr, cst.UnaryOperation):
            parts = [expr.expression]
        elif isinstance(expr, cst.Comparison):
            parts = [expr.left, *(c.comparator for c in expr.comparisons)]
        elif isinstance(expr, cst.IfExp):
            parts = [expr.body, expr.orelse]
        elif isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            parts = [e.value for e in expr.elements]
        elif isinstance(expr, cst.Dict):
            parts = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
        for part in parts:
            cause = self._cause(part)
            if cause is not None:
                return cause
        return None

    def _code(self, node: cst.CSTNode) -> str:
        return shorten(self.parsed.code(node).strip())


def _module_function(parsed: ParsedModule, name: cst.Name) -> cst.FunctionDef | None:
    """The function of this module (or an enclosing function) that `name` calls, when it has one definition."""
    scope = parsed.scope(name)
    if scope is None:
        return None
    try:
        assignments = list(scope[name.value])
    except Exception:  # noqa: BLE001 - libcst raises for names it cannot look up
        return None
    nodes = [getattr(a, "node", None) for a in assignments]
    if len(nodes) != 1 or not isinstance(nodes[0], cst.FunctionDef):
        return None
    helper = nodes[0]
    params = parameters(helper)
    if params and params[0].name.value in ("self", "cls"):
        return None
    return helper


def _helper_kind(
    parsed: ParsedModule, helper: cst.FunctionDef, seeds: frozenset[str]
) -> tuple[str | None, tuple[str, ...] | None]:
    """What `helper` returns with the parameters `seeds` traced (cached per module): TRACED,
    CONTAINER or None, and when every `return` is a tuple `a, b` of one length, each item's kind
    (PYTHON for an item no return makes traced: `return params, x.shape[0]`)."""
    cache: dict = parsed.__dict__.setdefault("_helper_kinds", {})
    key = (helper, seeds)
    if key in cache:
        return cache[key]
    cache[key] = (None, None)  # recursion guard: a recursive call adds nothing
    if own_nodes(helper, (cst.Yield,)):
        return None, None  # a generator
    values = TracedValues(parsed, TracedFunction(helper, "called with traced arguments"), seeds)
    returns = [r.value for r in own_nodes(helper, cst.Return) if isinstance(r, cst.Return) and r.value is not None]
    traced = [v for v in returns if values.is_traced(v)]
    kind = None if not traced else CONTAINER if all(values._container(v) for v in traced) else TRACED
    positions: tuple[str, ...] | None = None
    if kind is not None and all(
        isinstance(v, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in v.elements) for v in returns
    ) and len({len(v.elements) for v in returns}) == 1:  # type: ignore[attr-defined]
        items = list(zip(*(v.elements for v in returns)))  # type: ignore[attr-defined]
        positions = tuple(_item_kind(values, [e.value for e in item]) for item in items)
    cache[key] = (kind, positions)
    return kind, positions


def _item_kind(values: TracedValues, items: list[cst.BaseExpression]) -> str:
    traced = [v for v in items if values.is_traced(v)]
    if not traced:
        return PYTHON
    return CONTAINER if all(values._container(v) for v in traced) else TRACED


def traced_values(parsed: ParsedModule, traced: TracedFunction) -> TracedValues:
    """TracedValues of one function, computed once per parsed module (shared by the rules)."""
    cache: dict[cst.FunctionDef, TracedValues] = parsed.__dict__.setdefault("_traced_values", {})
    values = cache.get(traced.node)
    if values is None:
        values = cache[traced.node] = TracedValues(parsed, traced)
    return values


def own_nodes(func: cst.FunctionDef, kinds: type | tuple[type, ...]) -> list[cst.CSTNode]:
    """Nodes of the given kinds in `func`'s own body (nested functions, lambdas and classes excluded),
    in document order."""
    return [node for node in walk(func.body, _own) if isinstance(node, kinds)]


def _own(node: cst.CSTNode) -> bool:
    """Whether a walk over a function's body enters `node` (not nested functions, classes, lambdas)."""
    return type(node) not in _NESTED  # exact classes: `isinstance` on libcst's ABCs is slow


_NESTED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _literal(expr: cst.BaseExpression) -> bool:
    """A Python constant: numbers, strings, True/False/None, and tuples of them."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation):
        return _literal(expr.expression)
    if isinstance(expr, cst.Tuple):
        return all(_literal(e.value) for e in expr.elements)
    return False
