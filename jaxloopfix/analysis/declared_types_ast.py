"""Declared types read with stdlib `ast`, for the project pass.

The project pass also runs on the warm path, where every file is answered from the cache and
libcst is never imported, so it reads another module's class-attribute and type-alias
declarations from that module's `ast` tree; `declared_types` is the libcst side.
"""

from __future__ import annotations

import ast

# Decorators that make a method read like an attribute.
PROPERTIES = frozenset({"property", "cached_property", "functools.cached_property"})


def module_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function `name` of `tree` (its last definition), else None."""
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    return found


def module_declaration(tree: ast.Module, rest: str) -> ast.expr | None:
    """What module `tree` declares for `rest`: `Alias` (a module-level `Alias = T`, `Alias: TypeAlias
    = T` or `type Alias = T`) or `Class.attr` (as `class_attribute`)."""
    if "." not in rest:
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == rest for t in node.targets):
                return node.value
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == rest:
                alias = isinstance(node.annotation, (ast.Name, ast.Attribute)) and ast.unparse(node.annotation).endswith("TypeAlias")
                return node.value if alias else None
            if type(node).__name__ == "TypeAlias" and getattr(node.name, "id", None) == rest:  # Python 3.12+
                return node.value  # type: ignore[attr-defined]
        return None
    owner, attr = rest.split(".", 1)
    if "." in attr:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == owner:
            return _ast_class_attribute(node, attr)
    return None


def _ast_class_attribute(cls: ast.ClassDef, attr: str) -> ast.expr | None:
    found: ast.expr | None = None
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == attr:
            return statement.annotation
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name == attr and statement.returns is not None and any(
                ast.unparse(d) in PROPERTIES for d in statement.decorator_list
            ):
                return statement.returns
            for node in ast.walk(statement):
                if (
                    found is None
                    and isinstance(node, ast.AnnAssign)
                    and isinstance(node.target, ast.Attribute)
                    and node.target.attr == attr
                    and isinstance(node.target.value, ast.Name)
                    and node.target.value.id == "self"
                ):
                    found = node.annotation
    return found


def import_bindings(tree: ast.Module, package: str | None) -> dict[str, str]:
    """name -> absolute dotted name for a module's top-level imports (`from . import effects`,
    `import numpy as np`); relative imports need the module's package."""
    from jaxloopfix.analysis.cross_module import resolve_relative

    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    found[top] = top
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    continue
                source = ".".join(filter(None, [node.module, alias.name]))
                if node.level:
                    if package is None:
                        continue
                    absolute = resolve_relative("." * node.level + source, package)
                else:
                    absolute = source
                if absolute is not None:
                    found[alias.asname or alias.name] = absolute
    return found


def dotted(expr: ast.expr) -> str | None:
    """`effects.Effects` -> "effects.Effects"; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))
