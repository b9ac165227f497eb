"""How the loop index is used once per-step reads are taken out.

In the loop the index is a Python int; in a `lax.scan` step it is a traced
int32. Arithmetic, array indexing and jnp calls behave the same on both;
Python control flow, slice bounds, shapes and container lookups do not.
"""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import dataclass, field

import libcst as cst

from jaxloopfix.analysis.arrays import JAX_ARRAY_ATTRIBUTES, ArrayFacts
from jaxloopfix.analysis.helper_structure import AXIS_PARAMETERS
from jaxloopfix.analysis.names import loads, stored_names
from jaxloopfix.analysis.value_kinds import ARRAY, CONTAINER, ValueKinds
from jaxloopfix.analysis.source import ParsedModule, descendants, names_in, shorten

# jnp/lax functions whose first argument is a shape, a size or an axis.
SHAPE_FIRST = frozenset(
    {"arange", "zeros", "ones", "empty", "full", "eye", "identity", "linspace", "logspace", "geomspace", "tri",
     "iota", "broadcasted_iota", "PRNGKey", "key"}
)
# jnp/lax functions whose later positional arguments may be traced values.
VALUE_ARGS = frozenset(
    {"where", "maximum", "minimum", "add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
     "power", "mod", "remainder", "arctan2", "hypot", "logaddexp", "equal", "not_equal", "less", "less_equal",
     "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "dot", "matmul", "inner", "outer",
     "clip", "fold_in", "select", "dynamic_index_in_dim", "dynamic_update_index_in_dim", "take",
     "full_like", "interp", "polyval", "heaviside", "copysign", "fmax", "fmin", "isclose", "bitwise_and",
     "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "dynamic_update_slice", "dynamic_slice",
     "cond", "switch"}
)
ARITH_BUILTINS = frozenset({"builtins.abs", "builtins.pow"})
# jnp/lax functions that take the index as an index (or fold it into a key): no dtype effects.
INDEX_ARGS = frozenset(
    {"fold_in", "dynamic_index_in_dim", "dynamic_update_index_in_dim", "dynamic_slice_in_dim",
     "dynamic_update_slice_in_dim", "dynamic_slice", "dynamic_update_slice", "take", "take_along_axis"}
)


@dataclass
class IndexUse:
    used: bool = False
    refusal: str | None = None
    # Evidence that the index subscripts a Python container (a loop over layers, not time).
    container: str | None = None
    maybe_arrays: set[str] = field(default_factory=set)  # indexed names only probably arrays
    unsafe_reasons: list[str] = field(default_factory=list)


