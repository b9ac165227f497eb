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

from collections import deque
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

import dataclasses

# Field order per node class; for the few classes whose visit skips a field when it is None
# (`FormattedStringExpression.format_spec`), per class and set of fields present.
_ORDER: dict[type, tuple[str, ...] | None] = {}
_LIBCST_VISIT = cst.CSTNode.visit
_CONDITIONAL: dict[tuple[type, tuple[bool, ...]], tuple[str, ...]] = {}


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


_NAMES: dict[type, tuple[str, ...]] = {}
_UNSEEN: tuple[str, ...] = ("<unseen>",)


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    kind = type(node)
    order = _ORDER.get(kind, _UNSEEN)
    if order is _UNSEEN:
        order = _record(node)
        names = _NAMES[kind] = tuple(f.name for f in dataclasses.fields(node))
        if any(getattr(node, name) is None for name in names if name not in order):
            order = None  # a field left out may be one visited when present: record per shape
        _ORDER[kind] = order
    if order is not None:
        return order
    key = (kind, tuple(getattr(node, name) is not None for name in _NAMES[kind]))
    order = _CONDITIONAL.get(key)
    if order is None:
        order = _CONDITIONAL[key] = _record(node)
    return order


# What a field's value is, by its type: 1 a node, 2 a sequence, 0 anything else. libcst's node
# classes are ABCs, so `isinstance(value, CSTNode)` takes the slow `ABCMeta` path on every call.
_KIND: dict[type, int] = {}


def _kind(kind: type) -> int:
    found = _KIND.get(kind)
    if found is None:
        found = _KIND[kind] = 1 if issubclass(kind, cst.CSTNode) else 2 if issubclass(kind, (tuple, list)) else 0
    return found


