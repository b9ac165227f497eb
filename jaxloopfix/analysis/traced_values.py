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
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ComprehensionScope

from jaxloopfix.analysis.arrays import returns_array
from jaxloopfix.analysis.names import parameters, stored_names
from jaxloopfix.analysis.source import ParsedModule
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


def static_fields(parsed: ParsedModule, func: cst.FunctionDef) -> set[str]:
    """Attributes that `func`'s class declares static, when `func` is a method of a class in this module."""
    block = parsed.parent(func)
    owner = parsed.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(owner, cst.ClassDef):
        return set()
    names: set[str] = set()
    for statement in owner.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and _static_field(parsed, small.value):
                names.add(small.target.value)
    return names


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
    """Tracer tracking for the body of one traced function (nested functions excluded)."""

    def __init__(self, parsed: ParsedModule, traced: TracedFunction) -> None:
        self.parsed = parsed
        self.traced = traced
        self.func = traced.node
        self.names: set[str] = set()
        self.receiver: str | None = None
        self.static_fields: set[str] = set()
        if not traced.transformed:
            return
        params = parameters(self.func)
        if params and params[0].name.value in ("self", "cls"):
            self.receiver = params[0].name.value
            self.static_fields = static_fields(parsed, self.func)
        # A parameter with a Python literal default (`blank_id: int = 0`, `training=False`) keeps
        # that value when a call does not pass it: `jit` traces only what is passed.
        self.names = {
            p.name.value for p in parameters(self.func) if p.default is None or not _literal(p.default)
        } - set(traced.static_params)
        self._fixed_point()

    # -- flow ------------------------------------------------------------------
    def _fixed_point(self) -> None:
        bindings: list[tuple[cst.BaseExpression, cst.BaseExpression | None, str]] = []
        func = self.func

        for node in walk(func.body, _own):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    bindings.append((target.target, node.value, "assign"))
            elif isinstance(node, (cst.AugAssign, cst.NamedExpr)):
                bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.AnnAssign):
                if node.value is not None:
                    bindings.append((node.target, node.value, "assign"))
            elif isinstance(node, cst.For):
                bindings.append((node.target, node.iter, "for"))
            elif isinstance(node, cst.WithItem):
                if node.asname is not None:
                    bindings.append((node.asname.name, node.item, "assign"))
        changed = True
        while changed:
            changed = False
            for target, value, kind in bindings:
                for name in self._traced_targets(target, value, kind):
                    if name not in self.names:
                        self.names.add(name)
                        changed = True

    def _traced_targets(self, target: cst.BaseExpression, value: cst.BaseExpression | None, kind: str) -> set[str]:
        if value is None:
            return set()
        if kind == "for":
            return self._loop_targets(target, value)
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(
            target.elements
        ) == len(value.elements) and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
            out: set[str] = set()
            for t, v in zip(target.elements, value.elements):
                out |= self._traced_targets(t.value, v.value, "assign")
            return out
        return stored_names(target) if self.is_traced(value) else set()

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
        if f"builtins.{func.value}" in qnames or not qnames:
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

    def _traced(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.names and not self._shadowed_by_comprehension(expr)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in STATIC_ATTRIBUTES:
                return False
            if (
                expr.attr.value in self.static_fields
                and isinstance(expr.value, cst.Name)
                and expr.value.value == self.receiver
            ):
                return False  # a static field of the pytree `self`: aux data, a Python value under jit
            return self._traced(expr.value)
        if isinstance(expr, cst.Subscript):
            return self._traced(expr.value)
        if isinstance(expr, cst.BinaryOperation):
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
            return self._traced_call(expr)
        return False

    def _args_traced(self, call: cst.Call) -> bool:
        return any(self._traced(a.value) for a in call.args)

    def _traced_call(self, call: cst.Call) -> bool:
        func = call.func
        for qname in self._qualified(func):
            if qname.startswith(TRACING_MODULES):
                if qname.rsplit(".", 1)[-1] in STATIC_RESULTS:
                    return False
                return self._args_traced(call)
        builtin = self._builtin(func)
        if builtin is not None:
            if builtin in STATIC_BUILTINS:
                return False
            if builtin in PROPAGATING_BUILTINS:
                return self._args_traced(call)
        if isinstance(func, cst.Attribute):
            if func.attr.value in HOST_METHODS:
                return False
            # A method of a traced value (`x.sum()`, `x.reshape(...)`, `x.at[i].set(v)`).
            if self._traced(func.value):
                return True
        if isinstance(func, cst.Name) and returns_array(self.parsed, func):
            # A same-module function whose every return is an array, called with a traced argument.
            return self._args_traced(call)
        return False


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
