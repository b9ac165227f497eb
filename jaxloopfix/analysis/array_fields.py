"""Which attributes of a method's instance hold arrays, from the class itself.

`self.coefficients[i] * w ** i for i in range(len(self.coefficients))` steps over the rows of an
array when the class declares `coefficients: Array` (an Equinox module, a dataclass, a pytree) or
its constructor stores an array (`self.coefficients = jnp.asarray(c)`). Without this a range as
long as an array field reads as the size of some attribute (layers, components) and the loop
goes unreported. Only positive evidence counts: a field declared static (`eqx.field(static=True)`,
`pytree_node=False`) or annotated with anything else stays unknown.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.arrays import _jax_array_call, is_array_annotation
from jaxloopfix.analysis.count_defaults import method_and_class, receiver_name
from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.analysis.traced_values import _static_field

# Methods that set up an instance's attributes: what they store is what the other methods read.
CONSTRUCTORS = frozenset({"__init__", "__post_init__", "setup"})


class ArrayFields:
    """The receiver name of the method a function is (or is nested in), and the attributes of
    its class with array evidence, each with the evidence in words."""

    def __init__(self, receiver: str | None, fields: dict[str, str]) -> None:
        self.receiver = receiver
        self.fields = fields

    def of(self, expr: cst.BaseExpression) -> str | None:
        """The evidence that `expr` (`self.name`) is an array field, else None."""
        if (
            self.receiver is not None and isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name) and expr.value.value == self.receiver
        ):
            return self.fields.get(expr.attr.value)
        return None


NO_FIELDS = ArrayFields(None, {})


def array_fields(parsed: ParsedModule, func: cst.FunctionDef) -> ArrayFields:
    """The array fields of `func`'s class, kept with the text (one computation per class)."""
    found = method_and_class(parsed, func)
    if found is None:
        return NO_FIELDS
    method, klass = found
    receiver = receiver_name(method)
    if receiver is None or any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in method.decorators
    ):
        return NO_FIELDS
    kept = parsed.kept("array fields")
    fields = kept.get(klass)
    if fields is None:
        fields = kept[klass] = _class_fields(parsed, klass)
    return ArrayFields(receiver, fields) if fields else NO_FIELDS


def _class_fields(parsed: ParsedModule, klass: cst.ClassDef, depth: int = 0) -> dict[str, str]:
    """The class's own array fields, then those of its bases defined in this module (a
    subclass reads what `class Base(eqx.Module): w: Array` declares)."""
    fields: dict[str, str] = {}
    static: set[str] = set()
    if depth < 4:
        classes = _module_classes(parsed)
        for base in klass.bases:
            if isinstance(base.value, cst.Name) and base.value.value in classes and classes[base.value.value] is not klass:
                fields.update(_class_fields(parsed, classes[base.value.value], depth + 1))
    for statement in klass.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                fields.pop(small.target.value, None)  # redeclared here: this declaration decides
                if _static_field(parsed, small.value):
                    static.add(small.target.value)
                elif is_array_annotation(parsed, small.annotation.annotation):
                    fields[small.target.value] = f"a field declared `{parsed.code(small.annotation.annotation)}`"
    python: set[str] = set()
    for statement in klass.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value in CONSTRUCTORS:
            stored, values = _stored_arrays(parsed, statement)
            for name, evidence in stored.items():
                fields.setdefault(name, evidence)
            python |= values
    # A declaration the constructor contradicts (`coefficients: Array`, then `self.coefficients =
    # [jnp.asarray(c) for c in cs]`): what it stores decides.
    return {name: why for name, why in fields.items() if name not in static and name not in python}


def _module_classes(parsed: ParsedModule) -> dict[str, cst.ClassDef]:
    """The module's top-level classes by name (one definition each; a name defined twice is left out)."""
    kept = parsed.kept("array fields")
    if "classes" not in kept:
        found: dict[str, cst.ClassDef] = {}
        twice: set[str] = set()
        for statement in parsed.module.body:
            if isinstance(statement, cst.ClassDef):
                name = statement.name.value
                if name in found:
                    twice.add(name)
                found[name] = statement
        kept["classes"] = {n: c for n, c in found.items() if n not in twice}
    return kept["classes"]


def _stored_arrays(parsed: ParsedModule, method: cst.FunctionDef) -> tuple[dict[str, str], set[str]]:
    """`self.x = jnp.asarray(x)`, `self.w = w` with `w: Array`: attributes a constructor sets to
    an array (one it also sets to anything else is left out); and those it sets to a Python
    container or literal (`[...]`, a comprehension, `list(...)`, `(1, 2)`)."""
    receiver = receiver_name(method)
    annotated = {
        p.name.value for p in parameters(method, stars=False)
        if p.annotation is not None and is_array_annotation(parsed, p.annotation.annotation)
    }
    stored: dict[str, str] = {}
    other: set[str] = set()

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is method

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                self._store(target.target, node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                self._store(node.target, node.value)

        def _store(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == receiver):
                return
            name = target.attr.value
            code = parsed.code(value)
            if isinstance(value, cst.Call) and _jax_array_call(parsed, value):
                stored.setdefault(name, f"set to `{code}` in `{method.name.value}`")
            elif isinstance(value, cst.Name) and value.value in annotated:
                stored.setdefault(name, f"set to the array argument `{code}` in `{method.name.value}`")
            else:
                other.add(name)
                if isinstance(value, PYTHON_VALUES) or (
                    isinstance(value, cst.Call) and parsed.qualified_name(value.func) in PYTHON_BUILDERS
                ):
                    python.add(name)

    python: set[str] = set()
    method.visit(Walk())
    return {name: why for name, why in stored.items() if name not in other}, python


# Values that are Python containers or literals, never one array.
PYTHON_VALUES = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                 cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)
PYTHON_BUILDERS = frozenset({"builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.int",
                             "builtins.float", "builtins.str"})
