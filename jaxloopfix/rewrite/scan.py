"""Render a LoopPlan as a `lax.scan` with a nested step function `(carry, x) -> (carry, y)`.

The renderer only reads the plan. It replaces the loop statement with the
step function and the scan call, removes the accumulators' `[]`
initialisers, replaces each finisher (`jnp.stack(outputs)`) with the scan's
stacked output, and adds the `lax`/`jnp` imports it needs. Comments inside
the loop move into the step function; comments on dropped lines move to the
next line.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.names import assigned_names, loads, parameters
from jaxloopfix.analysis.plan import Accumulator, LoopPlan, Sequence
from jaxloopfix.analysis.source import ParsedModule, comments_in, names_in
from jaxloopfix.analysis.walk import walk
from jaxloopfix.rewrite.hoist import ReplaceProducts, step_products
from jaxloopfix.rewrite.imports import ImportPlan


class Namer:
    """Fresh names for generated code, never one already taken."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def fresh(self, *candidates: str) -> str:
        for candidate in candidates:
            if candidate.isidentifier() and candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        base = candidates[0] if candidates[0].isidentifier() else "value"
        n = 1
        while f"{base}_{n}" in self.taken:
            n += 1
        self.taken.add(f"{base}_{n}")
        return f"{base}_{n}"


