"""Name reads and writes of statements and expressions, in execution order.

Nested functions, lambdas and comprehensions have scopes of their own: their
local names are not the enclosing function's, but the names they read from
outside are reported as reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst


class _Loads(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self._bound: list[set[str]] = []

    def _is_bound(self, name: str) -> bool:
        return any(name in b for b in self._bound)

    def visit_Name(self, node: cst.Name) -> None:
        if not self._is_bound(node.value):
            self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def _target(self, target: cst.BaseExpression) -> None:
        """Visit what an assignment target reads: `x[i] = ...` reads x and i; `x = ...` reads nothing."""
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)
        elif not isinstance(target, cst.Name):
            target.visit(self)

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for target in node.targets:
            self._target(target.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
        self._target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._target(node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        return False

    def visit_AsName(self, node: cst.AsName) -> bool:
        return False

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._bound.append({p.name.value for p in parameters(node)})
        node.body.visit(self)
        self._bound.pop()
        return False

    def _comprehension(self, node: cst.BaseComp, elements: Sequence[cst.CSTNode]) -> bool:
        bound: set[str] = set()
        for_in: cst.CompFor | None = node.for_in
        first = True
        self._bound.append(bound)
        while for_in is not None:
            if first:
                # The first iterable is evaluated in the enclosing scope.
                self._bound.pop()
                for_in.iter.visit(self)
                self._bound.append(bound)
                first = False
            else:
                for_in.iter.visit(self)
            bound.update(stored_names(for_in.target))
            for cond in for_in.ifs:
                cond.test.visit(self)
            for_in = for_in.inner_for_in
        for element in elements:
            element.visit(self)
        self._bound.pop()
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        for param in parameters(node):
            if param.default is not None:
                param.default.visit(self)
        local = {p.name.value for p in parameters(node)} | assigned_names(node.body.body)
        self._bound.append(local)
        node.body.visit(self)
        self._bound.pop()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for base in node.bases:
            base.visit(self)
        return False


def parameters(func: cst.FunctionDef | cst.Lambda | cst.Parameters, *, stars: bool = True) -> list[cst.Param]:
    """Every parameter of a function (positional-only, regular, keyword-only, then `*args`/`**kwargs`)."""
    params = func if isinstance(func, cst.Parameters) else func.params
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    if not stars:
        return out
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def loads(node: cst.CSTNode) -> list[cst.Name]:
    """Name nodes read by `node` (an expression, or a whole statement's expressions)."""
    visitor = _Loads()
    node.visit(visitor)
    return visitor.names


def stored_names(target: cst.BaseExpression | cst.BaseAssignTargetExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for element in target.elements:
            out |= stored_names(element.value)
        return out
    if isinstance(target, cst.StarredElement):
        return stored_names(target.value)
    return set()


class _Stores(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.names |= stored_names(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names |= stored_names(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.names |= stored_names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.names |= stored_names(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names |= stored_names(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.names |= stored_names(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.names |= stored_names(node.name.name)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.names.add(alias.asname.name.value)
            else:
                self.names.add(_dotted(alias.name).split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, Sequence):
            for alias in node.names:
                name = alias.asname.name if alias.asname else alias.name
                if isinstance(name, cst.Name):
                    self.names.add(name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def assigned_names(statements: Iterable[cst.CSTNode]) -> set[str]:
    """Every name bound by `statements` in their own scope (any branch)."""
    visitor = _Stores()
    for statement in statements:
        statement.visit(visitor)
    return visitor.names


@dataclass
class Flow:
    """Names read before being (definitely) written, and names written, by a block."""

    read_first: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)
    definite: set[str] = field(default_factory=set)


def block_flow(statements: Sequence[cst.BaseStatement | cst.BaseSmallStatement], defined: set[str]) -> Flow:
    """Order-aware read/write summary of `statements`, with `defined` bound on entry."""
    flow = Flow(definite=set(defined))
    for statement in statements:
        _statement_flow(statement, flow)
    return flow


def _read(flow: Flow, node: cst.CSTNode | None) -> None:
    if node is None:
        return
    for name in loads(node):
        if name.value not in flow.definite:
            flow.read_first.add(name.value)


def _write(flow: Flow, names: set[str], definite: bool = True) -> None:
    flow.assigned |= names
    if definite:
        flow.definite |= names


def _sub_flow(flow: Flow, body: Sequence[cst.CSTNode]) -> Flow:
    inner = Flow(definite=set(flow.definite))
    for statement in body:
        _statement_flow(statement, inner)  # type: ignore[arg-type]
    flow.read_first |= inner.read_first
    flow.assigned |= inner.assigned
    return inner


def _body(block: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return block.body  # type: ignore[return-value]


def _statement_flow(statement: cst.CSTNode, flow: Flow) -> None:
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            _statement_flow(small, flow)
    elif isinstance(statement, cst.Assign):
        _read(flow, statement.value)
        for target in statement.targets:
            if not isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                _read(flow, target.target)
        for target in statement.targets:
            _write(flow, stored_names(target.target))
    elif isinstance(statement, cst.AugAssign):
        _read(flow, statement.target)
        _read(flow, statement.value)
        _write(flow, stored_names(statement.target))
    elif isinstance(statement, cst.AnnAssign):
        _read(flow, statement.value)
        if statement.value is not None:
            _write(flow, stored_names(statement.target))
    elif isinstance(statement, cst.If):
        _read(flow, statement.test)
        then = _sub_flow(flow, _body(statement.body))
        if statement.orelse is not None:
            other_body = [statement.orelse] if isinstance(statement.orelse, cst.If) else _body(statement.orelse.body)
            other = _sub_flow(flow, other_body)
            flow.definite |= then.definite & other.definite
    elif isinstance(statement, (cst.For, cst.While)):
        if isinstance(statement, cst.For):
            _read(flow, statement.iter)
            _write(flow, stored_names(statement.target), definite=False)
            inner = Flow(definite=set(flow.definite) | stored_names(statement.target))
            for s in _body(statement.body):
                _statement_flow(s, inner)
            flow.read_first |= inner.read_first
            flow.assigned |= inner.assigned
        else:
            _read(flow, statement.test)
            _sub_flow(flow, _body(statement.body))
        if statement.orelse is not None:
            _sub_flow(flow, _body(statement.orelse.body))
    elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        _read(flow, statement)
        _write(flow, {statement.name.value})
    elif isinstance(statement, (cst.With, cst.Try)):
        # Never part of a rewritable loop body; summarised conservatively.
        _read(flow, statement)
        _write(flow, assigned_names([statement]), definite=False)
    else:
        _read(flow, statement)
        _write(flow, assigned_names([statement]))


def statements_storing(node: cst.CSTNode, name: str, nested: bool = True) -> list[cst.CSTNode]:
    """Assignments (plain, augmented, annotated) and `for` headers under `node` that store `name`
    (in functions defined under `node` too, unless `nested` is False)."""
    found: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return nested or inner is node

        def visit_Assign(self, inner: cst.Assign) -> None:
            if any(name in stored_names(t.target) for t in inner.targets):
                found.append(inner)

        def visit_AugAssign(self, inner: cst.AugAssign) -> None:
            if name in stored_names(inner.target):
                found.append(inner)

        def visit_AnnAssign(self, inner: cst.AnnAssign) -> None:
            if name in stored_names(inner.target):
                found.append(inner)

        def visit_For(self, inner: cst.For) -> None:
            if name in stored_names(inner.target):
                found.append(inner)

    node.visit(Walk())
    return found


def discards_result(node: cst.CSTNode | None) -> bool:
    """A statement that keeps no result: `f(x)` on its own, or `_ = f(x)` (a store to `_`,
    which by convention nobody reads). Both spellings are one decision wherever it is made."""
    if isinstance(node, cst.Expr):
        return True
    return (
        isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
        and node.targets[0].target.value == "_"
    )
