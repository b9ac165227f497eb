"""Verify a function through the module's own entry points, with the rewrite swapped in where it lives.

A loop often sits where verify cannot call it with meaningful inputs: a method that reads
`self` (a Flax or Equinox module's `__call__`), a function handed to `hk.transform`, a helper
of a jitted step. The module's `example_inputs()` names the functions users call (`forward`);
running those once as they are and once with the rewrite in place of the function's code
compares exactly what users see, on the inputs they pass.

The swap replaces the function object's `__code__`, so every reference to it (a class
attribute, a transform that captured it, a jit wrapper) runs the rewrite; names the rewrite
adds (`lax`) are put in the module for the duration. JAX's caches are cleared before every run,
as a jitted entry point would otherwise replay its first trace. A run counts only when the
rewrite's code actually executed, which a call hook checks.

Runs inside the verify worker (it imports the user's module and jax).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType
from typing import Any


def innermost(fn: Any) -> FunctionType | None:
    """The plain Python function under wrappers (jit, `functools.wraps`, staticmethod, Flax and Equinox method wrappers)."""
    seen = 0
    while fn is not None and seen < 16:
        seen += 1
        if isinstance(fn, FunctionType) and not hasattr(fn, "__wrapped__"):
            return fn
        for attr in ("__wrapped__", "__func__", "method", "fun", "_fun"):
            inner = getattr(fn, attr, None)
            if inner is not None and inner is not fn:
                fn = inner
                break
        else:
            return fn if isinstance(fn, FunctionType) else None
    return None


def stored(module: Any, owner: str | None, function: str) -> Any:
    """The function as its module or class stores it (not bound)."""
    if not owner:
        return getattr(module, function, None)
    cls = getattr(module, owner, None)
    try:
        return inspect.getattr_static(cls, function) if cls is not None else None
    except AttributeError:
        return None


class Swap:
    """The rewrite's code in place of the original's, and the globals it needs, undone on exit."""

    def __init__(self, target: FunctionType, code: CodeType, added: dict[str, Any]) -> None:
        if len(code.co_freevars) != len(target.__code__.co_freevars):
            raise ValueError(
                f"the rewrite has {len(code.co_freevars)} free variables and the original "
                f"{len(target.__code__.co_freevars)}"
            )
        self.target, self.code, self.added = target, code, added

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        original = self.target.__code__
        namespace = self.target.__globals__
        added = {k: v for k, v in self.added.items() if k not in namespace}
        namespace.update(added)
        self.target.__code__ = self.code
        try:
            yield
        finally:
            self.target.__code__ = original
            for key in added:
                namespace.pop(key, None)


def _clear_caches() -> None:
    import jax

    jax.clear_caches()


@contextlib.contextmanager
def _watch(filename: str, seen: list[bool]) -> Iterator[None]:
    """Set `seen[0]` when code from `filename` is called (call events only: no per-line cost)."""
    previous = sys.getprofile()

    def hook(frame, event, arg):  # noqa: ARG001 - the profiler's signature
        if event == "call" and frame.f_code.co_filename == filename:
            seen[0] = True

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


def fresh(fn: Callable) -> Callable:
    """`fn` with JAX's caches cleared before each call (so a jitted entry point traces again)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        _clear_caches()
        return fn(*args, **kwargs)

    return run


def swapped(fn: Callable, swap: Swap, reached: list[bool]) -> Callable:
    """`fn` run with the rewrite swapped in; `reached[0]` tells whether the rewrite ran."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        _clear_caches()
        with swap.applied(), _watch(swap.code.co_filename, reached):
            return fn(*args, **kwargs)

    return run


def rewritten_code(module: Any, function: str, source: str, filename: str) -> tuple[CodeType, dict[str, Any]]:
    """The rewrite's code object and the module-level names it adds (its new imports)."""
    namespace = dict(module.__dict__)
    exec(compile(source, filename, "exec"), namespace)
    fn = innermost(namespace.get(function))
    if fn is None:
        raise NameError(f"the rewritten source does not define {function!r}")
    added = {k: v for k, v in namespace.items() if k not in module.__dict__ and k != function and k != "__builtins__"}
    return fn.__code__, added
