"""JLF005: slices with traced bounds (`x[i:i + k]`) in a traced function."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import shorten
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.traced_values import TracedValues, own_nodes
from jaxloopfix.diagnostics import Diagnostic, Fix
from jaxloopfix.rewrite.edits import fix_from_rewrite
from jaxloopfix.rewrite.imports import ImportPlan
from jaxloopfix.rules.base import FileContext, Rule, node_diagnostic

UNSAFE_REASON = (
    "`lax.dynamic_slice_in_dim` clamps the start so that the whole window fits, where Python slicing "
    "returns a shorter slice past the end (and counts a negative start from the end)"
)


def _full(element: cst.SubscriptElement) -> bool:
    s = element.slice
    return isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None


class TracedSlice(Rule):
    """## What it does
    Checks for slices whose start, stop or step is a traced value
    (`x[i:i + k]` with `i` a non-static argument of a jitted function, or
    computed from one).

    ## Why is this bad?
    Array shapes must be known when JAX traces a function, so NumPy-style
    slice entries must be static Python integers. A traced slice bound raises
    `IndexError` ("Array slice indices must have static start/stop/step") at
    trace time.

    ## Example
    ```python
    @jax.jit
    def window(x, i):
        return x[i:i + 3]
    ```

    Use instead:
    ```python
    @jax.jit
    def window(x, i):
        return lax.dynamic_slice_in_dim(x, i, 3)
    ```

    ## Fix safety
    A fix is offered for `x[a:a + k]` with a static size `k`, no step, on the
    first axis or after leading full `:` slices, when `x` is known to be an
    array. It is unsafe: `lax.dynamic_slice_in_dim` clamps the start so that
    the whole window fits, while Python slicing returns a shorter slice past
    the end (and counts a negative start from the end). A slice whose size is
    itself traced (`x[i:j]`) has no static shape and gets no fix: use a
    static window and a mask instead.
    """

    code = "JLF005"
    needs_loop = False
    name = "traced-slice"
    summary = "Slice bound is traced: tracing raises `IndexError`"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        parsed = context.parsed
        for traced, values in context.traced_value_functions():
            facts: ArrayFacts | None = None
            for subscript in own_nodes(traced.node, cst.Subscript):
                assert isinstance(subscript, cst.Subscript)
                traced_parts = [
                    part
                    for element in subscript.slice
                    if isinstance(element.slice, cst.Slice)
                    for part in (element.slice.lower, element.slice.upper, element.slice.step)
                    if part is not None and values.is_traced(part)
                ]
                if not traced_parts:
                    continue
                if facts is None:
                    params = {p.name.value for p in parameters(traced.node)} - set(traced.static_params) - traced.passed_through
                    facts = ArrayFacts(parsed, traced.node, params)
                yield self._diagnostic(context, traced, values, facts, subscript, traced_parts)

    def _diagnostic(
        self,
        context: FileContext,
        traced: TracedFunction,
        values: TracedValues,
        facts: ArrayFacts,
        subscript: cst.Subscript,
        traced_parts: list[cst.BaseExpression],
    ) -> Diagnostic:
        parsed = context.parsed
        code = parsed.code
        parts = ", ".join(f"`{code(p).strip()}`" for p in traced_parts)
        message = (
            f"Slice `{shorten(code(subscript))}` in traced function `{traced.name}` has traced "
            f"bound{'s' if len(traced_parts) > 1 else ''} {parts}: tracing raises `IndexError` (slice entries "
            f"must be static integers); use `lax.dynamic_slice_in_dim` with a static size"
        )
        fix, reason = _fix(context, traced, values, facts, subscript)
        if reason is not None:
            message += f" (no fix: {reason})"
        return node_diagnostic(context, self.code, message, subscript, subscript, traced, fix=fix, no_fix_reason=reason)




def _window(
    values: TracedValues, subscript: cst.Subscript
) -> tuple[int, cst.BaseExpression, cst.BaseExpression] | str:
    """(axis, start, size) for `x[:, ..., a:a + k, :, ...]`, or why the slice is not such a window."""
    elements = list(subscript.slice)
    dynamic = [i for i, e in enumerate(elements) if not _full(e)]
    if len(dynamic) != 1:
        return "the subscript has more than one non-`:` entry"
    axis = dynamic[0]
    element = elements[axis].slice
    if not isinstance(element, cst.Slice):
        return "the subscript is not a slice"
    if element.step is not None:
        return "the slice has a step"
    start, stop = element.lower, element.upper
    if start is None or stop is None:
        return "the slice is open-ended, so its size depends on the traced bound"
    size: cst.BaseExpression | None = None
    if isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add):
        if stop.left.deep_equals(start):
            size = stop.right
        elif stop.right.deep_equals(start):
            size = stop.left
    if size is None:
        return "the slice size is not a static `start + k`"
    if values.is_traced(size):
        return "the slice size is traced"
    if isinstance(size, cst.UnaryOperation) or (isinstance(size, cst.Integer) and int(size.evaluated_value) < 0):
        return "the slice size may be negative"
    return axis, start, size


def _fix(
    context: FileContext,
    traced: TracedFunction,
    values: TracedValues,
    facts: ArrayFacts,
    subscript: cst.Subscript,
) -> tuple[Fix | None, str | None]:
    parsed = context.parsed
    parent = parsed.parent(subscript)
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or (
        isinstance(parent, cst.AnnAssign) and parent.target is subscript
    ):
        return None, "the slice is assigned to"
    window = _window(values, subscript)
    if isinstance(window, str):
        return None, window
    axis, start, size = window
    if not facts.is_array(subscript.value):
        return None, f"`{shorten(parsed.code(subscript.value))}` is not known to be an array"
    local = {p.name.value for p in parameters(traced.node)}
    from jaxloopfix.analysis.names import assigned_names

    local |= assigned_names(traced.node.body.body)
    plan = ImportPlan(parsed.module, set(parsed.all_names), local)
    lax = plan.lax()
    args = [
        cst.Arg(subscript.value, comma=_comma()),
        cst.Arg(start, comma=_comma()),
        cst.Arg(size, comma=_comma() if axis else cst.MaybeSentinel.DEFAULT),
    ]
    if axis:
        args.append(cst.Arg(cst.Integer(str(axis)), keyword=cst.Name("axis"), equal=_equal()))
    replacement = cst.Call(func=cst.parse_expression(f"{lax}.dynamic_slice_in_dim"), args=args)
    return fix_from_rewrite(
        parsed.text,
        lambda: plan.apply(parsed.module.deep_replace(subscript, replacement)).code,  # type: ignore[arg-type]
        "Rewrite slice with `lax.dynamic_slice_in_dim`",
        [UNSAFE_REASON],
    )


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _equal() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
