"""A cheap first pass with the stdlib `ast` parser (several times faster than libcst).

It checks syntax (with Python's own error positions) and decides whether a
file can have findings at all: every rule needs a `for` loop inside a
function that may be traced. A traced function needs an import from `jax`,
`equinox`, `flax`, `haiku`, `numpyro` or a configured decorator's or base
class's package, and is reached from a decorator or wrapper whose name is a
transform's (`jit`, `grad`, `compact`, `transform`, ...), from a call that
takes functions (`scan`, `cond`, `defvjp`, `NUTS`, ...), from a class whose
base's name is a module's (`Module`: all its methods), by nesting or by
calls. This pass over-approximates that set by names alone, so
files it rejects give identical (empty) results under the full libcst
analysis, which matches transforms by qualified name.
"""

from __future__ import annotations

import ast

TRACING_ROOTS = frozenset({"jax", "equinox", "flax", "haiku", "numpyro"})
TRANSFORM_NAMES = frozenset(
    {"jit", "pmap", "pjit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "hessian", "checkpoint",
     "remat", "named_call", "filter_jit", "filter_grad", "filter_value_and_grad", "filter_vmap", "filter_pmap",
     "filter_checkpoint", "shard_map", "custom_vjp", "custom_jvp", "defvjp", "defjvp", "compact",
     "transform", "transform_with_state", "remat_scan", "map_variables", "jvp", "vjp"}
)
# Calls whose function arguments are traced (`lax.scan(step, ...)`, `NUTS(model)`, `nn.scan(Cell)`).
CALLEE_NAMES = frozenset(
    {"scan", "fori_loop", "while_loop", "cond", "switch", "map", "associative_scan", "MCMC", "NUTS", "HMC",
     "SA", "BarkerMH", "SVI", "Predictive"}
)
# Base classes whose subclasses' methods may be traced (Flax, Haiku, Equinox modules).
BASE_NAMES = frozenset({"Module"})


class SyntaxProblem(Exception):
    def __init__(self, message: str, row: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def _roots(extra_decorators: tuple[str, ...]) -> frozenset[str] | None:
    """Import roots that can bring a tracing transform; None when any module may (a local decorator)."""
    roots = set(TRACING_ROOTS)
    for name in extra_decorators:  # decorators and base classes alike
        if "." not in name:
            return None
        roots.add(name.split(".", 1)[0])
    return frozenset(roots)


def may_have_findings(
    text: str,
    extra_decorators: tuple[str, ...] = (),
    extra_base_classes: tuple[str, ...] = (),
    *,
    need_loop: bool = True,
    seeds: frozenset[str] = frozenset(),
    project_roots: frozenset[str] | None = None,
) -> bool:
    """False when no rule can fire; raises SyntaxProblem for code Python cannot parse.

    `need_loop=False` when an enabled rule reports code without loops (slices, `if`s,
    host conversions): then any possibly traced function lets the file through.

    In a project pass, `seeds` names functions other modules trace (they count as
    traced, whatever this file imports), and with `project_roots` a file whose
    possibly traced code calls or wraps a name imported from the project goes
    through too: its analysis says what it traces in other modules."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        message = f"SyntaxError: {exc.msg}"
        raise SyntaxProblem(message, exc.lineno, exc.offset) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SyntaxProblem(f"cannot parse: {type(exc).__name__}: {exc}", None, None) from None
    roots = _roots(extra_decorators + extra_base_classes)
    imports_tracer = roots is None or bool(seeds)
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    classes: dict[str, list[ast.ClassDef]] = {}
    calls: list[ast.Call] = []
    names = set(TRANSFORM_NAMES | CALLEE_NAMES | BASE_NAMES | {d.rsplit(".", 1)[-1] for d in extra_decorators})
    names.update(b.rsplit(".", 1)[-1] for b in extra_base_classes)
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
        elif isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Call):
            calls.append(node)
    if any(name not in functions for name in seeds):
        return True  # a re-export (`from .layers import step` in `__init__.py`) to follow
    imported = _project_imports(tree, project_roots) if project_roots is not None else frozenset()
    if project_roots is not None:
        # Framework classes are passed on to the modules deriving from them: a class on a
        # framework base, or on a project class that may be one, needs the full analysis.
        bases = BASE_NAMES | {b.rsplit(".", 1)[-1] for b in extra_base_classes} | imported
        if any(_mentions(base, bases) for group in classes.values() for c in group for base in c.bases):
            return True
    if not imports_tracer or not (functions or imported):
        return False
    return _traced_loop_possible(
        functions, calls, frozenset(names), classes, need_loop=need_loop, seeds=seeds, imported=imported
    )


def _project_imports(tree: ast.Module, project_roots: frozenset[str]) -> frozenset[str]:
    """Names this module binds by importing from the project (relative imports included)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module and node.module.split(".", 1)[0] in project_roots):
                bound.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".", 1)[0] in project_roots:
                    bound.add(alias.asname or alias.name.split(".", 1)[0])
    return frozenset(bound)


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


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
    classes: dict[str, list[ast.ClassDef]] | None = None,
    *,
    need_loop: bool = True,
    seeds: frozenset[str] = frozenset(),
    imported: frozenset[str] = frozenset(),
) -> bool:
    classes = classes or {}
    seeds_: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
        f for group in functions.values() for f in group if any(_mentions(d, names) for d in f.decorator_list)
    ]
    seeds_.extend(f for name in seeds for f in functions.get(name, ()))
    # Module classes: a base named like a framework's, or a class of this file that is one.
    module_classes: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, group in classes.items():
            if name not in module_classes and any(
                _mentions(b, names | module_classes) for c in group for b in c.bases
            ):
                module_classes.add(name)
                changed = True
    lifted: set[str] = set()
    for call in calls:
        if _mentions(call.func, names):
            if imported and any(_mentions(arg, imported) for arg in (*call.args, *call.keywords)):
                return True  # `jax.jit(layers.step)`, `lax.scan(step, ...)` with `step` imported
            for arg in ast.walk(call):
                if isinstance(arg, ast.Name) and arg.id in functions:
                    seeds_.extend(functions[arg.id])
                if isinstance(arg, ast.Name) and arg.id in classes:
                    lifted.add(arg.id)  # `nn.scan(Cell, ...)`
    for name in module_classes | lifted:
        for cls in classes[name]:
            seeds_.extend(m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    if seeds_ and not need_loop:
        return True
    seen: set[int] = set()
    while seeds_:
        func = seeds_.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        for inner in ast.walk(func):
            if isinstance(inner, ast.For):
                return True
            if inner is not func and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seeds_.append(inner)
            elif isinstance(inner, ast.Call):
                callee = inner.func
                name = callee.id if isinstance(callee, ast.Name) else callee.attr if isinstance(callee, ast.Attribute) else None
                if name in functions:
                    seeds_.extend(functions[name])
                if imported and _root_name(callee) in imported:
                    return True  # traced code calling into the project: follow it there
    return False
