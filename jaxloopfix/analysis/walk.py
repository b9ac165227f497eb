"""Walk a libcst tree in document order without rebuilding it.

`node.visit(visitor)` rebuilds every node it passes (`_visit_and_replace_children`
constructs and validates a copy, even for a read-only `CSTVisitor`): on real files the
analysis spent most of its time there. A node's children are the nodes in its fields;
the order libcst's visitors take them in is learnt once per node class, by one shallow
visit that records the fields as the visitor enters them. `walk` then yields exactly the
nodes, in exactly the order, a `CSTVisitor` sees, and `fast_visit` (installed as
`CSTNode.visit` by `install_fast_visit`) calls a read-only visitor's hooks (`on_visit`,
`on_visit_attribute`, `on_leave_attribute`, `on_leave`) in exactly libcst's sequence
without the copies. Transformers keep libcst's own `visit`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

import dataclasses

# Field order per node class; for the few classes whose visit skips a field when it is None
# (`FormattedStringExpression.format_spec`), per class and set of fields present.
_ORDER: dict[type, tuple[str, ...] | None] = {}
_LIBCST_VISIT = cst.CSTNode.visit
_CONDITIONAL: dict[tuple[type, tuple[str, ...]], tuple[str, ...]] = {}


class _FieldRecorder(cst.CSTVisitor):
    """Records the fields of one node in the order libcst visits them, without descending."""

    def __init__(self, root: cst.CSTNode) -> None:
        super().__init__()
        self.root = root
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.root

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.root and attribute not in self.fields:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def _record(node: cst.CSTNode) -> tuple[str, ...]:
    recorder = _FieldRecorder(node)
    _LIBCST_VISIT(node, recorder)
    return tuple(recorder.fields)


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    kind = type(node)
    if kind in _ORDER:
        order = _ORDER[kind]
        if order is not None:
            return order
    else:
        order = _record(node)
        skipped = [f.name for f in dataclasses.fields(node) if f.name not in order]
        if not any(getattr(node, name) is None for name in skipped):
            _ORDER[kind] = order  # every field that can hold a node was visited
            return order
        _ORDER[kind] = None
    present = tuple(f.name for f in dataclasses.fields(node) if getattr(node, f.name) is not None)
    key = (kind, present)
    order = _CONDITIONAL.get(key)
    if order is None:
        order = _CONDITIONAL[key] = _record(node)
    return order


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node`'s children in document order (what `node.children` gives, without rebuilding `node`)."""
    out: list[cst.CSTNode] = []
    node_type = cst.CSTNode
    for name in _fields(node):
        value = getattr(node, name)
        if isinstance(value, node_type):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(item for item in value if isinstance(item, node_type))
    return out


def walk(root: cst.CSTNode, descend: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """`root` and the nodes below it in document order (pre-order).

    `descend(node)` False keeps `node`'s children out (as a visitor's `visit_X` returning
    False): `node` itself is still yielded."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if descend is None or descend(node):
            stack.extend(reversed(children(node)))


def fast_visit(self: cst.CSTNode, visitor):  # type: ignore[no-untyped-def]
    """`CSTNode.visit` for read-only visitors: the same hooks in the same order, no copies."""
    if not isinstance(visitor, cst.CSTVisitor):
        return _LIBCST_VISIT(self, visitor)
    if visitor.on_visit(self):
        node_type = cst.CSTNode
        for name in _fields(self):
            visitor.on_visit_attribute(self, name)
            value = getattr(self, name)
            if isinstance(value, node_type):
                value.visit(visitor)
            elif isinstance(value, (tuple, list)):
                for item in value:
                    if isinstance(item, node_type):
                        item.visit(visitor)
            visitor.on_leave_attribute(self, name)
    visitor.on_leave(self)
    return self


def install_fast_visit() -> None:
    """Make `fast_visit` libcst's `CSTNode.visit` in this process (idempotent)."""
    cst.CSTNode.visit = fast_visit  # type: ignore[method-assign]


def libcst_visit(node: cst.CSTNode, visitor):  # type: ignore[no-untyped-def]
    """libcst's own `CSTNode.visit` (tests compare `fast_visit` against it)."""
    return _LIBCST_VISIT(node, visitor)
