"""Stdlib `ast` trees for files written in syntax newer than the running Python.

The pre-filter, the project index and the rewrite check read files with `ast.parse`, which knows
only the running interpreter's grammar; libcst's parser knows newer grammar (3.12's type
parameters `class Box[T]:`, `def f[T](x: T)`, `type Alias = ...`, and f-strings that reuse
their quotes, `f"{d["k"]}"`). A file only the newer grammar reads is parsed with libcst and
lowered to older syntax with its lines kept: type parameters dropped, a `type` alias made an
assignment, an f-string made a plain string of as many lines. None of these holds a loop or a
call the analysis looks for, and libcst's own tree, which the analysis reads, keeps them all.
"""

from __future__ import annotations

import ast
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

        def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.SimpleString:
            lines = cst.Module([]).code_for_node(original).count("\n")
            return cst.SimpleString('"""' + "\n" * lines + '"""' if lines else '""')

    return cst.parse_module, Lower


def parse_ast(text: str) -> ast.Module:
    """`ast.parse(text)`; for newer syntax that libcst reads, the tree of its lowered text.
    Raises the stdlib's SyntaxError when neither parser reads the text."""
    try:
        return ast.parse(text)
    except SyntaxError:
        parse, lower = _lowering()
        try:
            lowered = parse(text).visit(lower()).code
        except Exception:  # libcst cannot read it either: the stdlib's error is the one to show
            lowered = None
        if lowered is None:
            raise
        return ast.parse(lowered)
