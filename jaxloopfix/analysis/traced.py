"""Which functions run under a JAX trace, and why.

A function is traced when a JAX transform decorates it, wraps it at a call
site in the same module, or when it is defined inside or called from a traced
function. Transforms are matched by qualified name (libcst's
QualifiedNameProvider), so aliases (`import jax as jx`, `from jax import jit
as J`) match and other libraries' `jit` (numba) never does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import ParsedModule

# Qualified names of transforms whose function argument is traced.
TRACING_TRANSFORMS: frozenset[str] = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.pjit",
        "jax.experimental.pjit.pjit",
        "jax.grad",
        "jax.value_and_grad",
        "jax.vmap",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.checkpoint",
        "jax.remat",
        "jax.ad_checkpoint.checkpoint",
        "jax.ad_checkpoint.remat",
        "jax.named_call",
        "equinox.filter_jit",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "equinox.filter_vmap",
        "equinox.filter_pmap",
        "equinox.filter_checkpoint",
    }
)
PARTIAL: frozenset[str] = frozenset({"functools.partial"})


@dataclass
class TracedFunction:
    node: cst.FunctionDef
    # Why it is traced; a callable when the text needs source positions (computed only if reported).
    why: str | Callable[[], str]
    # Parameters the transform marks static (static_argnames / static_argnums).
    static_params: set[str] = field(default_factory=set)
    # True when a transform applies directly (its non-static parameters are tracers).
    transformed: bool = False

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def reason(self) -> str:
        return self.why if isinstance(self.why, str) else self.why()


def _literal_strings(expr: cst.BaseExpression) -> list[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return [value] if isinstance(value, str) else []
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        out: list[str] = []
        for element in expr.elements:
            out.extend(_literal_strings(element.value))
        return out
    return []


def _literal_ints(expr: cst.BaseExpression) -> list[int]:
    if isinstance(expr, cst.Integer):
        return [int(expr.evaluated_value)]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return [-v for v in _literal_ints(expr.expression)]
    if isinstance(expr, (cst.List, cst.Tuple)):
        out: list[int] = []
        for element in expr.elements:
            out.extend(_literal_ints(element.value))
        return out
    return []


@dataclass
class _Transform:
    name: str
    static_names: set[str] = field(default_factory=set)
    static_nums: set[int] = field(default_factory=set)


def _static_args(args: list[cst.Arg]) -> tuple[set[str], set[int]]:
    names: set[str] = set()
    nums: set[int] = set()
    for arg in args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "static_argnames":
            names.update(_literal_strings(arg.value))
        elif arg.keyword.value == "static_argnums":
            nums.update(_literal_ints(arg.value))
    return names, nums


class TracedFinder:
    """Finds traced functions of one module."""

    def __init__(self, parsed: ParsedModule, extra_decorators: tuple[str, ...] = ()) -> None:
        self.parsed = parsed
        self.transforms = TRACING_TRANSFORMS | frozenset(extra_decorators)
        self.traced: dict[cst.FunctionDef, TracedFunction] = {}

    # -- transform recognition -------------------------------------------------
    def transform_of(self, expr: cst.BaseExpression) -> _Transform | None:
        """The transform an expression denotes when used as a decorator or wrapper."""
        qname = self.parsed.qualified_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if qname in self.transforms:
            return _Transform(qname)
        if isinstance(expr, cst.Call):
            func_name = self.parsed.qualified_name(expr.func) if isinstance(expr.func, (cst.Name, cst.Attribute)) else None
            positional = [a for a in expr.args if a.keyword is None and not a.star]
            if func_name in PARTIAL and positional:
                inner = self.transform_of(positional[0].value)
                if inner is not None:
                    names, nums = _static_args(list(expr.args))
                    inner.static_names |= names
                    inner.static_nums |= nums
                    return inner
            if func_name in self.transforms and not positional:
                # `@jax.jit(static_argnames=...)` or `@jax.checkpoint(policy=...)`.
                names, nums = _static_args(list(expr.args))
                return _Transform(func_name, names, nums)
        return None

    def wrapped_function(self, call: cst.Call) -> tuple[cst.FunctionDef, _Transform] | None:
        """For `jax.jit(f, ...)` / `partial(jax.jit, ...)(f)` / `jax.jit(jax.grad(f))`: f and the transform."""
        transform = self.transform_of(call.func)
        if transform is None:
            return None
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if not positional:
            return None
        names, nums = _static_args(list(call.args))
        transform.static_names |= names
        transform.static_nums |= nums
        target = positional[0].value
        if isinstance(target, cst.Call):
            inner = self.wrapped_function(target)
            if inner is None:
                return None
            func, inner_transform = inner
            inner_transform.static_names |= transform.static_names
            inner_transform.static_nums |= transform.static_nums
            return func, _Transform(transform.name, inner_transform.static_names, inner_transform.static_nums)
        func = self.resolve_function(target)
        return (func, transform) if func is not None else None

    def resolve_function(self, expr: cst.BaseExpression) -> cst.FunctionDef | None:
        """The FunctionDef a Name refers to in this module, if exactly one."""
        if not isinstance(expr, cst.Name):
            return None
        scope = self.parsed.scope(expr)
        if scope is None:
            return None
        found = [a.node for a in scope[expr.value] if isinstance(getattr(a, "node", None), cst.FunctionDef)]
        return found[0] if len(found) == 1 else None

    # -- the search ------------------------------------------------------------
    def find(self) -> dict[cst.FunctionDef, TracedFunction]:
        functions: list[cst.FunctionDef] = []
        calls: list[cst.Call] = []
        parsed = self.parsed

        class Collect(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                functions.append(node)

            def visit_Call(self, node: cst.Call) -> None:
                calls.append(node)

        parsed.module.visit(Collect())

        for func in functions:
            for decorator in func.decorators:
                transform = self.transform_of(decorator.decorator)
                if transform is not None:
                    self._mark(
                        func,
                        f"decorated with `@{parsed.code(decorator.decorator)}`",
                        transform,
                    )
                    break
        for call in calls:
            wrapped = self.wrapped_function(call)
            if wrapped is not None and wrapped[0] not in self.traced:
                func, transform = wrapped
                self._mark(func, self._at_line(f"wrapped by `{_short(parsed.code(call))}`", call), transform)

        # Propagate: nested definitions and same-module callees of traced functions.
        work = list(self.traced.values())
        while work:
            current = work.pop()
            for inner, reason in self._reached_from(current):
                if inner not in self.traced:
                    traced = TracedFunction(inner, reason)
                    self.traced[inner] = traced
                    work.append(traced)
        return self.traced

    def _at_line(self, text: str, node: cst.CSTNode) -> Callable[[], str]:
        return lambda: f"{text} on line {self.parsed.position(node).start.line}"

    def _mark(self, func: cst.FunctionDef, reason: str | Callable[[], str], transform: _Transform) -> None:
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        static = set(transform.static_names) & {p.name.value for p in parameters(func)}
        for num in transform.static_nums:
            if -len(params) <= num < len(params):
                static.add(params[num])
        self.traced[func] = TracedFunction(func, reason, static, transformed=True)

    def _reached_from(self, traced: TracedFunction) -> list[tuple[cst.FunctionDef, str | Callable[[], str]]]:
        found: list[tuple[cst.FunctionDef, str | Callable[[], str]]] = []
        finder = self
        outer = traced.node

        class Walk(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                if node is not outer:
                    found.append((node, f"defined inside traced function `{outer.name.value}`"))
                    return False
                return True

            def visit_Call(self, node: cst.Call) -> None:
                callee = finder.resolve_function(node.func)
                if callee is None and isinstance(node.func, cst.Attribute):
                    callee = finder.resolve_method(node.func, outer)
                if callee is not None and callee is not outer:
                    found.append((callee, finder._at_line(f"called from traced function `{outer.name.value}`", node)))

        outer.visit(Walk())
        return found

    def resolve_method(self, attr: cst.Attribute, caller: cst.FunctionDef) -> cst.FunctionDef | None:
        """`self.method(...)` inside a class: that class's method."""
        if not (isinstance(attr.value, cst.Name) and attr.value.value == "self"):
            return None
        cls = next((a for a in self.parsed.ancestors(caller) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == attr.attr.value:
                return statement
        return None


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


def find_traced_functions(parsed: ParsedModule, extra_decorators: tuple[str, ...] = ()) -> dict[cst.FunctionDef, TracedFunction]:
    return TracedFinder(parsed, extra_decorators).find()
