"""First-order linear recurrences: a loop whose one carry is updated as `h = a * h + b`.

With `a` and `b` computed from per-step slices and loop invariants but never from `h`, the
steps are affine maps of `h`, and composing affine maps is associative: the loop is a
`lax.associative_scan`, which runs in O(log T) depth instead of T dependent steps (GAE,
discounted returns, exponential moving averages, diagonal state-space models).

`affine_parts` reads an expression as `scale * h + shift` by its arithmetic alone: sums,
differences, negation, products and quotients where at most one operand holds `h`, and the
divisor never does. Anything else that touches `h` (a call, a power, `h @ W`, `h[i]`) is not
affine as far as this module can prove, and the loop stays a `lax.scan`.

`matrix_parts` reads `h = A @ h + b` (a Kalman filter's mean, a linear RNN): its steps compose by
matrix products, O(n^3) each, so it is rewritten only where `--tune` measured it faster.

A running maximum or minimum (`h = jnp.maximum(h, v)` with `v` free of `h`) is the other
associative recurrence people write: `extremum_part` reads it, and the steps' `v`s combine with
`lax.associative_scan(jnp.maximum)` (`lax.cummax`), exactly, since `maximum` is associative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from jaxloopfix.analysis.names import assigned_names, loads
from jaxloopfix.analysis.plan import LoopPlan
from jaxloopfix.analysis.source import ParsedModule

# The coefficient 1 and the offset 0 of `scale * h + shift`, kept symbolic so a running sum
# (`h = h + b`) renders without a multiplication by one.
ONE = "1"
ZERO = "0"


@dataclass(frozen=True)
class Affine:
    """`scale * h + shift` as source text (`ONE`/`ZERO` for the trivial parts)."""

    scale: str
    shift: str


@dataclass
class Output:
    """A per-step value the loop keeps: `outs.append(value)` or `buf = buf.at[t].set(value)`."""

    name: str
    value: cst.BaseExpression
    buffer: bool  # `buf = buf.at[index].set(value)`; else an accumulator of the plan
    statement: cst.BaseStatement


@dataclass
class LinearRecurrence:
    """The loop's carry `carry`, updated once per step by `update` as an affine map of itself."""

    carry: str
    update: cst.SimpleStatementLine
    value: cst.BaseExpression  # the update's right-hand side (`new_value` expands `h += value`)
    before: list[cst.BaseStatement]  # the step's statements before the update (they never read `carry`)
    outputs: list[Output] = field(default_factory=list)
    # Plain assignments after the update that the outputs read (`y = jnp.einsum(..., h, C[:, i])`).
    after: list[cst.BaseStatement] = field(default_factory=list)
    # "maximum" / "minimum" for `h = jnp.maximum(h, v)`; "" for an affine update.
    extremum: str = ""
    # `h = A @ h + b`: a matrix recurrence (its steps compose by matrix products).
    matrix: bool = False


def bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=[], rpar=[]) if getattr(expr, "lpar", None) else expr


def _atom(text: str) -> str:
    try:
        node = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return f"({text})"
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)) and not (
        isinstance(node, (cst.Integer, cst.Float)) and text.startswith("-")
    ):
        return text
    return f"({text})"


def _add(a: str, b: str) -> str:
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return f"{a} + {b}"


def _sub(a: str, b: str) -> str:
    if b == ZERO:
        return a
    if a == ZERO:
        return f"-{_atom(b)}"
    return f"{a} - {_atom(b)}"


def _mul(a: str, b: str) -> str:
    if a == ZERO or b == ZERO:
        return ZERO
    if a == ONE:
        return b
    if b == ONE:
        return a
    return f"{_atom(a)} * {_atom(b)}"


def _div(a: str, b: str) -> str:
    if a == ZERO:
        return ZERO
    return f"{_atom(a)} / {_atom(b)}"


