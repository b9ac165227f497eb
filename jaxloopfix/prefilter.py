"""A cheap first pass with the stdlib `ast` parser (several times faster than libcst).

It checks syntax (with Python's own error positions) and decides whether a
file can have findings at all: every rule needs a `for` loop inside a
function and a JAX transform, which needs an import from `jax`, `equinox`
or a configured decorator's package. Files without both are never given to
libcst, which gives identical results for them (no traced function exists).
"""

from __future__ import annotations

import ast

TRACING_ROOTS = frozenset({"jax", "equinox"})


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
    loop_in_function = False
    for node in ast.walk(tree):
        if not imports_tracer:
            if isinstance(node, ast.Import):
                imports_tracer = any(alias.name.split(".", 1)[0] in roots for alias in node.names)  # type: ignore[operator]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imports_tracer = node.module.split(".", 1)[0] in roots  # type: ignore[operator]
        if not loop_in_function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            loop_in_function = any(isinstance(inner, ast.For) for inner in ast.walk(node))
        if imports_tracer and loop_in_function:
            return True
    return False