def _comment_lines(statement: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    """The comments attached to a statement that is being dropped, as own-line comments."""
    lines = [line for line in statement.leading_lines if line.comment is not None]
    trailing = statement.trailing_whitespace.comment
    if trailing is not None:
        lines.append(cst.EmptyLine(indent=True, comment=trailing))
    return lines


class _ReplaceReads(cst.CSTTransformer):
    """Per-step reads `xs[t]` become the step's slice; a planned `if t == T - 1:` whose branches
    only assign becomes one `name = jnp.where(test, a, b)` per name (`selects` maps it to `jnp`)."""

    def __init__(self, reads: dict[int, str], selects: dict[int, str] | None = None) -> None:
        self.reads = reads
        self.selects = selects or {}

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        jnp = self.selects.get(id(original))
        if jnp is None:
            return updated
        branches = [updated.body]
        if isinstance(updated.orelse, cst.Else):
            branches.append(updated.orelse.body)
        values = [
            {s.body[0].targets[0].target.value: s.body[0].value for s in block.body}  # type: ignore[attr-defined]
            for block in branches
        ]
        test = updated.test.with_changes(lpar=[], rpar=[])
        lines = []
        for position, (name, chosen) in enumerate(values[0].items()):
            other = values[1][name] if len(values) == 2 else cst.Name(name)
            call = cst.Call(
                func=cst.Attribute(cst.Name(jnp), cst.Name("where")),
                args=[
                    cst.Arg(test, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(chosen, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(other),
                ],
            )
            lines.append(
                cst.SimpleStatementLine(
                    body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)],
                    leading_lines=updated.leading_lines if position == 0 else (),
                )
            )
        return cst.FlattenSentinel(lines)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        name = self.reads.get(id(original))
        if name is None:
            return updated
        return cst.Name(name, lpar=updated.lpar, rpar=updated.rpar)


class ScanRenderer:
    def __init__(self, parsed: ParsedModule, plan: LoopPlan, unroll: int = 1, hoist: bool = False) -> None:
        self.parsed = parsed
        self.plan = plan
        self.unroll = unroll
        self.hoist = hoist  # compute the step's input products before the scan (see `rewrite/hoist.py`)
        self._vmap: str | None = None
        self.module = parsed.module
        function_names = names_in(plan.function.node)
        taken = set(parsed.module_names) | function_names
        self.namer = Namer(taken)
        local = set(assigned_names(plan.function.node.body.body)) | {
            p.name.value for p in parameters(plan.function.node)
        }
        self.imports = ImportPlan(parsed.module, taken, local, self.namer.fresh)
        self.config = parsed.module.config_for_parsing
        # Names of the stacked outputs of lists that start with items of their own (see `render`).
        self.steps_names: dict[str, str] = {}

    def code(self, node: cst.CSTNode) -> str:
        return self.parsed.code(node)

    def vmap(self) -> str:
        """How the generated code spells `jax.vmap` (an existing import, or `import jax`)."""
        if self._vmap is None:
            aliases = self.imports.aliases
            alias = aliases.get("jax.vmap")
            if alias is not None and alias.split(".", 1)[0] not in self.imports.local:
                self._vmap = alias
            else:
                self._vmap = f"{self.imports._ref('jax', ('jax', None, None), 'jax')}.vmap"
        return self._vmap

    def statement(self, source: str) -> cst.BaseStatement:
        return cst.parse_statement(source, config=self.config)

    # -- pieces -------------------------------------------------------------------
    def sequence_expr(self, sequence: Sequence) -> str:
        expr = self.code(sequence.array)
        if sequence.axis != 0:
            expr = f"{self.imports.jnp()}.moveaxis({expr}, {sequence.axis}, 0)"
        if not sequence.whole and self.plan.bounds is not None:
            expr = f"{_atom(expr)}[{self.slice_text(sequence)}]"
        if sequence.reversed:
            expr = f"{_atom(expr)}[::-1]"
        return expr

    def slice_text(self, sequence: Sequence) -> str:
        bounds = self.plan.bounds
        assert bounds is not None
        lo = self.code(bounds.start) if bounds.start is not None else ""
        hi = "" if sequence.stop_is_length else self.code(bounds.stop)
        return f"{lo}:{hi}" + (f":{bounds.step}" if bounds.step != 1 else "")

    def index_expr(self) -> str:
        jnp = self.imports.jnp()
        plan = self.plan
        if plan.kind == "enumerate":
            first = self.code(plan.sequences[0].array)
            length = f"{_atom(first)}.shape[0]"
            if plan.index_start is not None:
                start = self.code(plan.index_start)
                return f"{jnp}.arange({start}, {start} + {length})"
            return f"{jnp}.arange({length})"
        bounds = plan.bounds
        assert bounds is not None
        hi = self.code(bounds.stop)
        if bounds.start is None and bounds.step == 1:
            return f"{jnp}.arange({hi})"
        lo = self.code(bounds.start) if bounds.start is not None else "0"
        step = f", {bounds.step}" if bounds.step != 1 else ""
        return f"{jnp}.arange({lo}, {hi}{step})"

    def length_expr(self) -> str:
        bounds = self.plan.bounds
        assert bounds is not None
        if bounds.start is None and bounds.step == 1:
            return self.code(bounds.stop)
        lo = self.code(bounds.start) if bounds.start is not None else "0"
        step = f", {bounds.step}" if bounds.step != 1 else ""
        return f"len(range({lo}, {self.code(bounds.stop)}{step}))"

    # -- the step function ----------------------------------------------------------
    def step_body(self) -> tuple[list[cst.BaseStatement], list[str], list[cst.EmptyLine]]:
        """Body statements of the step, the per-step output expressions, and comments left over."""
        plan = self.plan
        reads = {id(r): s.param for s in plan.sequences for r in s.reads}
        selects = {id(node): self.imports.jnp() for node in plan.selects}
        replacer = _ReplaceReads(reads, selects)
        binds = {id(s.bind) for s in plan.sequences if s.bind is not None}
        appends = {id(a.append): a for a in plan.accumulators}
        body = list(plan.loop.body.body)  # type: ignore[union-attr]
        out: list[cst.BaseStatement] = []
        outputs: dict[str, str] = {}
        pending: list[cst.EmptyLine] = []
        for position, statement in enumerate(body):
            if id(statement) in binds:
                pending.extend(_comment_lines(statement))  # type: ignore[arg-type]
                continue
            accumulator: Accumulator | None = appends.get(id(statement))
            if accumulator is not None:
                value = accumulator.value.visit(replacer)
                later = assigned_names(body[position + 1 :])
                if isinstance(value, cst.Name) and value.value not in later:
                    outputs[accumulator.name] = value.value
                    pending.extend(_comment_lines(statement))  # type: ignore[arg-type]
                    continue
                name = self.namer.fresh(f"{accumulator.name}_t", f"{accumulator.name}_step", "y")
                outputs[accumulator.name] = name
                new = cst.SimpleStatementLine(
                    body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)],
                    leading_lines=[*pending, *statement.leading_lines],  # type: ignore[union-attr]
                    trailing_whitespace=statement.trailing_whitespace,  # type: ignore[union-attr]
                )
                pending = []
                out.append(new)
                continue
            visited = statement.visit(replacer)
            replaced = list(visited.nodes) if isinstance(visited, cst.FlattenSentinel) else [visited]
            for new_statement in replaced:
                if pending:
                    new_statement = new_statement.with_changes(leading_lines=[*pending, *new_statement.leading_lines])  # type: ignore[union-attr]
                    pending = []
                out.append(new_statement)  # type: ignore[arg-type]
        return out, [outputs[a.name] for a in plan.accumulators], pending

    def render(self) -> cst.Module:
        plan = self.plan
        loop = plan.loop
        lax = self.imports.lax()
        carries = [c.name for c in plan.carries]
        body_loads = {n.value for n in loads(loop.body)}

        xs_parts: list[tuple[str, str]] = []  # (expression, step parameter)
        if plan.index_used and plan.index is not None:
            xs_parts.append((self.index_expr(), plan.index))
        for sequence in plan.sequences:
            xs_parts.append((self.sequence_expr(sequence), sequence.param))
        step_name = self.namer.fresh("step", "scan_step")
        statements, outputs, leftover = self.step_body()
        hoisted: list[cst.BaseStatement] = []
        if self.hoist:
            statements, xs_parts, hoisted = self.hoisted_products(statements, xs_parts, outputs)

        prologue: list[cst.BaseStatement] = []
        if len(carries) == 1:
            carry_param = carries[0]
        elif carries:
            carry_param = self.namer.fresh("carry", "state")
            prologue.append(self.statement(f"{', '.join(carries)} = {carry_param}\n"))
        else:
            carry_param = "_" if "_" not in body_loads else self.namer.fresh("unused_carry")
        if len(xs_parts) == 1:
            x_param = xs_parts[0][1]
        elif xs_parts:
            x_param = self.namer.fresh("step_xs", "xs_t")
            prologue.append(self.statement(f"{', '.join(p for _, p in xs_parts)} = {x_param}\n"))
        else:
            x_param = self.namer.fresh("_x") if carry_param == "_" or "_" in body_loads else "_"

        carry_out = _pack(carries) if carries else "None"
        y_out = _pack(outputs) if outputs else "None"
        returned = self.statement(f"return {carry_out}, {y_out}\n")
        if leftover:
            returned = returned.with_changes(leading_lines=leftover)
        block = loop.body
        assert isinstance(block, cst.IndentedBlock)
        step_def = cst.FunctionDef(
            name=cst.Name(step_name),
            params=cst.Parameters(params=[cst.Param(cst.Name(carry_param)), cst.Param(cst.Name(x_param))]),
            body=block.with_changes(body=[*prologue, *statements, returned]),
            leading_lines=loop.leading_lines,
        )

        args = [step_name, _pack(carries) if carries else "None"]
        if xs_parts:
            args.append(_pack([e for e, _ in xs_parts]))
        else:
            args.append("None")
            args.append(f"length={self.length_expr()}")
        if plan.bounds is not None and plan.bounds.reverse:
            args.append("reverse=True")
        if self.unroll != 1:
            args.append(f"unroll={self.unroll}")
        function_names = {n.value for n in loads(plan.function.node.body)}
        unused = "_" if "_" not in function_names else self.namer.fresh("unused")
        carry_target = _pack(carries) if carries else unused
        # A list that starts with items of its own keeps them under its name: the scan's stacked
        # outputs get a name of their own, and the finisher joins the two.
        self.steps_names = {
            a.name: self.namer.fresh(f"{a.name}_steps", f"new_{a.name}") for a in plan.accumulators if a.initial
        }
        ys_target = _pack([self.steps_names.get(a.name, a.name) for a in plan.accumulators]) if plan.accumulators else unused
        scan_statement = self.statement(f"{carry_target}, {ys_target} = {lax}.scan({', '.join(args)})\n")
        # Comments inside code that the rewrite drops (the loop header, append calls, finishers)
        # are kept as own-line comments above the scan call.
        dropped = [
            loop.iter,
            *(a.append.body[0] for a in plan.accumulators),
            *(a.finisher for a in plan.accumulators if a.finisher is not None),
        ]
        kept = {id(c) for a in plan.accumulators for c in comments_in(a.value)}  # stay with `y = value`
        moved = [
            cst.EmptyLine(indent=True, comment=c) for node in dropped for c in comments_in(node) if id(c) not in kept
        ]
        if moved:
            scan_statement = scan_statement.with_changes(leading_lines=moved)

        finishers = {id(a.finisher): self.finisher_replacement(a) for a in plan.accumulators if a.finisher is not None}
        inits = {id(a.init) for a in plan.accumulators if not a.initial} | removed_after(plan, finishers)
        as_lists = [self.statement(self.as_list(a)) for a in plan.accumulators if a.kept_as_list]
        # Lists the step indexes become arrays first; they take the loop's leading comments.
        stacks = [self.statement(f"{name} = {self.imports.jnp()}.stack({name})\n") for name in plan.stacked_lists]
        stacks += hoisted
        if stacks:
            stacks[0] = stacks[0].with_changes(leading_lines=step_def.leading_lines)
            step_def = step_def.with_changes(leading_lines=())
        transformer = _ModuleRewrite(loop, [*stacks, step_def, scan_statement, *as_lists], inits, finishers)
        return self.imports.apply(self.spliced(transformer))

    def hoisted_products(
        self, statements: list[cst.BaseStatement], xs_parts: list[tuple[str, str]], outputs: list[str]
    ) -> tuple[list[cst.BaseStatement], list[tuple[str, str]], list[cst.BaseStatement]]:
        """The step with its input products (`xs_t @ W`) read from arrays computed before the
        scan, the scan's inputs with those arrays (and without a slice the step no longer reads),
        and the statements that compute them."""
        plan = self.plan
        binds = {id(s.bind) for s in plan.sequences if s.bind is not None}  # `x_t = xs[t]`: the step's parameter
        body = [statement for statement in plan.loop.body.body if id(statement) not in binds]  # type: ignore[union-attr]
        assigned = set(assigned_names(body))
        inputs = {s.param for s in plan.sequences} - assigned
        variant = assigned | {c.name for c in plan.carries} | {s.param for s in plan.sequences}
        if plan.index is not None:
            variant.add(plan.index)
        products = step_products(statements, inputs, variant, _source, self.imported_name)
        if not products:
            return statements, xs_parts, []
        sources = {param: expr for expr, param in xs_parts}
        names: dict[int, str] = {}
        before: list[cst.BaseStatement] = []
        parts = list(xs_parts)
        for product in products:
            sequence = next(s for s in plan.sequences if s.param == product.param)
            array = self.code(sequence.array)
            whole = self.namer.fresh(f"{array if array.isidentifier() else product.param}_projected")
            step = self.namer.fresh(f"{whole}_t")
            names.update((id(node), step) for node in product.nodes)
            before.append(
                self.statement(f"{whole} = {self.vmap()}(lambda {product.param}: {product.text})({sources[product.param]})\n")
            )
            parts.append((whole, step))
        replacer = ReplaceProducts(names)
        statements = [statement.visit(replacer) for statement in statements]  # type: ignore[misc]
        still_read = {name for statement in statements for name in names_in(statement)} | set(outputs)
        parts = [(expr, param) for expr, param in parts if param not in inputs or param in still_read]
        return statements, parts, before

    def imported_name(self, func: cst.CSTNode) -> str | None:
        """What a dotted name in generated code refers to through the module's imports
        (`jnp.dot` -> `jax.numpy.dot`); None for a name the function binds itself. Read from
        the text, since the step's statements are copies the module's metadata does not know."""
        head, _, rest = _source(func).partition(".")
        if head in self.imports.local:
            return None
        module = {local: qualified for qualified, local in self.imports.aliases.items()}.get(head)
        return None if module is None else f"{module}.{rest}" if rest else module

    def spliced(self, transformer: _ModuleRewrite) -> cst.Module:
        """`self.module.visit(transformer)`, visiting only the top-level statement that holds
        the loop when every node the transformer replaces lies in it: a transformer copies each
        node it passes, a large part of a fix's cost on a large module."""
        module = self.module
        top: cst.CSTNode = transformer.loop
        for ancestor in self.parsed.ancestors(transformer.loop):
            if ancestor is module:
                break
            top = ancestor
        index = next((i for i, statement in enumerate(module.body) if statement is top), None)
        inside = {id(node) for node in walk(top)} if index is not None else set()
        if index is None or not (transformer.inits | transformer.finishers.keys()) <= inside:
            return module.visit(transformer)
        new = top.visit(transformer)
        return module.with_changes(body=[*module.body[:index], new, *module.body[index + 1 :]])

    def steps_expr(self, accumulator: Accumulator) -> str:
        """The scan's stacked outputs in the order the list holds them: a reversed range, a
        reversed finisher and a prepend (`insert(0, ...)`) each flip it."""
        reverse = bool(self.plan.bounds is not None and self.plan.bounds.reverse)
        reverse ^= accumulator.finisher_reversed
        reverse ^= accumulator.prepend
        return self.steps_names.get(accumulator.name, accumulator.name) + ("[::-1]" if reverse else "")

    def finisher_replacement(self, accumulator: Accumulator) -> cst.BaseExpression:
        expr = self.steps_expr(accumulator)
        if accumulator.initial:  # `G = [g]`: its own items first (append) or last (prepend)
            own = f"{self.imports.jnp()}.stack({accumulator.name})"
            parts = [expr, own] if accumulator.prepend else [own, expr]
            expr = f"{self.imports.jnp()}.concatenate([{', '.join(parts)}])"
        if accumulator.axis != 0:
            expr = f"{self.imports.jnp()}.moveaxis({expr}, 0, {accumulator.axis})"
        return cst.parse_expression(expr, config=self.config)

    def as_list(self, accumulator: Accumulator) -> str:
        """`outs = list(outs)` after the scan for a list the code after the loop uses as a list."""
        steps = f"list({self.steps_expr(accumulator)})"
        name = accumulator.name
        if accumulator.initial:
            steps = f"{steps} + {name}" if accumulator.prepend else f"{name} + {steps}"
        return f"{name} = {steps}\n"