def affine_parts(expr: cst.BaseExpression, carry: str, code: Callable[[cst.CSTNode], str]) -> Affine | None:
    """`expr` as `scale * carry + shift`, or None when it is not provably affine in `carry`."""
    if carry not in {n.value for n in loads(expr)}:
        return Affine(ZERO, _atom(code(bare(expr))))  # bracketed unless atomic: it joins other terms
    expr = bare(expr)
    if isinstance(expr, cst.Name):
        return Affine(ONE, ZERO) if expr.value == carry else None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = affine_parts(expr.expression, carry, code)
        if inner is None or isinstance(expr.operator, cst.Plus):
            return inner
        return Affine(_sub(ZERO, inner.scale), _sub(ZERO, inner.shift))
    if not isinstance(expr, cst.BinaryOperation):
        return None
    left = affine_parts(expr.left, carry, code)
    right = affine_parts(expr.right, carry, code)
    if left is None or right is None:
        return None
    operator = expr.operator
    if isinstance(operator, cst.Add):
        return Affine(_add(left.scale, right.scale), _add(left.shift, right.shift))
    if isinstance(operator, cst.Subtract):
        return Affine(_sub(left.scale, right.scale), _sub(left.shift, right.shift))
    if isinstance(operator, cst.Multiply):
        if left.scale != ZERO and right.scale != ZERO:
            return None  # `h * h`: not linear
        if right.scale == ZERO:
            return Affine(_mul(left.scale, right.shift), _mul(left.shift, right.shift))
        return Affine(_mul(left.shift, right.scale), _mul(left.shift, right.shift))
    if isinstance(operator, cst.Divide) and right.scale == ZERO:
        return Affine(_div(left.scale, right.shift), _div(left.shift, right.shift))
    return None


# `jnp.maximum` and `jnp.minimum` are associative and commutative, NaN propagating either way.
EXTREMA = {"jax.numpy.maximum": "maximum", "jax.numpy.minimum": "minimum"}


@dataclass(frozen=True)
class Extremum:
    """`jnp.maximum(h, value)` (either argument order): the operation and `value`."""

    operation: str  # "maximum" / "minimum"
    value: cst.BaseExpression
    position: int  # the argument `value` is


def extremum_part(expr: cst.BaseExpression, carry: str, parsed: ParsedModule) -> Extremum | None:
    """`expr` as `jnp.maximum(carry, value)` / `jnp.minimum(value, carry)` with `value` free of
    `carry`, or None."""
    expr = bare(expr)
    if not (isinstance(expr, cst.Call) and len(expr.args) == 2 and all(a.keyword is None and not a.star for a in expr.args)):
        return None
    operation = next((EXTREMA[n] for n in parsed.qualified_names(expr.func) if n in EXTREMA), None)
    if operation is None:
        return None
    first, second = (bare(a.value) for a in expr.args)
    for own, other, position in ((first, second, 1), (second, first, 0)):
        if isinstance(own, cst.Name) and own.value == carry and carry not in {n.value for n in loads(other)}:
            return Extremum(operation, other, position)
    return None


def matrix_parts(expr: cst.BaseExpression, carry: str, code: Callable[[cst.CSTNode], str]) -> Affine | None:
    """`expr` as `A @ carry + b` (or `b + A @ carry`, `A @ carry - b`, `A @ carry`) with `A` and `b`
    free of `carry`: the matrix `A` and the shift `b` as text, or None."""
    expr = bare(expr)

    def free(node: cst.BaseExpression) -> bool:
        return carry not in {n.value for n in loads(node)}

    def product(node: cst.BaseExpression) -> str | None:
        node = bare(node)
        if (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply)
                and isinstance(bare(node.right), cst.Name) and bare(node.right).value == carry and free(node.left)):
            return _atom(code(bare(node.left)))
        return None

    if (matrix := product(expr)) is not None:
        return Affine(matrix, ZERO)
    if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return None
    left, right = product(expr.left), product(expr.right)
    if left is not None and free(expr.right):
        shift = _atom(code(bare(expr.right)))
        return Affine(left, shift if isinstance(expr.operator, cst.Add) else f"-{shift}")
    if right is not None and free(expr.left) and isinstance(expr.operator, cst.Add):
        return Affine(right, _atom(code(bare(expr.left))))
    return None


_AUGMENTED = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide}


