"""What a `for` loop iterates over: its trip count, index, per-step slices and their axes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.count_defaults import attribute_default, class_declarations, field_default, parameter_default
from jaxloopfix.analysis.names import parameters, stored_names
from jaxloopfix.analysis.slice_width import int_arithmetic
from jaxloopfix.analysis.plan import RangeBounds
from jaxloopfix.analysis.source import ParsedModule, descendants
from jaxloopfix.analysis.traced import TracedFunction, is_generator
from jaxloopfix.analysis.tuple_results import tuple_length


@dataclass
class TripCount:
    """How a trip count is known: "literal"/"constant" (value known), "bounded" (one of known
    literals; `value` is the largest), "shape" (an array
    length), "static" (a static argument, an attribute such as `cfg.num_steps`, the length of
    a value not proven to be an array), "traced" (a traced argument), "ndim" (a rank), "unknown"."""

    kind: str
    value: int | None = None
    # For a "static" count with a known default (`micro_ticks: int = 2`): where the default is
    # declared (see count_defaults.py); `value` is then that default.
    default: str | None = None
    # For a "bounded" count not chosen from literals: why `value` bounds it (a range from a
    # non-negative start up to a literal stop runs at most `stop` steps).
    bound: str | None = None


@dataclass
class Iteration:
    kind: str  # "range", "array", "zip", "enumerate"
    description: str
    index: str | None = None
    index_start: cst.BaseExpression | None = None
    bounds: RangeBounds | None = None
    trip: TripCount = field(default_factory=lambda: TripCount("unknown"))
    # (element name, array expression) for array/zip/enumerate loops.
    elements: list[tuple[str, cst.BaseExpression]] = field(default_factory=list)
    # Elements stepped over `xs` from its last row to its first (`for x in reversed(xs)`,
    # `zip(reversed(xs), ys)`, `enumerate(reversed(xs))`).
    reversed_elements: set[str] = field(default_factory=set)
    unsafe_reasons: list[str] = field(default_factory=list)
    refusal: str | None = None


def module_constants(parsed: ParsedModule) -> dict[str, int]:
    """Module-level names bound exactly once to an int literal (`SEQ_LEN = 128`), and the
    lengths of those bound once to a literal list or tuple (under `len(NAME)`)."""
    found: dict[str, int] = {}
    for name, (value,) in module_literal_values(parsed).items():
        if isinstance(value, cst.Integer):
            found[name] = int(value.evaluated_value)
            continue
        length = _literal_length(parsed, value)
        if length is not None:
            found[f"len({name})"] = length
    found.update(_field_defaults(parsed))
    return found


def _field_defaults(parsed: ParsedModule) -> dict[str, int]:
    """Int defaults of the constants this module's classes declare, named in capitals as
    constants are (`N: int = 3`, `N: int = struct.field(pytree_node=False, default=3)`), under
    the key `.N`: what `self.consts.N` is unless a call of this module passes `N=` or a
    statement assigns `.N`. A name two classes declare differently is left out."""
    values: dict[str, int | None] = {}
    for statement in parsed.module.body:
        if not isinstance(statement, cst.ClassDef):
            continue
        for name, declared in class_declarations(statement):
            if declared is not None and name.isupper():  # named as a constant
                value = field_default(declared)
                key = f".{name}"
                values[key] = value if values.get(key, value) == value else None
    if not any(v is not None for v in values.values()):
        return {}
    for node in parsed.nodes:  # `Consts(N=10)` or `self.N = ...` change it
        if isinstance(node, cst.Arg) and node.keyword is not None:
            values.pop(f".{node.keyword.value}", None)
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign)) and isinstance(node.target, cst.Attribute):
            values.pop(f".{node.target.attr.value}", None)
    return {key: value for key, value in values.items() if value is not None}


def _joined_defaults(*trips: TripCount) -> str:
    return "; ".join(dict.fromkeys(t.default for t in trips if t.default))


def module_literal_values(parsed: ParsedModule) -> dict[str, list[cst.BaseExpression]]:
    """Module-level names bound exactly once, at the top level, by a plain assignment: each
    name's value (kept with the text)."""
    kept = parsed.kept("module literal values")
    if "values" not in kept:
        counts: dict[str, int] = {}
        values: dict[str, list[cst.BaseExpression]] = {}
        for statement in parsed.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                for name in _bound_by_compound(statement):
                    counts[name] = counts.get(name, 0) + 2
                continue
            for small in statement.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for target in targets:
                        for name in stored_names(target):
                            counts[name] = counts.get(name, 0) + (2 if isinstance(small, cst.AugAssign) else 1)
                            if isinstance(target, cst.Name) and small.value is not None:
                                values[name] = [small.value]
        kept["values"] = {name: v for name, v in values.items() if counts.get(name) == 1}
    return kept["values"]


