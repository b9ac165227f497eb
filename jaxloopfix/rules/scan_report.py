"""Turn a scan-shaped loop plan into a diagnostic with its fix (shared by JLF001 and JLF002)."""

from __future__ import annotations

from functools import partial

from jaxloopfix.analysis.batched_products import batched_product_reason
from jaxloopfix.analysis.comprehensions import ComprehensionReport
from jaxloopfix.analysis.linear_recurrence import (
    PRIMITIVES, LinearRecurrence, find_linear_recurrence, recurrence_kind, recurrence_text,
)
from jaxloopfix.analysis.plan import LoopPlan
from jaxloopfix.rewrite.associative import AssociativeRenderer
from jaxloopfix.diagnostics import Diagnostic, Fix
from jaxloopfix.rewrite.edits import fix_from_rewrite
from jaxloopfix.rewrite.scan import ScanRenderer
from jaxloopfix.rewrite.vmap import VmapRenderer, is_map_only
from jaxloopfix.analysis.source import shorten
from jaxloopfix.rules.base import FileContext, node_diagnostic

FIX_TITLE = "Rewrite loop with `lax.scan`"
# Why an associative rewrite is never proven: it regroups the arithmetic of the recurrence.
REASSOCIATION = (
    "the parallel form composes the steps' `h -> a * h + b` in a tree, not one after another: "
    "results differ from the loop by rounding (a few ulps times log2 of the trip count), and where "
    "`|a| > 1` the product of many factors can overflow to inf or nan where the loop's values stay finite"
)
# Why a running maximum's associative rewrite is not proven either: its values are exact, ties are not.
TIE_ORDER = (
    "the parallel form takes the steps' maxima (minima) in a tree, not one after another: the values "
    "are the loop's, but where entries tie (`0.0` and `-0.0`, repeated values) which one is kept, "
    "and how the gradient splits between them, may differ"
)


# Why a scan whose input products were hoisted is not proven equal to the loop.
HOISTED_PRODUCTS = (
    "the step's products of its inputs with loop invariants (`xs_t @ W`) are computed for all steps "
    "as one batched product before the scan, which GPUs run in TF32 at the default matmul precision "
    "(the loop's per-step products run in float32), so results may differ there by about 1e-2"
)


def associative_recurrence(context: FileContext, plan: LoopPlan) -> LinearRecurrence | None:
    """The plan's linear recurrence when its fix is the associative form (the setting
    `linear-recurrences`, or the form `--tune` measured fastest for the function; for a matrix
    recurrence only the latter)."""
    if plan.refusal is not None or is_map_only(plan):
        return None
    if context.settings.recurrence_form(plan.function.name) != "associative":
        return None
    recurrence = find_linear_recurrence(plan, context.parsed)[0]
    if recurrence is not None and recurrence.matrix and dict(context.settings.form_overrides).get(plan.function.name) != "associative":
        # Composing `A @ h + b` steps costs a matrix product each (O(n^3) against the loop's
        # O(n^2) per step): written only where `--tune` measured it faster on the user's inputs.
        return None
    return recurrence


def associative_title(recurrence: LinearRecurrence) -> str:
    text = recurrence_text(recurrence)
    return f"Rewrite {text} with `{PRIMITIVES[recurrence_kind(recurrence)]}`"
