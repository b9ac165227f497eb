"""A parsed module with the libcst metadata every analysis step needs.

The metadata is resolved once per file and shared by all rules, so adding a
rule never adds a parse or a metadata pass. Only `ScopeProvider` runs as a
metadata pass: qualified names are asked of the node's scope when a rule
needs one (what `QualifiedNameProvider` does for every node of the module),
and parents come from a walk over the nodes' fields (the same map as
`ParentNodeProvider`, tested against it, at a quarter of the cost of a visitor
traversal). Each provider pass is a full batched traversal in Python; on a
large Flax module the two left out cost more than the scope analysis itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cached_property

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    ScopeProvider,
)


class ParsedModule:
    """A libcst module plus resolved metadata keyed by node identity."""

    def __init__(
        self, text: str, filename: str, hidden: frozenset[str] = frozenset(), bound: frozenset[str] = frozenset()
    ) -> None:
        self.text = text
        self.filename = filename
        # Identifiers of code left out of `text`, and the module-level names it binds
        # (see `prefilter.Reduced`).
        self.hidden = hidden
        self.bound = bound
        self.module = cst.parse_module(text)
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self._scopes = self.wrapper.resolve(ScopeProvider)
        self._qnames: dict[cst.CSTNode, frozenset[str]] = {}

    @cached_property
    def _positions(self):
        # Positions cost a full code generation pass: computed only when a diagnostic needs one.
        return self.wrapper.resolve(PositionProvider)

    @cached_property
    def _tree(self) -> _Tree:
        return _Tree(self.module)

    @cached_property
    def _order(self) -> dict[cst.CSTNode, tuple[int, int]]:
        return _document_order(self.module)

    def order(self, node: cst.CSTNode) -> tuple[int, int]:
        """(pre-order index, index of the last node in its subtree): cheap document order."""
        return self._order[node]

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        o_start, o_end = self.order(outer)
        i_start, _ = self.order(inner)
        return o_start <= i_start <= o_end

    def after(self, node: cst.CSTNode, reference: cst.CSTNode) -> bool:
        """Whether `node` comes after the whole of `reference` in the source."""
        return self.order(node)[0] > self.order(reference)[1]

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        names = self._qnames.get(node)
        if names is None:
            scope = self.scope(node)
            found: set[QualifiedName] = scope.get_qualified_names_for(node) if scope else set()
            names = self._qnames[node] = frozenset(q.name for q in found)
        return set(names)

    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """The single qualified name of `node`, or None when unknown or ambiguous."""
        names = self.qualified_names(node)
        return next(iter(names)) if len(names) == 1 else None

    def scope(self, node: cst.CSTNode):
        value = self._scopes.get(node)
        if isinstance(value, LazyValue):
            value = value()
        return value

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._tree.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def position(self, node: cst.CSTNode) -> CodeRange:
        value = self._positions[node]
        if isinstance(value, LazyValue):
            value = value()
        return value

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    @cached_property
    def all_names(self) -> frozenset[str]:
        """Every identifier in the module: generated names must avoid all of them."""
        return frozenset(self._tree.names) | self.hidden

    @cached_property
    def module_names(self) -> frozenset[str]:
        """Names bound at module level (functions, classes, imports, globals)."""
        from jaxloopfix.analysis.names import assigned_names

        return frozenset(assigned_names(self.module.body)) | self.bound

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)


def descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node` and every node below it, in document order."""
    out: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            out.append(inner)
            return True

    node.visit(Walk())
    return out


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier under `node`."""
    names: set[str] = set()

    class Walk(cst.CSTVisitor):
        def visit_Name(self, inner: cst.Name) -> None:
            names.add(inner.value)

    node.visit(Walk())
    return names


def comments_in(node: cst.CSTNode) -> list[cst.Comment]:
    """The comments under `node`, in document order (a rewrite must keep them)."""
    return [inner for inner in descendants(node) if isinstance(inner, cst.Comment)]


def shorten(code: str, limit: int = 60) -> str:
    """Source code on one line, cut to `limit` characters, for messages."""
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


class _Tree:
    """Every node's parent, and the module's identifiers, from one walk over node fields.

    A libcst node's children are exactly the nodes in its dataclass fields (alone or in
    a sequence); the walk reads them directly instead of rebuilding each node as a
    visitor does. Order is not kept: see `_document_order` for that."""

    _fields: dict[type, tuple[str, ...]] = {}

    def __init__(self, module: cst.Module) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.names: set[str] = set()
        node_type = cst.CSTNode
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name):
                self.names.add(node.value)
            for name in self._names_of(type(node)):
                value = getattr(node, name)
                if isinstance(value, node_type):
                    self.parents[value] = node
                    stack.append(value)
                elif isinstance(value, (tuple, list)):
                    for item in value:
                        if isinstance(item, node_type):
                            self.parents[item] = node
                            stack.append(item)

    @classmethod
    def _names_of(cls, node_class: type) -> tuple[str, ...]:
        names = cls._fields.get(node_class)
        if names is None:
            names = cls._fields[node_class] = tuple(f.name for f in dataclasses.fields(node_class))
        return names


def _document_order(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    order: dict[cst.CSTNode, tuple[int, int]] = {}
    starts: dict[cst.CSTNode, int] = {}
    counter = 0

    class Walk(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal counter
            starts[node] = counter
            counter += 1
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            order[original_node] = (starts[original_node], counter - 1)

    module.visit(Walk())
    return order
