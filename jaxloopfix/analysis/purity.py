"""Which calls in a loop body are proven free of side effects (an allow-list), which are known
side effects, and which cannot be decided.

In a Python loop under a trace every call runs once per step; in a `lax.scan` (or `jax.vmap`)
step it runs once, at trace time. A call is only proven pure when it is on the allow-list
(`jax.numpy`, `jax.lax`, `jax.nn`, `jax.scipy`, `jax.random`, pytree utilities, `math`,
`operator`'s non-mutating functions, pure builtins, array methods) or is a function of the same
module whose body is itself proven pure. A known side effect (printing, logging, I/O, host
random numbers, `next()`, mutation of an outer object, a discarded result) refuses the fix;
anything else makes it unsafe, naming the call.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from jaxloopfix.analysis.names import assigned_names, discards_result, loads, parameters
from jaxloopfix.analysis.source import ParsedModule, shorten

IMPURE = "impure"
UNKNOWN = "unknown"

# -- the allow-list -----------------------------------------------------------------------
PURE_PREFIXES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.nn.",
    "jax.scipy.",
    "jax.random.",
    "math.",
    "cmath.",
    "einops.",
    "chex.assert_",
)
# Exceptions inside the pure prefixes: host callbacks and global configuration.
NOT_PURE_IN_PREFIXES = frozenset(
    {"jax.numpy.set_printoptions", "jax.numpy.printoptions", "jax.numpy.save", "jax.numpy.savez", "jax.numpy.load"}
)
PURE_NAMES = frozenset(
    {
        # pytrees
        "jax.tree_util.tree_map", "jax.tree_util.tree_leaves", "jax.tree_util.tree_structure",
        "jax.tree_util.tree_flatten", "jax.tree_util.tree_unflatten", "jax.tree_util.tree_reduce",
        "jax.tree_util.tree_transpose", "jax.tree_util.tree_all", "jax.tree_util.tree_map_with_path",
        "jax.tree_util.tree_flatten_with_path", "jax.tree_util.tree_leaves_with_path", "jax.tree_util.Partial",
        "jax.tree.map", "jax.tree.leaves", "jax.tree.structure", "jax.tree.flatten", "jax.tree.unflatten",
        "jax.tree.reduce", "jax.tree.transpose", "jax.tree.all", "jax.tree.map_with_path",
        "jax.tree.leaves_with_path", "jax.tree.flatten_with_path",
        # transformations (pure when the function they transform is)
        "jax.jit", "jax.vmap", "jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.hessian",
        "jax.checkpoint", "jax.remat", "jax.jvp", "jax.vjp", "jax.linearize", "jax.eval_shape",
        "jax.named_call", "jax.ShapeDtypeStruct", "jax.ad_checkpoint.checkpoint",
        # functools, dataclasses, typing
        "functools.partial", "functools.reduce", "dataclasses.replace", "typing.cast",
        # operator's functions that do not mutate their arguments
        *(
            f"operator.{name}"
            for name in (
                "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "matmul",
                "and_", "or_", "xor", "not_", "invert", "inv", "lshift", "rshift", "eq", "ne", "lt", "le",
                "gt", "ge", "getitem", "itemgetter", "attrgetter", "index", "contains", "truth", "concat",
                "is_", "is_not", "countOf", "indexOf", "length_hint",
            )
        ),
        # NumPy functions of values (on static values; random numbers, I/O and `out=` are not here)
        *(
            f"numpy.{name}"
            for name in (
                "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "arctan",
                "prod", "sum", "mean", "max", "min", "amax", "amin", "abs", "absolute", "floor", "ceil", "round",
                "array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "float16",
                "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool_", "dtype",
                "finfo", "iinfo", "issubdtype", "ndim", "shape", "size", "stack", "concatenate", "reshape",
                "transpose", "where", "isfinite", "isnan", "diag", "broadcast_to", "expand_dims", "squeeze",
                "einsum", "dot", "matmul", "outer", "sign", "all", "any", "argmax", "argmin", "clip", "maximum",
                "minimum", "power", "square", "cumsum", "cumprod", "tril", "triu", "sort", "argsort", "isclose",
                "allclose", "ceil", "result_type", "promote_types",
            )
        ),
        # builtins without side effects
        *(
            f"builtins.{name}"
            for name in (
                "len", "range", "min", "max", "abs", "sum", "zip", "enumerate", "isinstance", "issubclass",
                "tuple", "list", "dict", "set", "frozenset", "float", "int", "bool", "complex", "round", "pow",
                "divmod", "sorted", "reversed", "map", "filter", "any", "all", "slice", "type", "hasattr",
                "getattr", "callable", "str", "repr", "format", "hash", "iter", "chr", "ord", "bin", "hex",
                "oct", "id", "object", "super", "ValueError", "TypeError", "NotImplementedError",
                "AssertionError", "KeyError", "IndexError", "RuntimeError",
            )
        ),
    }
)
# Pure callables whose arguments at these positions (or keywords) are functions they call.
HIGHER_ORDER: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "jax.tree_util.tree_map": ((0,), ("f",)),
    "jax.tree.map": ((0,), ("f",)),
    "jax.tree_util.tree_map_with_path": ((0,), ("f",)),
    "jax.tree.map_with_path": ((0,), ("f",)),
    "jax.tree_util.tree_reduce": ((0,), ("function",)),
    "jax.tree.reduce": ((0,), ("function",)),
    "jax.tree_util.Partial": ((0,), ()),
    "jax.jit": ((0,), ("fun",)),
    "jax.vmap": ((0,), ("fun",)),
    "jax.grad": ((0,), ("fun",)),
    "jax.value_and_grad": ((0,), ("fun",)),
    "jax.jacfwd": ((0,), ("fun",)),
    "jax.jacrev": ((0,), ("fun",)),
    "jax.hessian": ((0,), ("fun",)),
    "jax.checkpoint": ((0,), ("fun",)),
    "jax.remat": ((0,), ("fun",)),
    "jax.ad_checkpoint.checkpoint": ((0,), ("fun",)),
    "jax.jvp": ((0,), ("fun",)),
    "jax.vjp": ((0,), ("fun",)),
    "jax.linearize": ((0,), ("fun",)),
    "jax.eval_shape": ((0,), ("fun",)),
    "jax.named_call": ((0,), ("fun",)),
    "jax.numpy.vectorize": ((0,), ("pyfunc",)),
    "jax.numpy.piecewise": ((), ()),
    "jax.lax.cond": ((1, 2), ("true_fun", "false_fun")),
    "jax.lax.switch": ((1,), ("branches",)),
    "jax.lax.map": ((0,), ("f",)),
    "jax.lax.scan": ((0,), ("f",)),
    "jax.lax.fori_loop": ((2,), ("body_fun",)),
    "jax.lax.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "jax.lax.associative_scan": ((0,), ("fn",)),
    "jax.lax.custom_root": ((0, 2, 3), ()),
    "functools.partial": ((0,), ("func",)),
    "functools.reduce": ((0,), ("function",)),
    "builtins.map": ((0,), ()),
    "builtins.filter": ((0,), ()),
    "builtins.sorted": ((), ("key",)),
    "builtins.min": ((), ("key",)),
    "builtins.max": ((), ("key",)),
}
# Decorators that keep a function's purity.
PURE_DECORATORS = frozenset(
    {"jax.jit", "jax.vmap", "jax.checkpoint", "jax.remat", "jax.named_call", "jax.custom_jvp", "jax.custom_vjp",
     "functools.wraps", "builtins.staticmethod", "jax.ad_checkpoint.checkpoint", "functools.partial"}
)

# -- known side effects ---------------------------------------------------------------------
IMPURE_NAMES = frozenset(
    {
        "builtins.print", "builtins.input", "builtins.open", "builtins.breakpoint", "builtins.exec",
        "builtins.eval", "builtins.setattr", "builtins.delattr", "builtins.next", "builtins.__import__",
        "builtins.exit", "builtins.quit", "builtins.help",
        "heapq.heappush", "heapq.heappop", "heapq.heapify", "heapq.heapreplace", "heapq.heappushpop",
        "bisect.insort", "bisect.insort_left", "bisect.insort_right",
        "operator.setitem", "operator.delitem",
        *(
            f"operator.{name}"
            for name in ("iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imod", "imul", "imatmul", "ior",
                         "ipow", "irshift", "isub", "itruediv", "ixor")
        ),
        "numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal", "numpy.put_along_axis",
        "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt", "numpy.load", "numpy.loadtxt",
        "numpy.seterr", "numpy.set_printoptions", "json.dump", "pickle.dump",
        "jax.numpy.set_printoptions",
    }
)
IMPURE_PREFIXES = (
    "logging.", "absl.logging.", "sys.", "os.", "shutil.", "pathlib.", "time.", "warnings.", "random.",
    "numpy.random.", "secrets.", "uuid.", "subprocess.", "socket.", "tempfile.", "io.", "wandb.", "mlflow.",
)
# Host callbacks: traced effects whose order and count under `lax.scan` are not proven to match.
CALLBACK_PREFIXES = ("jax.debug.", "jax.pure_callback", "jax.experimental.io_callback", "jax.experimental.host_callback")

# Methods that mutate their receiver (lists, dicts, sets, deques, files, queues, NumPy arrays).
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort",
     "reverse", "add", "discard", "write", "writelines", "put", "put_nowait", "send", "appendleft",
     "extendleft", "__setitem__", "__delitem__", "__iadd__", "fill", "itemset", "resize", "setflags",
     "partition", "rotate", "difference_update", "intersection_update", "symmetric_difference_update",
     "popleft", "flush", "close", "seek", "truncate", "__next__"}
)
# Methods of JAX arrays (and of `x.at[...]`) that return new values.
ARRAY_METHODS = frozenset(
    {"reshape", "astype", "sum", "mean", "max", "min", "prod", "std", "var", "transpose", "squeeze", "flatten",
     "ravel", "cumsum", "cumprod", "clip", "round", "dot", "conj", "conjugate", "argmax", "argmin", "swapaxes",
     "any", "all", "diagonal", "trace", "argsort", "take", "repeat", "nonzero", "view", "copy", "real", "imag",
     "squeeze", "block_until_ready", "searchsorted", "item", "tolist", "__getitem__", "ptp", "moveaxis",
     "expand_dims", "broadcast_to", "tobytes", "addressable_data", "sort", "cumulative_sum"}
)
AT_METHODS = frozenset({"set", "add", "multiply", "mul", "divide", "div", "power", "min", "max", "get", "apply"})
# Methods of Python values (containers, strings, NamedTuples) that return new values.
VALUE_METHODS = frozenset(
    {"get", "items", "keys", "values", "copy", "index", "count", "format", "join", "split", "strip", "lower",
     "upper", "startswith", "endswith", "replace", "_replace", "_asdict", "bit_length", "conjugate",
     "is_integer", "as_integer_ratio", "union", "intersection", "difference", "symmetric_difference",
     "issubset", "issuperset", "isdisjoint", "__len__", "__contains__", "__getitem__"}
)
# Calls that build a new container (mutating it later is local to the step).
FRESH_CONSTRUCTORS = frozenset({"builtins.list", "builtins.dict", "builtins.set", "copy.copy", "copy.deepcopy",
                                "collections.deque", "collections.OrderedDict", "collections.defaultdict"})
MODULE_PREFIXES = ("flax.", "haiku.")
# Special methods an operator, a subscript or a comparison may run.
OPERATOR_METHODS = frozenset(
    {f"__{op}__" for op in (
        "getitem", "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
        "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "invert", "and", "rand", "or",
        "ror", "xor", "rxor", "lshift", "rlshift", "rshift", "rrshift", "eq", "ne", "lt", "le", "gt", "ge",
        "iadd", "isub", "imul", "itruediv", "imatmul", "contains", "bool",
    )}
)
# Calls that make one-shot iterators (consumed by iterating).
ITERATOR_FACTORIES = frozenset(
    {"builtins.iter", "builtins.map", "builtins.filter", "builtins.zip", "builtins.enumerate", "builtins.reversed",
     "itertools.count", "itertools.cycle", "itertools.chain", "itertools.islice", "itertools.repeat",
     "itertools.product", "itertools.permutations", "itertools.combinations", "itertools.accumulate"}
)
MAX_DEPTH = 8


@dataclass(frozen=True)
class Effect:
    kind: str  # IMPURE or UNKNOWN
    call: str  # the code shown to the user, e.g. "helper(...)"
    why: str  # a sentence; for IMPURE the refusal reason, for UNKNOWN what is unproven
    callback: bool = False  # a JAX host callback: a traced effect, not a trace-time one

    def message(self) -> str:
        if self.kind == IMPURE:
            return self.why
        if self.callback:
            return (
                f"`{self.call}` is a host callback; that its calls under `lax.scan` (or `jax.vmap`) match the "
                "loop's (their order and count) is not proven"
            )
        return (
            f"cannot prove `{self.call}` has no side effects ({self.why}); under `lax.scan` (or `jax.vmap`) "
            "it runs once at trace time instead of once per step"
        )


def _worst(effects: list[Effect | None]) -> Effect | None:
    found = [e for e in effects if e is not None]
    impure = [e for e in found if e.kind == IMPURE]
    return impure[0] if impure else (found[0] if found else None)


def _shown_call(parsed: ParsedModule, call: cst.Call) -> str:
    return shorten(parsed.code(call.func), 50) + "(...)"


class _Context:
    """What is local to the code being checked: names whose objects are created fresh in it, and
    the names it may mutate (the outer objects are everything else)."""

    def __init__(
        self, fresh: set[str], owned: set[str], self_name: str | None, cls: cst.ClassDef | None, facts=None  # noqa: ANN001
    ) -> None:
        self.facts = facts  # array evidence (the loop's function only)
        self.fresh = fresh
        self.owned = owned  # accumulators and other names whose mutation is accounted for elsewhere
        self.self_name = self_name
        self.cls = cls


class PurityChecker:
    """Effects of the calls (and property reads) in a loop body of `function`."""

    def __init__(self, parsed: ParsedModule, function: cst.FunctionDef, is_module_class=None, facts=None) -> None:  # noqa: ANN001
        self.parsed = parsed
        self.function = function
        self.is_module_class = is_module_class or (lambda expr: False)
        self.facts = facts
        cache: dict = parsed.__dict__.setdefault("_purity_cache", {})
        self._cache: dict[cst.CSTNode, Effect | None] = cache
        self._stack: list[cst.CSTNode] = []
        self._hit_stack = False
        self.cls = next((a for a in parsed.ancestors(function) if isinstance(a, cst.ClassDef)), None)
        params = parameters(function)
        self.self_name = params[0].name.value if self.cls is not None and params else None

    # -- entry points ------------------------------------------------------------------
    def loop_effects(self, loop: cst.For, owned: set[str]) -> list[Effect]:
        """Every effect found in the body of `loop` (owned: accumulators)."""
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        self._loop = loop
        fresh = _fresh_names(self.parsed, body, constructors_only=True)
        context = _Context(fresh, owned, self.self_name, self.cls, self.facts)
        effects: list[Effect] = []
        for statement in body:
            effects.extend(self._block_effects(statement, context, depth=0))
        return effects

    def closure_reads(self, loop: cst.For, step_names: set[str]) -> str | None:
        """A refusal when the body uses a function defined before the loop (in the enclosing
        function) that reads a name the loop assigns: that function sees the name's value from
        before the loop inside a scan step."""
        seen: set[int] = set()
        for name in loads(loop.body):
            for definition in self._local_function_defs(name, loop):
                key = id(definition)
                if key in seen:
                    continue
                seen.add(key)
                read = self._free_reads(definition, set())
                captured = sorted(read & step_names)
                if captured:
                    shown = definition.name.value if isinstance(definition, cst.FunctionDef) else name.value
                    return (
                        f"the function `{shown}`, defined before the loop, reads `{captured[0]}`, which the loop "
                        f"assigns: called from a `lax.scan` step it would keep reading the value `{captured[0]}` "
                        "had before the loop"
                    )
        return None

    # -- statements ----------------------------------------------------------------------
    def _block_effects(self, node: cst.CSTNode, context: _Context, depth: int) -> list[Effect]:
        effects: list[Effect] = []
        checker = self

        class Walk(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                effect = checker.call_effect(call, context, depth)
                if effect is not None:
                    effects.append(effect)

            def visit_Attribute(self, attr: cst.Attribute) -> None:
                effect = checker._property_effect(attr, context, depth)
                if effect is not None:
                    effects.append(effect)

            def visit_AugAssign(self, aug: cst.AugAssign) -> None:
                effect = checker._aug_assign_effect(aug, context)
                if effect is not None:
                    effects.append(effect)

            def visit_Name(self, name: cst.Name) -> None:
                effect = checker._consumed_iterator(name, context) or checker._operator_effect(name, context, depth)
                if effect is not None:
                    effects.append(effect)

        node.visit(Walk())
        return effects

    def _operator_effect(self, name: cst.Name, context: _Context, depth: int) -> Effect | None:
        """`TAB[0]`, `x * S`, `-S` where `TAB`/`S` is an instance of a class of this module: the
        operation runs its special methods (`__getitem__`, `__rmul__`, ...), which may have effects."""
        parent = self.parsed.parent(name)
        if not isinstance(parent, (cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison,
                                   cst.ComparisonTarget, cst.AugAssign)):
            return None
        if isinstance(parent, cst.Subscript) and parent.value is not name:
            return None
        if context.self_name is not None and name.value == context.self_name:
            cls = context.cls
        else:
            cls = self._instance_class(name)
        if cls is None:
            return None
        worst: Effect | None = None
        for statement in cls.body.body:
            if not (isinstance(statement, cst.FunctionDef) and statement.name.value in OPERATOR_METHODS):
                continue
            shown = f"{name.value}.{statement.name.value}"
            effect = self._function_effect(statement, depth + 1, shown)
            if isinstance(effect, Effect):
                if effect.kind == IMPURE:
                    return Effect(
                        IMPURE, shown,
                        f"`{self.parsed.code(parent)}` runs `{shown}`, which has a side effect: "
                        f"{effect.why.split('which has a side effect: ', 1)[-1]}",
                    )
                worst = worst or Effect(UNKNOWN, shown, f"`{self.parsed.code(parent)}` runs it ({effect.why})")
        return worst

    def _consumed_iterator(self, iterable: cst.Name, context: _Context) -> Effect | None:
        """A read of `IT`, an iterator made outside the code checked (`iter(...)`, a generator,
        `map`/`zip`/`filter` objects): iterating it (`for v in IT`, `next`, `list(IT)`) consumes it,
        every step in the loop, once in a scan."""
        if iterable.value in context.fresh or iterable.value in context.owned:
            return None
        parent = self.parsed.parent(iterable)
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Attribute) and parent.attr is iterable):
            return None
        for value in self._assigned_values_before(iterable):
            if value is None or self.parsed.contains(self.function, value) and self._in_loop_body(value):
                continue
            made_by = ""
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                made_by = self.parsed.qualified_name(value.func) or ""
                if isinstance(value.func, cst.Name) and any(
                    isinstance(d, cst.FunctionDef) and _has_yield(d) for d in self._definitions(value.func)
                ):
                    made_by = "builtins.iter"
            if isinstance(value, cst.GeneratorExp) or made_by in ITERATOR_FACTORIES:
                code = self.parsed.code(iterable)
                return Effect(
                    IMPURE, code,
                    f"the body iterates over `{code}`, an iterator made outside the loop: each step consumes it "
                    "in the loop, but a scan step runs once",
                )
        return None

    def _aug_assign_effect(self, aug: cst.AugAssign, context: _Context) -> Effect | None:
        """`HOST += 1` on a NumPy array or list made outside the loop updates it in place."""
        target = aug.target
        if not isinstance(target, cst.Name) or target.value in context.fresh:
            return None
        for value in self._assigned_values_before(target):
            if value is None:
                continue
            if isinstance(value, (cst.List, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)):
                return Effect(IMPURE, self.parsed.code(aug), f"`{self.parsed.code(aug).strip()}` updates the list `{target.value}` in place (a side effect on an outer object)")
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                qname = self.parsed.qualified_name(value.func) or ""
                if qname.startswith("numpy.") or qname in FRESH_CONSTRUCTORS:
                    return Effect(
                        IMPURE,
                        self.parsed.code(aug),
                        f"`{self.parsed.code(aug).strip()}` updates `{target.value}` in place (a NumPy array or "
                        "container made outside the loop: a side effect on an outer object)",
                    )
        return None

    def _assigned_values_before(self, name: cst.Name) -> list[cst.BaseExpression | None]:
        scope = self.parsed.scope(name)
        if scope is None:
            return []
        try:
            assignments = list(scope[name.value])
        except Exception:  # noqa: BLE001
            return []
        out: list[cst.BaseExpression | None] = []
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Name):
                out.append(_assigned_expression(self.parsed, node))
        return out

    # -- calls ---------------------------------------------------------------------------
    def call_effect(self, call: cst.Call, context: _Context, depth: int) -> Effect | None:
        parsed = self.parsed
        func = call.func
        discarded = discards_result(parsed.parent(call))
        shown = _shown_call(parsed, call)
        out_effect = self._out_argument(call, context)
        if out_effect is not None:
            return out_effect
        # `x.at[i].set(v)`: functional updates.
        if isinstance(func, cst.Attribute) and func.attr.value in AT_METHODS and _is_at(func.value):
            return None
        verdict = self._callee_effect(func, call, context, depth, shown)
        if verdict == "pure":
            return self._higher_order_effect(func, call, context, depth)
        if isinstance(verdict, Effect):
            if verdict.kind == UNKNOWN and discarded and not verdict.callback:
                return Effect(
                    IMPURE,
                    shown,
                    f"the body calls `{shown}` and discards its result: a call made for its side effect runs "
                    "once at trace time under `lax.scan`, not once per step",
                )
            return verdict
        return None

    def _out_argument(self, call: cst.Call, context: _Context) -> Effect | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                root = _root_name(arg.value)
                if root is None or root not in context.fresh:
                    return Effect(
                        IMPURE,
                        _shown_call(self.parsed, call),
                        f"the body calls `{_shown_call(self.parsed, call)}` with `out=`, writing into "
                        f"`{self.parsed.code(arg.value)}` (a side effect on an outer object)",
                    )
        return None

    def _qualified_verdict(self, qnames: set[str], shown: str, code: str) -> str | Effect | None:
        """'pure', an Effect, or None when the qualified names decide nothing."""
        for qname in qnames:
            if qname in IMPURE_NAMES or qname.startswith(IMPURE_PREFIXES):
                what = qname.removeprefix("builtins.")
                return Effect(IMPURE, shown, f"the body calls `{code}` (`{what}`: a side effect that runs once per trace, not per step)"
                              if what != code else f"the body calls `{code}` (a side effect that runs once per trace, not per step)")
            if qname.startswith(CALLBACK_PREFIXES):
                return Effect(UNKNOWN, shown, "a host callback", callback=True)
        if qnames and all(
            (q in PURE_NAMES or q.startswith(PURE_PREFIXES)) and q not in NOT_PURE_IN_PREFIXES for q in qnames
        ):
            return "pure"
        return None

    def _callee_effect(
        self, func: cst.BaseExpression, call: cst.Call | None, context: _Context, depth: int, shown: str
    ) -> str | Effect | None:
        """'pure' for an allow-listed or proven-pure callee; an Effect otherwise."""
        parsed = self.parsed
        if isinstance(func, cst.Lambda):
            return self._function_effect(func, depth + 1, shown)
        if isinstance(func, (cst.Name, cst.Attribute)):
            qnames = parsed.qualified_names(func)
            verdict = self._qualified_verdict(qnames, shown, parsed.code(func))
            if verdict is not None:
                return verdict
        if isinstance(func, cst.Name):
            return self._name_effect(func, call, context, depth, shown)
        if isinstance(func, cst.Attribute):
            return self._method_effect(func, call, context, depth, shown)
        if isinstance(func, cst.Call):
            return self._called_result_effect(func, context, depth, shown)
        return Effect(UNKNOWN, shown, "a computed callee")

    def _name_effect(self, func: cst.Name, call: cst.Call | None, context: _Context, depth: int, shown: str) -> str | Effect:
        definitions = self._definitions(func)
        if not definitions:
            return Effect(UNKNOWN, shown, f"`{func.value}` is not defined in this module")
        verdicts: list[str | Effect | None] = []
        for node in definitions:
            verdicts.append(self._definition_effect(node, func, context, depth, shown))
        effects = [v for v in verdicts if isinstance(v, Effect)]
        if effects:
            return _worst(effects)  # type: ignore[return-value]
        return "pure"

    def _definition_effect(
        self, node: cst.CSTNode, func: cst.Name, context: _Context, depth: int, shown: str
    ) -> str | Effect:
        parsed = self.parsed
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            return self._function_effect(node, depth + 1, shown)
        if isinstance(node, cst.ClassDef):
            return self._class_effect(node, func, shown)
        if isinstance(node, cst.Name):
            value = _assigned_expression(parsed, node)
            if value is None:
                return Effect(UNKNOWN, shown, f"`{func.value}` is not a function defined in this module")
            if depth > MAX_DEPTH:
                return Effect(UNKNOWN, shown, "aliases nested too deeply")
            if isinstance(value, cst.Lambda):
                return self._function_effect(value, depth + 1, shown)
            if isinstance(value, (cst.Name, cst.Attribute)):
                verdict = self._callee_effect(value, None, context, depth + 1, shown)
                if isinstance(verdict, Effect) and verdict.kind == IMPURE:
                    return Effect(
                        IMPURE, shown,
                        f"the body calls `{func.value}`, an alias of {verdict.why.removeprefix('the body calls ')}",
                    )
                return verdict if verdict is not None else Effect(UNKNOWN, shown, "an unknown callee")
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                qname = parsed.qualified_name(value.func) or ""
                if qname in ("functools.partial", "jax.tree_util.Partial") and value.args:
                    inner = self._callee_effect(value.args[0].value, None, context, depth + 1, shown)
                    return inner if inner is not None else Effect(UNKNOWN, shown, "an unknown callee")
                if qname in HIGHER_ORDER and qname.startswith("jax.") and value.args:
                    inner = self._callee_effect(value.args[0].value, None, context, depth + 1, shown)
                    return inner if inner is not None else Effect(UNKNOWN, shown, "an unknown callee")
                if qname == "collections.namedtuple" or qname == "typing.NamedTuple":
                    return "pure"
            return Effect(UNKNOWN, shown, f"`{func.value}` is a value computed at run time, not a known function")
        # Imports, parameters, loop targets: nothing this module can see.
        if isinstance(node, cst.Param) or _is_param_name(parsed, node):
            return Effect(UNKNOWN, shown, f"`{func.value}` is a function argument")
        return Effect(UNKNOWN, shown, f"`{func.value}` is not defined in this module")

    def _class_effect(self, cls: cst.ClassDef, func: cst.Name, shown: str) -> str | Effect:
        parsed = self.parsed
        bases = [b.value for b in cls.bases]
        if self.is_module_class(func) or any(
            isinstance(b, (cst.Name, cst.Attribute)) and (parsed.qualified_name(b) or "").startswith(MODULE_PREFIXES)
            for b in bases
        ):
            return Effect(
                IMPURE, shown,
                f"the body constructs the module `{func.value}` every step; Flax/Haiku modules keep state outside "
                "the trace and cannot be created inside a `lax.scan` step (use `nn.scan` / `hk.scan`)",
            )
        methods = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}
        decorators = {parsed.qualified_name(d.decorator) if isinstance(d.decorator, (cst.Name, cst.Attribute)) else None
                      for d in cls.decorators}
        record = any(
            isinstance(b, (cst.Name, cst.Attribute)) and parsed.qualified_name(b) in ("typing.NamedTuple",) for b in bases
        ) or bool(decorators & {"dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass"})
        if record and not methods & {"__init__", "__post_init__", "__new__"}:
            return "pure"
        return Effect(UNKNOWN, shown, f"constructing `{func.value}` runs its class's code")

    def _called_result_effect(self, inner: cst.Call, context: _Context, depth: int, shown: str) -> str | Effect:
        """`jax.vmap(f)(x)`, `partial(f, a)(x)`, `Block(4)(x)`."""
        parsed = self.parsed
        func = inner.func
        if isinstance(func, (cst.Name, cst.Attribute)):
            qname = parsed.qualified_name(func) or ""
            if qname in HIGHER_ORDER and (qname.startswith("jax.") or qname.startswith("functools.")):
                effect = self.call_effect(inner, context, depth)
                if effect is not None:
                    return effect
                return "pure"
            if qname.startswith(MODULE_PREFIXES):
                return Effect(UNKNOWN, shown, "a Flax/Haiku module call")
            if isinstance(func, cst.Name):
                for node in self._definitions(func):
                    if isinstance(node, cst.ClassDef):
                        verdict = self._class_effect(node, func, shown)
                        if isinstance(verdict, Effect) and verdict.kind == IMPURE:
                            return verdict
        return Effect(UNKNOWN, shown, "it calls the result of another call")

    def _method_effect(self, func: cst.Attribute, call: cst.Call | None, context: _Context, depth: int, shown: str) -> str | Effect:
        parsed = self.parsed
        method = func.attr.value
        receiver = func.value
        root = _root_name(receiver)
        local = root is not None and (root in context.fresh or root in context.owned)
        # `self.method(...)`: a method of this class.
        if context.self_name is not None and isinstance(receiver, cst.Name) and receiver.value == context.self_name:
            definition = self._class_member(context.cls, method)
            if isinstance(definition, cst.FunctionDef) and not _is_property(parsed, definition):
                return self._function_effect(definition, depth + 1, shown)
        if method in MUTATING_METHODS and not local and not _result_used_of_none_method(parsed, method, call):
            if not (method in ARRAY_METHODS and self._is_array(receiver, context)):
                target = parsed.code(receiver)
                if isinstance(receiver, cst.Name):
                    alias = self._alias_of(receiver)
                    note = f" (an alias of `{alias}`)" if alias else ""
                    return Effect(
                        IMPURE, shown,
                        f"the body calls `{parsed.code(func)}(...)`, mutating `{target}`{note} which lives outside the loop",
                    )
                return Effect(IMPURE, shown, f"the body calls `{parsed.code(func)}(...)`, which may mutate an outer object")
        if method in ARRAY_METHODS and (self._is_array(receiver, context) or method not in MUTATING_METHODS):
            return "pure"
        if method in VALUE_METHODS:
            return "pure"
        if context.self_name is not None and isinstance(receiver, cst.Name) and receiver.value == context.self_name:
            return Effect(UNKNOWN, shown, f"`{method}` is not a method defined in this class")
        if local:
            return "pure"  # an object built in this step (or an accumulator)
        if isinstance(receiver, cst.Name):
            for value in self._assigned_values_before(receiver):
                if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                    made_by = parsed.qualified_name(value.func) or ""
                    if made_by.startswith(IMPURE_PREFIXES):
                        return Effect(
                            IMPURE, shown,
                            f"the body calls `{parsed.code(func)}(...)` on an object made by `{parsed.code(value.func)}` "
                            "(host state: random numbers, logging or I/O), a side effect that runs once per trace, not per step",
                        )
        if root is not None and isinstance(receiver, cst.Name) and any(
            isinstance(d, (cst.Import, cst.ImportFrom)) for d in self._definitions(receiver)
        ):
            return Effect(UNKNOWN, shown, f"`{parsed.code(func)}` is not defined in this module")
        return Effect(UNKNOWN, shown, f"`.{method}()` is a method of an object the analysis cannot see")

    def _higher_order_effect(self, func: cst.BaseExpression, call: cst.Call, context: _Context, depth: int) -> Effect | None:
        """The functions an allow-listed higher-order callable (`tree_map`, `jax.vmap`, `partial`) calls."""
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        qname = self.parsed.qualified_name(func) or ""
        spec = HIGHER_ORDER.get(qname)
        if spec is None:
            return None
        positions, keywords = spec
        positional = [a for a in call.args if a.keyword is None and not a.star]
        chosen = [positional[p].value for p in positions if p < len(positional)]
        chosen += [a.value for a in call.args if a.keyword is not None and a.keyword.value in keywords]
        effects: list[Effect | None] = []
        for expr in chosen:
            shown = shorten(self.parsed.code(expr), 50)
            if isinstance(expr, (cst.List, cst.Tuple)):
                targets = [e.value for e in expr.elements]
            else:
                targets = [expr]
            for target in targets:
                if isinstance(target, cst.Lambda):
                    continue  # its body is in the loop body: checked there
                verdict = self._callee_effect(target, None, context, depth + 1, shown)
                if isinstance(verdict, Effect):
                    effects.append(verdict)
        return _worst(effects)

    # -- properties ------------------------------------------------------------------------
    def _property_effect(self, attr: cst.Attribute, context: _Context, depth: int) -> Effect | None:
        """`self.x` (or `CFG.x`, `CFG` an instance of a class of this module) where `x` is a property
        with effects."""
        if not isinstance(attr.value, cst.Name):
            return None
        parent = self.parsed.parent(attr)
        if isinstance(parent, cst.Call) and parent.func is attr:
            return None
        if context.self_name is not None and attr.value.value == context.self_name:
            cls = context.cls
        else:
            cls = self._instance_class(attr.value)
            if cls is None:
                return None
        definition = self._class_member(cls, attr.attr.value)
        if not isinstance(definition, cst.FunctionDef) or not _is_property(self.parsed, definition):
            return None
        shown = self.parsed.code(attr)
        if any(
            (self.parsed.qualified_name(d.decorator) if isinstance(d.decorator, (cst.Name, cst.Attribute)) else None)
            == "functools.cached_property"
            for d in definition.decorators
        ):
            return Effect(
                IMPURE, shown,
                f"reading `{shown}` runs the cached property `{attr.attr.value}`, which stores its value on "
                "`self` (a side effect on an outer object)",
            )
        effect = self._function_effect(definition, depth + 1, shown, decorators_checked=True)
        if isinstance(effect, Effect):
            if effect.kind == IMPURE:
                return Effect(IMPURE, shown, f"reading `{shown}` runs the property `{attr.attr.value}`: {effect.why}")
            return Effect(UNKNOWN, shown, f"reading it runs the property `{attr.attr.value}` ({effect.why})")
        return None

    def _in_loop_body(self, node: cst.CSTNode) -> bool:
        loop = getattr(self, "_loop", None)
        return loop is not None and self.parsed.contains(loop, node)

    def _instance_class(self, name: cst.Name) -> cst.ClassDef | None:
        """The class of this module that `name` is bound to an instance of (`CFG = Config()`)."""
        classes = set()
        values = self._assigned_values_before(name)
        if not values:
            return None
        for value in values:
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                return None
            found = [d for d in self._definitions(value.func) if isinstance(d, cst.ClassDef)]
            if len(found) != 1:
                return None
            classes.add(found[0])
        return classes.pop() if len(classes) == 1 else None

    def _class_member(self, cls: cst.ClassDef | None, name: str, depth: int = 0) -> cst.CSTNode | None:
        if cls is None or depth > 4:
            return None
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        for base in cls.bases:
            if isinstance(base.value, cst.Name):
                for node in self._definitions(base.value):
                    if isinstance(node, cst.ClassDef):
                        found = self._class_member(node, name, depth + 1)
                        if found is not None:
                            return found
        return None

    # -- functions of this module ------------------------------------------------------
    def _function_effect(
        self, func: cst.FunctionDef | cst.Lambda, depth: int, shown: str, decorators_checked: bool = False
    ) -> str | Effect:
        if func in self._stack:
            self._hit_stack = True
            return "pure"  # a recursive call adds no effect the walk of its body does not find
        if func in self._cache:
            effect = self._cache[func]
            return "pure" if effect is None else self._rename(effect, shown)
        if depth > MAX_DEPTH:
            return Effect(UNKNOWN, shown, "calls nested too deeply to follow")
        self._stack.append(func)
        outer_hit = self._hit_stack
        self._hit_stack = False
        try:
            effect = self._function_body_effect(func, depth, decorators_checked)
        finally:
            self._stack.pop()
        if not self._hit_stack:
            self._cache[func] = effect
        self._hit_stack = self._hit_stack or outer_hit
        return "pure" if effect is None else self._rename(effect, shown)

    def _rename(self, effect: Effect, shown: str) -> Effect:
        if effect.call == shown:
            return effect
        if effect.kind == IMPURE:
            return Effect(IMPURE, shown, f"the body calls `{shown}`, which has a side effect: {effect.why.removeprefix('the body ')}")
        return Effect(UNKNOWN, shown, f"it calls `{effect.call}`: {effect.why}")

    def _function_body_effect(self, func: cst.FunctionDef | cst.Lambda, depth: int, decorators_checked: bool) -> Effect | None:
        parsed = self.parsed
        name = func.name.value if isinstance(func, cst.FunctionDef) else "lambda"
        shown = f"{name}(...)"
        if isinstance(func, cst.FunctionDef) and not decorators_checked:
            for decorator in func.decorators:
                expr = decorator.decorator
                target = expr.func if isinstance(expr, cst.Call) else expr
                qname = parsed.qualified_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
                if qname not in PURE_DECORATORS:
                    return Effect(UNKNOWN, shown, f"`{name}` is decorated with `{shorten(parsed.code(expr), 40)}`")
        params = parameters(func)
        if isinstance(func, cst.Lambda):
            body_nodes: list[cst.CSTNode] = [func.body]
            fresh: set[str] = set()
        else:
            body_nodes = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else [func.body]
            fresh = _fresh_names(parsed, body_nodes, constructors_only=False) - {p.name.value for p in params}
        self_name = None
        cls = None
        if isinstance(func, cst.FunctionDef):
            owner = parsed.parent(parsed.parent(func)) if parsed.parent(func) is not None else None
            if isinstance(owner, cst.ClassDef) and params:
                cls, self_name = owner, params[0].name.value
        context = _Context(fresh, set(), self_name, cls)
        effects: list[Effect] = []
        for node in body_nodes:
            effects.extend(self._function_statement_effects(node, context, depth, name))
            effects.extend(self._block_effects(node, context, depth))
        return _worst(effects)  # type: ignore[arg-type]

    def _function_statement_effects(self, node: cst.CSTNode, context: _Context, depth: int, name: str) -> list[Effect]:
        parsed = self.parsed
        effects: list[Effect] = []
        shown = f"{name}(...)"

        def store(target: cst.BaseExpression) -> None:
            if isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    store(element.value)
            elif isinstance(target, cst.StarredElement):
                store(target.value)
            elif isinstance(target, (cst.Attribute, cst.Subscript)):
                root = _root_name(target)
                if root is None or root not in context.fresh:
                    effects.append(
                        Effect(IMPURE, shown, f"the body calls `{name}`, which assigns `{parsed.code(target)}` "
                               "(a side effect on an outer object)")
                    )

        class Walk(cst.CSTVisitor):
            def visit_Global(self, node: cst.Global) -> None:
                effects.append(Effect(IMPURE, shown, f"the body calls `{name}`, which declares `global` names and may "
                                      "change module state"))

            def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
                effects.append(Effect(IMPURE, shown, f"the body calls `{name}`, which declares `nonlocal` names"))

            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    store(target.target)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                store(node.target)
                if isinstance(node.target, cst.Name) and node.target.value not in context.fresh:
                    effects.append(Effect(UNKNOWN, shown, f"`{parsed.code(node).strip()}` may update an argument in place"))

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                store(node.target)

            def visit_Del(self, node: cst.Del) -> None:
                store(node.target)

            def visit_Yield(self, node: cst.Yield) -> None:
                effects.append(Effect(UNKNOWN, shown, f"`{name}` is a generator"))

            def visit_With(self, node: cst.With) -> None:
                effects.append(Effect(UNKNOWN, shown, f"`{name}` enters a context manager"))

        node.visit(Walk())
        return effects

    # -- names ---------------------------------------------------------------------------
    def _definitions(self, name: cst.Name) -> list[cst.CSTNode]:
        scope = self.parsed.scope(name)
        if scope is None:
            return []
        try:
            assignments = list(scope[name.value])
        except Exception:  # noqa: BLE001 - a name libcst cannot look up is just unknown
            return []
        out: list[cst.CSTNode] = []
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if node is not None:
                out.append(node)
        return out

    def _alias_of(self, name: cst.Name) -> str | None:
        for value in self._assigned_values_before(name):
            if isinstance(value, (cst.Name, cst.Attribute)):
                return self.parsed.code(value)
        return None

    def _is_array(self, expr: cst.BaseExpression, context: _Context) -> bool:
        return context.facts is not None and context.facts.is_array(expr)

    def _local_function_defs(self, name: cst.Name, loop: cst.For) -> list[cst.FunctionDef | cst.Lambda]:
        """Functions and lambdas a name in the loop body refers to that are defined inside the
        enclosing function, outside the loop."""
        out: list[cst.FunctionDef | cst.Lambda] = []
        for node in self._definitions(name):
            if self.parsed.contains(loop, node) or not self.parsed.contains(self.function, node):
                continue
            if isinstance(node, cst.FunctionDef):
                out.append(node)
            elif isinstance(node, cst.Name):
                value = _assigned_expression(self.parsed, node)
                if isinstance(value, cst.Lambda):
                    out.append(value)
                elif isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) and value.args:
                    qname = self.parsed.qualified_name(value.func) or ""
                    if qname in HIGHER_ORDER and isinstance(value.args[0].value, cst.Name):
                        out.extend(self._local_function_defs(value.args[0].value, loop))
                    elif qname in HIGHER_ORDER and isinstance(value.args[0].value, cst.Lambda):
                        out.append(value.args[0].value)
        return out

    def _free_reads(self, func: cst.FunctionDef | cst.Lambda, seen: set[int]) -> set[str]:
        """Names `func` reads from enclosing scopes, through the local functions it calls."""
        if id(func) in seen:
            return set()
        seen.add(id(func))
        if isinstance(func, cst.Lambda):
            local = {p.name.value for p in parameters(func)}
            names = [n for n in loads(func.body) if n.value not in local]
        else:
            local = {p.name.value for p in parameters(func)}
            body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else [func.body]
            local |= assigned_names(body)
            names = [n for n in loads(func.body) if n.value not in local]
        free = {n.value for n in names}
        for name in names:
            for node in self._definitions(name):
                if isinstance(node, cst.FunctionDef) and self.parsed.contains(self.function, node) and node is not func:
                    free |= self._free_reads(node, seen)
                elif isinstance(node, cst.Name):
                    value = _assigned_expression(self.parsed, node)
                    if isinstance(value, cst.Lambda) and self.parsed.contains(self.function, value):
                        free |= self._free_reads(value, seen)
        return free


# -- helpers ------------------------------------------------------------------------------
def _is_at(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "at"


def _root_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def _has_yield(func: cst.FunctionDef) -> bool:
    found = False

    class Walk(cst.CSTVisitor):
        def visit_Yield(self, node: cst.Yield) -> None:
            nonlocal found
            found = True

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    func.visit(Walk())
    return found


def _is_property(parsed: ParsedModule, func: cst.FunctionDef) -> bool:
    for decorator in func.decorators:
        expr = decorator.decorator
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if parsed.qualified_name(expr) in ("builtins.property", "functools.cached_property"):
                return True
            if isinstance(expr, cst.Name) and expr.value in ("property", "cached_property"):
                return True
    return False


def _is_param_name(parsed: ParsedModule, node: cst.CSTNode) -> bool:
    parent = parsed.parent(node)
    return isinstance(parent, cst.Param)


def _assigned_expression(parsed: ParsedModule, target: cst.Name) -> cst.BaseExpression | None:
    """The value a plain `name = value` (or `name: T = value`) statement assigns to `target`."""
    parent = parsed.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = parsed.parent(parent)
        if isinstance(assign, cst.Assign):
            return assign.value
    if isinstance(parent, cst.AnnAssign) and parent.target is target:
        return parent.value
    return None


def _fresh_value(parsed: ParsedModule, value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Tuple)):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, (cst.Name, cst.Attribute)) and parsed.qualified_name(func) in FRESH_CONSTRUCTORS:
            return True
        if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not value.args:
            return True
    return False


def _fresh_names(parsed: ParsedModule, body: list[cst.CSTNode], *, constructors_only: bool) -> set[str]:
    """Names every assignment in `body` binds to a newly built object. With `constructors_only`
    False (a function's own locals), any local that is not an alias of an outer name counts."""
    values: dict[str, list[cst.BaseExpression | None]] = {}

    class Walk(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    values.setdefault(target.target.value, []).append(node.value)
                else:
                    for name in _stored(target.target):
                        values.setdefault(name, []).append(None)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name):
                values.setdefault(node.target.value, []).append(node.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                values.setdefault(node.target.value, [])

        def visit_For(self, node: cst.For) -> None:
            for name in _stored(node.target):
                values.setdefault(name, []).append(None)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    for node in body:
        node.visit(Walk())
    fresh: set[str] = set()
    for name, assigned in values.items():
        if not assigned:
            continue
        if constructors_only:
            if all(v is not None and _fresh_value(parsed, v) for v in assigned):
                fresh.add(name)
        elif all(v is None or not isinstance(v, (cst.Name, cst.Attribute, cst.Subscript)) for v in assigned):
            fresh.add(name)
    return fresh


def _stored(target: cst.BaseExpression) -> set[str]:
    from jaxloopfix.analysis.names import stored_names

    return stored_names(target)


__all__ = ["IMPURE", "UNKNOWN", "Effect", "PurityChecker"]


# In-place methods of Python's containers and files, which return None: a call of one of these
# names whose result is used is some other object's method (`optimizer.update(grads, state)`
# returns new state), not an in-place update of a container.
RETURNS_NONE = frozenset(
    {"append", "extend", "insert", "update", "add", "put", "put_nowait", "appendleft", "extendleft", "__setitem__",
     "remove", "discard", "clear", "sort", "reverse"}
)


def _result_used_of_none_method(parsed: ParsedModule, method: str, call: cst.Call | None) -> bool:
    """`updates, state = optimizer.update(grads, state)`: a method named like an in-place
    container method whose result is used, so not one (theirs return None)."""
    if call is None or method not in RETURNS_NONE:
        return False
    return not isinstance(parsed.parent(call), cst.Expr)
