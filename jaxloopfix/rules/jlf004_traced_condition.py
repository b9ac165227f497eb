"""JLF004: Python control flow (`if`, `while`, `x if c else y`, `and`/`or`) on a traced value."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.names import loads, parameters, stored_names
from jaxloopfix.analysis.source import comments_in, descendants, names_in, shorten
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.traced_values import TracedValues, own_nodes
from jaxloopfix.diagnostics import Diagnostic, Fix
from jaxloopfix.rewrite.edits import fix_from_rewrite
from jaxloopfix.rewrite.imports import ImportPlan
from jaxloopfix.rewrite.scan import Namer
from jaxloopfix.rules.base import FileContext, Rule, node_diagnostic

# Functions whose gradient is not finite everywhere: under `jnp.where` the unused branch still
# runs, and its NaN/inf gradient times a zero cotangent is NaN.
NON_FINITE_GRADIENTS = frozenset(
    {"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "reciprocal", "divide", "true_divide",
     "floor_divide", "power", "float_power", "arcsin", "arccos", "arctanh", "mod", "remainder", "xlogy"}
)
DIVISIONS = (cst.Divide, cst.FloorDivide, cst.Modulo)
JAX_MODULES = ("jax.", "jaxlib.")


class TracedCondition(Rule):
    """## What it does
    Finds Python control flow on traced values inside a traced function: an `if`
    or `while` whose test is a tracer, a conditional expression `a if c else b`
    with a traced `c`, and `and`/`or` whose left operand is a tracer (Python calls
    `bool()` on it). The masking pattern `if mask[t]: h = new_h` inside a loop is
    the most common case.

    ## Why is this bad?
    Python needs a concrete `True`/`False`; under `jax.jit`, `jax.grad` or
    `jax.vmap` the value is an abstract tracer, so tracing raises
    `TracerBoolConversionError` (or `ConcretizationTypeError`). Shapes, dtypes,
    `len(x)`, static arguments, `is None` and `isinstance` checks are Python values
    at trace time and are not reported.

    ## Example
    ```python
    @jax.jit
    def masked_rnn(W, xs, mask):
        h = jnp.zeros(W.shape[0])
        for t in range(xs.shape[0]):
            new_h = jnp.tanh(W @ h + xs[t])
            if mask[t]:
                h = new_h
        return h
    ```
    Use instead:
    ```python
            h = jnp.where(mask[t], new_h, h)
    ```

    ## Fix safety
    An `if`/`else` whose branches only assign names becomes one
    `name = jnp.where(test, then_value, else_value)` per name (a name missing from a
    branch keeps its value, which needs it to be defined before). The fix is safe
    when every value is known to be an array and no branch divides or calls
    `log`/`sqrt`/...: `jnp.where` evaluates both branches, so the values are equal
    but NaN or inf from the unused branch can turn gradients into NaN; those
    fixes, and values not proven to be arrays (a Python scalar becomes an array),
    are unsafe. `a if c else b` on arrays becomes `jnp.where(c, a, b)` by the same
    rules. `if c: return a` / `else: return b` becomes
    `return lax.cond(c, lambda: a, lambda: b)` (unsafe: both branches are traced
    and must return the same shapes and dtypes). A `while` whose body only assigns
    names becomes a `lax.while_loop` (unsafe: every carried value must keep its
    shape and dtype, and reverse-mode differentiation of a `while_loop` is not
    supported). Other forms are reported without a fix.
    """

    code = "JLF004"
    needs_loop = False
    name = "traced-condition"
    summary = "Python `if`/`while`/`and`/`or` on a traced value raises `TracerBoolConversionError` under tracing"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        for traced, values in context.traced_value_functions():
            checker = _Checker(context, traced, values)
            yield from checker.diagnostics()


class _Checker:
    def __init__(self, context: FileContext, traced: TracedFunction, values: TracedValues) -> None:
        self.context = context
        self.parsed = context.parsed
        self.traced = traced
        self.values = values
        params = {p.name.value for p in parameters(traced.node, stars=False)} - traced.static_params - traced.passed_through
        self.facts = ArrayFacts(self.parsed, traced.node, params)
        self.parameter_names = {p.name.value for p in parameters(traced.node)}

    # -- what is traced ----------------------------------------------------------
    def condition_traced(self, expr: cst.BaseExpression) -> bool:
        """Whether Python would call `bool()` on a tracer when evaluating `expr` as a condition."""
        if isinstance(expr, cst.BooleanOperation):
            return self.condition_traced(expr.left) or self.condition_traced(expr.right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.condition_traced(expr.expression)
        if isinstance(expr, cst.Comparison):
            for comparison in expr.comparisons:
                if isinstance(comparison.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                    return False  # identity and container membership are Python values
            return self.values.is_tracer(expr)
        # A Python container of tracers (`if leaves:`, `if (a, b):`) has a Python truth value.
        return self.values.is_tracer(expr)

    def culprit(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """The smallest traced operand of a condition, for the message."""
        if isinstance(expr, cst.BooleanOperation):
            return self.culprit(expr.left if self.condition_traced(expr.left) else expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self.culprit(expr.expression)
        if isinstance(expr, cst.Comparison):
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            for operand in operands:
                if self.values.is_traced(operand):
                    return self.culprit(operand)
        if isinstance(expr, cst.BinaryOperation):
            return self.culprit(expr.left if self.values.is_traced(expr.left) else expr.right)
        return expr

    def code(self, node: cst.CSTNode) -> str:
        return shorten(self.parsed.code(node))

    # -- diagnostics ----------------------------------------------------------------
    def diagnostics(self) -> Iterator[Diagnostic]:
        reported: list[cst.CSTNode] = []
        nodes = own_nodes(self.traced.node, (cst.If, cst.While, cst.IfExp, cst.BooleanOperation))
        for node in nodes:
            if any(self.parsed.contains(r, node) for r in reported):
                continue  # part of a condition already reported
            if isinstance(node, (cst.If, cst.While, cst.IfExp)):
                if not self.condition_traced(node.test) or self._maybe_static(node.test):
                    continue
                reported.append(node.test)
                yield self.report(node, node.test)
            elif isinstance(node, cst.BooleanOperation) and self.condition_traced(node.left) and not self._maybe_static(node.left):
                reported.append(node)
                yield self.report(node, node.left)

    def _maybe_static(self, test: cst.BaseExpression) -> bool:
        """Precision guard: `self.flag` (a method's module fields are often static), a parameter
        with a `None`/`True`/`False` default (not traced when the caller leaves it out), and under
        `eqx.filter_jit` a parameter or its field with no array evidence (`saveat.dense`: filter
        transforms trace array leaves only; a Python `bool` stays one)."""
        root = self.culprit(test)
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        if root.value in {"self", "cls"} and root is not self.culprit(test):
            return True
        if self.traced.filtered and root.value in self.parameter_names and not self.facts.is_array_before(root, test):
            return True
        for param in parameters(self.traced.node):
            if param.name.value == root.value and param.default is not None and root is self.culprit(test):
                default = param.default
                if isinstance(default, cst.Name) and default.value in {"None", "True", "False"}:
                    return True
        return False

    def report(self, node: cst.CSTNode, test: cst.BaseExpression) -> Diagnostic:
        name = self.traced.name
        culprit = self.culprit(test)
        what = f"`{self.code(culprit)}` is traced"
        if culprit is not test:
            what += f" (in `{self.code(test)}`)"
        if isinstance(node, cst.If):
            kind = "`elif`" if self._is_elif(node) else "`if`"
            message = f"Python {kind} on a traced value in traced function `{name}`: {what}"
        elif isinstance(node, cst.While):
            message = f"Python `while` on a traced value in traced function `{name}`: {what}"
        elif isinstance(node, cst.IfExp):
            message = f"Conditional expression `... if ... else ...` on a traced value in traced function `{name}`: {what}"
        else:
            op = "and" if isinstance(node.operator, cst.And) else "or"  # type: ignore[union-attr]
            message = f"`{op}` on a traced value in traced function `{name}`: {what}; Python calls `bool()` on it"
        message += "; tracing raises `TracerBoolConversionError`"
        fix: Fix | None = None
        reason: str | None = None
        try:
            fix, reason = self.fix(node)
        except Exception as exc:  # a rendering bug must never cost the diagnostic
            fix, reason = None, f"the rewrite could not be rendered ({type(exc).__name__}: {exc})"
        if fix is None:
            reason = reason or "no mechanical rewrite for this form"
            message += f" (no fix: {reason})"
        else:
            reason = None
        diagnostic = node_diagnostic(self.context, "JLF004", message, node, test, self.traced, fix=fix, no_fix_reason=reason)
        return with_derivation(diagnostic, self.values, culprit)

    def _is_elif(self, node: cst.If) -> bool:
        parent = self.parsed.parent(node)
        return isinstance(parent, cst.If) and parent.orelse is node

    # -- fixes ------------------------------------------------------------------------
    def fix(self, node: cst.CSTNode) -> tuple[Fix | None, str | None]:
        if isinstance(node, cst.If):
            if self._is_elif(node) or isinstance(node.orelse, cst.If):
                return None, "`elif` chains are not rewritten; use `jnp.select` or `lax.switch`"
            returns = self._returns(node)
            if returns is not None:
                return self._cond_fix(node, *returns)
            return self._where_fix(node)
        if isinstance(node, cst.IfExp):
            return self._ifexp_fix(node)
        if isinstance(node, cst.While):
            return self._while_fix(node)
        return None, "use `jnp.logical_and` / `jnp.logical_or` (or `&` / `|` on booleans) instead"

    def _imports(self) -> tuple[ImportPlan, Namer]:
        taken = set(self.parsed.module_names) | names_in(self.traced.node)
        namer = Namer(taken | set(self.parsed.all_names))
        local = _local_names(self.traced.node)
        return ImportPlan(self.parsed.module, taken, local, namer.fresh), namer

    def _finish(self, module: cst.Module, imports: ImportPlan, unsafe: list[str], title: str) -> tuple[Fix | None, str | None]:
        return fix_from_rewrite(self.parsed.text, lambda: imports.apply(module).code, title, unsafe)

    def _value_risks(self, values: list[cst.BaseExpression]) -> list[str]:
        """Unsafe reasons for evaluating both branches' values (jnp.where)."""
        reasons: list[str] = []
        for value in values:
            if not (self.facts.is_array(value) or self.values.strict.is_traced(value)):
                reasons.append(f"cannot prove `{self.code(value)}` is an array (`jnp.where` makes it one)")
        risky = next((v for v in values if self._non_finite_gradient(v)), None)
        if risky is not None:
            reasons.append(
                f"`jnp.where` evaluates both branches: `{self.code(risky)}` may be NaN/inf where it is not "
                "selected; values are unaffected but gradients can become NaN"
            )
        foreign = next((v for v in values if self._calls_outside_jax(v)), None)
        if foreign is not None:
            reasons.append(f"`{self.code(foreign)}` calls a function that now runs in both branches")
        return reasons

    def _non_finite_gradient(self, value: cst.BaseExpression) -> bool:
        for node in descendants(value):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (*DIVISIONS, cst.Power)):
                return True
            if isinstance(node, cst.Call):
                func = node.func
                short = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
                if short in NON_FINITE_GRADIENTS:
                    return True
        return False

    def _calls_outside_jax(self, value: cst.BaseExpression) -> bool:
        for node in descendants(value):
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and self.values.strict.is_traced(func.value):
                    continue  # a method of an array
                qnames = self.parsed.qualified_names(func) if isinstance(func, (cst.Name, cst.Attribute)) else set()
                if not any(q.startswith(JAX_MODULES) for q in qnames):
                    return True
        return False

    def _defined_before(self, name: str, node: cst.CSTNode) -> bool:
        if name in {p.name.value for p in parameters(self.traced.node)}:
            return True
        start = self.parsed.order(node)[0]
        for statement in own_nodes(self.traced.node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For)):
            if self.parsed.order(statement)[0] >= start:
                continue
            if isinstance(statement, cst.Assign):
                targets = [t.target for t in statement.targets]
            elif isinstance(statement, cst.For):
                targets = [statement.target]
            else:
                targets = [statement.target]
            if any(name in stored_names(t) for t in targets):
                return True
        return False

    # `if c: a = x [else: a = y]` -> `a = jnp.where(c, x, y)`
    def _where_fix(self, node: cst.If) -> tuple[Fix | None, str | None]:
        then = _assignments(node.body)
        other = _assignments(node.orelse.body) if node.orelse is not None else []  # type: ignore[union-attr]
        if then is None or other is None:
            return None, "the branches do more than assign names; use `jnp.where` or `lax.cond`"
        names: list[str] = []
        for name, _ in [*then, *other]:
            if name not in names:
                names.append(name)
        then_values = dict(then)
        other_values = dict(other)
        if len(then_values) != len(then) or len(other_values) != len(other):
            return None, "a branch assigns the same name twice"
        assigned = set(names)
        pairs: list[tuple[str, cst.BaseExpression, cst.BaseExpression]] = []
        for position, name in enumerate(names):
            pair = []
            for branch in (then_values, other_values):
                if name in branch:
                    pair.append(branch[name])
                elif self._defined_before(name, node):
                    pair.append(cst.Name(name))
                else:
                    return None, f"`{name}` is assigned in only one branch and has no value before the `if`"
            for value in pair:
                later_or_self = set(names[position:])
                if {n.value for n in loads(value)} & (assigned - later_or_self):
                    return None, "a branch reads a name it assigned earlier; use `lax.cond`"
            pairs.append((name, pair[0], pair[1]))
        imports, namer = self._imports()
        jnp = imports.jnp()
        test = self.parsed.code(node.test).strip()
        test_reads = {n.value for n in loads(node.test)}
        statements: list[str] = []
        if len(pairs) > 1 and test_reads & assigned:
            cond = namer.fresh("cond", "condition")
            statements.append(f"{cond} = {test}")
            test = cond
        for name, then_value, else_value in pairs:
            statements.append(f"{name} = {jnp}.where({test}, {_expr(self.parsed, then_value)}, {_expr(self.parsed, else_value)})")
        unsafe = self._value_risks([v for _, a, b in pairs for v in (a, b)])
        new = [cst.parse_statement(s + "\n", config=self.parsed.module.config_for_parsing) for s in statements]
        comments = [cst.EmptyLine(indent=True, comment=c) for c in comments_in(node) if not self.parsed.contains(node.test, c)]
        new[0] = new[0].with_changes(leading_lines=[*node.leading_lines, *comments])
        module = self.parsed.module.visit(_ReplaceStatement(node, new))
        return self._finish(module, imports, unsafe, "Select with `jnp.where` (both branches are evaluated)")

    def _returns(self, node: cst.If) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        if not isinstance(node.orelse, cst.Else):
            return None
        out = []
        for block in (node.body, node.orelse.body):
            if not (isinstance(block, cst.IndentedBlock) and len(block.body) == 1):
                return None
            line = block.body[0]
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Return)):
                return None
            if line.body[0].value is None:
                return None
            out.append(line.body[0].value)
        return out[0], out[1]

    # `if c: return a else: return b` -> `return lax.cond(c, lambda: a, lambda: b)`
    def _cond_fix(self, node: cst.If, then: cst.BaseExpression, other: cst.BaseExpression) -> tuple[Fix | None, str | None]:
        if comments_in(node.body) or comments_in(node.orelse):  # type: ignore[arg-type]
            return None, "the branches have comments; rewrite with `lax.cond` by hand"
        imports, _ = self._imports()
        lax = imports.lax()
        test = self.parsed.code(node.test).strip()
        statement = cst.parse_statement(
            f"return {lax}.cond({test}, lambda: {_expr(self.parsed, then)}, lambda: {_expr(self.parsed, other)})\n",
            config=self.parsed.module.config_for_parsing,
        ).with_changes(leading_lines=node.leading_lines)
        module = self.parsed.module.visit(_ReplaceStatement(node, [statement]))
        unsafe = ["`lax.cond` traces both branches, which must return the same shapes and dtypes"]
        return self._finish(module, imports, unsafe, "Branch with `lax.cond`")

    # `a if c else b` -> `jnp.where(c, a, b)`
    def _ifexp_fix(self, node: cst.IfExp) -> tuple[Fix | None, str | None]:
        values = [node.body, node.orelse]
        if not all(self.facts.is_array(v) or self.values.strict.is_traced(v) for v in values):
            return None, "cannot prove both values are arrays; use `jnp.where` or `lax.cond`"
        imports, _ = self._imports()
        jnp = imports.jnp()
        text = (
            f"{jnp}.where({_expr(self.parsed, node.test)}, {_expr(self.parsed, node.body)}, "
            f"{_expr(self.parsed, node.orelse)})"
        )
        replacement = cst.parse_expression(text, config=self.parsed.module.config_for_parsing)
        replacement = replacement.with_changes(lpar=node.lpar, rpar=node.rpar)
        module = self.parsed.module.visit(_ReplaceExpression(node, replacement))
        return self._finish(module, imports, self._value_risks(values), "Select with `jnp.where` (both values are evaluated)")

    # `while c: <assignments>` -> `lax.while_loop`
    def _while_fix(self, node: cst.While) -> tuple[Fix | None, str | None]:
        if node.orelse is not None:
            return None, "`while ... else` is not rewritten"
        body = _assignments(node.body)
        if body is None or not body:
            return None, "the body does more than assign names; rewrite with `lax.while_loop` by hand"
        if comments_in(node.body):
            return None, "the body has comments; rewrite with `lax.while_loop` by hand"
        carries: list[str] = []
        for name, _ in body:
            if name not in carries:
                carries.append(name)
        for name in carries:
            if not self._defined_before(name, node):
                return None, f"`{name}` has no value before the loop (a `lax.while_loop` carry needs one)"
        imports, namer = self._imports()
        lax = imports.lax()
        cond_name = namer.fresh("cond_fun", "while_cond")
        body_name = namer.fresh("body_fun", "while_body")
        packed = carries[0] if len(carries) == 1 else "(" + ", ".join(carries) + ")"
        if len(carries) == 1:
            param, unpack = carries[0], ""
        else:
            param = namer.fresh("carry", "state")
            unpack = f"        {', '.join(carries)} = {param}\n"
        indent = "    "
        lines = [f"def {cond_name}({param}):\n", unpack.replace("        ", indent), f"{indent}return {self.parsed.code(node.test).strip()}\n"]
        lines += [f"def {body_name}({param}):\n", unpack.replace("        ", indent)]
        lines += [f"{indent}{name} = {_expr(self.parsed, value)}\n" for name, value in body]
        lines += [f"{indent}return {', '.join(carries)}\n"]
        source = "".join(lines)
        parsed_defs = cst.parse_module(source).body
        targets = ", ".join(carries)
        call = cst.parse_statement(f"{targets} = {lax}.while_loop({cond_name}, {body_name}, {packed})\n")
        new = [*parsed_defs, call]
        new[0] = new[0].with_changes(leading_lines=node.leading_lines)
        module = self.parsed.module.visit(_ReplaceStatement(node, new))
        unsafe = [
            "every carried value must keep its shape and dtype across iterations; reverse-mode "
            "differentiation of `lax.while_loop` is not supported"
        ]
        unsafe += [r for r in self._value_risks([cst.Name(n) for n in carries]) if r.startswith("cannot prove")]
        return self._finish(module, imports, unsafe, "Rewrite with `lax.while_loop`")


