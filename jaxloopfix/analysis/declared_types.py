"""Declared types of class attributes and type aliases, in this module and across the project.

`for eff in jaxpr.effects:` steps over a set when class `Jaxpr` declares
`effects: Effects` and `Effects = Set[Effect]` in another project module. A
declaration is the author's own statement of what a value is, so a container
type found this way is positive evidence that the loop iterates Python
structure. Within the module the libcst tree answers; names imported from other
project modules are asked of the project pass (`ModuleLinks.declarations`), which
reads the defining module with stdlib `ast` (`declared_types_ast`) and answers in
`ModuleSite.declared`.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.declared_types_ast import PROPERTIES


def class_attribute(cls: cst.ClassDef, attr: str) -> cst.BaseExpression | None:
    """The annotation `cls` declares for `attr`: a class-level `attr: T`, a property's return
    annotation, or `self.attr: T` in a method; None when it declares none."""
    found: cst.BaseExpression | None = None
    for statement in cls.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == attr:
                    return small.annotation.annotation
        elif isinstance(statement, cst.FunctionDef):
            if statement.name.value == attr and statement.returns is not None and any(
                _decorator_name(d.decorator) in PROPERTIES for d in statement.decorators
            ):
                return statement.returns.annotation
            found = found or _self_annotation(statement, attr)
    return found


def _self_annotation(method: cst.FunctionDef, attr: str) -> cst.BaseExpression | None:
    for node in _walk(method.body):
        if (
            isinstance(node, cst.AnnAssign)
            and isinstance(node.target, cst.Attribute)
            and node.target.attr.value == attr
            and isinstance(node.target.value, cst.Name)
            and node.target.value.value == "self"
        ):
            return node.annotation.annotation
    return None


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            out.append(inner)
            return not isinstance(inner, (cst.FunctionDef, cst.ClassDef)) or inner is node

    node.visit(Walk())
    return out


def _decorator_name(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return f"{expr.value.value}.{expr.attr.value}"
    return ""


# -- the project side: stdlib `ast` over the defining module ----------------------------------