def _update_value(statement: cst.BaseStatement, carry: str) -> cst.BaseExpression | None:
    """`h = value` / `h += value` as the new value of `h`; None when the statement is not one."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name) and target.value == carry:
            return small.value
    if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == carry \
            and type(small.operator) in _AUGMENTED:
        return small.value
    return None


def new_value(update: cst.SimpleStatementLine, value: cst.BaseExpression) -> cst.BaseExpression:
    """The carry's new value: `value` itself, or `h + (value)` for `h += value` (`value` may be
    the update's right-hand side with its per-step reads already replaced)."""
    small = update.body[0]
    if not isinstance(small, cst.AugAssign):
        return value
    operator = _AUGMENTED[type(small.operator)]
    assert isinstance(small.target, cst.Name)
    return cst.BinaryOperation(
        small.target, operator(), value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    )


def _assigned(statement: cst.CSTNode) -> set[str]:
    return set(assigned_names([statement])) if isinstance(statement, cst.BaseStatement) else set()


def _buffer_write(statement: cst.BaseStatement, name: str, index: str | None) -> cst.BaseExpression | None:
    """`buf = buf.at[index].set(value)`: the value written at the loop index, else None."""
    if index is None or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target, value = small.targets[0].target, small.value
    if not (isinstance(target, cst.Name) and target.value == name and isinstance(value, cst.Call)):
        return None
    func = value.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "set" and len(value.args) == 1
            and value.args[0].keyword is None and isinstance(func.value, cst.Subscript)):
        return None
    at = func.value
    if not (isinstance(at.value, cst.Attribute) and at.value.attr.value == "at" and isinstance(at.value.value, cst.Name)
            and at.value.value.value == name and len(at.slice) == 1 and isinstance(at.slice[0].slice, cst.Index)):
        return None
    position = at.slice[0].slice.value
    if not (isinstance(position, cst.Name) and position.value == index):
        return None
    return value.args[0].value


def find_linear_recurrence(plan: LoopPlan, parsed: ParsedModule) -> tuple[LinearRecurrence | None, str]:
    """The plan's linear recurrence, or None and why it is not one (for `--explain` and tests).

    Asked only of a plan that already has a scan fix: the scan's proofs (slices, carries, the
    index) hold, and this adds the shape of the step."""
    if plan.refusal is not None:
        return None, "the loop has no fix"
    if plan.selects or plan.stacked_lists:
        return None, "the step selects with `jnp.where` or indexes stacked lists"
    if not plan.sequences and not (plan.index_used and plan.index is not None):
        # `for _ in range(k): h = h - 0.1 * g`: no per-step input to lay the steps' coefficients
        # along; the parallel form has nothing to scan over.
        return None, "no value changes from step to step but the carry (no per-step input)"
    carries = [c for c in plan.carries if not c.buffer]
    buffers = {c.name for c in plan.carries if c.buffer}
    if len(carries) != 1:
        return None, f"it carries {len(carries)} values, not one"
    carry = carries[0].name
    body = list(plan.loop.body.body)  # type: ignore[union-attr]
    binds = {id(s.bind) for s in plan.sequences if s.bind is not None}
    appends = {id(a.append): a for a in plan.accumulators}
    updates = [(i, s) for i, s in enumerate(body) if carry in _assigned(s)]
    if len(updates) != 1:
        return None, f"`{carry}` is assigned {len(updates)} times in the step"
    position, update = updates[0]
    value = _update_value(update, carry)
    if value is None:
        return None, f"`{carry}` is not assigned by one plain statement"
    before = body[:position]
    for statement in before:
        if carry in {n.value for n in loads(statement)}:
            return None, f"the step reads `{carry}` before updating it"
        if id(statement) not in binds and (id(statement) in appends or not _plain_assignment(statement, augmented=True)):
            return None, "a statement before the update is not a plain assignment"
        if _assigned(statement) & buffers:
            return None, "a buffer is written before the update"
    # Names the step computes before the update (a sequence's bind, `x_t = xs[t]`, is the
    # scan's per-step slice itself, which an output may read).
    local: set[str] = set().union(*(_assigned(s) for s in before if id(s) not in binds))
    outputs: list[Output] = []
    after: list[cst.BaseStatement] = []
    for statement in body[position + 1:]:
        accumulator = appends.get(id(statement))
        if accumulator is not None:
            outputs.append(Output(accumulator.name, accumulator.value, False, statement))
            continue
        written = next((b for b in buffers if _buffer_write(statement, b, plan.index) is not None), None)
        if written is not None:
            outputs.append(Output(written, _buffer_write(statement, written, plan.index), True, statement))  # type: ignore[arg-type]
            continue
        if not _plain_assignment(statement) or _assigned(statement) & ({carry} | buffers | {a.name for a in plan.accumulators}):
            return None, "a statement after the update is not an append, a buffer write at the index or a plain assignment"
        after.append(statement)
    if len(outputs) != len(plan.accumulators) + len(buffers):
        return None, "an output is written before the update"
    for node in [*(o.value for o in outputs), *after]:
        if {n.value for n in loads(node)} & local:
            return None, "an output reads a value the step computes before the update"
    if any(output.buffer for output in outputs) and not plan.index_used:
        return None, "a buffer is written without the index in the scan"
    if plan.index is not None and any(_index_as_value(node, plan.index) for node in [*before, value, *after]):
        # In the loop the index is a weak Python int; mapped over `jnp.arange` it is an int32 or
        # int64 array, which would widen an integer carry (`h = h + t` on int8).
        return None, f"the index `{plan.index}` is used as a value, not only to index"
    extremum = extremum_part(value, carry, parsed) if isinstance(update.body[0], cst.Assign) else None
    code = lambda node: cst.Module([]).code_for_node(node)  # noqa: E731
    affine = None if extremum else affine_parts(new_value(update, value), carry, code)  # type: ignore[arg-type]
    matrix = None if extremum or affine else matrix_parts(new_value(update, value), carry, code)  # type: ignore[arg-type]
    if extremum is None and affine is None and matrix is None:
        return None, (f"the update of `{carry}` is not `a * {carry} + b` (nor `A @ {carry} + b`) with `a` and `b` "
                      f"free of `{carry}`, nor a running `jnp.maximum`/`jnp.minimum`")
    return LinearRecurrence(carry, update, value, before, outputs, after,  # type: ignore[arg-type]
                            extremum.operation if extremum else "", matrix is not None), ""


