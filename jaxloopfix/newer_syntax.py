"""Stdlib `ast` trees for files written in syntax newer than the running Python.

The pre-filter, the project index and the rewrite check read files with `ast.parse`, which knows
only the running interpreter's grammar; libcst's parser knows newer grammar (3.12's type
parameters `class Box[T]:`, `def f[T](x: T)`, `type Alias = ...`, and f-strings that reuse
their quotes, `f"{d["k"]}"`). A file only the newer grammar reads is parsed with libcst and
lowered to older syntax with its lines kept: type parameters dropped, a `type` alias made an
assignment, an f-string made the tuple of the expressions it formats (calls in them, such as a
`jax.jit(step)(x)`, are what the pre-filter looks for). libcst's own tree, which the analysis
reads, keeps the file as written.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache


@cache
def _lowering():
    """The libcst transformer from 3.12 syntax to its 3.11 equivalent for `ast`, line for line
    (built on first use: a warm run answered from the cache never imports libcst)."""
    import libcst as cst

    class Lower(cst.CSTTransformer):
        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            return updated.with_changes(type_parameters=None) if updated.type_parameters is not None else updated

        def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
            return updated.with_changes(type_parameters=None) if updated.type_parameters is not None else updated

        def leave_TypeAlias(self, original: cst.TypeAlias, updated: cst.TypeAlias) -> cst.Assign:
            return cst.Assign(targets=[cst.AssignTarget(updated.name)], value=updated.value, semicolon=updated.semicolon)

        def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
            # The expressions it formats, as a tuple (`f"{d["k"]} {jax.jit(step)(x)}"` ->
            # `(d["k"], jax.jit(step)(x),)`): the calls in them are what the pre-filter looks for.
            code = cst.Module([]).code_for_node
            parts = [code(e) for e in _formatted(updated.parts)]
            lines = code(original).count("\n")
            if not parts:
                return cst.SimpleString('"""' + "\n" * lines + '"""' if lines else '""')
            text = "(" + ", ".join(parts) + ","
            return cst.parse_expression(text + "\n" * max(lines - text.count("\n"), 0) + ")")

        def leave_ConcatenatedString(
            self, original: cst.ConcatenatedString, updated: cst.ConcatenatedString
        ) -> cst.BaseExpression:
            if all(isinstance(side, (cst.SimpleString, cst.ConcatenatedString)) for side in (updated.left, updated.right)):
                return updated
            code = cst.Module([]).code_for_node
            return cst.parse_expression(f"({code(updated.left)}, {code(updated.right)})")

    def _formatted(parts) -> list[cst.BaseExpression]:
        found: list[cst.BaseExpression] = []
        for part in parts:
            if isinstance(part, cst.FormattedStringExpression):
                found.append(part.expression)
                found.extend(_formatted(part.format_spec or ()))
        return found

    return cst.parse_module, Lower


def parse_ast(text: str) -> ast.Module:
    """`ast.parse(text)`; for newer syntax that libcst reads, the tree of its lowered text.
    Raises the stdlib's SyntaxError when neither parser reads the text."""
    try:
        return ast.parse(text)
    except SyntaxError:
        parse, lower = _lowering()
        try:
            with unchecked_nodes():
                lowered = parse(text).visit(lower()).code
        except Exception:  # libcst cannot read it either: the stdlib's error is the one to show
            lowered = None
        if lowered is None:
            raise
        return ast.parse(lowered)


@contextmanager
def unchecked_nodes() -> Iterator[None]:
    """libcst's node checks (`CSTNode._validate`, run by every node's constructor) off for the
    block: for the parser's own nodes (`source.parse_unvalidated`), and here while a lowered
    f-string in an implicit concatenation is briefly a tuple beside a string, which the check
    refuses before the concatenation itself is replaced."""
    import libcst as cst

    checked = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = checked  # type: ignore[method-assign]


def _unchecked(self: object) -> None:
    pass
