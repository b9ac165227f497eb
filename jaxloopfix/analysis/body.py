"""What a loop body does that a `lax.scan` step function cannot do the same way.

Each check returns a reason in words a user can act on; the first reason
found refuses the fix.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from jaxloopfix.analysis.names import assigned_names, loads
from jaxloopfix.analysis.source import ParsedModule

SIDE_EFFECT_BUILTINS = frozenset(
    {"builtins.print", "builtins.input", "builtins.open", "builtins.breakpoint", "builtins.exec", "builtins.eval",
     "builtins.setattr", "builtins.delattr"}
)
SIDE_EFFECT_PREFIXES = ("logging.", "sys.stdout", "sys.stderr", "os.", "shutil.", "pathlib.", "time.sleep", "warnings.")
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort",
     "reverse", "add", "discard", "write", "writelines", "put", "put_nowait", "send", "appendleft",
     "extendleft", "__setitem__"}
)


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

    def visit_For(self, node: cst.For) -> None:
        self._inner_loops += 1

    def leave_For(self, node: cst.For) -> None:
        self._inner_loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self._inner_loops += 1

    def leave_While(self, node: cst.While) -> None:
        self._inner_loops -= 1

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

    def _closure(self, node: cst.FunctionDef | cst.Lambda) -> None:
        free = {n.value for n in loads(node)}
        captured = sorted(free & (self.loop_names | self.body_assigned))
        if captured:
            self.refuse(
                f"a closure in the body captures the loop variable `{captured[0]}`: "
                "it would see a traced value instead of this step's Python value"
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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, (cst.Name, cst.Attribute)):
            for qname in self.parsed.qualified_names(func):
                if qname in SIDE_EFFECT_BUILTINS or qname.startswith(SIDE_EFFECT_PREFIXES):
                    self.refuse(f"the body calls `{self.parsed.code(func)}` (a side effect that runs once per trace, not per step)")
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
            receiver = func.value
            if isinstance(receiver, cst.Name):
                if receiver.value in self.accumulators:
                    return
                if receiver.value in self.body_assigned:
                    return  # a list built and used within one step
                self.refuse(
                    f"the body calls `{self.parsed.code(func)}(...)`, mutating `{receiver.value}` which lives outside the loop"
                )
            elif not (isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Attribute) and receiver.value.attr.value == "at"):
                self.refuse(f"the body calls `{self.parsed.code(func)}(...)`, which may mutate an outer object")


def body_refusal(
    parsed: ParsedModule,
    loop: cst.For,
    loop_names: set[str],
    accumulators: Iterable[str],
) -> str | None:
    """The first reason the body cannot become a step function, or None."""
    if loop.asynchronous is not None:
        return "`async for` loops are not rewritten"
    if loop.orelse is not None:
        return "the loop has an `else:` clause"
    body = list(loop.body.body)
    assigned = assigned_names(body)
    reassigned = sorted(assigned & loop_names)
    if reassigned:
        return f"the body reassigns the loop variable `{reassigned[0]}`"
    check = _BodyCheck(parsed, loop_names, assigned, set(accumulators))
    for statement in body:
        statement.visit(check)
    return check.reason
