"""Lists that hold one array per step of an unrolled loop.

`exp_z.append(jnp.trace(state))` in the body of a loop this analysis reports (in a branch
too): the loop unrolls, so `exp_z` grows by an array per step, as many as the loop's count. A
later loop or comprehension over `exp_z` (`zip(exp_z, exp_x)`) steps over those arrays and
unrolls as many copies of its own work: the items of a Python list, but per-step data, not
layers or configured objects. Such a list cannot be a scan's `xs` until it is stacked
(`jnp.stack(exp_z)`), so the second loop gets no fix."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from jaxloopfix.analysis.source import ParsedModule, descendants
from jaxloopfix.analysis.value_kinds import ARRAY, TRACED, ValueKinds

WRAPPERS = ("enumerate", "reversed")


def iterated_names(parsed: ParsedModule, iterable: cst.BaseExpression) -> list[cst.Name]:
    """`xs`, `enumerate(xs)`, `reversed(xs)`, `zip(a, b)`: the names whose items are taken."""
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in WRAPPERS \
            and len(iterable.args) == 1:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Name):
        return [iterable]
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, (cst.Name, cst.Attribute)) \
            and parsed.qualified_name(iterable.func) == "builtins.zip":
        return [a.value for a in iterable.args if isinstance(a.value, cst.Name)]
    return []


def _appends(statement: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
    """The value `name.append(value)` adds, for that expression statement alone on its line."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    expr = statement.body[0]
    if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call) and len(expr.value.args) == 1):
        return None
    func = expr.value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
            and func.value.value == name and not expr.value.args[0].star and expr.value.args[0].keyword is None:
        return expr.value.args[0].value
    return None


def filled_per_step(
    parsed: ParsedModule,
    func: cst.FunctionDef,
    kinds: ValueKinds,
    reported: Callable[[cst.For], bool],
    iterable: cst.BaseExpression,
    node: cst.CSTNode,
) -> str | None:
    """Evidence that what `node` (a loop or comprehension after it) iterates is a list an
    earlier reported loop of `func` appends arrays to in its steps, else None."""
    names = iterated_names(parsed, iterable)
    if not names:
        return None
    start = parsed.position(node).start.line
    for filler in descendants(func.body):
        if not (isinstance(filler, cst.For) and filler is not node and isinstance(filler.body, cst.IndentedBlock)
                and parsed.position(filler).end.line < start and reported(filler)):
            continue
        statements = [n for n in descendants(filler.body) if isinstance(n, cst.SimpleStatementLine)]
        for name in names:
            for statement in statements:  # in a branch too (`if axis == "Z": exp_z.append(...)`)
                value = _appends(statement, name.value)
                if value is not None and kinds.of(value).name in (ARRAY, TRACED):
                    line = parsed.position(filler).start.line
                    return f"`{name.value}` (a list holding one array per step of the unrolled loop on line {line})"
    return None
