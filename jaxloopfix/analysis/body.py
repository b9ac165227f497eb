"""What a loop body does that a `lax.scan` step function cannot do the same way.

Each check returns a reason in words a user can act on; the first reason
found refuses the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from jaxloopfix.analysis.index_use import INDEX_ARGS
from jaxloopfix.analysis.names import assigned_names, loads
from jaxloopfix.analysis.purity import IMPURE, PurityChecker
from jaxloopfix.analysis.source import ParsedModule, shorten

# Maps that call their function on every leaf before returning: a lambda given to them never
# outlives the step, so it may capture the step's values (a traced index included).
TREE_MAPS = frozenset(
    {"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_map", "jax.tree_util.tree_map_with_path", "jax.tree.map_with_path"}
)

# A multiplier of the loop index up to this size cannot overflow int32 in any loop short enough
# to unroll (2**21 steps); larger or unknown ones can.
SMALL_INDEX_FACTOR = 1024


class _BodyCheck(cst.CSTVisitor):
    def __init__(self, parsed: ParsedModule, loop_names: set[str], body_assigned: set[str], accumulators: set[str]) -> None:
        self.parsed = parsed
        self.loop_names = loop_names
        self.body_assigned = body_assigned
        self.accumulators = accumulators
        self.reason: str | None = None
        self._inner_loops = 0

    def refuse(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def visit_For(self, node: cst.For) -> bool:
        # Only the inner loop's body is its own: `break`/`continue` in its `else:` clause belong
        # to the loop being rewritten.
        node.target.visit(self)
        node.iter.visit(self)
        self._inner_loops += 1
        node.body.visit(self)
        self._inner_loops -= 1
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_While(self, node: cst.While) -> bool:
        node.test.visit(self)
        self._inner_loops += 1
        node.body.visit(self)
        self._inner_loops -= 1
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_Break(self, node: cst.Break) -> None:
        if not self._inner_loops:
            self.refuse("the body has `break`: `lax.scan` always runs every step")

    def visit_Continue(self, node: cst.Continue) -> None:
        if not self._inner_loops:
            self.refuse("the body has `continue`: a step function cannot skip the rest of a step")

    def visit_Return(self, node: cst.Return) -> None:
        self.refuse("the body has `return`: a step function cannot leave the enclosing function")

    def visit_Yield(self, node: cst.Yield) -> None:
        self.refuse("the body has `yield`")

    def visit_Await(self, node: cst.Await) -> None:
        self.refuse("the body has `await`")

    def visit_Raise(self, node: cst.Raise) -> None:
        self.refuse("the body has `raise`")

    def visit_Try(self, node: cst.Try) -> None:
        self.refuse("the body has `try`: exceptions inside a traced step are not handled the same way")

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self.refuse("the body has `try`: exceptions inside a traced step are not handled the same way")

    def visit_With(self, node: cst.With) -> None:
        self.refuse("the body has `with`: a context manager entered per step may have effects outside the trace")

    def visit_Global(self, node: cst.Global) -> None:
        self.refuse("the body declares `global` names")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.refuse("the body declares `nonlocal` names")

    def visit_Del(self, node: cst.Del) -> None:
        self.refuse("the body has `del`")

    def visit_Import(self, node: cst.Import) -> None:
        self.refuse("the body has an import statement")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.refuse("the body has an import statement")

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.refuse("the body uses an assignment expression (`:=`)")

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.refuse("the body defines a class")
        return False

    def _called_now(self, node: cst.Lambda) -> bool:
        """A lambda passed as the function of a tree map runs before the map returns, inside its own step."""
        arg = self.parsed.parent(node)
        call = self.parsed.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return False
        if self.parsed.qualified_name(call.func) not in TREE_MAPS:
            return False
        return arg is call.args[0] and arg.keyword is None or (arg.keyword is not None and arg.keyword.value == "f")

    def _closure(self, node: cst.FunctionDef | cst.Lambda) -> None:
        if isinstance(node, cst.Lambda) and self._called_now(node):
            return
        free = {n.value for n in loads(node)}
        captured = sorted(free & (self.loop_names | self.body_assigned))
        loop_captured = sorted(free & self.loop_names)
        if loop_captured:
            self.refuse(
                f"a closure in the body captures the loop variable `{loop_captured[0]}`: "
                "it would see a traced value instead of this step's Python value"
            )
        elif captured:
            self.refuse(
                f"a closure in the body captures `{captured[0]}`, which the loop assigns: jaxloopfix does not "
                "prove the closure is called only within its own step"
            )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._closure(node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._closure(node)
        return False

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self.refuse(f"the body assigns the attribute `{self.parsed.code(target)}` (a side effect on an outer object)")
        elif isinstance(target, cst.Subscript):
            self.refuse(f"the body assigns `{self.parsed.code(target)}` in place (a side effect on an outer object)")
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)


def body_refusal(
    parsed: ParsedModule,
    loop: cst.For,
    loop_names: set[str],
    accumulators: Iterable[str],
    *,
    unsafe: list[str] | None = None,
    index: str | None = None,
    function: cst.FunctionDef | None = None,
    is_module_class: Callable[[cst.BaseExpression], bool] | None = None,
    facts=None,  # noqa: ANN001 - ArrayFacts of the function, for array methods
    static: set[str] | None = None,
) -> str | None:
    """The first reason the body cannot become a step function, or None. Reasons that only make
    the fix unsafe (calls not proven pure, index arithmetic that may overflow int32) are appended
    to `unsafe`."""
    if loop.asynchronous is not None:
        return "`async for` loops are not rewritten"
    if loop.orelse is not None:
        return "the loop has an `else:` clause"
    body = list(loop.body.body)
    assigned = assigned_names(body)
    reassigned = sorted(assigned & loop_names)
    if reassigned == ["_"] and not any(n.value == "_" for n in loads(function or loop)):
        reassigned = []  # `for _ in ...: _, x = f(x)`: a throwaway name, never read
    if reassigned:
        return f"the body reassigns the loop variable `{reassigned[0]}`"
    accumulators = set(accumulators)
    check = _BodyCheck(parsed, loop_names, assigned, accumulators)
    for statement in body:
        statement.visit(check)
    if check.reason is not None:
        return check.reason
    if function is None:
        function = next((a for a in parsed.ancestors(loop) if isinstance(a, cst.FunctionDef)), None)
    if function is None:
        return None
    purity = PurityChecker(parsed, function, is_module_class, facts)
    closure = purity.closure_reads(loop, assigned | loop_names)
    if closure is not None:
        return closure
    effects = purity.loop_effects(loop, accumulators)
    for effect in effects:
        if effect.kind == IMPURE:
            return effect.why
    reasons = unsafe if unsafe is not None else []
    for effect in effects:
        message = effect.message()
        if message not in reasons:
            reasons.append(message)
    if index is not None:
        overflow = index_overflow(parsed, body, index, static)
        if overflow is not None and overflow not in reasons:
            reasons.append(overflow)
    return None


def index_overflow(
    parsed: ParsedModule, body: list[cst.BaseStatement], index: str, static: set[str] | None = None
) -> str | None:
    """A reason when the loop index is multiplied by, shifted by or raised to a large or unknown
    Python integer where it indexes an array (`buf.at[(t * 2**30) % 3]`, `jnp.take(x, t * K)`):
    in the loop that arithmetic is on Python ints, in the scan on an int32 that can wrap. Value
    uses of the index (`h * t`) are already unsafe (see index_use)."""
    static = set(static or ())
    # Names computed from the index by Python arithmetic only (`k = t * 4 + 1`), with the risky
    # operation found in their definition, if any.
    derived: dict[str, str | None] = {index: None}

    def is_index_arith(expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in derived
        if isinstance(expr, cst.BinaryOperation):
            return is_index_arith(expr.left) or is_index_arith(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return is_index_arith(expr.expression)
        return False

    def python_number(expr: cst.BaseExpression) -> bool:
        """Operands that stay Python numbers in the loop: literals, static arguments, attributes."""
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.Name):
            return expr.value in derived or expr.value in static or expr.value.isupper()
        if isinstance(expr, cst.Attribute):
            return not isinstance(expr.value, cst.Call)
        if isinstance(expr, cst.BinaryOperation):
            return python_number(expr.left) and python_number(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return python_number(expr.expression)
        return False

    def risk(expr: cst.BaseExpression) -> str | None:
        """The first risky operation in Python index arithmetic `expr`."""
        if isinstance(expr, cst.Name):
            return derived.get(expr.value)
        if isinstance(expr, cst.UnaryOperation):
            return risk(expr.expression)
        if not isinstance(expr, cst.BinaryOperation):
            return None
        inner = risk(expr.left) or risk(expr.right)
        if inner:
            return inner
        left, right = is_index_arith(expr.left), is_index_arith(expr.right)
        if not (left or right):
            return None
        operator = expr.operator
        code = parsed.code(expr)
        if isinstance(operator, cst.Power):
            if right:
                return f"`{code}` raises a number to a power of the loop index"
            exponent = _constant(expr.right)
            if exponent is None or exponent > 1:
                return f"`{code}` raises the loop index to a power"
            return None
        if isinstance(operator, (cst.Multiply, cst.LeftShift)):
            if left and right:
                return f"`{code}` multiplies the loop index by itself"
            other = expr.right if left else expr.left
            if not python_number(other) or isinstance(other, cst.Float):
                return None  # array arithmetic: int32 in both versions
            factor = _constant(other)
            limit = SMALL_INDEX_FACTOR if isinstance(operator, cst.Multiply) else 10
            if factor is None:
                return f"`{code}` multiplies the loop index by `{shorten(parsed.code(other), 30)}`, which the analysis cannot bound"
            if abs(factor) > limit:
                return f"`{code}` multiplies the loop index by {factor}"
        return None

    changed = True
    while changed:
        changed = False
        for statement in body:
            for node in _assignments(statement):
                value = node.value
                if value is None or not is_index_arith(value) or not python_number(value):
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, cst.Name) and target.value not in derived:
                        derived[target.value] = risk(value)
                        changed = True
    found: list[str] = []

    class Walk(cst.CSTVisitor):
        def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
            for expr in _slice_parts(node.slice):
                reason = risk(expr) if not found else None
                if reason:
                    found.append(reason)

        def visit_Arg(self, node: cst.Arg) -> None:
            call = parsed.parent(node)
            if found or not isinstance(call, cst.Call) or not isinstance(call.func, (cst.Name, cst.Attribute)):
                return
            qname = parsed.qualified_name(call.func) or ""
            if qname.startswith("jax.") and qname.rsplit(".", 1)[-1] in INDEX_ARGS:
                parts = [node.value]
                if isinstance(node.value, (cst.Tuple, cst.List)):
                    parts += [e.value for e in node.value.elements]
                for expr in parts:
                    reason = risk(expr)
                    if reason:
                        found.append(reason)
                        return

    for statement in body:
        statement.visit(Walk())
    if not found:
        return None
    return (
        f"{found[0]}: in the scan the index is an int32, which can overflow (and wrap) where the loop's Python "
        "int does not"
    )


def _slice_parts(piece: cst.BaseSlice) -> list[cst.BaseExpression]:
    if isinstance(piece, cst.Index):
        value = piece.value
        if isinstance(value, cst.Tuple):
            return [e.value for e in value.elements]
        return [value]
    if isinstance(piece, cst.Slice):
        return [p for p in (piece.lower, piece.upper, piece.step) if p is not None]
    return []


def _assignments(statement: cst.CSTNode) -> list[cst.Assign | cst.AugAssign | cst.AnnAssign]:
    out: list[cst.Assign | cst.AugAssign | cst.AnnAssign] = []

    class Walk(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            out.append(node)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            out.append(node)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            out.append(node)

    statement.visit(Walk())
    return out


def _constant(expr: cst.BaseExpression) -> int | None:
    """The value of an integer constant expression of literals (`2**30`, `-4`, `3 * 1000`)."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _constant(expr.expression)
        return -inner if inner is not None else None
    if isinstance(expr, cst.BinaryOperation):
        left, right = _constant(expr.left), _constant(expr.right)
        if left is None or right is None:
            return None
        try:
            if isinstance(expr.operator, cst.Add):
                return left + right
            if isinstance(expr.operator, cst.Subtract):
                return left - right
            if isinstance(expr.operator, cst.Multiply):
                return left * right
            if isinstance(expr.operator, cst.Power) and 0 <= right <= 256:
                return left**right
            if isinstance(expr.operator, cst.LeftShift) and 0 <= right <= 256:
                return left << right
            if isinstance(expr.operator, cst.FloorDivide) and right:
                return left // right
        except (OverflowError, ValueError):
            return None
    return None