def _literal_length(parsed: ParsedModule, value: cst.BaseExpression) -> int | None:
    """The length of a literal list or tuple, or of an array built from one
    (`ZONES = jnp.array([[...], [...], [...]])`): `len(ZONES)` is a known count (kept under
    the key `len(ZONES)` among the module's constants)."""
    if isinstance(value, cst.Call) and value.args and isinstance(value.func, (cst.Name, cst.Attribute)):
        qname = parsed.qualified_name(value.func) or ""
        if qname in ("jax.numpy.array", "jax.numpy.asarray", "numpy.array", "numpy.asarray", "builtins.tuple",
                     "builtins.list"):
            value = value.args[0].value
    if isinstance(value, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
        return len(value.elements)
    return None


def _bound_by_compound(statement: cst.CSTNode) -> set[str]:
    from jaxloopfix.analysis.names import assigned_names

    return assigned_names([statement])


def _generator_names(parsed: ParsedModule) -> frozenset[str]:
    """Names of the functions and methods of `parsed` whose own body yields (found once per module)."""
    cache = parsed.__dict__.get("_generator_names")
    if cache is None:
        cache = parsed.__dict__["_generator_names"] = frozenset(
            node.name.value for node in parsed.nodes if type(node) is cst.FunctionDef and is_generator(node)
        )
    return cache


class IterationAnalyzer:
    def __init__(
        self,
        parsed: ParsedModule,
        traced: TracedFunction,
        facts: ArrayFacts,
        constants: dict[str, int],
    ) -> None:
        self.parsed = parsed
        self.traced = traced
        self.facts = facts
        self.constants = constants
        self._params = {p.name.value for p in parameters(traced.node, stars=False)}
        self._local_values = _local_assignments(traced.node)
        self._loop: cst.For | None = None

    def qname(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self.parsed.qualified_name(node)
        return None

    # -- trip counts --------------------------------------------------------------
    def trip_count(self, expr: cst.BaseExpression, depth: int = 0) -> TripCount:
        if depth > 8:
            return TripCount("unknown")
        if isinstance(expr, cst.Integer):
            return TripCount("literal", int(expr.evaluated_value))
        choices = self._literal_choices(expr, depth)
        if choices is not None:
            # `{3: 1, 5: 2}.get(self.height, 3)`, `4 if wide else 2`: one of known ints, whichever is
            # chosen; the largest bounds the count (a count is never negative, or it is unknown).
            return TripCount("bounded", max(choices)) if min(choices) >= 0 else TripCount("unknown")
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self.trip_count(expr.expression, depth + 1)
            return TripCount(inner.kind, -inner.value if inner.value is not None else None)
        if _is_shape_index(expr):
            base = expr.value.value  # type: ignore[attr-defined]
            return TripCount("shape") if isinstance(base, cst.Name) else TripCount("shape")
        if isinstance(expr, cst.Attribute) and expr.attr.value == "ndim":
            return TripCount("ndim")
        if isinstance(expr, cst.Attribute):
            # `self.num_steps`, `cfg.horizon`: a hyperparameter or config field. `range` of a
            # tracer raises, so under a trace it is a static Python int; a field a class of this
            # module declares with an int default (`N: int = 3`) has that value.
            default = self.constants.get(f".{expr.attr.value}")
            if default is not None and not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
                return TripCount("constant", default)
            declared = attribute_default(self.parsed, self.traced.node, expr)
            if declared is not None:
                return TripCount("static", declared.value, default=declared.source)
            return TripCount("static")
        if isinstance(expr, cst.Call) and self.qname(expr.func) == "builtins.len" and len(expr.args) == 1:
            arg = expr.args[0].value
            if isinstance(arg, cst.Attribute) and arg.attr.value == "shape":
                return TripCount("ndim")
            if isinstance(arg, cst.Name) and f"len({arg.value})" in self.constants and arg.value not in self._local_values \
                    and arg.value not in self._params:
                return TripCount("constant", self.constants[f"len({arg.value})"])  # a module-level literal
            # The length of an array, or of a value not proven to be one (still a static count).
            return TripCount("shape") if self._array(arg) else TripCount("static")
        if isinstance(expr, cst.Name):
            name = expr.value
            values = self._local_values.get(name)
            if name in self._params and values is None:
                if name in self.traced.passed_through:
                    return TripCount("unknown")  # unmapped by `vmap`: an int or an array, as passed
                if self.traced.transformed and name not in self.traced.static_params:
                    return TripCount("traced")
                declared = parameter_default(self.parsed, self.traced.node, name)
                if declared is not None:
                    return TripCount("static", declared.value, default=declared.source)
                return TripCount("static") if name in self.traced.static_params else TripCount("unknown")
            if values:
                kinds = [self._assigned_trip(v, depth) for v in values]
                if all(k.kind == "shape" for k in kinds):
                    return TripCount("shape")
                if len(kinds) == 1:
                    return kinds[0]
                return TripCount("unknown")
            if name in self.constants:
                return TripCount("constant", self.constants[name])
            if name not in self._params:
                enclosing = _enclosing_assignments(self.parsed, self.traced.node, name)
                if len(enclosing) == 1 and isinstance(enclosing[0], cst.BaseExpression) and _rank_valued(enclosing[0]):
                    return TripCount("ndim")  # `n = max(x.ndim for x in leaves)` in the enclosing function
                if len(enclosing) == 1 and isinstance(enclosing[0], cst.Integer):
                    return TripCount("constant", int(enclosing[0].evaluated_value))  # `n = 2` in the enclosing function
                owner = _enclosing_parameter_owner(self.parsed, self.traced.node, name)
                declared = parameter_default(self.parsed, owner, name) if owner is not None else None
                if declared is not None:  # `def sam(..., sync_period=2)`, then `range(sync_period - 1)` in its closure
                    return TripCount("static", declared.value, default=declared.source)
            return TripCount("unknown")
        if isinstance(expr, cst.Call) and _rank_valued(expr):
            return TripCount("ndim")
        if isinstance(expr, cst.BinaryOperation):
            left = self.trip_count(expr.left, depth + 1)
            right = self.trip_count(expr.right, depth + 1)
            for kind in ("traced", "ndim", "container"):
                if kind in (left.kind, right.kind):
                    return TripCount(kind)
            if "bounded" in (left.kind, right.kind):
                # At most `n`: so is `n - 1`, `n + 1`, `2 * n`, `n // 2` (the exact operand
                # non-negative); a bounded value subtracted or divided by gives no bound.
                exact = right if left.kind == "bounded" else left
                monotone = isinstance(expr.operator, (cst.Add, cst.Multiply)) or (
                    left.kind == "bounded" and isinstance(expr.operator, (cst.Subtract, cst.FloorDivide)))
                if monotone and exact.kind in ("literal", "constant") and exact.value is not None and exact.value >= 0 \
                        and (value := int_arithmetic(expr.operator, left.value, right.value)) is not None:  # type: ignore[arg-type]
                    return TripCount("bounded", value)
                return TripCount("unknown")
            if left.value is not None and right.value is not None:
                value = int_arithmetic(expr.operator, left.value, right.value)
                if value is not None:
                    if left.default or right.default:
                        return TripCount("static", value, default=_joined_defaults(left, right))
                    kind = "literal" if left.kind == right.kind == "literal" else "constant"
                    return TripCount(kind, value)
            for kind in ("shape", "static", "constant", "literal"):
                if kind in (left.kind, right.kind):
                    return TripCount(kind if kind in ("shape", "static") else "unknown")
            return TripCount("unknown")
        return TripCount("unknown")

    def _non_negative(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A start that is never negative: a literal >= 0, `len(...)`, the index of an enclosing
        `range` over non-negative values, and sums and products of these."""
        if depth > 6:
            return False
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.Call) and self.qname(expr.func) == "builtins.len":
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply)):
            return self._non_negative(expr.left, depth + 1) and self._non_negative(expr.right, depth + 1)
        if isinstance(expr, cst.Name):
            if self._stores(expr.value) != 1:
                return False  # `i -= k`, `i = i - 30`, another `for i in ...`: not the range's values alone
            for ancestor in self.parsed.ancestors(expr):
                if ancestor is self.traced.node:
                    return False
                if isinstance(ancestor, cst.For) and isinstance(ancestor.target, cst.Name) \
                        and ancestor.target.value == expr.value and ancestor.body is not None:
                    return self._non_negative_range(ancestor.iter, depth)
        return False

    def _stores(self, name: str) -> int:
        """How many places in the traced function (nested functions included) bind `name`."""
        count = 0
        for node in descendants(self.traced.node.body):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                found = {id(n): n for t in targets for n in (t, *descendants(t))}  # `descendants` may yield `t` itself
                count += sum(1 for n in found.values() if isinstance(n, cst.Name) and n.value == name)
            elif isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
                count += 2  # rebound from another scope: not proven
        return count

    def _non_negative_range(self, iterable: cst.BaseExpression, depth: int) -> bool:
        """`range(n)`, `range(a, b)` or `range(a, b, k)` with `a` never negative and `k` a positive literal."""
        if not (isinstance(iterable, cst.Call) and self.qname(iterable.func) == "builtins.range" and iterable.args):
            return False
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if len(args) != len(iterable.args):
            return False
        if len(args) == 3 and not (isinstance(args[2], cst.Integer) and int(args[2].evaluated_value) > 0):
            return False
        return len(args) == 1 or self._non_negative(args[0], depth + 1)

    def _literal_choices(self, expr: cst.BaseExpression, depth: int) -> list[int] | None:
        """The ints `expr` is one of, when each is a literal: a lookup in a dict literal (or a
        local name bound once to one) with `[key]` or `.get(key, default)` and int values, or a
        conditional expression between such values; else None."""
        if isinstance(expr, cst.IfExp):
            body, orelse = self.trip_count(expr.body, depth + 1), self.trip_count(expr.orelse, depth + 1)
            if body.kind in ("literal", "bounded") and orelse.kind in ("literal", "bounded"):
                return [body.value, orelse.value]  # type: ignore[list-item]
            return None
        table: cst.BaseExpression | None = None
        extra: list[cst.BaseExpression] = []
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            table = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" \
                and len(expr.args) == 2 and all(a.keyword is None and not a.star for a in expr.args):
            table, extra = expr.func.value, [expr.args[1].value]
        if isinstance(table, cst.Name):
            bound = self._local_values.get(table.value)
            table = bound[0] if bound and len(bound) == 1 and isinstance(bound[0], cst.Dict) else None
        if not isinstance(table, cst.Dict) or not table.elements:
            return None
        values = [e.value for e in table.elements if isinstance(e, cst.DictElement)]
        if len(values) != len(table.elements):
            return None  # `{**base, ...}`: entries not all seen
        ints = [self.trip_count(v, depth + 1) for v in [*values, *extra]]
        if any(t.kind not in ("literal", "bounded") for t in ints):
            return None
        return [t.value for t in ints]  # type: ignore[misc]

    def _assigned_trip(self, value: cst.BaseExpression | str, depth: int) -> TripCount:
        if value == "shape-unpack":
            return TripCount("shape")
        if isinstance(value, cst.BaseExpression):
            return self.trip_count(value, depth + 1)
        return TripCount("unknown")

    # -- iteration source ---------------------------------------------------------
    def _array(self, expr: cst.BaseExpression) -> bool:
        """Array evidence that holds at the loop being analysed."""
        if self._loop is None:
            return self.facts.is_array(expr)
        return self.facts.is_array_before(expr, self._loop)

    def iteration(self, loop: cst.For) -> Iteration | None:
        self._loop = loop
        it = loop.iter
        code = _one_line(self.parsed.code(it))
        if isinstance(it, cst.Call):
            name = self.qname(it.func)
            if name == "builtins.reversed" and len(it.args) == 1 and isinstance(it.args[0].value, cst.Call):
                inner = it.args[0].value
                if self.qname(inner.func) == "builtins.range":
                    result = self._range(loop, inner, code)
                    if result is not None and result.bounds is not None:
                        result.bounds.reverse = not result.bounds.reverse
                    return result
                return self.unrecognised(loop)
            if name == "builtins.range":
                return self._range(loop, it, code)
            if name == "builtins.zip":
                return self._zip(loop.target, it, code)
            if name == "builtins.enumerate":
                return self._enumerate(loop, it, code)
        generator = self._generator_called(it)
        if generator is not None:
            return Iteration(
                "other", code,
                refusal=f"`{code}` is a generator (`{generator}` yields): a scan needs an array (or a `range`) to step over",
            )
        length = self._tuple_length(it)
        if length is not None:
            # `for part in jnp.linalg.eigh(m)`: the items of a tuple of arrays of different shapes.
            return Iteration(
                "other", code, trip=TripCount("literal", length),
                refusal=f"`{code}` is a tuple of {length} arrays (of different shapes, in general), not one array: "
                "a scan needs one array to step over",
            )
        if isinstance(loop.target, cst.Name):
            backwards = self._backwards(it)
            source = backwards if backwards is not None else it
            iteration = Iteration("array", code, elements=[(loop.target.value, source)])
            if backwards is not None:
                iteration.reversed_elements.add(loop.target.value)
            if not self._array(source):
                iteration.unsafe_reasons.append(maybe_array_reason(self.parsed.code(source)))
            return iteration
        return None

    def _tuple_length(self, expr: cst.BaseExpression) -> int | None:
        """`jnp.linalg.eigh(m)`, or a name every binding of which is such a call: how many arrays
        the fixed-length tuple holds (`tuple_results.py`), else None."""
        values: list = [expr]
        if isinstance(expr, cst.Name) and expr.value not in self._params:
            values = self._local_values.get(expr.value) or []
        lengths = {
            tuple_length(self.qname(v.func), v) if isinstance(v, cst.Call) else None for v in values
        }
        return lengths.pop() if len(lengths) == 1 else None

    def _generator_called(self, expr: cst.BaseExpression) -> str | None:
        """`self.states(x)`, `chunks(xs)`: a call of a function or method of this module, by its
        name, whose body yields; what the loop steps over is a Python generator."""
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        name = func.attr.value if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) else (
            func.value if isinstance(func, cst.Name) else None
        )
        return name if name is not None and name in _generator_names(self.parsed) else None

    def _backwards(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`xs` for `reversed(xs)`: a scan steps over `xs[::-1]` (never over the iterator itself)."""
        if (
            isinstance(expr, cst.Call)
            and self.qname(expr.func) == "builtins.reversed"
            and len(expr.args) == 1
            and expr.args[0].keyword is None
            and not expr.args[0].star
        ):
            return expr.args[0].value
        return None

    def unrecognised(self, loop: cst.For) -> Iteration:
        """A header jaxloopfix does not rewrite: reported with a reason, never silently dropped."""
        code = _one_line(self.parsed.code(loop.iter))
        return Iteration(
            "other",
            code,
            refusal=f"jaxloopfix does not rewrite loops over `{code}`; a scan needs an array (or a `range`) to step over",
        )

    def _range(self, loop: cst.For, call: cst.Call, code: str) -> Iteration | None:
        if not isinstance(loop.target, cst.Name):
            return None
        args = [a for a in call.args]
        if not args or len(args) > 3 or any(a.keyword is not None or a.star for a in args):
            return None
        values = [a.value for a in args]
        step = 1
        if len(values) == 3:
            step_count = self.trip_count(values[2])
            if step_count.kind == "traced":
                return Iteration("range", code, index=loop.target.value, trip=step_count)
            if step_count.value is None or step_count.value == 0:
                iteration = Iteration("range", code, index=loop.target.value, trip=TripCount(step_count.kind))
                iteration.refusal = (
                    f"the range's step `{self.parsed.code(values[2])}` is not a literal, so its sign and the "
                    "trip count are unknown to jaxloopfix"
                )
                return iteration
            step = step_count.value
        start = values[0] if len(values) >= 2 else None
        stop = values[1] if len(values) >= 2 else values[0]
        trips = [self.trip_count(v) for v in ([start, stop] if start is not None else [stop])]
        for kind in ("traced", "ndim"):
            if any(t.kind == kind for t in trips):
                return Iteration("range", code, index=loop.target.value, trip=TripCount(kind))
        if all(t.value is not None for t in trips):
            lo = trips[0].value if start is not None else 0
            hi = trips[-1].value
            count = len(range(lo, hi, step))  # type: ignore[arg-type]
            if trips[-1].kind == "bounded" and step > 0 and (start is None or trips[0].kind != "bounded"):
                trip = TripCount("bounded", count)  # the stop is at most `hi`: so is the count
            elif any(t.kind == "bounded" for t in trips):
                trip = TripCount("unknown")
            elif any(t.default for t in trips):
                trip = TripCount("static", count, default=_joined_defaults(*trips))
            else:
                trip = TripCount("literal", count)
        elif start is not None and step > 0 and trips[-1].kind in ("literal", "constant") and self._non_negative(start):
            # `for j in range(i + 1, 3)` inside `for i in range(3)`: from a start that is never
            # negative up to a known stop, at most `stop` steps, whatever the start is.
            hi = max(trips[-1].value or 0, 0)
            trip = TripCount("bounded", hi, bound=f"it starts at `{self.parsed.code(start)}`, never negative, and stops at {hi}")
        else:
            trip = TripCount(next((t.kind for t in trips if t.value is None), "unknown"))
        if step < 0:
            if step != -1:
                iteration = Iteration("range", code, index=loop.target.value, bounds=None, trip=trip)
                iteration.refusal = f"descending ranges are rewritten only with step -1 (this one steps by {step})"
                return iteration
            # range(a, b, -1) == reversed(range(b + 1, a + 1))
            assert start is not None
            bounds = RangeBounds(_plus_one(stop), _plus_one(start), 1, reverse=True)
        else:
            bounds = RangeBounds(start if not _is_zero(start) else None, stop, step)
        return Iteration("range", code, index=loop.target.value, bounds=bounds, trip=trip)

    def _zip(self, target: cst.BaseAssignTargetExpression, call: cst.Call, code: str) -> Iteration | None:
        arrays = [a.value for a in call.args if a.keyword is None]
        strict = any(a.keyword is not None and a.keyword.value == "strict" and _is_true(a.value) for a in call.args)
        if any(a.star for a in call.args) or not arrays:
            return Iteration(
                "other",
                code,
                refusal=f"`{code}` unpacks a sequence of sequences; jaxloopfix rewrites `zip` only over named arrays",
            )
        if any(a.keyword is not None and a.keyword.value != "strict" for a in call.args):
            return None
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(arrays):
            if isinstance(target, cst.Name):
                return Iteration(
                    "other", code, refusal=f"each step binds `{target.value}` to a tuple of items; name them (`for a, b in zip(...)`) to get a fix"
                )
            return None
        names = [e.value for e in target.elements]
        if not all(isinstance(n, cst.Name) for n in names):
            return None
        for array in arrays:
            if isinstance(array, cst.Call) and self.qname(array.func) == "builtins.range":
                # A `range` is a Python sequence: `lax.scan` cannot step over it.
                return Iteration(
                    "other", code, refusal=(
                        f"`zip` steps over `{_one_line(self.parsed.code(array))}`, a Python range that `lax.scan` "
                        "cannot take as `xs`; `enumerate(...)` over the arrays, or `jnp.arange(...)`, gets a fix"
                    ),
                )
        backwards = [self._backwards(a) for a in arrays]
        arrays = [b if b is not None else a for a, b in zip(arrays, backwards)]
        iteration = Iteration("zip", code, elements=[(n.value, a) for n, a in zip(names, arrays)])  # type: ignore[union-attr]
        iteration.reversed_elements = {n.value for n, b in zip(names, backwards) if b is not None}  # type: ignore[union-attr]
        for array in arrays:
            if not self._array(array):
                iteration.unsafe_reasons.append(maybe_array_reason(self.parsed.code(array)))
        if not strict and len(arrays) > 1:
            iteration.unsafe_reasons.append(
                "`zip` stops at the shortest sequence, while `lax.scan` needs equal lengths; "
                "the fix assumes they are equal (`zip(..., strict=True)` makes that explicit)"
            )
        return iteration

    def _enumerate(self, loop: cst.For, call: cst.Call, code: str) -> Iteration | None:
        target = loop.target
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
            return None
        index, element = (e.value for e in target.elements)
        if not isinstance(index, cst.Name):
            return None
        positional = [a for a in call.args if a.keyword is None]
        start = None
        for a in call.args[1:]:
            if a.keyword is None or a.keyword.value == "start":
                start = a.value
        if not positional or any(a.star for a in call.args):
            return None
        if start is not None and not isinstance(start, (cst.Integer, cst.Name, cst.Attribute)):
            return None  # `start=offset` reads a Python int once (`enumerate` needs one); a call could do more
        source = positional[0].value
        backwards: set[str] = set()
        if isinstance(element, cst.Name):
            inner_source = self._backwards(source)
            if inner_source is not None:
                source = inner_source
                backwards.add(element.value)
            elements = [(element.value, source)]
            unsafe: list[str] = [] if self._array(source) else [maybe_array_reason(self.parsed.code(source))]
        elif isinstance(source, cst.Call) and self.qname(source.func) == "builtins.zip":
            inner = self._zip(element, source, self.parsed.code(source))  # type: ignore[arg-type]
            if inner is None or inner.kind == "other":
                return inner
            elements, unsafe, backwards = inner.elements, inner.unsafe_reasons, inner.reversed_elements
        else:
            return None
        return Iteration(
            "enumerate", code, index=index.value, index_start=start, elements=elements, unsafe_reasons=unsafe,
            reversed_elements=backwards,
        )


def maybe_array_reason(name: str) -> str:
    return (
        f"cannot prove `{name}` is an array rather than a list of arrays (a scan slices or indexes it as an array); "
        f"annotate it as `jax.Array` to make this fix safe"
    )


def _one_line(code: str) -> str:
    """A loop header as one line for messages: comments dropped, whitespace collapsed."""
    if "\n" in code or "#" in code:
        code = re.sub(r"#[^\n]*", "", code)
        code = " ".join(code.split()).replace("( ", "(").replace(" )", ")")
    return code


def _is_shape_index(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.Subscript)
        and isinstance(expr.value, cst.Attribute)
        and expr.value.attr.value == "shape"
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    )


def _is_zero(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Integer) and int(expr.evaluated_value) == 0


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _plus_one(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`expr + 1`, simplified: `-1 + 1` -> None (zero), `n - 1 + 1` -> `n`."""
    if isinstance(expr, cst.Integer):
        value = int(expr.evaluated_value) + 1
        return None if value == 0 else cst.Integer(str(value))
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        value = -int(expr.expression.evaluated_value) + 1
        if value == 0:
            return None
        return cst.Integer(str(value)) if value > 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    if (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, cst.Subtract)
        and isinstance(expr.right, cst.Integer)
    ):
        k = int(expr.right.evaluated_value)
        if k == 1:
            return expr.left
        return expr.with_changes(right=cst.Integer(str(k - 1)))
    return cst.BinaryOperation(
        left=expr if not isinstance(expr, (cst.BinaryOperation, cst.IfExp)) else expr.with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
        ),
        operator=cst.Add(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=cst.Integer("1"),
    )


def _rank_valued(expr: cst.BaseExpression) -> bool:
    """`max(x.ndim for x in leaves)`, `tree_reduce(lambda n, y: max(n, y.ndim), tree, 0)`: a
    value built from ranks only (it reads `.ndim` and no length, shape or size)."""
    ranks = False
    for node in [expr, *descendants(expr)]:
        if isinstance(node, cst.Attribute) and node.attr.value == "ndim":
            ranks = True
        elif isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size"):
            return False
        elif isinstance(node, cst.Name) and node.value == "len":
            return False
    return ranks


def _enclosing_assignments(parsed: ParsedModule, func: cst.FunctionDef, name: str) -> list[cst.BaseExpression | str]:
    """Values a closure variable is bound to in the nearest enclosing function that binds it."""
    for ancestor in parsed.ancestors(func):
        if isinstance(ancestor, cst.FunctionDef):
            if any(p.name.value == name for p in parameters(ancestor)):
                return []
            values = _local_assignments(ancestor).get(name)
            if values:
                return values
    return []


def _enclosing_parameter_owner(parsed: ParsedModule, func: cst.FunctionDef, name: str) -> cst.FunctionDef | None:
    """The nearest enclosing function whose parameter the closure variable `name` is, unless a
    nearer one binds it. Only a plain function that the module does nothing with but call
    (`make_step(...)`): a method's default is overridden where its class is constructed, and a
    function handed on (`partial(make_step, rounds=500)`) is called with values not seen here."""
    for ancestor in parsed.ancestors(func):
        if isinstance(ancestor, cst.FunctionDef):
            if any(p.name.value == name for p in parameters(ancestor)):
                if any(isinstance(a, cst.ClassDef) for a in parsed.ancestors(ancestor)):
                    return None
                return ancestor if _only_called(parsed, ancestor) else None
            if name in _local_assignments(ancestor):
                return None
    return None


def _only_called(parsed: ParsedModule, function: cst.FunctionDef) -> bool:
    """Whether every use of `function`'s name in the module is a call of it."""
    name = function.name.value
    for node in parsed.nodes:
        if isinstance(node, cst.Name) and node.value == name and node is not function.name:
            parent = parsed.parent(node)
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return False
    return True


def _local_assignments(func: cst.FunctionDef) -> dict[str, list[cst.BaseExpression | str]]:
    """Values assigned to each local name (`"shape-unpack"` for `T, D = x.shape`)."""
    out: dict[str, list[cst.BaseExpression | str]] = {}

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Name):
                    out.setdefault(t.value, []).append(node.value)
                elif isinstance(t, (cst.Tuple, cst.List)):
                    shape_unpack = isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
                    values = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) else None
                    for i, element in enumerate(t.elements):
                        for name in stored_names(element.value):
                            if shape_unpack and isinstance(element.value, cst.Name):
                                out.setdefault(name, []).append("shape-unpack")
                            elif values is not None and len(values) == len(t.elements) and isinstance(element.value, cst.Name):
                                out.setdefault(name, []).append(values[i].value)
                            else:
                                out.setdefault(name, []).append("unknown")

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            for name in stored_names(node.target):
                out.setdefault(name, []).append("unknown")

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                for name in stored_names(node.target):
                    out.setdefault(name, []).append(node.value)

        def visit_For(self, node: cst.For) -> None:
            for name in stored_names(node.target):
                out.setdefault(name, []).append("unknown")

    func.visit(Walk())
    return out
