"""A parsed module with the libcst metadata every analysis step needs.

The metadata is resolved once per file and shared by all rules, so adding a
rule never adds a parse or a metadata pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)


class ParsedModule:
    """A libcst module plus resolved metadata keyed by node identity."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.module = cst.parse_module(text)
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        resolved = self.wrapper.resolve_many(
            [QualifiedNameProvider, ScopeProvider, ParentNodeProvider, PositionProvider]
        )
        self._qnames = resolved[QualifiedNameProvider]
        self._scopes = resolved[ScopeProvider]
        self._parents = resolved[ParentNodeProvider]
        self._positions = resolved[PositionProvider]

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        value = self._qnames.get(node)
        if isinstance(value, LazyValue):
            value = value()
        return {q.name for q in value} if value else set()

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
        value = self._parents.get(node)
        if isinstance(value, LazyValue):
            value = value()
        return value

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
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)
