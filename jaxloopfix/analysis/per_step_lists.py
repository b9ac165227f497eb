"""Lists that hold one array per step of an unrolled loop.

`exp_z = []`, then `exp_z.append(jnp.trace(state))` in the body of a loop this analysis
reports (in a branch too): the loop unrolls, so `exp_z` grows by an array per step, as many as
the loop's count. A later loop or comprehension over `exp_z` (`zip(exp_z, exp_x)`) steps over
those arrays and unrolls as many copies of its own work: the items of a Python list, but
per-step data, not layers or configured objects. Such a list cannot be a scan's `xs` until it is
stacked (`jnp.stack(exp_z)`), so the second loop gets no fix.

Only a list the function binds once, to `[]` before the filling loop and outside it, counts:
one rebound after the loop (`hs = jnp.stack(hs)`, `ys = [a, b]`) or emptied in each step holds
something else. The function's own scope only: a nested function's list is its own.

Cases: `tests/test_per_step_lists.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import libcst as cst

from jaxloopfix.analysis.names import stored_names
from jaxloopfix.analysis.source import ParsedModule, descendants
from jaxloopfix.analysis.value_kinds import ARRAY, TRACED, UNKNOWN, ValueKinds

WRAPPERS = ("enumerate", "reversed")


def iterated_names(parsed: ParsedModule, iterable: cst.BaseExpression) -> list[cst.Name]:
    """`xs`, `enumerate(xs)`, `enumerate(xs, 1)`, `reversed(xs)`, `zip(a, b)`: the names whose
    items are taken (a keyword such as `strict=` is none of them)."""
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in WRAPPERS \
            and iterable.args and iterable.args[0].keyword is None:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Name):
        return [iterable]
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, (cst.Name, cst.Attribute)) \
            and parsed.qualified_name(iterable.func) == "builtins.zip":
        return [a.value for a in iterable.args if a.keyword is None and isinstance(a.value, cst.Name)]
    return []


def _own_nodes(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """The function's body, nested functions, lambdas and classes left out."""
    out: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            if isinstance(inner, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            out.append(inner)
            return True

    func.body.visit(Walk())
    return out


def _appended(statement: cst.SimpleStatementLine) -> tuple[str, cst.BaseExpression] | None:
    """(`name`, `value`) for `name.append(value)` alone on its line."""
    if len(statement.body) != 1:
        return None
    expr = statement.body[0]
    if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call) and len(expr.value.args) == 1):
        return None
    func, arg = expr.value.func, expr.value.args[0]
    if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
            and not arg.star and arg.keyword is None:
        return func.value.value, arg.value
    return None


def _holds_step_slice(filler: cst.For, value: cst.BaseExpression) -> bool:
    """`value` reads a slice the step takes with the loop's target (`images[i]`), itself or through
    a name the body stores it in (`batch["image"] = images[i]`, then `FlatMap(batch)`): the
    step's data, not a Python value made from the index (`describe(i)`, a key)."""
    index = stored_names(filler.target)

    def slices(node: cst.CSTNode) -> bool:
        return any(isinstance(n, cst.Subscript) and any(
            isinstance(m, cst.Name) and m.value in index for e in n.slice for m in descendants(e)) for n in descendants(node))

    if slices(value):
        return True
    read = {n.value for n in descendants(value) if isinstance(n, cst.Name)}
    for node in descendants(filler.body):
        if isinstance(node, cst.Assign) and any(
                (stored_names(t.target) | _subscript_base(t.target)) & read for t in node.targets) and slices(node.value):
            return True
    return False


def _subscript_base(target: cst.BaseExpression) -> set[str]:
    """`batch` of `batch["image"]` (a store into the object `batch`)."""
    return {target.value.value} if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) else set()


class PerStepLists:
    """One function's per-step lists, indexed once: which loops append to which names, and
    where each name is bound."""

    def __init__(self, parsed: ParsedModule, func: cst.FunctionDef, kinds: Callable[[], ValueKinds],
                 reported: Callable[[cst.For], bool]) -> None:
        self.parsed = parsed
        self.func = func
        self.kinds = kinds  # worked out only when a list is iterated after a loop that fills it
        self.reported = reported

    @cached_property
    def _index(self) -> tuple[dict[str, list[tuple[cst.For, cst.BaseExpression]]], dict[str, list[cst.CSTNode]]]:
        """({name: [(innermost loop appending to it, the value)]}, {name: [its bindings]})."""
        appends: dict[str, list[tuple[cst.For, cst.BaseExpression]]] = {}
        bindings: dict[str, list[cst.CSTNode]] = {}
        loops: list[cst.For] = []
        for node in _own_nodes(self.func):
            if isinstance(node, cst.For):
                loops.append(node)
                for name in stored_names(node.target):
                    bindings.setdefault(name, []).append(node)
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for name in stored_names(target):
                        bindings.setdefault(name, []).append(node)
            elif isinstance(node, cst.SimpleStatementLine) and (found := _appended(node)) is not None:
                owner = next((a for a in self.parsed.ancestors(node) if isinstance(a, cst.For)), None)
                if owner is not None and owner in loops:
                    appends.setdefault(found[0], []).append((owner, found[1]))
        return appends, bindings

    @cached_property
    def appended_names(self) -> frozenset[str]:
        """The names some loop of the function appends to (a cheap screen)."""
        return frozenset(self._index[0])

    def filled(self, iterable: cst.BaseExpression, node: cst.CSTNode) -> str | None:
        """Evidence that what `node` (a loop or comprehension after the filling loop) iterates
        is such a list, else None."""
        names = [n for n in iterated_names(self.parsed, iterable) if n.value in self.appended_names]
        if not names:
            return None
        appends, bindings = self._index
        start = self.parsed.position(node).start.line
        for name in names:
            bound = bindings.get(name.value, [])
            if len(bound) != 1 or not (isinstance(bound[0], cst.Assign) and isinstance(bound[0].value, cst.List)
                                       and not bound[0].value.elements):
                continue  # `hs = []` alone: not rebound, not emptied per step
            for filler, value in appends[name.value]:
                if filler is node or self.parsed.position(filler).end.line >= start or not self.reported(filler):
                    continue
                if any(a is filler for a in self.parsed.ancestors(bound[0])) or \
                        self.parsed.position(bound[0]).start.line > self.parsed.position(filler).start.line:
                    continue  # bound inside the loop (emptied each step) or after it
                kind = self.kinds().of(value)
                if kind.name in (ARRAY, TRACED) or (kind.name == UNKNOWN and not kind.host and not kind.text
                                                    and _holds_step_slice(filler, value)):
                    # What an unrolled loop appends per step is per-step data: an array, or an object
                    # built from the step's slices (`FlatMap({"image": images[i]})`).
                    line = self.parsed.position(filler).start.line
                    held = "one array" if kind.name in (ARRAY, TRACED) else "one value"
                    return f"`{name.value}` (a list holding {held} per step of the unrolled loop on line {line})"
        return None
