"""Whether a slice's width changes with the loop index.

`M[l * l : l * l + 2 * l + 1]` takes 2l + 1 entries at step `l`: each step computes on a
different shape (one block per angular degree), which a scan cannot stack. `x[t : t + k]`
and `x[i * k : (i + 1) * k]` take k entries every step: a window moving along one axis. Which
of the two a slice is follows from its bounds' arithmetic, not from which bound names the
index: the width `upper - lower` is evaluated at a few values of the index, every other name
(and every call, attribute or subscript that does not read the index) held at one value.

Cases:
- `x[l*l : l*l + 2*l + 1]`, `x[k + 1 :]`, `x[: n - k]`, `x[2*t : 3*t]`: the width changes;
- `x[t : t + k]`, `x[i*k : (i+1)*k]`, `x[s : s + mb]` with `s = i * mb`: it does not;
- a bound that reads the index through something not evaluated here (`x[: sizes[i]]`,
  `x[: f(i)]`): not known (None), and the caller decides as before.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping

import libcst as cst

from jaxloopfix.analysis.source import descendants

# The index values the width is compared at, and the length an open upper bound stands for.
STEPS = (2, 3, 5)
END = 1009
# How deep a name computed in the step is followed through its assignment.
DEPTH = 4


class _Unknown(Exception):
    """The bound reads the index through something not evaluated here."""


def width_varies(
    lower: cst.BaseExpression | None,
    upper: cst.BaseExpression | None,
    index: str,
    computed: Mapping[str, cst.BaseExpression],
    code: Callable[[cst.CSTNode], str],
) -> bool | None:
    """Whether `upper - lower` differs between steps; None when it cannot be told. `computed`:
    names the step assigns once from the index (`s = i * mb`); `code`: a node's source text,
    which names the opaque values it stands for."""
    try:
        widths = {_value(upper, index, step, computed, code, 0) - _value(lower, index, step, computed, code, 0)
                  if upper is not None else END - _value(lower, index, step, computed, code, 0)
                  for step in STEPS}
    except (_Unknown, ArithmeticError, ValueError, OverflowError):
        return None
    return len(widths) > 1


def _value(expr: cst.BaseExpression | None, index: str, step: int, computed: Mapping[str, cst.BaseExpression],
           code: Callable[[cst.CSTNode], str], depth: int) -> int:
    if expr is None:
        return 0
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.Name):
        if expr.value == index:
            return step
        if expr.value in computed:
            if depth >= DEPTH:
                raise _Unknown
            return _value(computed[expr.value], index, step, computed, code, depth + 1)
        return _opaque(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        value = _value(expr.expression, index, step, computed, code, depth)
        return -value if isinstance(expr.operator, cst.Minus) else value
    if isinstance(expr, cst.BinaryOperation):
        left = _value(expr.left, index, step, computed, code, depth)
        right = _value(expr.right, index, step, computed, code, depth)
        return _apply(expr.operator, left, right)
    if any(isinstance(n, cst.Name) and (n.value == index or n.value in computed) for n in descendants(expr)):
        raise _Unknown  # `sizes[i]`, `f(i)`: the index through a value not known here
    return _opaque(code(expr))


def int_arithmetic(operator: cst.BaseBinaryOp, left: int, right: int) -> int | None:
    """`left <op> right` on Python ints as Python computes it; None for an operator not
    evaluated here, a division by zero or a power that would not stay small."""
    if isinstance(operator, cst.Add):
        return left + right
    if isinstance(operator, cst.Subtract):
        return left - right
    if isinstance(operator, cst.Multiply):
        return left * right
    if isinstance(operator, cst.FloorDivide) and right != 0:
        return left // right
    if isinstance(operator, cst.Modulo) and right != 0:
        return left % right
    if isinstance(operator, cst.Power) and 0 <= right <= 8:
        return left**right
    return None


def _apply(operator: cst.BaseBinaryOp, left: int, right: int) -> int:
    value = int_arithmetic(operator, left, right)
    if value is None:
        raise _Unknown
    return value


def _opaque(text: str) -> int:
    """One value per name or expression, the same at every step (odd and > 10, so that no
    product or difference of two of them is zero by chance)."""
    return 11 + 2 * (zlib.crc32(text.encode()) % 97)
