"""Whether a carry provably keeps its dtype and shape after one step.

`lax.scan` requires the carry a step returns to have exactly the type (dtype, shape, weak type)
it received; the Python loop does not, so a carry that starts as `jnp.zeros(3, jnp.bfloat16)`
and becomes float32, or starts `(1,)` and broadcasts to `(3,)`, runs as a loop and raises (or
for weak-typed initial values, silently rounds differently) as a scan.

This module infers a small abstract type for the carry's initial value and for each value the
body assigns to it: a dtype (`abstract_dtypes.DType`: a dtype written in the code, the dtype of
an argument as a symbol, or a set of possibilities) and a shape (a tuple of symbolic dimensions,
or an opaque symbolic shape such as `xs.shape[1:]`). Every dtype result comes from the table
generated from JAX (`dtype_table.py`), over every dtype the operands may have, weak and strong,
with x64 off and on. A fix is safe only when every assigned value is proven to have the initial
value's type.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from jaxloopfix.analysis.abstract_dtypes import (
    KIND_KEYS, DType, Rejected, Untabled, apply, cast, known, known_operation, named, one_of, provably_equal, symbol,
)
from jaxloopfix.analysis.abstract_dtypes import text as _dtype_text
from jaxloopfix.analysis.dtype_operations import KEY_OF_NAME, MATRIX_PRODUCTS, REDUCE_TO_SCALAR, RESHAPING
from jaxloopfix.analysis.loops import _is_shape_index
from jaxloopfix.analysis.names import parameters, statements_storing, stored_names
from jaxloopfix.analysis.source import ParsedModule, names_in, shorten

DTYPE_STRINGS = {
    "f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "?": "bool", "b1": "bool", "c8": "complex64",
    "c16": "complex128", "float": "DF", "int": "DI", "complex": "DC", "float_": "DF", "int_": "DI",
    "complex_": "DC",
}
# jaxtyping's dtype words: the keys an annotated array may hold (weak ones too: a Python scalar
# passed to a jitted function is a weakly typed array).
JAXTYPING_KEYS = {
    "float": KIND_KEYS["float"], "int": KIND_KEYS["int"], "integer": KIND_KEYS["int"],
    "uint": ("u8", "u16", "u32", "u64"), "sint": ("i8", "i16", "i32", "i64", "wia"), "bool": ("bool",),
    "real": KIND_KEYS["real"], "complex": KIND_KEYS["complex"], "inexact": KIND_KEYS["float"] + KIND_KEYS["complex"],
    "num": KIND_KEYS["real"] + KIND_KEYS["complex"],
}
# What a static argument annotated or defaulted as a number may be: a Python number (weak; an int
# passed for a float) or a NumPy scalar (strong: `np.float64(0.9)` makes a float32 carry float64
# with x64 on).
STATIC_NUMBER_KEYS = {"int": ("wi", "i32", "i64"), "float": ("wf", "wi", "f32", "f64")}
# The loop index: a Python int in the loop, `jnp.arange`'s default int in the scan.
INDEX_KEYS = ("wi", "i32", "i64")
# Python operators: the table's names for them.
OPERATOR_NAMES = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "truediv", cst.FloorDivide: "floordiv",
    cst.Modulo: "mod", cst.Power: "pow", cst.MatrixMultiply: "matmul", cst.BitAnd: "and", cst.BitOr: "or",
    cst.BitXor: "xor", cst.LeftShift: "lshift", cst.RightShift: "rshift",
}
UNARY_OPERATOR_NAMES = {cst.Minus: "neg", cst.Plus: "pos", cst.BitInvert: "invert"}
CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "full"})
LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
SCALAR_MATH = frozenset({"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "tanh", "pow", "floor", "ceil"})
# Keywords that change neither dtype nor shape.
HARMLESS_KEYWORDS = frozenset({"approximate"})


@dataclass(frozen=True)
class Shape:
    dims: tuple[str, ...] | None = None  # symbolic dimensions, or None for an opaque shape
    opaque: str | None = None  # `xs.shape[1:]`: a shape known only by the expression it equals


@dataclass(frozen=True)
class Ty:
    dtype: DType | None  # None: nothing known
    shape: Shape | None
    items: tuple | None = None  # pytree: ("tuple", (Ty, ...)) or ("dict", ((key, Ty), ...))
    why: str | None = None  # for an unknown value: why it is unknown


SCALAR = Shape(dims=())
UNKNOWN = Ty(None, None)


class Unknown(Exception):
    """Raised with the reason the type of an expression cannot be known."""


class WeakType(Unknown):
    """A value required to be strongly typed is weakly typed (a Python scalar's type)."""


class LoopTypes:
    """Abstract types of the values one loop's body computes."""

    def __init__(self, parsed: ParsedModule, function: cst.FunctionDef, static_params: set[str], loop: cst.For,
                 sequences: list, index: str | None) -> None:  # noqa: ANN001
        self.parsed = parsed
        self.function = function
        self.static = set(static_params)
        self.loop = loop
        self.index = index
        self.params = {p.name.value: p for p in parameters(function, stars=False)}
        # Per-step values: `x_t` bound by the loop header, and `xs[t]` read in the body.
        self.elements: dict[str, tuple[cst.BaseExpression, int]] = {}
        self.reads: dict[int, tuple[cst.BaseExpression, int]] = {}
        for sequence in sequences:
            if sequence.param and not sequence.reads:
                self.elements[sequence.param] = (sequence.array, sequence.axis)
            for read in sequence.reads:
                self.reads[id(read)] = (sequence.array, sequence.axis)
        self._outer_cache: dict[str, Ty] = {}
        self._outer_busy: set[str] = set()

    # -- public -------------------------------------------------------------------------
    def carry_reason(self, name: str, init: cst.BaseExpression | None, body: list[cst.BaseStatement],
                     carries: set[str]) -> str | None:
        """None when every value the body assigns to `name` provably has the initial value's
        dtype and shape; otherwise the assumption the fix makes, in words."""
        if init is not None:
            shown = f"`{shorten(self.parsed.code(init), 60)}`"
        elif name in self.params:
            shown = f"the argument `{name}`"
        else:
            shown = "a value the analysis cannot see"
        start = f"cannot prove the carry `{name}` keeps its dtype and shape after one step (it starts as {shown}"
        end = "); `jaxloopfix verify` settles it"
        try:
            if init is None:
                raise Unknown(f"the dtype and shape of `{name}` before the loop are not known")
            initial = self.type_of(init, {})
            self._require_known(initial, "its initial value")
        except Unknown as why:
            return f"{start}; {why}{end}"
        env: dict[str, Ty] = {}
        for carry in carries:
            if carry == name:
                env[carry] = initial
            else:
                env[carry] = self._carry_init(carry)
        try:
            self._run_block(body, env, name, initial)
        except Unknown as why:
            return f"{start}; {why}{end}"
        return None

    def _run_block(self, statements: list, env: dict[str, Ty], carry: str, initial: Ty) -> None:
        """Abstract execution in order. Branches run on copies and join (a name whose type differs
        between them becomes unknown); an inner loop's body runs twice, from the join of its entry
        and exit states, since it may run any number of times."""
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._execute(small, env, carry, initial)
            elif isinstance(statement, cst.If):
                branches = [list(statement.body.body)]
                orelse = statement.orelse
                while orelse is not None:
                    if isinstance(orelse, cst.If):
                        branches.append(list(orelse.body.body))
                        orelse = orelse.orelse
                    else:
                        branches.append(list(orelse.body.body))
                        break
                else:
                    branches.append([])  # no `else:` runs nothing
                results = []
                for branch in branches:
                    copy = dict(env)
                    self._run_block(branch, copy, carry, initial)
                    results.append(copy)
                env.clear()
                env.update(_join(results))
            elif isinstance(statement, (cst.For, cst.While)):
                if isinstance(statement, cst.For):
                    if carry in stored_names(statement.target):
                        raise Unknown(f"`{carry}` is the target of an inner loop")
                    for target in stored_names(statement.target):
                        env[target] = Ty(None, None, why=f"the type of the inner loop's `{target}` is not known")
                body = list(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else []
                for _ in range(2):
                    copy = dict(env)
                    self._run_block(body, copy, carry, initial)
                    joined = _join([env, copy])
                    env.clear()
                    env.update(joined)
                if statement.orelse is not None:
                    self._run_block(list(statement.orelse.body.body), env, carry, initial)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                env[statement.name.value] = Ty(None, None, why=f"`{statement.name.value}` is a definition")
            else:
                # `with`/`try` and the like are refused elsewhere; nothing they assign is known.
                for assigned in _assigned(statement):
                    if assigned == carry:
                        raise Unknown(f"`{carry}` is assigned in a `{type(statement).__name__.lower()}` block")
                    env[assigned] = Ty(None, None, why=f"the type of `{assigned}` is not known")

    # -- statements ---------------------------------------------------------------------
    _weak_steps: _WeakSteps | None = None

    def _execute(self, small: cst.CSTNode, env: dict[str, Ty], carry: str, initial: Ty) -> None:
        if isinstance(small, cst.Assign):
            value_node = small.value
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            value_node = small.value
            targets = [small.target]
        elif isinstance(small, cst.AugAssign):
            value_node = cst.BinaryOperation(small.target, _binary_of(small.operator), small.value)
            targets = [small.target]
        else:
            return
        assigns_carry = any(carry in stored_names(t) for t in targets)
        try:
            value = self.type_of(value_node, env)
        except Unknown as why:
            if assigns_carry:
                raise
            value = Ty(None, None, why=str(why))
        if self._weak_steps is not None:
            self._weak_steps.assigned(targets, value, value_node)
        for target in targets:
            self._bind(target, value, env, carry, initial, value_node)

    def _bind(self, target: cst.BaseExpression, value: Ty, env: dict[str, Ty], carry: str, initial: Ty,
              value_node: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            if target.value == carry:
                self._same(initial, value, value_node, carry)
            env[target.value] = value
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            items = value.items[1] if value.items is not None and value.items[0] == "tuple" else None
            if items is not None and len(items) == len(elements) and not any(
                isinstance(e, cst.StarredElement) for e in elements
            ):
                for element, item in zip(elements, items):
                    self._bind(element, item, env, carry, initial, value_node)
                return
            for element in elements:
                names = stored_names(element)
                if carry in names:
                    raise Unknown(f"the value unpacked into `{carry}` in `{shorten(self.parsed.code(value_node), 50)}` has no known type")
                for name in names:
                    env[name] = UNKNOWN
            return
        # Attribute/subscript stores are refused elsewhere.

    def _same(self, initial: Ty, value: Ty, node: cst.BaseExpression, carry: str) -> None:
        code = shorten(self.parsed.code(node), 50)
        if initial.items is not None or value.items is not None:
            if initial.items is None or value.items is None or initial.items[0] != value.items[0]:
                raise Unknown(f"`{code}` is not the same kind of container")
            a, b = initial.items[1], value.items[1]
            if len(a) != len(b):
                raise Unknown(f"`{code}` has a different number of items")
            if initial.items[0] == "dict":
                if [k for k, _ in a] != [k for k, _ in b]:
                    raise Unknown(f"`{code}` has different keys")
                a, b = [t for _, t in a], [t for _, t in b]
            for x, y in zip(a, b):
                self._same(x, y, node, carry)
            return
        if value.dtype is None or (value.dtype.name is None and value.dtype.domain is None):
            raise Unknown(
                f"the dtype of `{code}` is not known (annotating the arrays the step reads, e.g. jaxtyping's "
                "`Float[Array, \"T D\"]`, can prove it)"
            )
        if not known(value.dtype) and value.dtype.name is None:
            raise Unknown(
                f"the dtype of `{code}` is not known: it may be {_dtype_text(value.dtype)} (annotating the arrays "
                "the step reads, e.g. jaxtyping's `Float[Array, \"T D\"]`, can prove it)"
            )
        if not provably_equal(value.dtype, initial.dtype):
            if value.dtype.weak != initial.dtype.weak and value.dtype.kind == initial.dtype.kind:
                raise Unknown(f"`{code}` is {'weakly' if value.dtype.weak else 'strongly'} typed")
            raise Unknown(f"`{code}` may have dtype {_dtype_text(value.dtype)}, not {_dtype_text(initial.dtype)}")
        if value.shape is None or value.shape != initial.shape:
            raise Unknown(f"the shape of `{code}` is not proven to be the carry's")

    def _require_known(self, ty: Ty, what: str) -> None:
        if ty.items is not None:
            for item in ty.items[1]:
                self._require_known(item[1] if ty.items[0] == "dict" else item, what)
            return
        if ty.dtype is None or not known(ty.dtype):
            raise Unknown(f"the dtype of {what} is not known")
        if ty.dtype.weak:
            raise WeakType(
                f"{what} is weakly typed (a Python scalar's type), so the scan casts it to the step's dtype "
                "before the first step"
            )
        if ty.shape is None:
            raise Unknown(f"the shape of {what} is not known")

    def python_scalar_reason(self, name: str, init: cst.BaseExpression, body: list[cst.BaseStatement],
                             carries: set[str]) -> tuple[str, str] | None:
        """A carry that starts as a Python scalar (`gae = 0.0`, `total = 0`, `done = False`).

        `lax.scan` casts a weakly typed initial value to the dtype of the carry its step returns,
        so the rewrite equals the loop when the first step makes the carry a 0-d array of a known
        strong dtype and every later step keeps that type. None when proven; otherwise
        ("refuse", why) when the loop keeps the carry a Python value, or ("unsafe", the assumption)."""
        shown = shorten(self.parsed.code(init), 30)
        start = f"the carry `{name}` starts as the Python value `{shown}`"
        try:
            initial = self.type_of(init, {})
        except Unknown as why:
            return "unsafe", f"{start} and its type is not known ({why}); `jaxloopfix verify` settles it"
        env: dict[str, Ty] = {c: self._carry_init(c) for c in carries}
        env[name] = initial
        self._weak_steps = _WeakSteps({name}, _is_zero(init))
        try:
            self._run_block(body, env, "", UNKNOWN)  # the first step: record what it makes of the carry
            after = env.get(name, UNKNOWN)
            self._require_known(after, f"`{name}` after one step")
        except WeakType:
            return "refuse", (
                f"{start} and the loop keeps it a Python value (`{name}` is weakly typed after a step); "
                "a scan would trace it"
            )
        except Unknown as why:
            return "unsafe", (
                f"{start}; `lax.scan` casts it to the step's dtype, which equals the loop only if every step "
                f"keeps it a 0-d array: cannot prove that ({why}{_shape_also(env.get(name, UNKNOWN), name)}); "
                "`jaxloopfix verify` settles it"
            )
        finally:
            weak_steps, self._weak_steps = self._weak_steps, None
        if weak_steps.found:
            return "unsafe", (
                f"{start}; the loop's first step computes `{weak_steps.found[0]}` from it at Python (double) "
                f"precision, the scan in `{name}`'s dtype, so the results may round differently; "
                "`jaxloopfix verify` settles it"
            )
        if after.shape is not None and after.shape.dims:
            return "refuse", (
                f"{start} and the step makes it an array of shape {_shape_text(after.shape)}; a `lax.scan` "
                f"carry keeps one shape, so initialise it with that shape (`jnp.zeros(...)`)"
            )
        if after.shape != SCALAR:
            return "unsafe", (
                f"{start}; `lax.scan` needs it to stay 0-d, but the step may make it shape "
                f"{_shape_text(after.shape)}; `jaxloopfix verify` settles it"
            )
        env = {c: self._carry_init(c) for c in carries}
        env[name] = after
        try:
            self._run_block(body, env, name, after)
        except Unknown as why:
            return "unsafe", (
                f"{start}; after one step it is a 0-d {_dtype_text(after.dtype)} array, but cannot prove later "
                f"steps keep that type ({why}); `jaxloopfix verify` settles it"
            )
        return None

    def _carry_init(self, name: str) -> Ty:
        value = self._value_before_loop(name)
        if value is None:
            return self._param_type(name) if name in self.params else UNKNOWN
        try:
            return self.type_of(value, {})
        except Unknown:
            return UNKNOWN

    # -- expressions --------------------------------------------------------------------
    def type_of(self, node: cst.BaseExpression, env: dict[str, Ty]) -> Ty:  # noqa: C901
        parsed = self.parsed
        if isinstance(node, cst.Integer):
            return Ty(named("weak-int"), SCALAR)
        if isinstance(node, cst.Float):
            return Ty(named("weak-float"), SCALAR)
        if isinstance(node, cst.Imaginary):
            return Ty(named("weak-complex"), SCALAR)
        if isinstance(node, cst.Name):
            return self._name_type(node, env)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                raise Unknown(f"`{shorten(parsed.code(node), 40)}` is a Python boolean")
            inner = self.type_of(node.expression, env)
            if inner.items is not None:
                raise Unknown(f"`{shorten(parsed.code(node), 40)}` negates a Python container")
            operation = "op:" + UNARY_OPERATOR_NAMES[type(node.operator)]
            return Ty(self._apply(operation, [inner.dtype], node, [inner.shape]), inner.shape)
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, env)
        if isinstance(node, (cst.Tuple, cst.List)):
            items = tuple(self.type_of(e.value, env) for e in node.elements if isinstance(e, cst.Element))
            if len(items) != len(node.elements):
                raise Unknown(f"`{shorten(parsed.code(node), 40)}` unpacks a sequence")
            return Ty(None, None, ("tuple", items))
        if isinstance(node, cst.Dict):
            entries = []
            for element in node.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    raise Unknown(f"`{shorten(parsed.code(node), 40)}` has computed keys")
                entries.append((element.key.evaluated_value, self.type_of(element.value, env)))
            return Ty(None, None, ("dict", tuple(entries)))
        if isinstance(node, cst.Subscript):
            return self._subscript(node, env)
        if isinstance(node, cst.Attribute):
            qname = parsed.qualified_name(node) or ""
            if qname.rsplit(".", 1)[-1] in ("inf", "pi", "e", "nan", "euler_gamma", "tau") and qname.startswith(
                ("jax.numpy.", "numpy.", "math.")
            ):
                return Ty(named("weak-float"), SCALAR)
            if node.attr.value in ("ndim", "size"):
                return Ty(named("weak-int"), SCALAR)
            receiver = self.type_of(node.value, env)
            if node.attr.value in ("real", "imag") and receiver.items is None:
                return Ty(self._apply(f"attr:{node.attr.value}", [receiver.dtype], node, [receiver.shape]), receiver.shape)
            if node.attr.value in ("T", "mT") and receiver.shape is not None and receiver.shape.dims is not None:
                dims = receiver.shape.dims
                dtype = self._apply(f"attr:{node.attr.value}", [receiver.dtype], node, [receiver.shape])
                return Ty(dtype, Shape(dims=tuple(reversed(dims)) if node.attr.value == "T" else dims[:-2] + dims[-2:][::-1]))
            raise Unknown(f"the type of `{shorten(parsed.code(node), 40)}` is not known")
        if isinstance(node, cst.Call):
            return self._call(node, env)
        if isinstance(node, cst.IfExp):
            a, b = self.type_of(node.body, env), self.type_of(node.orelse, env)
            if a == b:
                return a
            raise Unknown(f"the branches of `{shorten(parsed.code(node), 40)}` have different types")
        raise Unknown(f"the type of `{shorten(parsed.code(node), 40)}` is not known")

    def _name_type(self, node: cst.Name, env: dict[str, Ty]) -> Ty:
        name = node.value
        if name in env:
            ty = env[name]
            if ty.dtype is None and ty.shape is None and ty.items is None:
                raise Unknown(ty.why or f"the type of `{name}` is not known")
            return ty
        if name in self.elements:
            array, axis = self.elements[name]
            return self._slice(array, axis, env)
        if name == self.index:
            # A Python int in the loop, `jnp.arange`'s int in the scan: every step must hold for both.
            return Ty(one_of(INDEX_KEYS), SCALAR)
        if name in ("True", "False"):
            return Ty(named("bool"), SCALAR)  # a Python bool is strongly typed in JAX
        if name in self.static:
            param = self.params.get(name)
            annotation = param.annotation.annotation if param is not None and param.annotation is not None else None
            default = param.default if param is not None else None
            if default is not None and isinstance(default, cst.UnaryOperation):
                default = default.expression
            number = annotation.value if isinstance(annotation, cst.Name) and annotation.value in ("int", "float") else None
            if number is None and isinstance(default, (cst.Integer, cst.Float)):
                number = "int" if isinstance(default, cst.Integer) else "float"
            if number is not None:
                # A Python number, or a NumPy scalar (strongly typed) passed for it.
                return Ty(one_of(STATIC_NUMBER_KEYS[number]), SCALAR)
            raise Unknown(f"the static argument `{name}` may be a tuple or an array, not a number")
        if name in self.params:
            assignments = self._function_assignments(name)
            if not assignments:
                return self._param_type(name)
            if len(assignments) == 1 and not self.parsed.contains(self.loop, assignments[0]):
                value = assignments[0].value if isinstance(assignments[0], cst.Assign) else None
                if (
                    isinstance(value, cst.Call)
                    and isinstance(value.func, (cst.Name, cst.Attribute))
                    and self.parsed.qualified_name(value.func) in ("jax.numpy.asarray", "jax.numpy.array")
                    and len(value.args) == 1
                    and isinstance(value.args[0].value, cst.Name)
                    and value.args[0].value.value == name
                ):
                    return self._param_type(name)
            raise Unknown(f"the argument `{name}` is reassigned")
        return self._outer_local(name)

    def _param_type(self, name: str) -> Ty:
        param = self.params.get(name)
        annotation = param.annotation.annotation if param is not None and param.annotation is not None else None
        if annotation is not None and isinstance(annotation, cst.Subscript):
            head = annotation.value
            qname = self.parsed.qualified_name(head) if isinstance(head, (cst.Name, cst.Attribute)) else None
            if qname and qname.startswith("jaxtyping."):
                short = qname.rsplit(".", 1)[-1].lower()
                if short in KEY_OF_NAME:
                    key = KEY_OF_NAME[short]
                    weak = {"i32": "wia", "i64": "wia", "f32": "wfa", "f64": "wfa", "c64": "wca", "c128": "wca"}.get(key)
                    allowed = (key, weak) if weak else (key,)
                else:
                    allowed = JAXTYPING_KEYS.get(short)
                dims = None
                if len(annotation.slice) == 2 and isinstance(annotation.slice[1].slice, cst.Index):
                    text = annotation.slice[1].slice.value
                    if isinstance(text, cst.SimpleString):
                        words = str(text.evaluated_value).split()
                        if all(w.isidentifier() or w.isdigit() for w in words):
                            # Named sizes live in their own namespace: a local `D = 1` is not "D".
                            dims = tuple(w if w.isdigit() else f"jaxtyping:{w}" for w in words)
                dtype = symbol(f"{name}.dtype", None, allowed)
                return Ty(dtype, Shape(dims=dims) if dims is not None else Shape(opaque=f"{name}.shape"))
        return Ty(symbol(f"{name}.dtype", None), Shape(opaque=f"{name}.shape"))

    def _outer_local(self, name: str) -> Ty:
        if name in self._outer_cache:
            return self._outer_cache[name]
        if name in self._outer_busy:
            raise Unknown(f"the type of `{name}` is not known")
        value = self._value_before_loop(name) if self.loop is not None else None
        if value is None:
            value = self._module_constant(name)
        if value is None:
            raise Unknown(f"the type of `{name}` is not known")
        self._outer_busy.add(name)
        try:
            ty = self.type_of(value, {})
        finally:
            self._outer_busy.discard(name)
        self._outer_cache[name] = ty
        return ty

    def _module_constant(self, name: str) -> cst.BaseExpression | None:
        """A module-level number bound once (`GAMMA = 0.99`) and not bound in the function."""
        if name in self.params or any(True for _ in self._function_assignments(name)):
            return None
        found: list[cst.BaseExpression] = []
        count = 0
        for statement in self.parsed.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if name in stored_names(target.target):
                            count += 1
                            if isinstance(target.target, cst.Name):
                                found.append(small.value)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and name in stored_names(small.target):
                    count += 2
        if count == 1 and len(found) == 1:
            value = found[0]
            inner = value.expression if isinstance(value, cst.UnaryOperation) else value
            if isinstance(inner, (cst.Integer, cst.Float)):
                return value
        return None

    def _function_assignments(self, name: str) -> list[cst.CSTNode]:
        return statements_storing(self.function.body, name)

    def _value_before_loop(self, name: str) -> cst.BaseExpression | None:
        """The expression of the only assignment to `name` in the function, when it precedes the loop
        at the top level of the function body."""
        parsed = self.parsed
        found = statements_storing(self.function.body, name, nested=False)
        outside = [n for n in found if not parsed.contains(self.loop, n)]
        if len(outside) != 1 or parsed.after(outside[0], self.loop):
            return None
        node = outside[0]
        if name in self.params:
            return None
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            return node.value
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            return node.value
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
            target = node.targets[0].target
            if isinstance(node.value, (cst.Tuple, cst.List)) and len(node.value.elements) == len(target.elements):
                for t, v in zip(target.elements, node.value.elements):
                    if isinstance(t.value, cst.Name) and t.value.value == name:
                        return v.value
        return None

    def _slice(self, array: cst.BaseExpression, axis: int, env: dict[str, Ty]) -> Ty:
        """The type of `array[t]` (along `axis`)."""
        whole = self.type_of(array, env)
        return Ty(whole.dtype, _drop_axis(whole.shape, axis))

    def _subscript(self, node: cst.Subscript, env: dict[str, Ty]) -> Ty:
        parsed = self.parsed
        read = self.reads.get(id(node))
        if read is not None:
            return self._slice(read[0], read[1], env)
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                return Ty(named("weak-int"), SCALAR)  # `x.shape[k]`: a Python int
        base = self.type_of(node.value, env)
        if base.items is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = node.slice[0].slice.value
            if base.items[0] == "dict" and isinstance(key, cst.SimpleString):
                for k, ty in base.items[1]:
                    if k == key.evaluated_value:
                        return ty
            if base.items[0] == "tuple" and isinstance(key, cst.Integer):
                position = int(key.evaluated_value)
                if position < len(base.items[1]):
                    return base.items[1][position]
        # `x[0]` with a literal integer index drops the leading axis.
        if (
            base.items is None
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Integer)
        ):
            return Ty(base.dtype, _drop_axis(base.shape, 0))
        raise Unknown(f"the shape of `{shorten(parsed.code(node), 40)}` is not known")

    def _binary(self, node: cst.BinaryOperation, env: dict[str, Ty]) -> Ty:
        op = node.operator
        left, right = self.type_of(node.left, env), self.type_of(node.right, env)
        code = shorten(self.parsed.code(node), 50)
        if left.items is not None or right.items is not None:
            raise Unknown(f"`{code}` combines Python containers")
        dtype = self._apply("op:" + OPERATOR_NAMES[type(op)], [left.dtype, right.dtype], node, [left.shape, right.shape])
        if isinstance(op, cst.MatrixMultiply):
            return Ty(dtype, _matmul(left.shape, right.shape, code))
        return Ty(dtype, _broadcast(left.shape, right.shape, code))

    def _apply(self, operation: str, dtypes: list[DType | None], node: cst.CSTNode,
               shapes: list[Shape | None] | None = None) -> DType:
        """JAX's result dtype (from the generated table) for operands of these dtypes and shapes
        (a 0-d operand can give another answer than an array)."""
        code = shorten(self.parsed.code(node), 50)
        if not known_operation(operation):
            raise Unknown(f"the dtype of `{code}` is not known")
        arguments = [d if d is not None else DType(None, None) for d in dtypes]
        if self._weak_steps is not None:
            self._weak_steps.note(operation, arguments, node, code)
        ranks = [_rank(shape) for shape in shapes] if shapes is not None else None
        try:
            return apply(operation, arguments, ranks)
        except Rejected:
            raise Unknown(f"JAX rejects `{code}` for every dtype its operands may have") from None
        except Untabled:
            raise Unknown(f"the dtype of `{code}` is not known") from None

    def _call(self, node: cst.Call, env: dict[str, Ty]) -> Ty:  # noqa: C901
        parsed = self.parsed
        func = node.func
        code = shorten(parsed.code(node), 50)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if any(a.star for a in node.args):
            raise Unknown(f"`{code}` has starred arguments")
        # Methods of arrays.
        if isinstance(func, cst.Attribute) and not self._is_module_path(func):
            method = func.attr.value
            receiver_node = func.value
            if method in ("set", "add", "multiply", "mul", "divide", "div", "power", "min", "max", "apply") and (
                isinstance(receiver_node, cst.Subscript)
                and isinstance(receiver_node.value, cst.Attribute)
                and receiver_node.value.attr.value == "at"
            ):
                return self.type_of(receiver_node.value.value, env)  # `x.at[i].set(v)` keeps x's type
            if method in REDUCE_TO_SCALAR and not positional and not keywords:
                dtype = self._dtype_only(receiver_node, env)
                return Ty(self._apply(f"method:{method}", [dtype], node), SCALAR)
            receiver = self.type_of(receiver_node, env)
            if method == "astype" and positional and receiver.items is None:
                return Ty(cast(self._dtype_arg(positional[0], env, code)), receiver.shape)
            if not positional and not keywords and receiver.items is None and method not in RESHAPING:
                return Ty(self._apply(f"method:{method}", [receiver.dtype], node, [receiver.shape]), receiver.shape)
            raise Unknown(f"the type of `{code}` is not known")
        if isinstance(func, cst.Name) and not keywords:
            helper = self._helper(func)
            if helper is not None:
                return self._inline(helper, [self.type_of(a, env) for a in positional], code)
        qname = parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qname is None:
            raise Unknown(f"the type of `{code}` is not known")
        module, _, short = qname.rpartition(".")
        if qname == "builtins.len" or (module in ("math", "numpy") and short in SCALAR_MATH):
            for arg in positional:
                if qname != "builtins.len" and self.type_of(arg, env).shape != SCALAR:
                    raise Unknown(f"the type of `{code}` is not known")
            if qname == "builtins.len":
                return Ty(named("weak-int"), SCALAR)
            # `math.sqrt(d)` is a Python float; `np.sqrt(d)` a NumPy float64 (strongly typed).
            return Ty(named("weak-float") if module == "math" else named("float64"), SCALAR)
        if not module.startswith(("jax.numpy", "jax.nn", "jax.lax", "jax.scipy.special")):
            raise Unknown(f"the type of `{code}` is not known")
        if short in CONSTRUCTORS and module == "jax.numpy":
            return self._constructor(short, positional, keywords, env, code)
        if short in LIKE and module == "jax.numpy":
            if not positional:
                raise Unknown(f"`{code}` has no argument")
            like = self.type_of(positional[0], env)
            if like.items is not None:
                raise Unknown(f"`{code}` takes a container")
            shape = self._shape_arg(keywords["shape"], env) if "shape" in keywords else like.shape
            dtype_node, fill = _dtype_and_fill(positional, keywords, short == "full_like")
            if dtype_node is not None:
                return Ty(cast(self._dtype_arg(dtype_node, env, code)), shape)
            if short == "full_like":
                if fill is None:
                    raise Unknown(f"`{code}` has no fill value")
                filled = self.type_of(fill, env)
                return Ty(self._apply(f"fn2:{qname}", [like.dtype, filled.dtype], node, [like.shape, filled.shape]), shape)
            return Ty(self._apply(f"fn1:{qname}", [like.dtype], node, [like.shape]), shape)
        if short in ("array", "asarray") and "dtype" in keywords and len(positional) == 1:
            inner = self.type_of(positional[0], env)
            return Ty(cast(self._dtype_arg(keywords["dtype"], env, code)), inner.shape)
        if short == "clip" and module == "jax.numpy":
            return self._clip(node, positional, keywords, env)
        if short == "where" and len(positional) == 3 and not keywords:
            condition = self.type_of(positional[0], env)
            a, b = self.type_of(positional[1], env), self.type_of(positional[2], env)
            shape = _broadcast(_broadcast(condition.shape, a.shape, code), b.shape, code)
            return Ty(self._apply(f"fn2:{qname}", [a.dtype, b.dtype], node, [a.shape, b.shape]), shape)
        if set(keywords) - HARMLESS_KEYWORDS:
            raise Unknown(f"the type of `{code}` is not known")
        if len(positional) == 1 and known_operation(f"fn1:{qname}"):
            inner = self.type_of(positional[0], env)
            if inner.items is not None:
                raise Unknown(f"`{code}` takes a container")
            dtype = self._apply(f"fn1:{qname}", [inner.dtype], node, [inner.shape]) if inner.dtype is not None else None
            if short in REDUCE_TO_SCALAR:
                return Ty(dtype, SCALAR)
            if short in RESHAPING:
                raise Unknown(f"the shape of `{code}` is not known")
            return Ty(dtype, inner.shape)
        if len(positional) == 2 and short in REDUCE_TO_SCALAR and known_operation(f"fn2:{qname}"):
            a, b = self._dtype_only(positional[0], env), self._dtype_only(positional[1], env)
            return Ty(self._apply(f"fn2:{qname}", [a, b], node), SCALAR)
        if len(positional) == 2 and known_operation(f"fn2:{qname}"):
            a, b = self.type_of(positional[0], env), self.type_of(positional[1], env)
            if a.items is not None or b.items is not None:
                raise Unknown(f"`{code}` takes a container")
            dtype = self._apply(f"fn2:{qname}", [a.dtype, b.dtype], node, [a.shape, b.shape])
            if short in REDUCE_TO_SCALAR:
                return Ty(dtype, SCALAR)
            if short in MATRIX_PRODUCTS:
                return Ty(dtype, _matmul(a.shape, b.shape, code))
            if short in RESHAPING:
                raise Unknown(f"the shape of `{code}` is not known")
            return Ty(dtype, _broadcast(a.shape, b.shape, code))
        if short in REDUCE_TO_SCALAR and len(positional) == 1:
            return Ty(self._apply(f"fn1:{qname}", [self._dtype_only(positional[0], env)], node), SCALAR)
        raise Unknown(f"the type of `{code}` is not known")

    def _constructor(self, short: str, positional: list, keywords: dict, env: dict[str, Ty], code: str) -> Ty:
        """`jnp.zeros(shape, dtype)` and its kin: the dtype asked for, strongly typed; without one,
        the default float (`full`: its fill value's type)."""
        if not positional and "shape" not in keywords:
            raise Unknown(f"`{code}` has no shape argument")
        shape = self._shape_arg(positional[0] if positional else keywords["shape"], env)
        dtype_node, fill_node = _dtype_and_fill(positional, keywords, short == "full")
        if dtype_node is not None:
            return Ty(cast(self._dtype_arg(dtype_node, env, code)), shape)
        if short == "full":
            if fill_node is None:
                raise Unknown(f"`{code}` has no fill value")
            fill = self.type_of(fill_node, env)
            if fill.shape != SCALAR:
                raise Unknown(f"the shape of `{code}` is not known")
            # A Python fill value gives a weakly typed array.
            return Ty(self._apply("fn1:jax.numpy.asarray", [fill.dtype], fill_node, [SCALAR]), shape)
        return Ty(named("DF"), shape)

    def _clip(self, node: cst.Call, positional: list, keywords: dict, env: dict[str, Ty]) -> Ty:
        """`jnp.clip(x, lo, hi)` is `minimum(maximum(x, lo), hi)`: its bounds promote and broadcast."""
        code = shorten(self.parsed.code(node), 50)
        if not positional:
            raise Unknown(f"the type of `{code}` is not known")
        lower = keywords.get("min", keywords.get("a_min", positional[1] if len(positional) > 1 else None))
        upper = keywords.get("max", keywords.get("a_max", positional[2] if len(positional) > 2 else None))
        if len(positional) > 3 or set(keywords) - {"min", "max", "a_min", "a_max"}:
            raise Unknown(f"the type of `{code}` is not known")
        value = self.type_of(positional[0], env)
        for bound, operation in ((lower, "fn2:jax.numpy.maximum"), (upper, "fn2:jax.numpy.minimum")):
            if bound is None or (isinstance(bound, cst.Name) and bound.value == "None"):
                continue
            limit = self.type_of(bound, env)
            dtype = self._apply(operation, [value.dtype, limit.dtype], node, [value.shape, limit.shape])
            value = Ty(dtype, _broadcast(value.shape, limit.shape, code))
        return value

    def _helper(self, name: cst.Name) -> cst.FunctionDef | None:
        """A module-level function of this module that `name` refers to."""
        scope = self.parsed.scope(name)
        if scope is None:
            return None
        try:
            assignments = list(scope[name.value])
        except Exception:  # noqa: BLE001
            return None
        defs = [a.node for a in assignments if isinstance(getattr(a, "node", None), cst.FunctionDef)]
        if len(defs) != 1 or len(assignments) != 1:
            return None
        func = defs[0]
        if not isinstance(self.parsed.parent(func), cst.Module) or func.decorators:
            return None
        return func

    def _inline(self, func: cst.FunctionDef, args: list[Ty], code: str) -> Ty:
        """The type `func` returns for arguments of these types: straight-line bodies only
        (assignments to names, then one `return`)."""
        depth = self.__dict__.setdefault("_inline_depth", 0)
        params = parameters(func)
        if (
            depth > 4
            or len(params) != len(args)
            or any(p.default is not None or p.star not in (None, "", cst.MaybeSentinel.DEFAULT) for p in params)
            or not isinstance(func.body, cst.IndentedBlock)
        ):
            raise Unknown(f"the type of `{code}` is not known")
        inner = LoopTypes.__new__(LoopTypes)
        inner.__dict__.update(self.__dict__)
        inner.function, inner.loop, inner.index = func, None, None
        inner.params, inner.elements, inner.reads, inner.static = {}, {}, {}, set()
        inner._outer_cache, inner._outer_busy = {}, set()
        inner._inline_depth = depth + 1
        env = {p.name.value: t for p, t in zip(params, args)}
        statements = list(func.body.body)
        for position, statement in enumerate(statements):
            if not isinstance(statement, cst.SimpleStatementLine):
                raise Unknown(f"the type of `{code}` is not known (`{func.name.value}` has control flow)")
            for small in statement.body:
                if isinstance(small, cst.Return):
                    if position != len(statements) - 1 or small.value is None:
                        raise Unknown(f"the type of `{code}` is not known")
                    return inner.type_of(small.value, env)
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    env[small.targets[0].target.value] = inner.type_of(small.value, env)
                elif isinstance(small, (cst.Expr, cst.Pass)) and not isinstance(getattr(small, "value", None), cst.Call):
                    continue  # a docstring
                else:
                    raise Unknown(f"the type of `{code}` is not known")
        raise Unknown(f"the type of `{code}` is not known")

    def _dtype_only(self, node: cst.BaseExpression, env: dict[str, Ty]) -> DType | None:
        """The dtype of `node` when its shape is unknown (for reductions to a scalar)."""
        try:
            return self.type_of(node, env).dtype
        except Unknown:
            pass
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            a, b = self._dtype_only(node.left, env), self._dtype_only(node.right, env)
            if a is None or b is None:
                return None
            try:
                return self._apply("op:" + OPERATOR_NAMES[type(node.operator)], [a, b], node)
            except Unknown:
                return None
        if isinstance(node, cst.Subscript) and not (
            isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
        ):
            base = self._dtype_only(node.value, env)
            return base
        if isinstance(node, cst.Name) and node.value in self.params and node.value not in env:
            return self._param_type(node.value).dtype
        return None

    def _is_module_path(self, func: cst.Attribute) -> bool:
        root: cst.BaseExpression = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return False  # `jnp.zeros(3).astype`: a method of a value
        scope = self.parsed.scope(root)
        try:
            assignments = list(scope[root.value]) if scope is not None else []
        except Exception:  # noqa: BLE001
            assignments = []
        return bool(assignments) and all(
            isinstance(getattr(a, "node", None), (cst.Import, cst.ImportFrom)) for a in assignments
        )

    def _shape_arg(self, node: cst.BaseExpression, env: dict[str, Ty]) -> Shape:
        parsed = self.parsed
        if isinstance(node, (cst.Tuple, cst.List)):
            dims = []
            for element in node.elements:
                if isinstance(element, cst.StarredElement):
                    raise Unknown(f"the shape `{parsed.code(node)}` is unpacked")
                dims.append(self._dim(element.value, env))
            return Shape(dims=tuple(dims))
        if isinstance(node, cst.Integer):
            return Shape(dims=(str(int(node.evaluated_value)),))
        shape = self._shape_expr(node, env)
        if shape is not None:
            return shape
        if _is_shape_index(node) and _int(node.slice[0].slice.value) is not None:
            return Shape(dims=(self._dim(node, env),))  # `x.shape[k]` is one int
        if isinstance(node, cst.Name) or _is_dim_expr(node):
            dim = self._dim(node, env)
            return Shape(opaque=f"shape-or-size:{dim}")  # an int or a tuple: known only as itself
        raise Unknown(f"the shape `{shorten(parsed.code(node), 40)}` is not known")

    def _shape_expr(self, node: cst.BaseExpression, env: dict[str, Ty]) -> Shape | None:
        """`x.shape`, `x.shape[1:]`: the shape of a typed value, sliced."""
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            try:
                return self.type_of(node.value, env).shape
            except Unknown:
                return None
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "shape"
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Slice)
        ):
            base = self._shape_expr(node.value, env)
            piece = node.slice[0].slice
            if base is None or piece.step is not None or piece.upper is not None:
                return None
            start = _int(piece.lower) if piece.lower is not None else 0
            if start is None or start < 0:
                return None
            if base.dims is not None:
                return Shape(dims=base.dims[start:]) if start <= len(base.dims) else None
            if base.opaque is not None and start == 1:
                return _drop_axis(base, 0)
        return None

    def _dim(self, node: cst.BaseExpression, env: dict[str, Ty]) -> str:
        if isinstance(node, cst.Integer):
            return str(int(node.evaluated_value))
        if _is_shape_index(node):
            position = _int(node.slice[0].slice.value)
            base = self._shape_expr(node.value, env)
            if position is not None and base is not None and base.dims is not None and -len(base.dims) <= position < len(base.dims):
                return base.dims[position]
        return " ".join(self.parsed.code(node).split())

    def _dtype_arg(self, node: cst.BaseExpression | None, env: dict[str, Ty], code: str) -> DType:
        if node is None:
            raise Unknown(f"the dtype of `{code}` is not known")
        if isinstance(node, cst.SimpleString):
            text = str(node.evaluated_value)
            name = DTYPE_STRINGS.get(text, text)
        elif isinstance(node, cst.Attribute) and node.attr.value == "dtype":
            ty = self.type_of(node.value, env)
            if ty.dtype is None:
                raise Unknown(f"the dtype of `{code}` is not known")
            return ty.dtype
        elif isinstance(node, (cst.Name, cst.Attribute)):
            qname = self.parsed.qualified_name(node) or ""
            short = qname.rsplit(".", 1)[-1]
            if qname.startswith(("jax.numpy.", "numpy.")) or qname.startswith("builtins."):
                name = DTYPE_STRINGS.get(short, short)
            else:
                raise Unknown(f"the dtype `{self.parsed.code(node)}` is not known")
        else:
            raise Unknown(f"the dtype `{shorten(self.parsed.code(node), 30)}` is not known")
        if name in ("DF", "DI", "DC"):
            return named(name)
        if name == "bool_":
            name = "bool"
        if name not in KEY_OF_NAME:
            raise Unknown(f"the dtype `{shorten(self.parsed.code(node), 30)}` is not known")
        return named(name)


