"""Render a map-only LoopPlan (no carries) as `jax.vmap` over the per-step slices.

A loop whose steps are independent (`outs.append(f(x[t]))` finished by
`jnp.stack(outs)`, nothing carried from one step to the next) is a map: it
becomes `outs = jax.vmap(lambda x_t: f(x_t))(x)` when the body is only the
append (and `x_t = x[t]` binds), or a nested `def step(x_t): ...; return y`
with `outs = jax.vmap(step)(x)` otherwise. The index, when the body uses it,
is mapped over `jnp.arange(...)`; a whole sequence read along another axis is
mapped with `in_axes`, and a finisher's `axis=` becomes `out_axes`.

The renderer only reads the plan and reuses the scan renderer's pieces
(imports, fresh names, per-step reads, comments, the module splice), so the
two rewrites agree on everything but the call they emit.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.source import comments_in
from jaxloopfix.analysis.plan import Accumulator, LoopPlan, Sequence
from jaxloopfix.rewrite.scan import ScanRenderer, _ModuleRewrite, _ReplaceReads, removed_after


def is_map_only(plan: LoopPlan) -> bool:
    """Whether the plan is a map: outputs only, nothing carried, something to map over."""
    if plan.carries or not plan.accumulators or plan.selects or plan.stacked_lists:
        return False
    if any(a.value is None or a.finisher is None or a.prepend or a.initial for a in plan.accumulators):
        return False
    return bool(plan.sequences) or bool(plan.index_used and plan.index is not None)


class VmapRenderer(ScanRenderer):
    """`ScanRenderer` with a `jax.vmap` call instead of `lax.scan` (only for `is_map_only` plans)."""

    # -- pieces -------------------------------------------------------------------
    def mapped_expr(self, sequence: Sequence) -> tuple[str, int]:
        """The array passed to vmap for a sequence and its `in_axes` entry."""
        if sequence.axis != 0 and sequence.whole:
            return self.code(sequence.array), sequence.axis
        return self.sequence_expr(sequence), 0  # moveaxis + slicing, as in the scan

    def _reversed(self, accumulator: Accumulator) -> bool:
        reverse = bool(self.plan.bounds is not None and self.plan.bounds.reverse)
        return reverse != accumulator.finisher_reversed

    def out_axis(self, accumulator: Accumulator) -> int:
        return accumulator.axis if not self._reversed(accumulator) else 0

    def finisher_replacement(self, accumulator: Accumulator) -> cst.BaseExpression:
        if self._reversed(accumulator):
            return super().finisher_replacement(accumulator)  # `[::-1]` (and moveaxis) as in the scan
        return cst.parse_expression(accumulator.name, config=self.config)

    def _lambda_body(self) -> str | None:
        """The mapped expression when the loop body is only binds and appends without comments."""
        plan = self.plan
        loop = plan.loop
        binds = {id(s.bind) for s in plan.sequences if s.bind is not None}
        appends = {id(a.append) for a in plan.accumulators}
        body = list(loop.body.body)  # type: ignore[union-attr]
        if any(id(s) not in binds and id(s) not in appends for s in body):
            return None
        if comments_in(loop.body):
            return None
        reads = {id(r): s.param for s in plan.sequences for r in s.reads}
        replacer = _ReplaceReads(reads)
        values = [self.module.code_for_node(a.value.visit(replacer)) for a in plan.accumulators]
        if len(values) == 1:
            return values[0]
        return "(" + ", ".join(values) + ")"

    # -- the rewrite ----------------------------------------------------------------
    def render(self) -> cst.Module:
        plan = self.plan
        loop = plan.loop
        assert is_map_only(plan)

        parts: list[tuple[str, str, int]] = []  # (mapped array, step parameter, in_axes entry)
        if plan.index_used and plan.index is not None:
            parts.append((self.index_expr(), plan.index, 0))
        for sequence in plan.sequences:
            expr, axis = self.mapped_expr(sequence)
            parts.append((expr, sequence.param, axis))
        params = [p for _, p, _ in parts]
        vmap = self.vmap()

        lambda_body = self._lambda_body()
        replacement: list[cst.BaseStatement] = []
        if lambda_body is not None:
            function = f"lambda {', '.join(params)}: {lambda_body}"
        else:
            function = self.namer.fresh("step", "map_step")
            statements, outputs, leftover = self.step_body()
            returned = self.statement(f"return {', '.join(outputs)}\n")
            if leftover:
                returned = returned.with_changes(leading_lines=leftover)
            block = loop.body
            assert isinstance(block, cst.IndentedBlock)
            replacement.append(
                cst.FunctionDef(
                    name=cst.Name(function),
                    params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
                    body=block.with_changes(body=[*statements, returned]),
                    leading_lines=loop.leading_lines,
                )
            )

        options: list[str] = []
        in_axes = [axis for _, _, axis in parts]
        if any(in_axes):
            options.append(f"in_axes={_axes(in_axes)}")
        out_axes = [self.out_axis(a) for a in plan.accumulators]
        if any(out_axes):
            options.append(f"out_axes={_axes(out_axes)}")
        mapped = ", ".join(e for e, _, _ in parts)
        targets = ", ".join(a.name for a in plan.accumulators)
        call = self.statement(f"{targets} = {vmap}({', '.join([function, *options])})({mapped})\n")

        # Comments inside code that the rewrite drops (the loop header, append calls, finishers)
        # are kept as own-line comments above the vmap call.
        dropped = [loop.iter, *(a.append.body[0] for a in plan.accumulators), *(a.finisher for a in plan.accumulators)]
        kept = {id(c) for a in plan.accumulators for c in comments_in(a.value)}
        moved = [
            cst.EmptyLine(indent=True, comment=c) for node in dropped for c in comments_in(node) if id(c) not in kept
        ]
        leading = list(moved)
        if not replacement:
            leading = [*loop.leading_lines, *moved]
        if leading:
            call = call.with_changes(leading_lines=leading)
        replacement.append(call)

        finishers = {id(a.finisher): self.finisher_replacement(a) for a in plan.accumulators}
        inits = {id(a.init) for a in plan.accumulators} | removed_after(plan, finishers)
        return self.imports.apply(self.spliced(_ModuleRewrite(loop, replacement, inits, finishers)))


def _axes(axes: list[int]) -> str:
    return str(axes[0]) if len(axes) == 1 else "(" + ", ".join(str(a) for a in axes) + ")"


__all__ = ["VmapRenderer", "is_map_only"]
