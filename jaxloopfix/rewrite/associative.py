"""Render a linear recurrence (`h = a * h + b`) as `lax.associative_scan`.

The step's work before the update runs for every step at once under `jax.vmap` and returns
each step's `(a, b)`, broadcast against `h`; composing the affine maps with
`lax.associative_scan` gives, at every step, the map from the initial `h` to that step's `h`;
applying it gives every step's `h` at once (for `h = A @ h + b` the maps compose by matrix
products; for a running maximum the associative scan of `jnp.maximum` over the steps' values
is taken with the initial `h`). Outputs the loop appended or wrote at the index come from
those values, and the final `h` is the last step's (the first index's when the loop runs
backwards). The xs, the per-step reads, the finishers and the imports are the scan's
(`ScanRenderer`), so both forms read the same slices in the same order.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.linear_recurrence import (
    ONE, ZERO, LinearRecurrence, Output, affine_parts, bare, extremum_part, matrix_parts, new_value,
)
from jaxloopfix.analysis.names import loads
from jaxloopfix.analysis.plan import LoopPlan
from jaxloopfix.analysis.walk import walk
from jaxloopfix.rewrite.scan import _ModuleRewrite, _ReplaceReads, _comment_lines, _pack, removed_after
from jaxloopfix.rewrite.vmap import VmapRenderer


class AssociativeRenderer(VmapRenderer):
    """`ScanRenderer`'s pieces around a `lax.associative_scan` of the step's affine maps."""

    def __init__(self, parsed, plan: LoopPlan, recurrence: LinearRecurrence) -> None:  # noqa: ANN001
        super().__init__(parsed, plan, 1)
        self.recurrence = recurrence

    def _code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def _carry_read_outside(self) -> bool:
        """Whether code outside the loop, or the next pass of an enclosing loop, reads the carry
        (then the rewrite binds its final value)."""
        carry = self.recurrence.carry
        loop = self.plan.loop
        for ancestor in self.parsed.ancestors(loop):
            if ancestor is self.plan.function.node:
                break
            if isinstance(ancestor, (cst.For, cst.While)):
                return True  # the next pass of the enclosing loop reads it
        inside = {id(n) for n in walk(loop)}
        return any(n.value == carry and id(n) not in inside for n in loads(self.plan.function.node.body))

    def render(self) -> cst.Module:
        plan, recurrence = self.plan, self.recurrence
        loop = plan.loop
        carry = recurrence.carry
        vmap = self.vmap()
        reads = {id(r): s.param for s in plan.sequences for r in s.reads}
        replacer = _ReplaceReads(reads)
        binds = {id(s.bind) for s in plan.sequences if s.bind is not None}

        xs_parts: list[tuple[str, str]] = []
        if plan.index_used and plan.index is not None:
            xs_parts.append((self.index_expr(), plan.index))
        for sequence in plan.sequences:
            xs_parts.append((self.sequence_expr(sequence), sequence.param))
        xs = _pack([e for e, _ in xs_parts])
        if len(xs_parts) == 1:
            x_param, prologue = xs_parts[0][1], []
        else:
            x_param = self.namer.fresh("step_xs", "xs_t")
            prologue = [self.statement(f"{', '.join(p for _, p in xs_parts)} = {x_param}\n")]

        scale = self.namer.fresh(f"{carry}_scale", "scale")
        shift = self.namer.fresh(f"{carry}_shift", "shift")
        steps = self.namer.fresh(f"{carry}_steps", "steps")
        # A running maximum's step function gives candidates, an affine map's its coefficients.
        role = "candidates" if recurrence.extremum else "coefficients"
        coefficients = self.namer.fresh(f"{carry}_{role}", role)
        compose = self.namer.fresh("compose_steps", "compose")

        pending: list[cst.EmptyLine] = []
        before: list[cst.BaseStatement] = []
        for statement in recurrence.before:
            if id(statement) in binds:
                pending.extend(_comment_lines(statement))  # type: ignore[arg-type]
                continue
            new = statement.visit(replacer)
            if pending:
                new = new.with_changes(leading_lines=[*pending, *new.leading_lines])  # type: ignore[union-attr]
                pending = []
            before.append(new)  # type: ignore[arg-type]
        reverse = ", reverse=True" if plan.bounds is not None and plan.bounds.reverse else ""
        names = (scale, shift, steps, coefficients, compose)
        if recurrence.extremum:
            extremum = extremum_part(recurrence.value, carry, self.parsed)
            assert extremum is not None
            call = bare(recurrence.value.visit(replacer))  # the same call, its per-step reads replaced
            assert isinstance(call, cst.Call)
            value = self._code(call.args[extremum.position].value)
            returned_text, lines = self._extrema(extremum.operation, value, names=names, xs=xs, reverse=reverse)
        elif recurrence.matrix:
            affine = matrix_parts(new_value(recurrence.update, recurrence.value.visit(replacer)), carry, self._code)
            assert affine is not None
            returned_text, lines = self._matrix_steps(affine.scale, affine.shift, names=names, xs=xs, reverse=reverse)
        else:
            affine = affine_parts(new_value(recurrence.update, recurrence.value.visit(replacer)), carry, self._code)
            assert affine is not None
            returned_text, lines = self._steps(affine.scale, affine.shift, names=names, xs=xs, reverse=reverse)
        returned_lines = list(cst.parse_module(returned_text, config=self.config).body)
        if pending:
            returned_lines[0] = returned_lines[0].with_changes(leading_lines=pending)
        block = loop.body
        assert isinstance(block, cst.IndentedBlock)
        coefficient_def = cst.FunctionDef(
            name=cst.Name(coefficients),
            params=cst.Parameters(params=[cst.Param(cst.Name(x_param))]),
            body=block.with_changes(body=[*prologue, *before, *returned_lines]),
            leading_lines=loop.leading_lines,
        )
        statements = [coefficient_def, *(self.statement(line) for line in lines)]
        # Each output is computed from every step's `h` at once: the carry itself, or what one
        # function of a step's `h` and slices returns (the statements after the update, then the
        # appended or written values), mapped over every step.
        values = [output.value.visit(replacer) for output in recurrence.outputs]
        mapped = [v for v in values if not (isinstance(v, cst.Name) and v.value == carry)] if not recurrence.after else values
        computed_of: dict[int, str] = {}
        if mapped:
            function = self.namer.fresh(f"{carry}_outputs", "outputs_step")
            after = [self._code(s.visit(replacer)).strip() for s in recurrence.after]
            returned = ", ".join(self._code(v) for v in mapped)
            statements.append(self.statement(
                f"def {function}({carry}, {x_param}):\n"
                + "".join(f"    {self._code(s).strip()}\n" for s in prologue)
                + "".join(f"    {line}\n" for line in after)
                + f"    return {returned}\n"
            ))
            results = [self._output_target(o) if not o.buffer else self.namer.fresh(f"{o.name}_values", "values")
                       for o, v in zip(recurrence.outputs, values) if v in mapped]
            statements.append(self.statement(f"{', '.join(results)} = {vmap}({function})({steps}, {xs})\n"))
            computed_of = {id(v): r for v, r in zip(mapped, results)}
        for output, value in zip(recurrence.outputs, values):
            computed = computed_of.get(id(value), steps)
            if output.buffer:
                index = xs_parts[0][0]
                statements.append(self.statement(f"{output.name} = {output.name}.at[{index}].set({computed})\n"))
            elif computed != self._output_target(output):
                statements.append(self.statement(f"{self._output_target(output)} = {computed}\n"))
        if self._carry_read_outside():
            last = "0" if reverse else "-1"
            # A loop of zero steps leaves the carry as it was (`len` is static under a trace).
            statements.append(self.statement(f"{carry} = {steps}[{last}] if len({steps}) else {carry}\n"))

        dropped = [loop.iter, *(a.append.body[0] for a in plan.accumulators),
                   *(a.finisher for a in plan.accumulators if a.finisher is not None)]
        moved = [cst.EmptyLine(indent=True, comment=c) for node in dropped for c in _comments(node)]
        if moved:
            statements[1] = statements[1].with_changes(leading_lines=moved)
        finishers = {id(a.finisher): self.finisher_replacement(a) for a in plan.accumulators if a.finisher is not None}
        inits = {id(a.init) for a in plan.accumulators if not a.initial} | removed_after(plan, finishers)
        as_lists = [self.statement(self.as_list(a)) for a in plan.accumulators if a.kept_as_list]
        transformer = _ModuleRewrite(loop, [*statements, *as_lists], inits, finishers)
        return self.imports.apply(self.spliced(transformer))

    def _output_target(self, output: Output) -> str:
        """The name the stacked values of an appended output take: the list's own, or a fresh one
        for a list that starts with items of its own (the finisher joins the two)."""
        if any(a.name == output.name and a.initial for a in self.plan.accumulators):
            return self.steps_names.setdefault(output.name, self.namer.fresh(f"{output.name}_steps", f"new_{output.name}"))
        return output.name

    def _steps(
        self, a: str, b: str, *, names: tuple[str, str, str, str, str], xs: str, reverse: str
    ) -> tuple[str, list[str]]:
        """The coefficient function's return statement and the lines that give every step's `h`:
        a running sum (`h = h + b`) is the `lax.associative_scan` of `jnp.add` over the `b`s
        (bools included, as the loop's `+`), a running product (`h = a * h`) that of
        `jnp.multiply` over the `a`s, and any other affine map that of the composition of `(a, b)`."""
        scale, shift, steps, coefficients, compose = names
        carry = self.recurrence.carry
        lax, vmap = self.imports.lax(), self.vmap()
        jnp = self.imports.jnp()
        # `jnp.add` and `jnp.multiply` also combine bools (or, and) as the loop's `+` and `*` do.
        if a == ONE:
            return self._coefficients(shift, b), [
                f"{shift} = {vmap}({coefficients})({xs})\n",
                f"{steps} = {carry} + {lax}.associative_scan({jnp}.add, {shift}{reverse})\n",
            ]
        if b == ZERO:
            return self._coefficients(scale, a), [
                f"{scale} = {vmap}({coefficients})({xs})\n",
                f"{steps} = {lax}.associative_scan({jnp}.multiply, {scale}{reverse}) * {carry}\n",
            ]
        return self._coefficients(f"{scale}, {shift}", f"{a}, {b}"), self._composed(
            names, xs, reverse, law="`h -> c * h + d` then `h -> a * h + b` is `h -> (a * c) * h + (a * d + b)`",
            combined="a * c, a * d + b", applied=f"{scale} * {carry} + {shift}",
        )

    def _composed(
        self, names: tuple[str, str, str, str, str], xs: str, reverse: str, *, law: str, combined: str, applied: str,
        helpers: tuple[str, ...] = (),
    ) -> list[str]:
        """The lines that compute every step's `(scale, shift)`, compose them with
        `lax.associative_scan` by `combined` (the composition `law` says), and apply them."""
        scale, shift, steps, coefficients, compose = names
        lax, vmap = self.imports.lax(), self.vmap()
        return [
            f"{scale}, {shift} = {vmap}({coefficients})({xs})\n",
            *helpers,
            f"def {compose}(earlier, later):\n"
            f"    # {law}\n"
            f"    (c, d), (a, b) = earlier, later\n"
            f"    return {combined}\n",
            f"{scale}, {shift} = {lax}.associative_scan({compose}, ({scale}, {shift}){reverse})\n",
            f"{steps} = {applied}\n",
        ]

    def _matrix_steps(
        self, a: str, b: str, *, names: tuple[str, str, str, str, str], xs: str, reverse: str
    ) -> tuple[str, list[str]]:
        """`h = A @ h + b`: every step's `(A, b)` (b shaped as `h`), composed by matrix products;
        `times` multiplies a stack of matrices by a stack of vectors (`h` 1-d) or of matrices,
        which `@` alone would confuse when the stack is as long as the vectors."""
        scale, shift, _, _, _ = names
        carry = self.recurrence.carry
        jnp = self.imports.jnp()
        times = self.namer.fresh("times", "matrix_times")
        dtype = self.namer.fresh("dtype", "step_dtype")
        shift_value = f"{jnp}.zeros_like({carry})" if b == ZERO else f"{jnp}.broadcast_to({b}, {jnp}.shape({carry}))"
        returned = (
            f"{scale}, {shift} = {jnp}.asarray({a}), {shift_value}\n"
            f"{dtype} = {jnp}.result_type({scale}, {shift}, {carry})\n"
            f"return {scale}.astype({dtype}), {shift}.astype({dtype})\n"
        )
        helper = (
            f"def {times}(matrices, values):\n"
            f"    if values.ndim == matrices.ndim - 1:  # a stack of vectors\n"
            f"        return {jnp}.matmul(matrices, values[..., None])[..., 0]\n"
            f"    return {jnp}.matmul(matrices, values)\n"
        )
        return returned, self._composed(
            names, xs, reverse, law="`h -> C @ h + d` then `h -> A @ h + b` is `h -> (A @ C) @ h + (A @ d + b)`",
            combined=f"{jnp}.matmul(a, c), {times}(a, d) + b",
            applied=f"{times}({scale}, {jnp}.broadcast_to({carry}, {shift}.shape)) + {shift}", helpers=(helper,),
        )

    def _extrema(
        self, operation: str, value: str, *, names: tuple[str, str, str, str, str], xs: str, reverse: str
    ) -> tuple[str, list[str]]:
        """A running maximum (minimum): the `lax.associative_scan` of `jnp.maximum` over the steps'
        values, then with the initial `h` (the loop's first step takes `jnp.maximum(h, v)`)."""
        _, _, steps, coefficients, _ = names
        carry = self.recurrence.carry
        lax, vmap, jnp = self.imports.lax(), self.vmap(), self.imports.jnp()
        values = self.namer.fresh(f"{carry}_values", "step_values")
        return self._coefficients(values, value), [
            f"{values} = {vmap}({coefficients})({xs})\n",
            f"{steps} = {jnp}.{operation}({carry}, {lax}.associative_scan({jnp}.{operation}, {values}{reverse}))\n",
        ]

    def _coefficients(self, names: str, values: str) -> str:
        """The coefficient function's last lines: its values broadcast against the carry and
        cast to the dtype the loop's `h` takes (`jnp.result_type` of them and `h`), so the
        composed products keep the loop's precision (a float64 factor makes `h` float64)."""
        jnp, carry = self.imports.jnp(), self.recurrence.carry
        dtype = self.namer.fresh("dtype", "step_dtype")
        parts = [n.strip() for n in names.split(",")]
        casts = ", ".join(f"{n}.astype({dtype})" for n in parts)
        count = len(parts)
        picked = "[0]" if count == 1 else f"[:{count}]"
        return (
            f"{names} = {jnp}.broadcast_arrays({values}, {carry}){picked}\n"
            f"{dtype} = {jnp}.result_type({names}, {carry})\n"
            f"return {casts}\n"
        )

    def finisher_replacement(self, accumulator):  # noqa: ANN001, ANN201
        return super(VmapRenderer, self).finisher_replacement(accumulator)


def _comments(node: cst.CSTNode) -> list[cst.Comment]:
    from jaxloopfix.analysis.source import comments_in

    return list(comments_in(node))
