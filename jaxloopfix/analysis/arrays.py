"""Which names and expressions are known to be JAX arrays.

Array evidence decides whether a loop runs over an array axis (flagged) or
over a Python container (left alone), and whether `lax.scan` would slice a
value the way the loop indexes it. Evidence: an array annotation
(`jax.Array`, `jnp.ndarray`, jaxtyping), creation by a jnp/lax/random call,
`.shape`/`.ndim`/`.at`/... used on the name, or arithmetic on arrays.
"""

from __future__ import annotations

import libcst as cst

from typing import TYPE_CHECKING

from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import ParsedModule

if TYPE_CHECKING:
    from jaxloopfix.analysis.array_fields import ArrayFields

ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.random.", "jax.scipy.")
ARRAY_ANNOTATIONS = frozenset(
    {
        "jax.Array",
        "jax.numpy.ndarray",
        "jax.numpy.DeviceArray",
        "jaxtyping.Array",
        "chex.Array",
        "numpy.ndarray",
        "jax.typing.ArrayLike",
    }
)
# jnp/lax functions whose result is not one array (a list, a tuple, a shape or a dtype).
NON_ARRAY_RESULTS = frozenset(
    {
        "split", "array_split", "hsplit", "vsplit", "dsplit", "meshgrid", "unstack", "shape", "ndim", "size",
        "result_type", "promote_types", "dtype", "iinfo", "finfo", "broadcast_arrays", "broadcast_shapes",
        "nonzero", "unravel_index", "indices", "tril_indices", "triu_indices", "diag_indices",
        "mask_indices", "histogram", "unique", "eigh", "eig", "svd", "qr", "slogdet", "lu", "frexp", "modf",
        "divmod", "scan", "while_loop", "fori_loop", "cond", "switch", "map", "associative_scan", "top_k",
        "sort_key_val", "split_key", "argwhere", "issubdtype", "isscalar", "can_cast", "gradient",
        "stop_gradient", "optimization_barrier", "ix_", "ogrid", "mgrid",
    }
)
# Return one array per argument: an array only when called with one argument.
PER_ARGUMENT = frozenset({"atleast_1d", "atleast_2d", "atleast_3d"})
# jaxtyping's dtype annotations (`Float[Array, "T D"]`); `PyTree[...]` is a container.
JAXTYPING_ARRAYS = frozenset(
    {"Array", "Float", "Int", "Bool", "Shaped", "Key", "UInt", "Complex", "Inexact", "Integer", "Num", "Real",
     "Float16", "Float32", "Float64", "BFloat16", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
     "UInt64", "Complex64", "Complex128"}
)
# Attributes that only arrays have (in JAX code).
ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "at", "T", "reshape", "astype", "dtype", "mT"})
# Every public attribute of `jax.Array` (`dir(jax.Array)`, JAX 0.10; a test compares it with the
# installed JAX): an item read with any other attribute (`queries[k].value`) is no array row.
JAX_ARRAY_ATTRIBUTES = frozenset({
    "T", "addressable_data", "addressable_shards", "all", "any", "argmax", "argmin", "argpartition", "argsort",
    "astype", "at", "byteswap", "choose", "clip", "committed", "compress", "conj", "conjugate", "copy",
    "copy_to_host_async", "cumprod", "cumsum", "device", "diagonal", "dot", "dtype", "flat", "flatten",
    "global_shards", "imag", "is_fully_addressable", "is_fully_replicated", "item", "itemsize", "mT", "max",
    "mean", "min", "nbytes", "ndim", "nonzero", "prod", "ptp", "ravel", "real", "repeat", "reshape", "round",
    "searchsorted", "shape", "sharding", "size", "sort", "squeeze", "std", "sum", "swapaxes", "take",
    "to_device", "trace", "transpose", "var", "view",
})
# Methods that only containers have.
CONTAINER_METHODS = frozenset({"items", "keys", "values", "get", "append", "extend", "copy_", "update"})
# Methods of arrays that return arrays.
ARRAY_METHODS = frozenset(
    {
        "reshape", "astype", "sum", "mean", "max", "min", "prod", "std", "var", "transpose", "squeeze",
        "flatten", "ravel", "cumsum", "cumprod", "clip", "round", "dot", "conj", "argmax", "argmin",
        "swapaxes", "any", "all", "set", "add", "multiply", "get", "divide", "power", "min", "max", "apply",
    }
)


def _jax_array_call(parsed: ParsedModule, call: cst.Call) -> bool:
    if not isinstance(call.func, (cst.Name, cst.Attribute)):
        return False
    for qname in parsed.qualified_names(call.func):
        short = qname.rsplit(".", 1)[-1]
        if qname.startswith(ARRAY_MODULES) and short not in NON_ARRAY_RESULTS:
            # `jnp.where(cond)` with one argument returns a tuple.
            if short == "where" and len(call.args) == 1:
                return False
            if short in PER_ARGUMENT and len(call.args) != 1:
                return False
            return True
    return False


def is_array_annotation(parsed: ParsedModule, annotation: cst.BaseExpression) -> bool:
    node = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    for qname in parsed.qualified_names(node):
        if qname in ARRAY_ANNOTATIONS:
            return True
        # jaxtyping's dtype-shape annotations: Float[Array, "T D"], Int[...], Shaped[...].
        if qname.startswith("jaxtyping.") and qname.rsplit(".", 1)[-1] in JAXTYPING_ARRAYS:
            return True
    return False


