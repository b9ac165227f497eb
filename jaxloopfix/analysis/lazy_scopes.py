"""libcst's scope analysis, run per function when a rule first asks about one.

`ScopeProvider` visits every node of a module (after `ExpressionContextProvider`, another
full pass): on a large Flax module the two cost about three times the parse, though the
rules ask about a few functions. Here libcst's own visitors run in two steps:

1. the module without the bodies and parameters of its functions and methods (imports,
   module constants, class bodies, decorators, default values, annotations): every name
   bound at module level and in class bodies is known after it;
2. one function (a module-level function or a method, with all it nests) the first time
   a node inside it is asked for, in the scope its definition was seen in.

A function body binds names in its own scope only, so step 2 sees exactly the bindings
the whole-module pass sees, and every node gets the scope `ScopeProvider` gives it
(`tests/test_parsed_module.py` checks this node by node on fixtures and real files).
Two constructs let a body bind names outside itself. A function holding a `global`
statement (at any depth) is visited in step 1, as the whole-module pass would, so its
module-level bindings are known before any other function's. PEP 695 type parameters give
the module the whole-module pass (`eager_only`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, ScopeProvider
from libcst.metadata.expression_context_provider import ExpressionContext, ExpressionContextVisitor
from libcst.metadata.scope_provider import (
    _ASSIGNMENT_LIKE_NODES,
    ClassScope,
    FunctionScope,
    GlobalScope,
    Scope,
    ScopeVisitor,
)

# `def f[T]` / `class C[T]` / `type X = ...` (PEP 695).
_EAGER_ONLY = re.compile(r"\b(?:def|class)[ \t]+\w+[ \t]*\[|^[ \t]*type[ \t]+\w+", re.M)
_GLOBAL = re.compile(r"\bglobal\b")


def eager_only(text: str) -> bool:
    """Whether `text` may hold a construct the per-function analysis does not reproduce."""
    return _EAGER_ONLY.search(text) is not None


def may_bind_globals(text: str) -> bool:
    """Whether `text` may hold a `global` statement (a word search: a superset)."""
    return _GLOBAL.search(text) is not None


def binding_globals(globals_: list[cst.Global], parent: dict[cst.CSTNode, cst.CSTNode]) -> frozenset[cst.FunctionDef]:
    """The functions around each `global` statement: their bodies bind module-level names."""
    found: set[cst.FunctionDef] = set()
    for statement in globals_:
        current = parent.get(statement)
        while current is not None:
            if type(current) is cst.FunctionDef:
                found.add(current)
            current = parent.get(current)
    return frozenset(found)


class _Store:
    """Stands in for the metadata providers libcst's visitors write to and read from."""

    def __init__(self) -> None:
        self.scopes: dict[cst.CSTNode, Scope] = {}
        self.contexts: dict[cst.CSTNode, ExpressionContext] = {}

    def set_metadata(self, node: cst.CSTNode, value: Scope) -> None:
        self.scopes[node] = value

    def get_metadata(self, _key: object, node: cst.CSTNode, default: object = None) -> object:
        return self.contexts.get(node, default)


class _Contexts:
    def __init__(self, store: _Store) -> None:
        self.store = store

    def set_metadata(self, node: cst.CSTNode, value: ExpressionContext) -> None:
        self.store.contexts[node] = value


