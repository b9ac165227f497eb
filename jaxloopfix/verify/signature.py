"""What each parameter of a function must be, read statically from how the body uses it.

The verify worker turns these specs into concrete inputs when neither an
input factory nor annotations are available: a dict for string-key
subscripts, a sequence with its time axis where a loop indexes it, an int
for static arguments (a trip count or a size), a PRNG key, a scalar.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from jaxloopfix.analysis.arrays import ArrayFacts, is_array_annotation
from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.analysis.traced import TracedFunction

ParamSpec = dict[str, Any]
MATMUL_FUNCTIONS = frozenset({"dot", "matmul", "einsum", "inner", "tensordot"})


def _key_name(element: cst.SubscriptElement) -> str | None:
    if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.SimpleString):
        value = element.slice.value.evaluated_value
        return value if isinstance(value, str) else None
    return None


class _Uses(cst.CSTVisitor):
    """Collects, per parameter name, the ways the function body uses it."""

    def __init__(self, parsed: ParsedModule, names: set[str]) -> None:
        self.parsed = parsed
        self.names = names
        self.keys: dict[str, dict[str, set[str]]] = {}  # param -> key -> {"matmul", "add"}
        self.shape_rank: dict[str, int] = {}
        self.time_axis: dict[str, int] = {}
        self.trip: set[str] = set()
        self.random_key: set[str] = set()
        self.loop_indices: list[str] = []
        self.exact_rank: dict[str, int] = {}  # `b, l, d = x.shape`, an einsum operand
        self.shape_dims: dict[str, tuple[str, int]] = {}  # `l` in `b, l, d = x.shape` -> (x, 1)
        self.integer: set[str] = set()  # used as an index into another array: an integer array
        self.iterated: set[str] = set()  # iterated by a `for` (so a Python list of arrays works too)
        self.element_of: dict[str, str] = {}  # `word` in `for word in words` -> words
        self.einsum_terms: list[list[tuple[str | None, str]]] = []  # operands of literal einsums
        self.calls: list[tuple[str, list[str | None]]] = []  # module functions called with names as arguments

    def visit_Assign(self, node: cst.Assign) -> None:
        """`b, l, d = x.shape` fixes x's rank; `n = x.shape[1]` and the unpacked names remember their axis."""
        value = node.value
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if _shape_of(value, self.names) and isinstance(target, (cst.Tuple, cst.List)):
            base = value.value.value  # type: ignore[attr-defined]
            elements = target.elements
            if not any(isinstance(e, cst.StarredElement) for e in elements):
                self.exact_rank[base] = len(elements)
                for axis, element in enumerate(elements):
                    if isinstance(element.value, cst.Name):
                        self.shape_dims[element.value.value] = (base, axis)
        elif isinstance(target, cst.Name) and isinstance(value, cst.Subscript) and _shape_of(value.value, self.names):
            axis = _literal_index(value)
            if axis is not None:
                self.shape_dims[target.value] = (value.value.value.value, axis)  # type: ignore[attr-defined]

    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        if isinstance(node.target, cst.Name) and isinstance(it, cst.Call):
            name = self.parsed.qualified_name(it.func) if isinstance(it.func, (cst.Name, cst.Attribute)) else None
            if name in {"builtins.range", "builtins.reversed"}:
                self.loop_indices.append(node.target.value)
                for arg in it.args:
                    for inner in _trip_names(arg.value):
                        if inner in self.names:
                            self.trip.add(inner)
                        elif inner in self.shape_dims:
                            base, axis = self.shape_dims[inner]
                            self.time_axis.setdefault(base, axis)
                    for sub in m.findall(arg.value, m.Subscript(value=m.Attribute(attr=m.Name("shape")))):
                        axis = _literal_index(sub) if _shape_of(sub.value, self.names) else None  # type: ignore[arg-type]
                        if axis is not None:
                            self.time_axis.setdefault(sub.value.value.value, axis)  # type: ignore[attr-defined]
        if isinstance(node.target, cst.Name) and isinstance(it, cst.Name) and it.value in self.names:
            self.element_of[node.target.value] = it.value
        sources: list[cst.BaseExpression] = []
        if isinstance(it, cst.Name):
            sources.append(it)
        elif isinstance(it, cst.Call):
            qname = self.parsed.qualified_name(it.func) if isinstance(it.func, (cst.Name, cst.Attribute)) else None
            if qname in {"builtins.zip", "builtins.enumerate"}:
                for arg in it.args:
                    value = arg.value
                    if isinstance(value, cst.Call) and self.parsed.qualified_name(value.func) == "builtins.zip":  # type: ignore[arg-type]
                        sources.extend(a.value for a in value.args)
                    else:
                        sources.append(value)
        for source in sources:
            if isinstance(source, cst.Name) and source.value in self.names:
                self.time_axis.setdefault(source.value, 0)
                self.iterated.add(source.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        base = node.value
        if isinstance(base, cst.Attribute) and base.attr.value == "shape" and isinstance(base.value, cst.Name):
            if base.value.value in self.names and len(node.slice) == 1:
                index = node.slice[0].slice
                if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                    k = int(index.value.evaluated_value)
                    self.shape_rank[base.value.value] = max(self.shape_rank.get(base.value.value, 1), k + 1)
        for element in node.slice:
            s = element.slice
            if isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and not (
                isinstance(base, cst.Name) and base.value in self.names
            ):
                used = s.value.value
                if used in self.names:
                    self.integer.add(used)
                elif used in self.element_of:
                    self.integer.add(self.element_of[used])
        if not isinstance(base, cst.Name) or base.value not in self.names:
            return
        key = _key_name(node.slice[0]) if len(node.slice) == 1 else None
        if key is not None:
            uses = self.keys.setdefault(base.value, {}).setdefault(key, set())
            parent = self.parsed.parent(node)
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply):
                uses.add("matmul")
            if isinstance(parent, cst.Arg):
                call = self.parsed.parent(parent)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in MATMUL_FUNCTIONS:
                    uses.add("matmul")
            return
        for position, element in enumerate(node.slice):
            s = element.slice
            if isinstance(s, cst.Index) and isinstance(s.value, cst.Name):
                used = s.value.value
                if used in self.names:
                    self.integer.add(used)
                elif used in self.element_of:
                    self.integer.add(self.element_of[used])
            if isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value in self.loop_indices:
                ellipsis_before = any(
                    isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis) for e in node.slice[:position]
                )
                axis = position - len(node.slice) if ellipsis_before else position
                self.time_axis.setdefault(base.value, axis)

    def visit_Call(self, node: cst.Call) -> None:
        qname = self.parsed.qualified_name(node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else None
        if qname and qname.startswith("jax.random.") and node.args:
            first = node.args[0].value
            if isinstance(first, cst.Name) and first.value in self.names:
                self.random_key.add(first.value)
        if qname and qname.rsplit(".", 1)[-1] == "einsum" and node.args and isinstance(node.args[0].value, cst.SimpleString):
            equation = node.args[0].value.evaluated_value
            if isinstance(equation, str) and "..." not in equation:
                terms = equation.split("->")[0].split(",")
                operands = [a.value for a in node.args[1:]]
                if len(terms) == len(operands):
                    self.einsum_terms.append([
                        (o.value if isinstance(o, cst.Name) and o.value in self.names else None, "".join(c for c in t if c.isalpha()))
                        for o, t in zip(operands, terms)
                    ])
        if isinstance(node.func, cst.Name) and not any(a.star or a.keyword for a in node.args):
            passed = [a.value.value if isinstance(a.value, cst.Name) else None for a in node.args]
            if any(p in self.names or p in self.element_of for p in passed if p):
                self.calls.append((node.func.value, passed))

    def settle(self, module: cst.Module, depth: int = 1) -> None:
        """Ranks and time axes that einsum letters carry between operands; integer use one call deep."""
        for terms in self.einsum_terms:
            for name, letters in terms:
                if name is not None:
                    self.exact_rank.setdefault(name, len(letters))
            time_letters = {
                letters[self.time_axis[name]]
                for name, letters in terms
                if name is not None and name in self.time_axis and -len(letters) <= self.time_axis[name] < len(letters)
            }
            for name, letters in terms:
                for letter in time_letters:
                    if name is not None and name not in self.time_axis and letter in letters:
                        self.time_axis[name] = letters.index(letter)
        if depth <= 0:
            return
        defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        for callee, passed in self.calls:
            func = defs.get(callee)
            if func is None:
                continue
            callee_params = [p.name.value for p in func.params.params]
            inner = _Uses(self.parsed, set(callee_params))
            func.body.visit(inner)
            inner.settle(module, depth - 1)
            for arg, param in zip(passed, callee_params):
                if arg and param in inner.integer:
                    self.integer.add(self.element_of.get(arg, arg))


def _shape_of(node: cst.BaseExpression, names: set[str]) -> bool:
    """`x.shape` for a parameter `x`."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == "shape"
        and isinstance(node.value, cst.Name)
        and node.value.value in names
    )


def _literal_index(node: cst.Subscript) -> int | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        value = node.slice[0].slice.value
        if isinstance(value, cst.Integer):
            return int(value.evaluated_value)
    return None


def _trip_names(node: cst.BaseExpression) -> set[str]:
    """Names used as the trip count itself (`range(n)`, `range(n - 1)`), not `x` in `x.shape[0]`."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.BinaryOperation):
        return _trip_names(node.left) | _trip_names(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _trip_names(node.expression)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range":
        return {n for a in node.args for n in _trip_names(a.value)}
    return set()


def _dict_value_spec(key: str, uses: set[str]) -> ParamSpec:
    lowered = key.lower()
    bias_like = lowered.startswith("b") or "bias" in lowered or lowered in {"scale", "shift", "offset", "gamma", "beta"}
    hints = [1, 2] if bias_like and "matmul" not in uses else [2, 1]
    return {"name": key, "kind": "array", "annotation": False, "time_axis": None, "min_rank": 1, "rank_hints": hints,
            "keys": {}, "role": None, "has_default": False}


def parameter_specs(parsed: ParsedModule, traced: TracedFunction) -> list[ParamSpec]:
    """One spec per parameter of `traced` (excluding `self`/`cls`), in signature order."""
    func = traced.node
    params = [p for p in parameters(func, stars=False) if p.name.value not in {"self", "cls"}]
    names = {p.name.value for p in params}
    uses = _Uses(parsed, names)
    func.body.visit(uses)
    uses.settle(parsed.module)
    facts = ArrayFacts(parsed, func)
    specs: list[ParamSpec] = []
    for param in params:
        name = param.name.value
        annotated = param.annotation is not None
        spec: ParamSpec = {
            "name": name, "kind": "unknown", "annotation": annotated, "time_axis": uses.time_axis.get(name),
            "min_rank": uses.exact_rank.get(name, uses.shape_rank.get(name, 1)), "rank_hints": [], "keys": {},
            "role": None, "has_default": param.default is not None,
            "dtype": "int32" if name in uses.integer else None, "exact_rank": name in uses.exact_rank,
            "iterated": name in uses.iterated,
        }
        default_is_number = isinstance(param.default, (cst.Integer, cst.Float)) or (
            isinstance(param.default, cst.UnaryOperation) and isinstance(param.default.expression, (cst.Integer, cst.Float))
        )
        annotation = param.annotation.annotation if param.annotation is not None else None
        int_annotated = isinstance(annotation, cst.Name) and annotation.value == "int"
        if name in traced.static_params or name in uses.trip or int_annotated:
            spec["kind"] = "static_int"
            spec["role"] = "trip" if name in uses.trip else "size"
        elif name in uses.keys:
            spec["kind"] = "dict"
            spec["keys"] = {k: _dict_value_spec(k, u) for k, u in uses.keys[name].items()}
        elif name in uses.random_key or name in {"key", "rng", "prng_key", "rng_key"}:
            spec["kind"] = "key"
        elif annotation is not None and isinstance(annotation, cst.Name) and annotation.value == "float":
            spec["kind"] = "scalar"
        elif default_is_number:
            spec["kind"] = "scalar"
        elif (
            name in facts.names
            or name in uses.time_axis
            or name in uses.shape_rank
            or name in uses.exact_rank
            or name in uses.integer
            or (annotation is not None and is_array_annotation(parsed, annotation))
        ):
            spec["kind"] = "array"
        if spec["kind"] == "array":
            axis = spec["time_axis"]
            low = spec["min_rank"]
            if axis is not None:
                steps = axis + 1 if axis >= 0 else -axis
                hints = [max(steps + 1, low), max(steps, low), max(steps + 2, low)]
            else:
                hints = [max(2, low), max(1, low)]
            if name in uses.exact_rank:
                hints = [uses.exact_rank[name]]
            spec["rank_hints"] = list(dict.fromkeys(hints))
        specs.append(spec)
    return specs

