"""Carries, accumulators and liveness of one loop.

A carry is a name the body assigns and that is read before assignment in a
later iteration or after the loop; an accumulator is a list created empty
before the loop, appended to once per step and stacked after it.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.names import assigned_names, loads, parameters, statements_storing, stored_names
from jaxloopfix.analysis.plan import Accumulator
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.analysis.traced import TracedFunction

FINISHERS = {"jax.numpy.stack": "stack", "jax.numpy.array": "array", "jax.numpy.asarray": "asarray"}


def contains(parsed: ParsedModule, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return parsed.contains(outer, inner)


class LoopDataflow:
    """Read/write facts about a loop inside its function."""

    def __init__(self, parsed: ParsedModule, traced: TracedFunction, loop: cst.For, facts: ArrayFacts) -> None:
        self.parsed = parsed
        self.traced = traced
        self.func = traced.node
        self.loop = loop
        self.facts = facts
        self._function_loads = loads(self.func.body)

    def outside_loads(self, name: str) -> list[cst.Name]:
        return [n for n in self._function_loads if n.value == name and not contains(self.parsed, self.loop, n)]

    def live_after(self) -> set[str]:
        """Names that may be read after the loop: later in the function, anywhere in an
        enclosing loop, or in a nested function (which may run later)."""
        enclosing = [
            a for a in self._ancestors_in_function(self.loop) if isinstance(a, (cst.For, cst.While))
        ]
        live: set[str] = set()
        for name in self._function_loads:
            if contains(self.parsed, self.loop, name):
                continue
            if self.parsed.after(name, self.loop):
                if not self._redefined_before(name):
                    live.add(name.value)
            elif any(contains(self.parsed, e, name) for e in enclosing):
                live.add(name.value)
            elif any(
                isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in self._ancestors_in_function(name)
            ):
                live.add(name.value)
        return live

    def _redefined_before(self, name: cst.Name) -> bool:
        """Whether `name` is rebound after the loop and before this read: by an enclosing `for`
        target, or by a plain assignment earlier in an enclosing block."""
        child: cst.CSTNode = name
        for ancestor in self._ancestors_in_function(name):
            if isinstance(ancestor, cst.For) and name.value in stored_names(ancestor.target) and child is not ancestor.iter:
                return True
            if isinstance(ancestor, cst.IndentedBlock):
                for sibling in ancestor.body:
                    if sibling is child:
                        break
                    if not self.parsed.after(sibling, self.loop):
                        continue
                    if isinstance(sibling, cst.SimpleStatementLine) and _assigned_value(sibling, name.value) is not None:
                        return True
            child = ancestor
        return False

    def _ancestors_in_function(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        out = []
        for ancestor in self.parsed.ancestors(node):
            if ancestor is self.func:
                break
            out.append(ancestor)
        return out

    # -- reaching definitions before the loop -------------------------------------
    def preceding_statements(self) -> list[cst.CSTNode]:
        """Statements that run before the loop in straight-line order, nearest first,
        walking out through enclosing blocks up to the function body."""
        out: list[cst.CSTNode] = []
        node: cst.CSTNode = self.loop
        while node is not self.func:
            parent = self.parsed.parent(node)
            if parent is None:
                break
            if isinstance(parent, cst.IndentedBlock):
                siblings = list(parent.body)
                index = next(i for i, s in enumerate(siblings) if s is node)
                out.extend(reversed(siblings[:index]))
            node = parent
        return out

    def init_of(self, name: str) -> tuple[str, cst.BaseExpression | None]:
        """How the value of `name` on entry to the loop is known: ("array"|"scalar"|
        "static"|"unknown"|"undefined", the expression)."""
        for statement in self.preceding_statements():
            if name not in assigned_names([statement]):
                continue
            value = _assigned_value(statement, name)
            if value is None:
                return "unknown", None
            return self.classify_value(value), value
        if not self._is_param(name):
            return "undefined", None
        return self._param_kind(name), None

    def _is_param(self, name: str) -> bool:
        return name in {q.name.value for q in parameters(self.func, stars=False)}

    def _param_kind(self, name: str) -> str:
        """A parameter: traced arguments of a transformed function are arrays (or pytrees of them)."""
        if name in self.facts.names:
            return "array"
        if not self._is_param(name):
            return "unknown"
        if name in self.traced.static_params:
            return "static"
        if name in self.traced.passed_through:
            return "unknown"  # unmapped by `vmap`: whatever the caller passes
        param = next(q for q in parameters(self.func, stars=False) if q.name.value == name)
        if param.default is not None and not self.facts.is_array(param.default):
            return "unknown"  # `init=0.0`: called without it, the carry starts as a Python scalar
        return "array" if self.traced.transformed else "unknown"

    def classify_value(self, value: cst.BaseExpression) -> str:
        if self.facts.is_array(value):
            return "array"
        if isinstance(value, cst.Name) and value.value not in {"None", "True", "False"}:
            return self._param_kind(value.value)
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)) or (
            isinstance(value, cst.Name) and value.value in {"None", "True", "False"}
        ):
            return "scalar"
        if isinstance(value, cst.UnaryOperation):
            return self.classify_value(value.expression)
        if isinstance(value, (cst.Tuple, cst.List)):
            kinds = {self.classify_value(e.value) for e in value.elements if isinstance(e, cst.Element)}
            if kinds == {"array"}:
                return "array"
            return "scalar" if "scalar" in kinds else "unknown"
        if isinstance(value, cst.Dict):
            kinds = {
                self.classify_value(e.value) for e in value.elements if isinstance(e, cst.DictElement)
            }
            if kinds == {"array"}:
                return "array"
            return "scalar" if "scalar" in kinds else "unknown"
        return "unknown"

    # -- accumulators -------------------------------------------------------------
    def accumulator(self, name: str, appends: list[cst.SimpleStatementLine]) -> Accumulator | str:
        """An Accumulator for list `name`, or the reason it is not one."""
        body = list(self.loop.body.body)
        if len(appends) != 1 or appends[0] not in body:
            return f"`{name}` is added to conditionally or more than once per step"
        append = appends[0]
        call = _append_call(append)
        assert call is not None
        value = call.args[-1].value
        prepend = isinstance(call.func, cst.Attribute) and call.func.attr.value == "insert"
        in_body = [n for n in loads(self.loop.body) if n.value == name]
        if len(in_body) != 1:
            return f"`{name}` is used in the loop body other than by `{name}.append(...)`"
        if name in assigned_names(body):
            return f"`{name}` is reassigned in the loop body"
        init = None
        for statement in self.preceding_statements():
            if name in assigned_names([statement]) or any(n.value == name for n in loads(statement)):
                if (
                    isinstance(statement, cst.SimpleStatementLine)
                    and len(statement.body) == 1
                    and isinstance(statement.body[0], cst.Assign)
                    and len(statement.body[0].targets) == 1
                    and isinstance(statement.body[0].targets[0].target, cst.Name)
                    and statement.body[0].targets[0].target.value == name
                    and isinstance(statement.body[0].value, cst.List)
                    and not any(isinstance(e, cst.StarredElement) for e in statement.body[0].value.elements)
                ):
                    init = statement
                break
        if init is None or self.parsed.parent(init) is not self.parsed.parent(self.loop):
            return f"`{name}` is not created as a list literal (`{name} = []`) just before the loop"
        initial = bool(init.body[0].value.elements)  # type: ignore[attr-defined]
        uses = [n for n in self.outside_loads(name) if not contains(self.parsed, init, n)]
        stores = [
            s for s in self._function_stores(name) if not contains(self.parsed, init, s)
        ]
        rebinding: tuple[cst.SimpleStatementLine, cst.SimpleStatementLine | None] | None = None
        if stores:
            found = self._rebinding(name, stores, uses)
            if isinstance(found, str):
                return found
            rebinding = found
            last = found[0]
            uses = [u for u in uses if not self.parsed.after(u, last)]
            if found[1] is not None:  # `outs = outs[::-1]` then `outs = jnp.array(outs)`
                uses = [u for u in uses if not self.parsed.contains(found[1], u)]
        if not uses:
            return f"`{name}` is never used after the loop; only a single `jnp.stack({name})` can become the scan's output"
        if any(not self.parsed.after(use, self.loop) for use in uses):
            return f"`{name}` is read before the loop finishes"
        finisher = self._finisher(uses[0], name) if len(uses) == 1 else "used as a list"
        if isinstance(finisher, str):
            if rebinding is not None:
                return finisher if len(uses) == 1 else (
                    f"`{name}` is used {len(uses)} times after the loop; only a single `jnp.stack({name})` can "
                    "become the scan's output"
                )
            # Used as a list (returned, indexed, iterated): `list(stacked)` gives back the same
            # per-step arrays, in order.
            return Accumulator(
                name=name, init=init, append=append, value=value, finisher=None, kept_as_list=True, prepend=prepend,
                initial=initial,
            )
        call_node, reversed_arg, axis = finisher
        reversed_finisher = reversed_arg != (rebinding is not None and rebinding[1] is not None)
        if initial and (reversed_finisher or axis != 0):
            return (
                f"`{name}` starts with items of its own and is stacked "
                + ("in reverse" if reversed_finisher else f"along axis {axis}")
                + "; only a list stacked along axis 0 in its own order is joined with the scan's outputs"
            )
        return Accumulator(
            prepend=prepend,
            initial=initial,
            name=name,
            init=init,
            append=append,
            value=value,
            finisher=call_node,
            finisher_reversed=reversed_finisher,
            axis=axis,
            rebinding=rebinding[0] if rebinding is not None else None,
            dropped=[rebinding[1]] if rebinding is not None and rebinding[1] is not None else [],
        )

    def _rebinding(
        self, name: str, stores: list[cst.CSTNode], uses: list[cst.Name]
    ) -> tuple[cst.SimpleStatementLine, cst.SimpleStatementLine | None] | str:
        """`outs = jnp.stack(outs)` (or `outs = outs[::-1]` then `outs = jnp.array(outs)`) right
        after the loop, in its block: the finisher rebinds the list's name to the stacked array.
        Every other store of `name` comes after it, and nothing reads the list in between."""
        reason = f"`{name}` is reassigned outside the loop"
        block = self.parsed.parent(self.loop)
        if not isinstance(block, cst.IndentedBlock):
            return reason
        siblings = list(block.body)
        position = next(i for i, statement in enumerate(siblings) if statement is self.loop)
        later = [s for s in stores if self.parsed.after(s, self.loop)]
        if len(later) != len(stores):
            return reason
        first = min(later, key=lambda s: self.parsed.order(s)[0])
        line = self.parsed.parent(first)
        if not any(line is s for s in siblings[position + 1:]) or _rebound_value(line, name) is None:
            return reason
        reverse_line: cst.SimpleStatementLine | None = None
        value = _rebound_value(line, name)
        if isinstance(value, cst.Subscript) and _is_reverse_slice(value) and _is_name(value.value, name):
            index = next(i for i, s in enumerate(siblings) if s is line)
            following = siblings[index + 1] if index + 1 < len(siblings) else None
            if following is None or _rebound_value(following, name) is None:
                return reason
            reverse_line, line = line, following  # type: ignore[assignment]
        assert isinstance(line, cst.SimpleStatementLine)
        if any(self.parsed.after(u, self.loop) and not self.parsed.after(u, line) and not self.parsed.contains(line, u)
               and not (reverse_line is not None and self.parsed.contains(reverse_line, u)) for u in uses):
            return f"`{name}` is read between the loop and `{name} = ...` after it"
        return line, reverse_line

    def _function_stores(self, name: str) -> list[cst.CSTNode]:
        return statements_storing(self.func.body, name)

    def _finisher(self, use: cst.Name, name: str) -> tuple[cst.Call, bool, int] | str:
        reason = f"`{name}` is used after the loop other than as `jnp.stack({name})`"
        parent = self.parsed.parent(use)
        reversed_arg = False
        if isinstance(parent, cst.Subscript):
            if not _is_reverse_slice(parent):
                return reason
            reversed_arg = True
            parent = self.parsed.parent(parent)
        if not isinstance(parent, cst.Arg) or parent.keyword is not None or parent.star:
            return reason
        call = self.parsed.parent(parent)
        if not isinstance(call, cst.Call) or not call.args or call.args[0] is not parent:
            return reason
        kind = FINISHERS.get(self.parsed.qualified_name(call.func) or "") if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        if kind is None:
            return reason
        axis = 0
        extra = list(call.args[1:])
        if kind == "stack":
            if len(extra) > 1:
                return f"`jnp.stack({name}, ...)` has arguments other than `axis`"
            if extra:
                arg = extra[0]
                if arg.keyword is not None and arg.keyword.value != "axis":
                    return f"`jnp.stack({name}, ...)` has arguments other than `axis`"
                value = _int_literal(arg.value)
                if value is None:
                    return f"the stacking axis of `{name}` is not an integer literal"
                axis = value
        elif extra:
            return f"`jnp.{kind}({name}, ...)` has extra arguments (dtype/copy), not rewritten"
        return call, reversed_arg, axis


def _rebound_value(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The value of `name = value` when that is the whole statement."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and _is_name(small.targets[0].target, name):
        return small.value
    return None


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _append_call(statement: cst.CSTNode) -> cst.Call | None:
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    expr = statement.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    call = expr.value
    if not (isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)):
        return None
    if any(arg.keyword is not None or arg.star for arg in call.args):
        return None
    if call.func.attr.value == "append" and len(call.args) == 1:
        return call
    # `name.insert(0, value)`: a prepend, the list built back to front.
    first = call.args[0].value if call.args else None
    if call.func.attr.value == "insert" and len(call.args) == 2 and isinstance(first, cst.Integer) and first.evaluated_value == 0:
        return call
    return None


def appended_list(statement: cst.CSTNode) -> str | None:
    call = _append_call(statement)
    return call.func.value.value if call is not None else None  # type: ignore[union-attr]


def _is_reverse_slice(node: cst.Subscript) -> bool:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
        return False
    s = node.slice[0].slice
    return s.lower is None and s.upper is None and s.step is not None and _int_literal(s.step) == -1


def _int_literal(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.evaluated_value)
    return None


def _assigned_value(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The expression a simple statement assigns to `name`, if it is that simple."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    result = None
    for small in statement.body:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Name) and target.value == name:
                result = small.value
            elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(small.value, (cst.Tuple, cst.List)):
                if len(target.elements) == len(small.value.elements):
                    for t, v in zip(target.elements, small.value.elements):
                        if isinstance(t.value, cst.Name) and t.value.value == name:
                            result = v.value
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
            result = small.value
    return result

