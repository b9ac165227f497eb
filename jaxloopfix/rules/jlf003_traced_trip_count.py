"""JLF003: `range()` with a traced bound in a traced function."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.names import loads, parameters, stored_names
from jaxloopfix.analysis.traced import PARTIAL, TracedFunction
from jaxloopfix.analysis.traced_values import TracedValues, own_nodes
from jaxloopfix.diagnostics import Diagnostic, Fix
from jaxloopfix.rewrite.edits import fix_from_rewrite
from jaxloopfix.rewrite.imports import module_aliases
from jaxloopfix.rules.base import FileContext, Rule, node_diagnostic

JIT = "jax.jit"
UNSAFE_REASON = (
    "every distinct value of a static argument compiles the function again, and callers must pass a "
    "hashable Python value (not an array)"
)


def _quoted(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


class TracedTripCount(Rule):
    """## What it does
    Checks for `for` loops over `range(...)` whose bound is a traced value
    (a non-static argument of a jitted function, or a value computed from one).

    ## Why is this bad?
    A Python loop runs while JAX traces the function, so its trip count must
    be a Python integer. A traced bound raises `TracerIntegerConversionError`
    (or `ConcretizationTypeError`) at trace time: the function cannot be
    called at all.

    ## Example
    ```python
    @jax.jit
    def power(x, n):
        y = jnp.ones_like(x)
        for _ in range(n):
            y = y * x
        return y
    ```

    Use instead:
    ```python
    @functools.partial(jax.jit, static_argnames=("n",))
    def power(x, n):
        y = jnp.ones_like(x)
        for _ in range(n):
            y = y * x
        return y
    ```

    ## Fix safety
    The fix marks the parameters the bound derives from as static
    (`static_argnames`). It is unsafe: every distinct value of a static
    argument compiles the function again, and callers must then pass a
    hashable Python value rather than an array. When the trip count must stay
    dynamic, use `lax.fori_loop` or `lax.while_loop` instead. The fix is
    offered only for a function decorated with `jax.jit` (bare or through
    `functools.partial`).
    """

    code = "JLF003"
    name = "traced-trip-count"
    summary = "`range()` bound is traced: tracing raises `TracerIntegerConversionError`"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        parsed = context.parsed
        for traced, values in context.traced_value_functions():
            for loop in own_nodes(traced.node, cst.For):
                assert isinstance(loop, cst.For)
                call = loop.iter
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "range"):
                    continue
                if "builtins.range" not in parsed.qualified_names(call.func) and parsed.qualified_names(call.func):
                    continue
                bounds = [a.value for a in call.args if values.is_traced(a.value)]
                if not bounds:
                    continue
                yield self._diagnostic(context, traced, values, loop, call, bounds)

    def _diagnostic(
        self,
        context: FileContext,
        traced: TracedFunction,
        values: TracedValues,
        loop: cst.For,
        call: cst.Call,
        bounds: list[cst.BaseExpression],
    ) -> Diagnostic:
        parsed = context.parsed
        code = parsed.code
        sources = _sources(values, bounds)
        bound_text = ", ".join(f"`{code(b).strip()}`" for b in bounds)
        message = (
            f"`{code(call).strip()}` in traced function `{traced.name}` has traced bound{'s' if len(bounds) > 1 else ''} {bound_text}"
        )
        if sources:
            message += f" (from non-static argument{'s' if len(sources) > 1 else ''} {_quoted(sources)})"
        message += (
            ": tracing raises `TracerIntegerConversionError`; make the bound static or use `lax.fori_loop`"
        )
        fix, reason = _fix(context, traced, values, bounds, sources)
        if reason is not None:
            message += f" (no fix: {reason})"
        return node_diagnostic(context, self.code, message, loop, loop.iter, traced, fix=fix, no_fix_reason=reason)


def _sources(values: TracedValues, bounds: list[cst.BaseExpression]) -> list[str]:
    """The traced parameters the bounds derive from (through the function's assignments)."""
    func = values.func
    params = [p.name.value for p in parameters(func)]
    assigned: dict[str, list[cst.BaseExpression]] = {}
    for node in own_nodes(func, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in stored_names(target.target):
                    assigned.setdefault(name, []).append(node.value)
        elif node.value is not None:  # type: ignore[union-attr]
            for name in stored_names(node.target):  # type: ignore[union-attr]
                assigned.setdefault(name, []).append(node.value)  # type: ignore[union-attr]
    seen: set[str] = set()
    work = [n.value for b in bounds for n in loads(b) if n.value in values.names]
    while work:
        name = work.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in assigned.get(name, []):
            work.extend(n.value for n in loads(value) if n.value in values.names)
    return [p for p in params if p in seen and p in values.names]


def _jit_decorator(context: FileContext, traced: TracedFunction) -> tuple[cst.Decorator, str] | tuple[None, str]:
    """The function's `jax.jit` decorator and its kind ('bare' or 'partial'), or None and why not."""
    parsed = context.parsed
    finder_transforms = []
    for decorator in traced.node.decorators:
        expr = decorator.decorator
        kind = None
        if isinstance(expr, (cst.Name, cst.Attribute)) and parsed.qualified_names(expr):
            qnames = parsed.qualified_names(expr)
            if JIT in qnames:
                kind = "bare"
            elif any(q.startswith(("jax.", "equinox.")) for q in qnames):
                kind = "other"
        elif isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
            fq = parsed.qualified_names(expr.func)
            positional = [a for a in expr.args if a.keyword is None and not a.star]
            if fq & PARTIAL and positional and isinstance(positional[0].value, (cst.Name, cst.Attribute)):
                inner = parsed.qualified_names(positional[0].value)
                if JIT in inner and len(positional) == 1:
                    kind = "partial"
                elif any(q.startswith(("jax.", "equinox.")) for q in inner):
                    kind = "other"
            elif any(q.startswith(("jax.", "equinox.")) for q in fq):
                kind = "other"
        if kind is not None:
            finder_transforms.append((decorator, kind))
    if len(finder_transforms) != 1:
        if not finder_transforms:
            return None, "the function is not decorated with `jax.jit`"
        return None, "the function has several transform decorators"
    decorator, kind = finder_transforms[0]
    if kind == "other":
        return None, "the function is not decorated with `jax.jit`"
    return decorator, kind


def _fix(
    context: FileContext,
    traced: TracedFunction,
    values: TracedValues,
    bounds: list[cst.BaseExpression],
    sources: list[str],
) -> tuple[Fix | None, str | None]:
    parsed = context.parsed
    if not sources:
        return None, "the bound is not derived from a parameter"
    # Making the sources static must make every bound static.
    widened = TracedFunction(
        traced.node, traced.why, set(traced.static_params) | set(sources), transformed=True,
        passed_through=traced.passed_through - set(sources),
    )
    if any(TracedValues(parsed, widened).is_traced(b) for b in bounds):
        return None, "the bound stays traced with its parameters static"
    facts = ArrayFacts(parsed, traced.node)
    arrays = [s for s in sources if s in facts.names]
    if arrays:
        return None, f"{_quoted(arrays)} {'is' if len(arrays) == 1 else 'are'} used as an array"
    star = {p.name.value for p in parameters(traced.node) if p in (traced.node.params.star_arg, traced.node.params.star_kwarg)}
    if set(sources) & star:
        return None, "the bound comes from `*args`/`**kwargs`"
    decorator, kind = _jit_decorator(context, traced)
    if decorator is None:
        return None, kind
    module = parsed.module
    names = tuple(sources)
    if kind == "partial":
        call = decorator.decorator
        assert isinstance(call, cst.Call)
        new_call = _add_static_argnames(call, names)
        if new_call is None:
            return None, "`static_argnames` is not a literal list or tuple of strings"
        new_module = module.deep_replace(call, new_call)
    else:
        aliases = module_aliases(module)
        partial_ref = None
        if "functools.partial" in aliases and aliases["functools.partial"] not in _local_names(traced):
            partial_ref = cst.parse_expression(aliases["functools.partial"])
        elif "functools" in aliases:
            partial_ref = cst.parse_expression(f"{aliases['functools']}.partial")
        elif "functools" not in parsed.all_names:
            partial_ref = cst.parse_expression("functools.partial")
        else:
            return None, "`functools` is not importable under its own name here"
        tuple_ = _names_tuple(names)
        new_expr = cst.Call(
            func=partial_ref,
            args=[
                cst.Arg(decorator.decorator),
                cst.Arg(tuple_, keyword=cst.Name("static_argnames"), equal=_equal()),
            ],
        )
        new_module = module.deep_replace(decorator.decorator, new_expr)
        if "functools.partial" not in aliases and "functools" not in aliases:
            from libcst.codemod import CodemodContext
            from libcst.codemod.visitors import AddImportsVisitor

            ctx = CodemodContext()
            AddImportsVisitor.add_needed_import(ctx, "functools")
            new_module = AddImportsVisitor(ctx).transform_module(new_module)  # type: ignore[arg-type]
    title = f"Mark {_quoted(list(names))} static with `static_argnames`"
    return fix_from_rewrite(parsed.text, lambda: new_module.code, title, [UNSAFE_REASON])  # type: ignore[union-attr]


def _local_names(traced: TracedFunction) -> set[str]:
    return {p.name.value for p in parameters(traced.node)}


def _equal() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _names_tuple(names: tuple[str, ...]) -> cst.Tuple:
    elements = [cst.Element(cst.SimpleString(f'"{n}"')) for n in names]
    if len(elements) == 1:
        elements = [cst.Element(elements[0].value, comma=cst.Comma())]
    else:
        elements = [
            cst.Element(e.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if i < len(elements) - 1
            else e
            for i, e in enumerate(elements)
        ]
    return cst.Tuple(elements)


def _add_static_argnames(call: cst.Call, names: tuple[str, ...]) -> cst.Call | None:
    """`partial(jax.jit, ...)` with `names` appended to (or given as) its `static_argnames`."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is None or arg.keyword.value != "static_argnames":
            continue
        value = arg.value
        if isinstance(value, cst.SimpleString):
            existing = value.evaluated_value
            if not isinstance(existing, str):
                return None
            quote = value.quote
            elements = [cst.SimpleString(value.value)] + [cst.SimpleString(f"{quote}{n}{quote}") for n in names]
            new_value: cst.BaseExpression = cst.Tuple(
                [
                    cst.Element(e, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(elements) - 1 else cst.MaybeSentinel.DEFAULT)
                    for i, e in enumerate(elements)
                ]
            )
        elif isinstance(value, (cst.List, cst.Tuple)):
            if not all(isinstance(e.value, cst.SimpleString) and not isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            quote = value.elements[0].value.quote if value.elements else '"'  # type: ignore[attr-defined]
            old = list(value.elements)
            new_elements: list[cst.BaseElement] = []
            for i, e in enumerate(old):
                comma = e.comma
                if i == len(old) - 1 and not isinstance(comma, cst.Comma):
                    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                elif i == len(old) - 1 and isinstance(comma, cst.Comma):
                    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                new_elements.append(e.with_changes(comma=comma))
            for j, n in enumerate(names):
                last = j == len(names) - 1
                comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if not last else cst.MaybeSentinel.DEFAULT
                new_elements.append(cst.Element(cst.SimpleString(f"{quote}{n}{quote}"), comma=comma))
            if isinstance(value, cst.Tuple) and len(new_elements) == 1:
                new_elements = [new_elements[0].with_changes(comma=cst.Comma())]  # type: ignore[union-attr]
            new_value = value.with_changes(elements=new_elements)
        else:
            return None
        args[index] = arg.with_changes(value=new_value)
        return call.with_changes(args=args)
    # No static_argnames yet: add one.
    last = args[-1]
    if not isinstance(last.comma, cst.Comma):
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(cst.Arg(_names_tuple(names), keyword=cst.Name("static_argnames"), equal=_equal()))
    return call.with_changes(args=args)
