"""Which names of a loop body hold traced values once the body is a `lax.scan` step.

In the loop, values read per step (`t = time_grid[i]`) may be concrete arrays or Python
values: `time_grid` built by `jnp.linspace` from Python numbers is concrete even under
`jax.vmap`, so `idx = jnp.searchsorted(grid, t)` and `if idx == 0:` run. In the scan's step
the index, the scanned slices and the carry are tracers, and so is everything computed from
them: a Python `if`, `while` or conditional expression on any of those raises there. The names
are found by a fixed point over the body's assignments (nested functions and lambdas aside);
what is read only through `.shape`, `.ndim`, `.dtype`, `.size`, `len()` or `isinstance()` stays a
Python value under a trace and does not count.

Cases: `tests/test_step_values.py`.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.names import stored_names
from jaxloopfix.analysis.source import shorten

STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
STATIC_CALLS = frozenset({"len", "isinstance"})


def value_names(expr: cst.CSTNode) -> list[cst.Name]:
    """Names an expression reads as values: not through `.shape`/`.ndim`/`.dtype`/`.size` or `len()`."""
    names: list[cst.Name] = []

    class Walk(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if node.attr.value in STATIC_ATTRIBUTES:
                return False
            node.value.visit(self)
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            return not (isinstance(node.func, cst.Name) and node.func.value in STATIC_CALLS)

        def visit_Name(self, node: cst.Name) -> None:
            names.append(node)

    expr.visit(Walk())
    return names


def _bindings(body: cst.CSTNode) -> list[tuple[set[str], cst.CSTNode]]:
    """(names stored, the value they are computed from) for each binding of the body."""
    found: list[tuple[set[str], cst.CSTNode]] = []

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            found.append((set().union(*(stored_names(t.target) for t in node.targets)), node.value))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.append((stored_names(node.target), node.value))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                found.append((stored_names(node.target), node.value))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.append((stored_names(node.target), node.value))

        def visit_For(self, node: cst.For) -> None:
            found.append((stored_names(node.target), node.iter))

        def visit_Call(self, node: cst.Call) -> None:
            # `vals.append(t)`: the list holds what the step computed.
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS and isinstance(func.value, cst.Name):
                found.append(({func.value.value}, node))

    body.visit(Walk())
    return found


# Methods that put their arguments into the list or dict they are called on.
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
# Builtins that turn their argument into a Python value (or compare it as one): on a tracer they raise.
CONVERTING_BUILTINS = frozenset({"float", "int", "bool", "complex", "range", "max", "min"})
# Methods that return a Python value of an array: on a tracer they raise.
CONVERTING_METHODS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__index__"})


def host_conversion(body: cst.CSTNode, traced: set[str], selected: frozenset[int] = frozenset()) -> str | None:
    """Where the step makes a Python value of something the scan would trace: a chained comparison
    or `and`/`or`/`not` (each part tested as a Python bool), `assert`, `float()`, `int()`, `range()`,
    `max()`/`min()`, `.item()`, or a test of an `if`/`x if c else y` nested inside a branch that
    becomes a `jnp.where` (`selected`, the ids of those `if` statements); None when there is none.
    The loop runs these on concrete values; the scan's step would raise."""
    found: list[str] = []

    def reads(expr: cst.CSTNode) -> bool:
        return any(n.value in traced for n in value_names(expr))

    class Walk(cst.CSTVisitor):
        inside_selected = 0

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_If(self, node: cst.If) -> None:
            if id(node) in selected:
                self.inside_selected += 1
            elif self.inside_selected and reads(node.test):
                found.append(f"`{_code(node.test)}` (an `if` test inside a branch made a `jnp.where`)")

        def leave_If(self, node: cst.If) -> None:
            if id(node) in selected:
                self.inside_selected -= 1

        def visit_IfExp(self, node: cst.IfExp) -> None:
            if self.inside_selected and reads(node.test):
                found.append(f"`{_code(node.test)}` (a conditional expression's test inside a branch made a `jnp.where`)")

        def visit_Comparison(self, node: cst.Comparison) -> None:
            if len(node.comparisons) > 1 and reads(node):
                found.append(f"`{_code(node)}` (a chained comparison tests each part as a Python bool)")

        def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
            if reads(node.left) or reads(node.right):
                found.append(f"`{_code(node)}` (`and`/`or` test their operands as Python bools)")

        def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
            if isinstance(node.operator, cst.Not) and reads(node.expression):
                found.append(f"`{_code(node)}` (`not` tests its operand as a Python bool)")

        def visit_Assert(self, node: cst.Assert) -> None:
            if reads(node.test):
                found.append(f"`assert {_code(node.test)}`")

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Name) and func.value in CONVERTING_BUILTINS and any(reads(a.value) for a in node.args):
                found.append(f"`{_code(node)}` (`{func.value}()` makes a Python value)")
            elif isinstance(func, cst.Attribute) and func.attr.value in CONVERTING_METHODS and reads(func.value):
                found.append(f"`{_code(node)}` (`.{func.attr.value}()` makes a Python value)")

    body.visit(Walk())
    if not found:
        return None
    return (
        f"the step makes a Python value of what it computes per step: {found[0]}; the loop runs it on concrete "
        "values, but in a `lax.scan` step that value is traced and it would raise"
    )


def _code(node: cst.CSTNode) -> str:
    return shorten(cst.Module(body=[]).code_for_node(node), 40)


def traced_in_step(body: cst.CSTNode, seeds: set[str]) -> set[str]:
    """`seeds` (the index, the per-step slices, the carries) and every name the body computes
    from them: the values a scan's step traces."""
    traced = set(seeds)
    bindings = _bindings(body)
    changed = True
    while changed:
        changed = False
        for names, value in bindings:
            if names - traced and any(n.value in traced for n in value_names(value)):
                traced |= names
                changed = True
    return traced
