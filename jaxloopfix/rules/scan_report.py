"""Turn a scan-shaped loop plan into a diagnostic with its fix (shared by JLF001 and JLF002)."""

from __future__ import annotations

from jaxloopfix.analysis.batched_products import batched_product_reason
from jaxloopfix.analysis.plan import LoopPlan
from jaxloopfix.diagnostics import Diagnostic, Fix
from jaxloopfix.rewrite.edits import fix_from_rewrite
from jaxloopfix.rewrite.scan import ScanRenderer
from jaxloopfix.rewrite.vmap import VmapRenderer, is_map_only
from jaxloopfix.analysis.source import shorten
from jaxloopfix.rules.base import FileContext, node_diagnostic

FIX_TITLE = "Rewrite loop with `lax.scan`"
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
    if what and plan.refusal is None and is_map_only(plan):
        message += f"; its steps are independent: as a `jax.vmap` it {what.replace('scans over', 'maps over')}"
    elif what:
        message += f"; as a `lax.scan` it {what}"
    fix = None
    reason = plan.refusal
    if reason is None:
        fix, reason = render_fix(context, plan)
    if reason is not None:
        message += f" (no fix: {reason})"
    return node_diagnostic(context, code, message, loop, loop.iter, plan.function, fix=fix, no_fix_reason=reason)


def render_fix(context: FileContext, plan: LoopPlan) -> tuple[Fix | None, str | None]:
    """The fix for a plan, or the reason none could be rendered."""
    unroll = context.settings.unroll_for(plan.function.name)
    renderer = VmapRenderer if is_map_only(plan) else ScanRenderer
    title = VMAP_FIX_TITLE if is_map_only(plan) else FIX_TITLE
    if plan.selects:
        tests = ", ".join(f"`if {shorten(context.parsed.code(n.test), 30)}:`" for n in plan.selects)
        title += (
            f"; {tests} becomes `jnp.where` (the step computes both branches; a read past the end "
            "in the branch not kept is clamped)"
        )
    for accumulator in plan.accumulators:
        name = accumulator.name
        if accumulator.kept_as_list:
            title += f"; `{name}` stays a list (made from the scan's outputs after the scan)"
        if accumulator.prepend:
            title += f"; `{name}.insert(0, ...)` is built back to front from the scan's outputs"
    reasons = plan.unsafe_reasons
    if is_map_only(plan):
        batched = batched_product_reason(context.parsed, list(plan.loop.body.body))
        if batched is not None and batched not in reasons:
            reasons = [*reasons, batched]
    return fix_from_rewrite(
        context.parsed.text, lambda: renderer(context.parsed, plan, unroll).render().code, title, reasons
    )