class _WeakSteps:
    """Operations of a loop's first step on a carry that starts as a Python scalar, all of whose
    operands are weakly typed: the loop computes them in Python (double precision, or the weak
    dtype's width), the scan in the carry's dtype after the step, so their results may round
    differently. Multiplying an exact zero is exact in both."""

    def __init__(self, carry: set[str], zero: bool) -> None:
        self.derived = set(carry)
        self.zero = zero
        self.found: list[str] = []

    def reads(self, node: cst.CSTNode) -> bool:
        return bool(names_in(node) & self.derived)

    def note(self, operation: str, arguments: list[DType], node: cst.CSTNode, code: str) -> None:
        if not arguments or not all(a.weak for a in arguments) or not self.reads(node):
            return
        if self.zero and operation in ("op:mul", "op:neg", "op:pos"):
            return
        self.found.append(code)

    def assigned(self, targets: list[cst.BaseExpression], value: Ty, node: cst.BaseExpression) -> None:
        if value.dtype is not None and value.dtype.weak and self.reads(node):
            for target in targets:
                self.derived |= stored_names(target)


def _shape_also(after: Ty, name: str) -> str:
    """What an unproven shape means for a carry that starts 0-d: per-step values with more axes
    (a batch) make it an array, which a scan's carry cannot become."""
    if after.shape == SCALAR or after.items is not None:
        return ""
    known_as = "is not known" if after.shape is None else f"may be {_shape_text(after.shape)}"
    return (
        f"; nor is its shape: it {known_as}, and per-step values with more axes, such as a batch "
        f"(`(T, B)` arrays), make `{name}` an array of their shape"
    )


