"""The loop plan: what analysis found out about one loop, as plain data.

Rules decide what to report from a plan and the renderer turns it into
code; neither re-analyses the source. A plan with `refusal` set is reported
without a fix; `unsafe_reasons` downgrades the fix to unsafe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from jaxloopfix.analysis.traced import TracedFunction


@dataclass
class RangeBounds:
    """`range(start, stop, step)` normalised to an ascending range; `reverse` runs it backwards."""

    start: cst.BaseExpression | None  # None: 0
    stop: cst.BaseExpression
    step: int = 1
    reverse: bool = False


@dataclass
class Sequence:
    """An array the loop reads one slice of per step; passed to `lax.scan` in `xs`."""

    array: cst.BaseExpression
    axis: int
    param: str  # name of the slice inside the step function
    reads: list[cst.Subscript] = field(default_factory=list)  # `x[t]` nodes replaced by `param`
    bind: cst.SimpleStatementLine | None = None  # `x_t = x[t]`, dropped: `param` is `x_t`
    # True when the sequence's full axis is exactly what the range covers (no slicing needed).
    whole: bool = False
    # True when the range's stop is this sequence's own length (`x[1:]` instead of `x[1:len(x)]`).
    stop_is_length: bool = False
    # False when the array is only probably an array (an unannotated traced argument).
    proven: bool = True
    # `for x in reversed(xs)`: the step reads the rows of `xs` last to first (`xs[::-1]`).
    reversed: bool = False


@dataclass
class Carry:
    name: str
    init: str  # "array", "unknown"
    buffer: bool = False  # only ever updated as `name = name.at[...].set(...)`


@dataclass
class Accumulator:
    """A list filled by `name.append(value)` once per step and stacked after the loop."""

    name: str
    init: cst.SimpleStatementLine  # `name = []`
    append: cst.SimpleStatementLine
    value: cst.BaseExpression
    finisher: cst.Call | None  # jnp.stack(name) / jnp.array(name) / jnp.asarray(name); None when kept as a list
    finisher_reversed: bool = False  # the finisher reads `name[::-1]`
    axis: int = 0
    # `name = jnp.stack(name)` after the loop: the statement holding the finisher rebinds the name.
    rebinding: cst.SimpleStatementLine | None = None
    # Statements the rewrite removes with the loop (`name = name[::-1]` before a rebinding finisher).
    dropped: list[cst.SimpleStatementLine] = field(default_factory=list)
    # The code after the loop uses the list as a list (returns it, indexes it, iterates it): the
    # rewrite binds the scan's stacked output and turns it back into a list of per-step arrays.
    kept_as_list: bool = False
    # `name.insert(0, value)`: each step's value goes to the front of the list.
    prepend: bool = False
    # `name = [first]` before the loop: the list starts with items the steps do not make; the
    # rewrite keeps that statement and joins its items with the scan's stacked outputs.
    initial: bool = False


@dataclass
class LoopPlan:
    loop: cst.For
    function: TracedFunction
    kind: str  # "range", "array", "zip", "enumerate"
    iterates: str  # human description: "range(inputs.shape[0])"
    index: str | None = None  # loop index name (range/enumerate)
    index_used: bool = False  # the body uses the index beyond per-step reads
    index_start: cst.BaseExpression | None = None  # enumerate(start=...)
    bounds: RangeBounds | None = None
    sequences: list[Sequence] = field(default_factory=list)
    carries: list[Carry] = field(default_factory=list)
    accumulators: list[Accumulator] = field(default_factory=list)
    refusal: str | None = None
    unsafe_reasons: list[str] = field(default_factory=list)
    # `if t == T - 1: v = a` / `else: v = b[t + 1]` in the body: each becomes `v = jnp.where(...)`.
    selects: list[cst.If] = field(default_factory=list)
    # Python lists of arrays that the step reads only as `name[index]` and nothing reads after the
    # loop (`key, *keys = jax.random.split(key, n)`): the rewrite stacks each before the scan
    # (`keys = jnp.stack(keys)`), so the scan's traced index can index it.
    stacked_lists: list[str] = field(default_factory=list)

    @property
    def accumulates(self) -> bool:
        return bool(self.accumulators) or any(c.buffer for c in self.carries)

    @property
    def fixable(self) -> bool:
        return self.refusal is None