class IndexUseChecker:
    def __init__(
        self,
        parsed: ParsedModule,
        facts: ArrayFacts,
        body: list[cst.BaseStatement],
        array_names: set[str],
        kinds: ValueKinds | None = None,
    ) -> None:
        self.parsed = parsed
        self.facts = facts
        self.body = body
        self.array_names = array_names  # arrays inside the step: carries, slices, element names
        self.kinds = kinds  # what values are (`value_kinds`): `pos >= t` of an array is an array

    def is_array(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and expr.value in self.array_names:
            return True
        if self.kinds is not None and self.kinds.of(expr).name == ARRAY:
            return True
        if isinstance(expr, (cst.BinaryOperation,)):
            return self.is_array(expr.left) or self.is_array(expr.right)
        if isinstance(expr, cst.Comparison):
            return self.is_array(expr.left) or any(self.is_array(c.comparator) for c in expr.comparisons)
        if isinstance(expr, cst.Subscript):
            return self.is_array(expr.value)
        return self.facts.is_array(expr)

    def tainted(self, index: str) -> set[str]:
        """Names holding Python ints derived from the index (`k = t + 1`)."""
        tainted = {index}
        changed = True
        statements = _simple_statements(self.body)
        while changed:
            changed = False
            for small in statements:
                if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None:
                    if any(n.value in tainted for n in _value_loads(small.value)) and not self.is_array(small.value):
                        targets = (
                            [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        )
                        for target in targets:
                            new = stored_names(target) - tainted
                            if new:
                                tainted |= new
                                changed = True
        return tainted

    def check(self, index: str, skip: list[cst.Subscript], selects: Sequence[cst.If] = ()) -> IndexUse:
        """How the body uses the index beyond the per-step reads in `skip`. The tests of `selects`
        (an `if` the rewrite turns into `jnp.where`) use it as a traced value, which is fine."""
        self.index = index
        result = IndexUse()
        tainted = self.tainted(index)
        skip_ids = {id(s) for s in skip}
        tests = {id(node.test) for node in selects}
        for statement in self.body:
            for name in loads(statement):
                if name.value not in tainted:
                    continue
                if any(id(a) in skip_ids for a in self.parsed.ancestors(name)):
                    continue
                result.used = True
                python = self._python_selection(name)
                if python is not None:
                    result.refusal = python
                    return result
                if any(id(a) in tests for a in self.parsed.ancestors(name)):
                    continue
                self._classify(name, result)
                if result.refusal or result.container:
                    return result
        return result

    def _classify(self, name: cst.Name, result: IndexUse) -> None:
        code = name.value
        node: cst.CSTNode = name
        boolean = False  # a comparison of the index: a bool in both versions
        while True:
            parent = self.parsed.parent(node)
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                boolean = True
                node = parent
                continue
            if isinstance(parent, cst.UnaryOperation):
                boolean = isinstance(parent.operator, cst.Not) and boolean
                node = parent
                continue
            if isinstance(parent, cst.BinaryOperation):
                boolean = False
                other = parent.right if parent.left is node else parent.left
                if self.is_array(other):
                    self._value_use(code, result)
                    return
                node = parent
                continue
            if isinstance(parent, cst.Element):
                container = self.parsed.parent(parent)
                if isinstance(container, (cst.Tuple, cst.List)):
                    node = container
                    continue
                result.refusal = f"the loop index {self._shown(code)} is put in a Python container"
                return
            if isinstance(parent, cst.Index):
                element = self.parsed.parent(parent)
                subscript = self.parsed.parent(element) if element is not None else None
                if isinstance(subscript, cst.Subscript):
                    value = subscript.value
                    if self.is_array(value) or (
                        isinstance(value, cst.Attribute) and value.attr.value == "at" and self.is_array(value.value)
                    ):
                        return
                    # Not proven an array. Positive container evidence (`self.layers[i](x)`, a local
                    # list) was looked for before planning; without it this is a possible array,
                    # unless what it selects is read as an object (`queries[k].value`).
                    selected = object_selection(self.parsed, subscript)
                    if selected is not None:
                        result.refusal = f"the loop index {self._shown(code)} {selected}"
                        return
                    if isinstance(value, cst.Attribute) and value.attr.value == "at":
                        value = value.value  # `x.at[t].get()`: the array in question is `x`
                    result.maybe_arrays.add(self.parsed.code(value))
                    return
                result.refusal = f"the loop index {self._shown(code)} is used as a Python value"
                return
            if isinstance(parent, cst.Param):
                result.refusal = (
                    f"the loop index {self._shown(code)} is the default of a parameter of a function defined "
                    "in the step; the scan's step would not bind it"
                )
                return
            if isinstance(parent, cst.Slice):
                result.refusal = (
                    f"the loop index {self._shown(code)} is a slice bound (`x[t:t + k]`); traced slice bounds raise an "
                    "IndexError (use `lax.dynamic_slice_in_dim`)"
                )
                return
            if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.BooleanOperation, cst.Assert)):
                result.refusal = (
                    f"the loop index {self._shown(code)} decides Python control flow (`if`/`and`/`or`); "
                    "in a scan step it is traced and cannot be converted to bool"
                )
                return
            if isinstance(parent, cst.For):
                result.refusal = f"the loop index {self._shown(code)} sets the trip count of an inner loop"
                return
            if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                if isinstance(parent, cst.AugAssign) and parent.value is node:
                    self._value_use(code, result)  # `h += t`: combined with the target's value
                return  # a name derived from the index: its own uses are checked
            if isinstance(parent, (cst.Expr, cst.Attribute)):
                return
            if isinstance(parent, cst.Arg):
                self._argument(parent, code, result, boolean)
                return
            result.refusal = f"the loop index {self._shown(code)} is used as a Python value"
            return

    def _python_selection(self, name: cst.Name) -> str | None:
        """`COLORS[i]` with `COLORS` a Python tuple or list by its kind, or `x[i] is None`: in the
        loop Python picks the item (or decides the identity) at trace time; in a scan step the
        index is a tracer, which cannot index a Python container and is never `None`."""
        if self.kinds is None:
            return None
        for parent in self.parsed.ancestors(name):
            if isinstance(parent, cst.SubscriptElement):
                subscript = self.parsed.parent(parent)
                if isinstance(subscript, cst.Subscript):
                    kind = self.kinds.of(subscript.value)
                    if kind.name == CONTAINER and kind.item is not None and kind.item.python:
                        shown = shorten(self.parsed.code(subscript.value), 30)
                        origin = f" ({kind.why})" if kind.why and kind.why != "a Python container" and shown not in kind.why else ""
                        return (
                            f"the loop index {self._shown(name.value)} selects items of `{shown}`, a Python container "
                            f"of Python values{origin}: a traced index cannot index it"
                        )
                continue
            if isinstance(parent, cst.Comparison) and any(
                isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons
            ):
                return (
                    f"the loop index {self._shown(name.value)} decides an identity test "
                    f"(`{shorten(self.parsed.code(parent), 30)}`), which Python answers at trace time"
                )
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Call, cst.Lambda)):
                return None
        return None

    def _axis_parameter(self, arg: cst.Arg) -> str | None:
        """`axis=i` to any call: the axis parameter `arg` binds. (A helper's parameter that takes
        the index as an axis is `helper_structure`'s evidence, found before planning.)"""
        if arg.keyword is not None and arg.keyword.value in AXIS_PARAMETERS:
            return arg.keyword.value
        return None

    def _shown(self, code: str) -> str:
        """`t`, or `t` (through `k`) for a name derived from it."""
        return f"`{self.index}`" if code == self.index else f"`{self.index}` (through `{code}`)"

    def _value_use(self, code: str, result: IndexUse) -> None:
        shown = self._shown(code)
        reason = (
            f"the loop index {shown} is used as a value: in the scan it is a traced int32, not a Python int, "
            "so integer overflow past 2**31 and dtype promotion with low-precision arrays (bfloat16, int8) "
            "can differ from the loop"
        )
        if reason not in result.unsafe_reasons:
            result.unsafe_reasons.append(reason)

    def _argument(self, arg: cst.Arg, code: str, result: IndexUse, boolean: bool) -> None:
        call = self.parsed.parent(arg)
        if not isinstance(call, cst.Call):
            result.refusal = f"the loop index {self._shown(code)} is used as a Python value"
            return
        func = call.func
        qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        position = next(i for i, a in enumerate(call.args) if a is arg)
        axis = self._axis_parameter(arg)
        if axis is not None:
            result.container = (
                f"the loop index {self._shown(code)} is an axis (`{axis}=` of `{shorten(self.parsed.code(func), 30)}`): "
                "each step works along a different axis, a static structure, not a step along one axis"
            )
            return
        if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
            result.refusal = (
                f"the loop index {self._shown(code)} is formatted into a string (`{self.parsed.code(call)}`), "
                "which needs a concrete Python value"
            )
            return
        if qname is not None and qname.startswith("builtins."):
            if qname in ARITH_BUILTINS:
                self._value_use(code, result)
                return
            result.refusal = (
                f"the loop index {self._shown(code)} is passed to `{qname.removeprefix('builtins.')}()`, "
                "which needs a concrete Python value"
            )
            return
        if qname is not None and qname.startswith("jax."):
            short = qname.rsplit(".", 1)[-1]
            if arg.keyword is not None and arg.keyword.value not in {"x", "y", "a", "b", "operand", "index", "indices", "data"}:
                result.refusal = f"the loop index {self._shown(code)} is passed as `{arg.keyword.value}=` to `{short}`, which needs a static value"
                return
            if short in SHAPE_FIRST or (position > 0 and short not in VALUE_ARGS):
                result.refusal = f"the loop index {self._shown(code)} is passed to `{short}` where a static value is needed"
                return
            if short not in INDEX_ARGS and not boolean:
                self._value_use(code, result)
            return
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Attribute) and receiver.value.attr.value == "at":
                self._value_use(code, result)  # x.at[i].set(t): the index becomes data
                return
            if self.is_array(receiver):
                result.refusal = f"the loop index {self._shown(code)} is passed to the array method `.{func.attr.value}()`, which may need a static value"
                return
        result.unsafe_reasons.append(
            f"the loop index {self._shown(code)} is passed to `{self.parsed.code(func)}`, which may use it as a Python int"
        )