def with_derivation(diagnostic: Diagnostic, values: TracedValues, expr: cst.BaseExpression) -> Diagnostic:
    """`diagnostic` with the chain of calls that made `expr` traced added to its note, when a call did
    ("`loss` is traced: returned by `optax.l2_loss(pred, y)`, which received the traced `pred`")."""
    chain = values.derivation(expr)
    if chain is None:
        return diagnostic
    note = f"{diagnostic.traced_reason}; {chain}" if diagnostic.traced_reason else chain
    return dataclasses.replace(diagnostic, traced_reason=note)


def _assignments(block: cst.BaseSuite) -> list[tuple[str, cst.BaseExpression]] | None:
    """`[(name, value)]` when every statement of the block is `name = value`; None otherwise."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    out: list[tuple[str, cst.BaseExpression]] = []
    for line in block.body:
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return None
        small = line.body[0]
        if isinstance(small, cst.Pass):
            continue
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
            return None
        if any(isinstance(n, cst.NamedExpr) for n in descendants(small.value)):
            return None
        out.append((small.targets[0].target.value, small.value))
    return out


def _local_names(func: cst.FunctionDef) -> set[str]:
    from jaxloopfix.analysis.names import assigned_names

    return set(assigned_names(func.body.body)) | {p.name.value for p in parameters(func)}


def _expr(parsed, node: cst.BaseExpression) -> str:  # noqa: ANN001
    """Source of an expression, without its own outer whitespace; parenthesised if it spans lines."""
    text = parsed.module.code_for_node(node).strip()
    if "\n" in text and not (node.lpar and text.startswith("(")):
        text = f"({text})"
    return text








class _ReplaceStatement(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement: list[cst.BaseStatement]) -> None:
        self.target = target
        self.replacement = replacement

    def leave_If(self, original: cst.If, updated: cst.If):  # noqa: ANN201
        if original is self.target:
            return cst.FlattenSentinel(self.replacement)
        return updated

    def leave_While(self, original: cst.While, updated: cst.While):  # noqa: ANN201
        if original is self.target:
            return cst.FlattenSentinel(self.replacement)
        return updated


class _ReplaceExpression(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement: cst.BaseExpression) -> None:
        self.target = target
        self.replacement = replacement

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        return self.replacement if original is self.target else updated
