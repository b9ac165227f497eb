"""A cheap first pass with the stdlib `ast` parser (several times faster than libcst).

It checks syntax (with Python's own error positions) and decides whether a
file can have findings at all: every rule needs a `for` loop inside a
function that may be traced. A traced function needs an import from `jax`,
`equinox` or a configured decorator's package, and is reached from a
decorator or wrapper whose name is a transform's (`jit`, `grad`, ...), by
nesting or by calls. This pass over-approximates that set by names alone, so
files it rejects give identical (empty) results under the full libcst
analysis, which matches transforms by qualified name.
"""

from __future__ import annotations

import ast

TRACING_ROOTS = frozenset({"jax", "equinox"})
TRANSFORM_NAMES = frozenset(
    {"jit", "pmap", "pjit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "hessian", "checkpoint",
     "remat", "named_call", "filter_jit", "filter_grad", "filter_value_and_grad", "filter_vmap", "filter_pmap",
     "filter_checkpoint"}
)


class SyntaxProblem(Exception):
    def __init__(self, message: str, row: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def _roots(extra_decorators: tuple[str, ...]) -> frozenset[str] | None:
    """Import roots that can bring a tracing transform; None when any module may (a local decorator)."""
    roots = set(TRACING_ROOTS)
    for name in extra_decorators:
        if "." not in name:
            return None
        roots.add(name.split(".", 1)[0])
    return frozenset(roots)


def may_have_findings(text: str, extra_decorators: tuple[str, ...] = ()) -> bool:
    """False when no rule can fire; raises SyntaxProblem for code Python cannot parse."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        message = f"SyntaxError: {exc.msg}"
        raise SyntaxProblem(message, exc.lineno, exc.offset) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SyntaxProblem(f"cannot parse: {type(exc).__name__}: {exc}", None, None) from None
    roots = _roots(extra_decorators)
    imports_tracer = roots is None
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    calls: list[ast.Call] = []
    names = set(TRANSFORM_NAMES | {d.rsplit(".", 1)[-1] for d in extra_decorators})
    imported = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    for node in imported:  # `from jax import jit as J`: J is a transform's name too
        names.update(a.asname for a in node.names if a.asname and a.name in names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports_tracer = imports_tracer or any(alias.name.split(".", 1)[0] in roots for alias in node.names)  # type: ignore[operator]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports_tracer = imports_tracer or node.module.split(".", 1)[0] in roots  # type: ignore[operator]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Call):
            calls.append(node)
    if not imports_tracer or not functions:
        return False
    return _traced_loop_possible(functions, calls, frozenset(names))


def _mentions(node: ast.AST, names: frozenset[str]) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in names:
            return True
        if isinstance(inner, ast.Attribute) and inner.attr in names:
            return True
    return False


def _traced_loop_possible(
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]],
    calls: list[ast.Call],
    names: frozenset[str],
) -> bool:
    seeds: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
        f for group in functions.values() for f in group if any(_mentions(d, names) for d in f.decorator_list)
    ]
    for call in calls:
        if _mentions(call.func, names):
            for arg in ast.walk(call):
                if isinstance(arg, ast.Name) and arg.id in functions:
                    seeds.extend(functions[arg.id])
    seen: set[int] = set()
    while seeds:
        func = seeds.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        for inner in ast.walk(func):
            if isinstance(inner, ast.For):
                return True
            if inner is not func and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seeds.append(inner)
            elif isinstance(inner, ast.Call):
                callee = inner.func
                name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else None
                if name in functions:
                    seeds.extend(functions[name])
    return False