def _parameters(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


class _OuterContexts(ExpressionContextVisitor):
    """Expression contexts of everything but the bodies of functions outside functions (but
    those in `whole`)."""

    def __init__(self, provider: _Contexts, context: ExpressionContext, whole: frozenset[cst.FunctionDef]) -> None:
        super().__init__(provider, context)  # type: ignore[arg-type]
        self.whole = whole
        self.depth = 0  # functions entered: everything inside one in `whole` is visited

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self.depth or node in self.whole:
            self.depth += 1
            try:
                return bool(super().visit_FunctionDef(node))
            finally:
                self.depth -= 1
        node.name.visit(ExpressionContextVisitor(self.provider, ExpressionContext.STORE))
        node.params.visit(self)
        for decorator in node.decorators:
            decorator.visit(self)
        if node.returns:
            node.returns.visit(self)
        return False


def _subclasses(kinds: tuple[type, ...]) -> frozenset[type]:
    found: set[type] = set()
    work = list(kinds)
    while work:
        kind = work.pop()
        if kind not in found:
            found.add(kind)
            work.extend(kind.__subclasses__())
    return frozenset(found)


# The classes `ScopeVisitor.on_leave` counts as assignments, for an exact-type test: an
# `isinstance` against libcst's ABC-derived classes on every node cost a tenth of a lint.
_ASSIGNMENT_LIKE = _subclasses(_ASSIGNMENT_LIKE_NODES)


class _Leave(ScopeVisitor):
    """`ScopeVisitor.on_leave`, with the assignment test by exact type."""

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.provider.set_metadata(original_node, self.scope)
        if type(original_node) in _ASSIGNMENT_LIKE:
            self.scope._assignment_count += 1
        cst.CSTVisitor.on_leave(self, original_node)


class _OuterScopes(_Leave):
    """`ScopeVisitor` that records functions outside functions instead of entering them (but
    those in `whole`, entered as the whole-module pass enters them)."""

    def __init__(self, provider: _Store, whole: frozenset[cst.FunctionDef]) -> None:
        super().__init__(provider)  # type: ignore[arg-type]
        self.deferred: dict[cst.FunctionDef, Scope] = {}
        self.whole = whole

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if not isinstance(self.scope, (GlobalScope, ClassScope)) or node in self.whole:
            return bool(super().visit_FunctionDef(node))
        self.scope.record_assignment(node.name.value, node)
        self.provider.set_metadata(node.name, self.scope)
        # What `visit_Param` visits in the enclosing scope, in the same order.
        for param in _parameters(node.params):
            for value in (param.default, param.annotation):
                if value:
                    value.visit(self)
        self.deferred[node] = self.scope
        for decorator in node.decorators:
            decorator.visit(self)
        if node.returns:
            node.returns.visit(self)
        return False


class _FunctionScopes(_Leave):
    """`ScopeVisitor` for one deferred function: its parameters' values were visited before."""

    own_parameters = False

    def visit_Param(self, node: cst.Param) -> bool:
        if not self.own_parameters:
            return bool(super().visit_Param(node))
        self.scope.record_assignment(node.name.value, node)
        self.provider.set_metadata(node.name, self.scope)
        return False


class LazyScopes:
    """Scopes of a module's nodes; a function's are computed when one of its nodes is asked for."""

    def __init__(
        self,
        module: cst.Module,
        parent: dict[cst.CSTNode, cst.CSTNode],
        eager: bool = False,
        whole: frozenset[cst.FunctionDef] = frozenset(),
    ) -> None:
        """`eager`: the whole-module pass; `whole`: functions visited with the module (see
        `binding_globals`)."""
        self._parent = parent
        self._store = _Store()
        if eager:
            self._scopes = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider))
            self._deferred: dict[cst.FunctionDef, Scope] = {}
            return
        module.visit(_OuterContexts(_Contexts(self._store), ExpressionContext.LOAD, whole))
        outer = _OuterScopes(self._store, whole)
        module.visit(outer)
        outer.infer_accesses()
        self._scopes = self._store.scopes
        self._deferred = outer.deferred

    def get(self, node: cst.CSTNode) -> Scope | None:
        found = self._scopes.get(node)
        if found is not None or not self._deferred:
            return found
        owner = self._owner(node)
        if owner is None:
            return None
        self._expand(owner)
        return self._scopes.get(node)

    def _owner(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The deferred function `node` lies in (its parameters or body)."""
        current: cst.CSTNode | None = node
        while current is not None:
            if current in self._deferred:
                return current  # type: ignore[return-value]
            current = self._parent.get(current)
        return None

    def _expand(self, func: cst.FunctionDef) -> None:
        enclosing = self._deferred.pop(func)
        func.body.visit(ExpressionContextVisitor(_Contexts(self._store), ExpressionContext.LOAD))  # type: ignore[arg-type]
        visitor = _FunctionScopes(self._store)  # type: ignore[arg-type]
        visitor.scope = enclosing
        with visitor._new_scope(FunctionScope, func, get_full_name_for_node(func.name)):
            visitor.own_parameters = True
            func.params.visit(visitor)
            visitor.own_parameters = False
            func.body.visit(visitor)
        visitor.infer_accesses()
