"""`ast.walk` and `ast.iter_child_nodes` without their generators of generators.

The pre-filter walks every checked file's `ast` tree; `ast.walk` runs two nested generators
(`iter_child_nodes` over `iter_fields`) per node, which cost as much as `ast.parse` itself on
jax. These give the same nodes in the same order, reading each node's `_fields` directly.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

_AST = ast.AST


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _AST):
                    out.append(item)
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk(node)`: `node` and every node below it, breadth first."""
    todo = deque([node])
    pop, push = todo.popleft, todo.append
    while todo:
        node = pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, _AST):
                push(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        push(item)
        yield node