def _value_loads(expr: cst.BaseExpression) -> list[cst.Name]:
    """Names read as values: `dones[t]` reads `dones` as a value but `t` only as an index, so
    `not_done = 1 - dones[t]` holds an array element, not a Python int derived from the index."""
    names: list[cst.Name] = []

    class Walk(cst.CSTVisitor):
        def visit_SubscriptElement(self, node: cst.SubscriptElement) -> bool:
            return isinstance(node.slice, cst.Slice)  # slice bounds are still checked

        def visit_Name(self, node: cst.Name) -> None:
            names.append(node)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

    expr.visit(Walk())
    return names


def _simple_statements(body: list[cst.BaseStatement]) -> list[cst.BaseSmallStatement]:
    out: list[cst.BaseSmallStatement] = []

    class Walk(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            out.extend(node.body)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    for statement in body:
        statement.visit(Walk())
    return out


def object_selection(parsed: ParsedModule, subscript: cst.Subscript) -> str | None:
    """`queries[k].value`: the item a subscript selects is read with an attribute no `jax.Array`
    has, so the subscripted value is a Python container of objects, and what selects from it
    must stay a Python value (a scan's traced index or item cannot)."""
    used = parsed.parent(subscript)
    if not (isinstance(used, cst.Attribute) and used.value is subscript) or used.attr.value in JAX_ARRAY_ATTRIBUTES:
        return None
    if isinstance(subscript.value, cst.Attribute) and subscript.value.attr.value == "at":
        return None  # `x.at[i].get()`: the array's indexed-update helper, not an item
    return (
        f"selects an item of `{shorten(parsed.code(subscript.value), 30)}` that is read as an object "
        f"(`.{used.attr.value}`, which arrays lack): a Python container, which a traced value cannot index"
    )


def selects_objects(parsed: ParsedModule, body: Sequence[cst.CSTNode], name: str) -> str | None:
    """Where the loop item `name` subscripts a container of objects (`object_selection`)."""
    for statement in body:
        for node in descendants(statement):
            if isinstance(node, cst.Subscript) and any(name in names_in(e.slice) for e in node.slice):
                selected = object_selection(parsed, node)
                if selected is not None:
                    return f"the loop item `{name}` {selected}"
    return None