def _index_as_value(node: cst.CSTNode, index: str) -> bool:
    """Whether `index` is read anywhere in `node` outside a subscript's brackets (`xs[t + 1]`)."""

    class Find(cst.CSTVisitor):
        found = False

        def visit_SubscriptElement(self, element: cst.SubscriptElement) -> bool:
            return False

        def visit_Name(self, name: cst.Name) -> None:
            if name.value == index:
                self.found = True

    finder = Find()
    node.visit(finder)
    return finder.found


def _plain_assignment(statement: cst.BaseStatement, augmented: bool = False) -> bool:
    """A line of assignments only (`x = ...`, `x: T = ...`, and `x += ...` when `augmented`)."""
    kinds = (cst.Assign, cst.AnnAssign, cst.AugAssign) if augmented else (cst.Assign, cst.AnnAssign)
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, kinds) for s in statement.body)


# What computes every step's carry at once, by the recurrence's shape.
PRIMITIVES = {"sum": "lax.associative_scan(jnp.add)", "product": "lax.associative_scan(jnp.multiply)",
              "affine": "lax.associative_scan", "matrix": "lax.associative_scan",
              "maximum": "lax.associative_scan(jnp.maximum)",
              "minimum": "lax.associative_scan(jnp.minimum)"}


def recurrence_kind(recurrence: LinearRecurrence) -> str:
    """"sum" (`h = h + b`), "product" (`h = a * h`), "affine" (`h = a * h + b`), "matrix"
    (`h = A @ h + b`), or "maximum" / "minimum" (`h = jnp.maximum(h, v)`)."""
    if recurrence.extremum:
        return recurrence.extremum
    if recurrence.matrix:
        return "matrix"
    affine = affine_parts(new_value(recurrence.update, recurrence.value), recurrence.carry,
                          lambda node: cst.Module([]).code_for_node(node))
    assert affine is not None
    return "sum" if affine.scale == ONE else "product" if affine.shift == ZERO else "affine"


def recurrence_text(recurrence: LinearRecurrence) -> str:
    """The recurrence as a user reads it in a message: "the linear recurrence `h = a * h + b`"."""
    h = recurrence.carry
    if recurrence.extremum:
        return f"the running {recurrence.extremum} `{h} = jnp.{recurrence.extremum}({h}, v)`"
    if recurrence.matrix:
        return f"the linear recurrence `{h} = A @ {h} + b`"
    return f"the linear recurrence `{h} = a * {h} + b`"