def _dtype_and_fill(positional: list, keywords: dict, filled: bool) -> tuple:
    """`jnp.zeros(shape, dtype)`, `jnp.full(shape, fill, dtype)` and their `_like` forms: the
    dtype argument and the fill value (None when absent)."""
    fill = keywords.get("fill_value", positional[1] if filled and len(positional) > 1 else None)
    where = 2 if filled else 1
    dtype = keywords.get("dtype", positional[where] if len(positional) > where else None)
    return dtype, fill


def _rank(shape: Shape | None) -> str | None:
    """"0" for a 0-d value, "n" for an array with axes, None when not known."""
    if shape is None or shape.dims is None:
        return None
    return "0" if not shape.dims else "n"


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and float(node.evaluated_value) == 0.0


def _join(states: list[dict[str, Ty]]) -> dict[str, Ty]:
    """Names bound in every state with one type keep it; any other name is unknown."""
    names = set().union(*states) if states else set()
    out: dict[str, Ty] = {}
    for name in names:
        types = [state.get(name) for state in states]
        first = types[0]
        if first is not None and all(t == first for t in types):
            out[name] = first
        else:
            out[name] = Ty(None, None, why=f"`{name}` may have different types on different paths through the step")
    return out


def _assigned(statement: cst.CSTNode) -> set[str]:
    from jaxloopfix.analysis.names import assigned_names

    return assigned_names([statement])


