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

    body.visit(Walk())
    return found


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