VMAP_FIX_TITLE = "Rewrite loop with `jax.vmap` (its steps are independent)"


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def describe(context: FileContext, plan: LoopPlan) -> str:
    """What the loop carries, scans over and accumulates."""
    code = context.parsed.code
    parts: list[str] = []
    if plan.carries:
        parts.append(f"carries {_names([c.name for c in plan.carries])}")
    scanned: list[str] = []
    for sequence in plan.sequences:
        axis = f" (axis {sequence.axis})" if sequence.axis != 0 else ""
        backwards = " (last row first)" if sequence.reversed else ""
        scanned.append(f"`{code(sequence.array)}`{axis}{backwards}")
    if plan.index_used and plan.index:
        scanned.append(f"the index `{plan.index}`")
    if scanned:
        parts.append("scans over " + ", ".join(scanned))
    if plan.accumulators:
        parts.append(f"accumulates {_names([a.name for a in plan.accumulators])}")
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def loop_diagnostic(context: FileContext, plan: LoopPlan, code: str) -> Diagnostic:
    loop = plan.loop
    what = describe(context, plan)
    message = (
        f"Python `for` loop over `{plan.iterates}` in traced function `{plan.function.name}` "
        f"is unrolled into one copy per step"
    )
    recurrence = associative_recurrence(context, plan)
    if what and plan.refusal is None and is_map_only(plan):
        message += f"; its steps are independent: as a `jax.vmap` it {what.replace('scans over', 'maps over')}"
    elif recurrence is not None:
        message += (
            f"; `{recurrence.carry}` follows {recurrence_text(recurrence)}, which `{PRIMITIVES[recurrence_kind(recurrence)]}` "
            f"computes in parallel over the steps" + (f" (it {what})" if what else "")
        )
    elif what:
        message += f"; as a `lax.scan` it {what}"
    fix = None
    reason = plan.refusal
    if reason is None:
        fix, reason = render_fix(context, plan)
    if reason is not None:
        message += f" (no fix: {reason})"
    return node_diagnostic(context, code, message, loop, loop.iter, plan.function, fix=fix, no_fix_reason=reason)


# Why a comprehension gets no fix.
COMPREHENSION_NO_FIX = "jaxloopfix does not rewrite comprehensions; map the element with `jax.vmap` (or `lax.map`) over the rows"


def comprehension_diagnostic(context: FileContext, report: ComprehensionReport, code: str) -> Diagnostic:
    """A comprehension that steps over array data: unrolled as a loop is, reported without a fix."""
    comp = report.node
    message = (
        f"Python {report.name} in traced function `{report.function.name}` steps over {report.steps} "
        f"and is unrolled into one copy per step (no fix: {COMPREHENSION_NO_FIX})"
    )
    return node_diagnostic(context, code, message, comp, comp.for_in.iter, report.function, no_fix_reason=COMPREHENSION_NO_FIX)


def render_fix(context: FileContext, plan: LoopPlan) -> tuple[Fix | None, str | None]:
    """The fix for a plan, or the reason none could be rendered."""
    recurrence = associative_recurrence(context, plan)
    if recurrence is not None:
        return fix_from_rewrite(
            context.parsed.text,
            lambda: AssociativeRenderer(context.parsed, plan, recurrence).render().code,
            associative_title(recurrence) + _list_notes(plan, "the steps' values"),
            [*plan.unsafe_reasons, TIE_ORDER if recurrence.extremum else REASSOCIATION],
        )
    unroll = context.settings.unroll_for(plan.function.name)
    renderer = VmapRenderer if is_map_only(plan) else ScanRenderer
    title = VMAP_FIX_TITLE if is_map_only(plan) else FIX_TITLE
    if plan.selects:
        tests = ", ".join(f"`if {shorten(context.parsed.code(n.test), 30)}:`" for n in plan.selects)
        title += (
            f"; {tests} becomes `jnp.where` (the step computes both branches; a read past the end "
            "in the branch not kept is clamped)"
        )
    title += _list_notes(plan, "the scan's outputs")
    reasons = plan.unsafe_reasons
    hoist = not is_map_only(plan) and context.settings.hoists_step_inputs(plan.function.name)
    if hoist:
        title += "; the step's input products are computed for every step before the scan"
        reasons = [*reasons, HOISTED_PRODUCTS]
    if is_map_only(plan):
        batched = batched_product_reason(context.parsed, list(plan.loop.body.body))
        if batched is not None and batched not in reasons:
            reasons = [*reasons, batched]
    build = partial(ScanRenderer, hoist=True) if hoist else renderer
    return fix_from_rewrite(context.parsed.text, lambda: build(context.parsed, plan, unroll).render().code, title, reasons)


def _list_notes(plan: LoopPlan, source: str) -> str:
    """What the fix does with lists the code after the loop uses as lists, or builds back to front."""
    notes = ""
    for accumulator in plan.accumulators:
        name = accumulator.name
        if accumulator.kept_as_list:
            notes += f"; `{name}` stays a list (made from {source} after the scan)"
        if accumulator.prepend:
            notes += f"; `{name}.insert(0, ...)` is built back to front from {source}"
    return notes