# -- dtype and shape algebra ------------------------------------------------------------------
def _shape_text(shape: Shape | None) -> str:
    if shape is None:
        return "unknown"
    if shape.dims is None:
        return f"`{shape.opaque}`"
    dims = [d.split(":", 1)[-1] for d in shape.dims]  # `jaxtyping:D` is the annotation's `D`
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _drop_axis(shape: Shape | None, axis: int) -> Shape | None:
    if shape is None:
        return None
    if shape.dims is not None:
        dims = list(shape.dims)
        if not dims or not -len(dims) <= axis < len(dims):
            return None
        del dims[axis]
        return Shape(dims=tuple(dims))
    if shape.opaque is not None:
        suffix = "[1:]" if axis == 0 else f"[without axis {axis}]"
        return Shape(opaque=shape.opaque + suffix)
    return None


def _broadcast(a: Shape | None, b: Shape | None, code: str) -> Shape:
    if a is None or b is None:
        raise Unknown(f"the shape of `{code}` is not known")
    if a == b:
        return a
    if a.dims == ():
        return b
    if b.dims == ():
        return a
    if a.dims is not None and b.dims is not None:
        out: list[str] = []
        x, y = list(a.dims), list(b.dims)
        if len(x) != len(y):
            raise Unknown(f"`{code}` broadcasts arrays of different ranks")
        for p, q in zip(x, y):
            if p == q:
                out.append(p)
            else:
                raise Unknown(f"`{code}` may broadcast `{p}` against `{q}`")
        return Shape(dims=tuple(out))
    raise Unknown(f"`{code}` may broadcast arrays of different shapes")


def _matmul(a: Shape | None, b: Shape | None, code: str) -> Shape:
    if a is None or b is None or a.dims is None or b.dims is None:
        raise Unknown(f"the shape of `{code}` is not known")
    if len(a.dims) == 1 and len(b.dims) == 2:
        return Shape(dims=(b.dims[1],))
    if len(a.dims) == 2 and len(b.dims) == 1:
        return Shape(dims=(a.dims[0],))
    if len(a.dims) == 2 and len(b.dims) == 2:
        return Shape(dims=(a.dims[0], b.dims[1]))
    if len(a.dims) == 1 and len(b.dims) == 1:
        return SCALAR
    raise Unknown(f"the shape of `{code}` is not known")


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    mapping = {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
        cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply, cst.BitAndAssign: cst.BitAnd,
        cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor, cst.LeftShiftAssign: cst.LeftShift,
        cst.RightShiftAssign: cst.RightShift,
    }
    return mapping[type(operator)]()


def _int(node: cst.BaseExpression | None) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    return None


def _is_dim_expr(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Attribute, cst.Subscript, cst.BinaryOperation))


__all__ = ["LoopTypes"]