def _nodes_in(value: object) -> Sequence[cst.CSTNode]:
    """The nodes a field's value holds: the value itself, a sequence's nodes, or none."""
    kinds = _KIND
    kind = kinds.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == 1:
        return (value,)  # type: ignore[return-value]
    if kind == 2:
        return [item for item in value if (kinds.get(type(item)) or _kind(type(item))) == 1]  # type: ignore[attr-defined]
    return ()


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node`'s children in document order (what `node.children` gives, without rebuilding `node`)."""
    out: list[cst.CSTNode] = []
    for name in _fields(node):
        out.extend(_nodes_in(getattr(node, name)))
    return out


def preorder(
    root: cst.CSTNode, on_kind: dict[type, Callable[[cst.CSTNode], object]]
) -> tuple[list[cst.CSTNode], dict[cst.CSTNode, cst.CSTNode], list[int]]:
    """`root` and every node below it in document order (as `walk(root)` gives them), each
    node's parent, and per place its parent's place (-1 for `root`); `on_kind[type(node)]`
    is called on each node of those types on the way. `children` inlined: a module's tree is
    mostly whitespace and other leaves, and this loop runs once per parsed text."""
    nodes: list[cst.CSTNode] = []
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    above: list[int] = []
    stack: list[cst.CSTNode] = [root]
    above_stack = [-1]  # beside `stack`: each waiting node's parent's place
    pop, pop_above = stack.pop, above_stack.pop
    append, append_above = nodes.append, above.append
    orders, kinds, unseen = _ORDER, _KIND, _UNSEEN
    while stack:
        node = pop()
        parent = pop_above()
        kind = type(node)  # exact classes: libcst's are ABCs, slow under `isinstance`
        handler = on_kind.get(kind)
        if handler is not None:
            handler(node)
        place = len(nodes)
        append(node)
        append_above(parent)
        order = orders.get(kind, unseen)
        if order is unseen or order is None:
            order = _fields(node)
        found: list[cst.CSTNode] = []
        for name in order:
            value = getattr(node, name)
            value_kind = kinds.get(type(value))
            if value_kind is None:  # (not `or`: most fields hold strings, kind 0)
                value_kind = _kind(type(value))
            if value_kind == 1:
                found.append(value)  # type: ignore[arg-type]
            elif value_kind == 2:
                for item in value:  # type: ignore[attr-defined]
                    if (kinds.get(type(item)) or _kind(type(item))) == 1:
                        found.append(item)
        if found:
            for child in found:
                parents[child] = node
            found.reverse()  # popped in document order
            stack.extend(found)
            above_stack.extend([place] * len(found))
    return nodes, parents, above


class DocumentOrder:
    """A parsed module's nodes in pre-order, and per place the place of its subtree's last node.

    A subtree is then a slice of `nodes`: walking below a node of an indexed module reads the
    slice instead of every node's fields again."""

    def __init__(self, nodes: list[cst.CSTNode], ends: list[int]) -> None:
        self.nodes = nodes
        self.ends = ends
        self.index = {node: place for place, node in enumerate(nodes)}


# The most recently indexed modules (the analysis works on one module at a time).
_INDEXED: deque[DocumentOrder] = deque(maxlen=2)


def indexed(order: DocumentOrder) -> None:
    """Let `walk` take subtrees of `order`'s module from its slices."""
    _INDEXED.appendleft(order)


def walk(root: cst.CSTNode, descend: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """`root` and the nodes below it in document order (pre-order).

    `descend(node)` False keeps `node`'s children out (as a visitor's `visit_X` returning
    False): `node` itself is still yielded."""
    for order in _INDEXED:
        place = order.index.get(root)
        if place is not None:
            return _sliced(order, place, descend)
    return _walked(root, descend)


def _sliced(order: DocumentOrder, place: int, descend: Callable[[cst.CSTNode], bool] | None) -> Iterator[cst.CSTNode]:
    nodes, ends = order.nodes, order.ends
    end = ends[place]
    if descend is None:
        yield from nodes[place : end + 1]
        return
    while place <= end:
        node = nodes[place]
        yield node
        place = place + 1 if descend(node) else ends[place] + 1


def _walked(root: cst.CSTNode, descend: Callable[[cst.CSTNode], bool] | None) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if descend is None or descend(node):
            stack.extend(reversed(children(node)))


def _hook(visitor_type: type, name: str):  # type: ignore[no-untyped-def]
    """The class's function `name`, or None when it is absent or one of libcst's no-op stubs."""
    found = getattr(visitor_type, name, None)
    return None if found is None or getattr(found, "_is_no_op", False) else found


# What libcst's default `on_visit`, `on_leave`, `on_visit_attribute` and `on_leave_attribute`
# would look up by name on every node, found once per visitor shape (`_shape`), node class and
# field order: (enter, leave, ((field, enter field, leave field), ...)), each hook the *name* of
# the visitor's function (None: nothing to call; `_THROUGH_METHOD`: the visitor overrides that
# dispatching method, which is called as libcst calls it, as `ScopeVisitor.on_leave` is).
#
# Plans hold names, not functions: the analysis defines many visitors inside functions, a new
# class (with closures over that call's trees) on every call. Keyed by such a class, a plan would
# be found again for each one, and would keep every class and every tree it reached alive for
# the life of the process (a language server's). Every class one `class` statement makes shares
# its plans; each class's functions are looked up by name on the class (`_Visitor.functions`).
_THROUGH_METHOD = object()
# Per shape: the plans of node classes whose nodes all visit the same fields, and of the others
# per node class and field order (`order` tuples live in `_ORDER`/`_CONDITIONAL` for good).
_PLANS: dict[tuple, dict[type, tuple]] = {}
_SHAPED: dict[tuple, dict[tuple[type, int], tuple]] = {}
_VISITOR = "_jaxloopfix_visitor"  # a visitor class's `_Visitor`, set on the class


class _Functions(dict):
    """A visitor class's hook functions by name, each looked up once (no-op stubs: `_nothing`)."""

    def __init__(self, owner: type) -> None:
        super().__init__()
        self.owner = owner

    def __missing__(self, name: str):  # type: ignore[no-untyped-def]
        found = self[name] = _hook(self.owner, name) or _nothing
        return found


def _nothing(visitor: object, node: cst.CSTNode) -> None:
    return None


class _Visitor:
    """What `fast_visit` keeps on a visitor class: its shape's plans and its own functions."""

    __slots__ = ("functions", "libcst", "owner", "plans", "shape", "shaped")

    def __init__(self, owner: type) -> None:
        self.owner = owner  # a subclass finds its base's `_Visitor` by `getattr`: not its own
        self.libcst = not issubclass(owner, cst.CSTVisitor)  # a transformer: libcst's own `visit`
        self.shape = () if self.libcst else _shape(owner)
        self.plans = _PLANS.setdefault(self.shape, {}) if not self.libcst else {}
        self.shaped = _SHAPED.setdefault(self.shape, {}) if not self.libcst else {}
        self.functions = _Functions(owner)

    def plan(self, node: cst.CSTNode) -> tuple:
        order = _fields(node)
        key = (type(node), id(order))
        found = self.shaped.get(key)
        if found is None:
            found = self.shaped[key] = _hooks(self.owner, node, order)
        if _ORDER.get(type(node)) is not None:  # one field order for every node of the class
            self.plans[type(node)] = found
        return found


def _visitor(visitor_type: type) -> _Visitor:
    found = _Visitor(visitor_type)
    setattr(visitor_type, _VISITOR, found)
    return found


def _shape(visitor_type: type) -> tuple:
    """What decides a visitor class's plans without naming a class defined inside a function:
    a module-level class itself; for a local one, its place, its bases' shapes and the names
    its body defines (so every class one `class` statement makes shares one shape)."""
    if "<locals>" not in visitor_type.__qualname__:
        return (visitor_type,)
    names = tuple(sorted(name for name in vars(visitor_type) if name != _VISITOR))
    bases = tuple(_shape(base) for base in visitor_type.__bases__)
    return (visitor_type.__module__, visitor_type.__qualname__, bases, names)


def _hooks(visitor_type: type, node: cst.CSTNode, order: tuple[str, ...]) -> tuple:
    kind = type(node).__name__
    base = cst.CSTVisitor

    def resolved(method: str, name: str):  # type: ignore[no-untyped-def]
        if getattr(visitor_type, method) is not getattr(base, method):
            return _THROUGH_METHOD
        return name if _hook(visitor_type, name) is not None else None

    fields = tuple(
        (field, resolved("on_visit_attribute", f"visit_{kind}_{field}"),
         resolved("on_leave_attribute", f"leave_{kind}_{field}"))
        for field in order
    )
    return resolved("on_visit", f"visit_{kind}"), resolved("on_leave", f"leave_{kind}"), fields


def fast_visit(self: cst.CSTNode, visitor):  # type: ignore[no-untyped-def]
    """`CSTNode.visit` for read-only visitors: the same hooks in the same order, no copies.

    The `visit_X`, `leave_X`, `visit_X_field` and `leave_X_field` methods libcst's
    dispatching methods look up are found once per visitor shape and node class (libcst's
    no-op stubs skipped); a dispatching method the visitor overrides is called as libcst
    calls it."""
    visitor_type = type(visitor)
    kept = getattr(visitor_type, _VISITOR, None)
    if kept is None or kept.owner is not visitor_type:
        kept = _visitor(visitor_type)
    plan = kept.plans.get(type(self))
    if plan is None:
        if kept.libcst:
            return _LIBCST_VISIT(self, visitor)
        plan = kept.plan(self)
    enter, leave, fields = plan
    through = _THROUGH_METHOD
    functions = kept.functions
    if enter is None:
        go_on = True
    elif enter is through:
        go_on = visitor.on_visit(self)
    else:
        go_on = functions[enter](visitor, self) is not False
    if go_on:
        kinds = _KIND
        for name, enter_field, leave_field in fields:
            if enter_field is through:
                visitor.on_visit_attribute(self, name)
            elif enter_field is not None:
                functions[enter_field](visitor, self)
            # `_nodes_in`, inline: a child is never a `Module`, the one node class with a `visit` of its own.
            value = getattr(self, name)
            kind = kinds.get(type(value))
            if kind is None:
                kind = _kind(type(value))
            if kind == 1:
                fast_visit(value, visitor)
            elif kind == 2:
                for item in value:
                    if (kinds.get(type(item)) or _kind(type(item))) == 1:
                        fast_visit(item, visitor)
            if leave_field is through:
                visitor.on_leave_attribute(self, name)
            elif leave_field is not None:
                functions[leave_field](visitor, self)
    if leave is through:
        visitor.on_leave(self)
    elif leave is not None:
        functions[leave](visitor, self)
    return self


def install_fast_visit() -> None:
    """Make `fast_visit` libcst's `CSTNode.visit` in this process (idempotent)."""
    cst.CSTNode.visit = fast_visit  # type: ignore[method-assign]


def install_identity_hash() -> None:
    """Give libcst's node classes the interpreter's own identity hash (idempotent).

    Nodes compare by identity, and libcst defines their `__hash__` in Python as `id(self)`:
    each of the analysis's dict and set operations keyed by a node (parents, document order,
    scopes, qualified names, traced functions) called a Python function. `object.__hash__` is
    an identity hash computed in C: equal for the same node, so every lookup finds what it
    found before."""
    python_hash = _PYTHON_HASH
    work = [cst.CSTNode]
    while work:
        kind = work.pop()
        if kind.__dict__.get("__hash__") is python_hash:
            kind.__hash__ = object.__hash__  # type: ignore[method-assign, assignment]
        work.extend(kind.__subclasses__())


_PYTHON_HASH = cst.CSTNode.__dict__["__hash__"]


def libcst_visit(node: cst.CSTNode, visitor):  # type: ignore[no-untyped-def]
    """libcst's own `CSTNode.visit` (tests compare `fast_visit` against it)."""
    return _LIBCST_VISIT(node, visitor)