class ArrayFacts:
    """Array evidence for the names of one function (flow-insensitive, which errs towards evidence
    only where a name is used as an array somewhere; containers never gain evidence)."""

    def __init__(
        self, parsed: ParsedModule, func: cst.FunctionDef, traced_params: set[str] | None = None,
        fields: ArrayFields | None = None,
    ) -> None:
        self.parsed = parsed
        self.func = func
        # Attributes of the instance with array evidence in its class (`array_fields`).
        self.fields = fields
        self.names: set[str] = set()
        # Document order of the first evidence for each name (-1: an annotation, valid throughout).
        self.first_evidence: dict[str, int] = {}
        self._containers: set[str] = set()
        self._collect()
        # Traced arguments of a transformed function are arrays or pytrees of arrays: indexed by
        # the loop they are probably arrays, but a list of arrays cannot be ruled out.
        self.maybe_names: set[str] = (set(traced_params or ()) - self.names) - self._containers

    def _collect(self) -> None:
        for param in parameters(self.func, stars=False):
            if param.annotation is not None and is_array_annotation(self.parsed, param.annotation.annotation):
                self.names.add(param.name.value)
                self.first_evidence[param.name.value] = -1
        facts = self
        assignments: list[tuple[list[str], cst.BaseExpression, cst.CSTNode]] = []

        class Walk(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                if isinstance(node.value, cst.Name) and node.attr.value in ARRAY_ATTRIBUTES:
                    facts._evidence(node.value.value, node)
                if isinstance(node.value, cst.Name) and node.attr.value in CONTAINER_METHODS:
                    facts._containers.add(node.value.value)

            def visit_Subscript(self, node: cst.Subscript) -> None:
                # `params["W"]`, `layers[i]["W"]`: a dict or a list of dicts.
                root = node.value
                while isinstance(root, cst.Subscript):
                    root = root.value
                if isinstance(root, cst.Name) and any(
                    isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                    for e in node.slice
                ):
                    facts._containers.add(root.value)

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                if isinstance(node.target, cst.Name) and is_array_annotation(facts.parsed, node.annotation.annotation):
                    facts._evidence(node.target.value, node)
                if isinstance(node.target, cst.Name) and node.value is not None:
                    assignments.append(([node.target.value], node.value, node))

            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        assignments.append(([target.target.value], node.value, node))
                    elif isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Subscript):
                        # `W, b = layers[i]`: unpacking an element suggests a list of tuples.
                        if isinstance(node.value.value, cst.Name):
                            facts._containers.add(node.value.value.value)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                if isinstance(node.target, cst.Name):
                    assignments.append(([node.target.value], node.value, node))

        self.func.body.visit(Walk())
        # Fixed point: a name assigned from an array expression is an array.
        changed = True
        while changed:
            changed = False
            for targets, value, node in assignments:
                for name in targets:
                    if self.is_array(value) and self._evidence(name, node):
                        changed = True

    def _evidence(self, name: str, node: cst.CSTNode) -> bool:
        """Record evidence for `name` at `node`; True when it is new or earlier than known."""
        self.names.add(name)
        order = self.parsed.order(node)[0]
        if order < self.first_evidence.get(name, 1 << 62):
            self.first_evidence[name] = order
            return True
        return False

    def is_array_before(self, expr: cst.BaseExpression, node: cst.CSTNode) -> bool:
        """Like `is_array`, but a name's evidence must appear before `node` ends: a list argument
        stacked into an array after the loop is still a list inside it."""
        if isinstance(expr, cst.Name):
            return expr.value in self.names and self.first_evidence.get(expr.value, 1 << 62) <= self.parsed.order(node)[1]
        return self.is_array(expr)

    def is_array(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` evaluates to a single array (not a container of arrays)."""
        if isinstance(expr, cst.Name):
            return expr.value in self.names
        if isinstance(expr, cst.Call):
            if _jax_array_call(self.parsed, expr):
                return True
            if isinstance(expr.func, cst.Name) and returns_array(self.parsed, expr.func):
                return True
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ARRAY_METHODS:
                return self.is_array(func.value) or _is_at_update(func.value, self)
            return False
        if isinstance(expr, cst.BinaryOperation):
            return self.is_array(expr.left) or self.is_array(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_array(expr.expression)
        if isinstance(expr, cst.Subscript):
            return self.is_array(expr.value) and not any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in expr.slice
            )
        if isinstance(expr, cst.Attribute):
            if self.fields is not None and self.fields.of(expr) is not None:
                return True
            return expr.attr.value in {"T", "mT", "real", "imag"} and self.is_array(expr.value)
        if isinstance(expr, cst.IfExp):
            return self.is_array(expr.body) and self.is_array(expr.orelse)
        return False


def returns_array(parsed: ParsedModule, name: cst.Name) -> bool:
    """Whether `name` refers to a function of this module whose every `return` is an array."""
    scope = parsed.scope(name)
    if scope is None:
        return False
    defs = [a.node for a in scope[name.value] if isinstance(getattr(a, "node", None), cst.FunctionDef)]
    if len(defs) != 1:
        return False
    func = defs[0]
    cache: dict[cst.FunctionDef, bool] = parsed.__dict__.setdefault("_returns_array", {})
    if func in cache:
        return cache[func]
    cache[func] = False  # recursion guard
    returns: list[cst.Return] = []

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            returns.append(node)

    func.visit(Walk())
    facts = ArrayFacts(parsed, func)
    result = bool(returns) and all(r.value is not None and facts.is_array(r.value) for r in returns)
    cache[func] = result
    return result


def _is_at_update(expr: cst.BaseExpression, facts: ArrayFacts) -> bool:
    """`x.at[i]` (the receiver of `.set(...)`/`.add(...)`)."""
    return (
        isinstance(expr, cst.Subscript)
        and isinstance(expr.value, cst.Attribute)
        and expr.value.attr.value == "at"
    )