def removed_after(plan: LoopPlan, finishers: dict[int, cst.BaseExpression]) -> set[int]:
    """Statements after the loop that the rewrite removes: `outs = outs[::-1]` before a rebinding
    finisher, and the rebinding itself when it would read `outs = outs`."""
    removed: set[int] = set()
    for accumulator in plan.accumulators:
        removed |= {id(statement) for statement in accumulator.dropped}
        replacement = finishers.get(id(accumulator.finisher))
        if accumulator.rebinding is not None and isinstance(replacement, cst.Name) and replacement.value == accumulator.name:
            removed.add(id(accumulator.rebinding))
    return removed


def _source(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _pack(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"({', '.join(items)})"


def _atom(expr: str) -> str:
    """Parenthesise `expr` unless it is a name, attribute, call or subscript."""
    try:
        node = cst.parse_expression(expr)
    except cst.ParserSyntaxError:
        return f"({expr})"
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return f"({expr})"


def _blank_lines_around_defs(body: list[cst.BaseStatement], start: int, stop: int) -> list[cst.BaseStatement]:
    """`body` with an empty line before each function defined in `body[start:stop]` (unless it
    opens the block) and before the statement after it: what `ruff format` and black write, so
    a formatted file stays formatted after the fix."""
    out = list(body)
    for index in range(start, stop):
        if not isinstance(out[index], cst.FunctionDef):
            continue
        for neighbour in (index, index + 1):
            if 0 < neighbour < len(out) and not _opens_with_blank(out[neighbour]):
                statement = out[neighbour]
                out[neighbour] = statement.with_changes(leading_lines=[cst.EmptyLine(indent=False), *statement.leading_lines])
    return out


def _opens_with_blank(statement: cst.BaseStatement) -> bool:
    lines = statement.leading_lines
    return bool(lines) and lines[0].comment is None


class _ModuleRewrite(cst.CSTTransformer):
    """Splice the scan into the module: loop -> step def + scan, drop inits, replace finishers."""

    def __init__(
        self,
        loop: cst.For,
        replacement: list[cst.BaseStatement],
        inits: set[int],
        finishers: dict[int, cst.BaseExpression],
    ) -> None:
        self.loop = loop
        self.replacement = replacement
        self.inits = inits
        self.finishers = finishers

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        replacement = self.finishers.get(id(original))
        if replacement is None:
            return updated
        if original.lpar:
            return replacement.with_changes(lpar=original.lpar, rpar=original.rpar)
        return replacement

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if not any(s is self.loop or id(s) in self.inits for s in original.body):
            return updated
        new_body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        spaced_until = -1  # the statements up to here are the replacement, laid out as a formatter would
        for old, new in zip(original.body, updated.body):
            if id(old) in self.inits:
                carried.extend(_comment_lines(old))  # type: ignore[arg-type]
                continue
            if old is self.loop:
                first, *rest = self.replacement
                first = first.with_changes(leading_lines=[*carried, *first.leading_lines])
                carried = []
                new_body.extend([first, *rest])
                spaced_until = len(new_body)
                continue
            if carried:
                new = new.with_changes(leading_lines=[*carried, *new.leading_lines])
                carried = []
            new_body.append(new)
        if spaced_until >= 0:
            new_body = _blank_lines_around_defs(new_body, spaced_until - len(self.replacement), spaced_until)
        if carried:
            return updated.with_changes(body=new_body, footer=[*carried, *updated.footer])
        return updated.with_changes(body=new_body)
