"""Find inputs to run a function on: a user factory, its annotations, or shapes synthesized from how it uses its parameters.

Runs inside the worker subprocess (it imports jax). Annotation and synthesis
build *templates* first (shapes with the sequence length left open), check
them with `jax.eval_shape` on the original function, and only then make
concrete arrays, one case per sequence length. Every non-time dimension gets
the same size `D` so that matrix products line up however the parameters are
combined, and `D` differs from every length so a scan over the wrong axis shows
up as a shape error instead of passing by coincidence.
"""

from __future__ import annotations

import importlib
import functools
import inspect
import itertools
import re
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

D = 4  # the shared feature size
SEED = 0
MAX_CANDIDATES = 64
MAX_DICT_OPTIONS = 16
FLOAT_SCALAR = 0.9
ANNOTATED_FLOAT = 0.5
TIME_NAMES = frozenset(
    {"t", "time", "times", "seq", "seq_len", "seqlen", "l", "len", "length", "steps", "n_steps", "num_steps", "timesteps"}
)


@dataclass
class Case:
    """One way to call the function: positional args, keyword args, and which positions must stay static under jit."""

    label: str
    args: tuple
    kwargs: dict
    static_argnums: tuple[int, ...] = ()
    x64: bool = False  # run with jax_enable_x64 on (a family of its own)


def numpy_scalars(case: Case, fn: Callable | None = None, x64: bool = False) -> Case | None:
    """`case` with each Python float and int argument passed as a NumPy float64 or int64, and the
    numbers a parameter takes by default passed explicitly the same way, as callers holding NumPy
    values do: NumPy scalars are strongly typed (`np.float64(0.99)` makes a float16 carry float32,
    and with x64 on a float32 carry float64; `np.int64(3)` makes an int8 carry int32).

    With `x64`, the case runs with x64 on (a family of its own, always returned); without, None
    when nothing would change.
    """
    import numpy as np

    def numpy(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, float):
            return np.float64(value)
        if isinstance(value, int):
            return np.int64(value)
        return value

    args = tuple(numpy(a) for a in case.args)
    kwargs = {k: numpy(v) for k, v in case.kwargs.items()}
    kwargs.update(_numeric_defaults(fn, case))
    changed = any(a is not b for a, b in zip(args, case.args)) or kwargs.keys() != case.kwargs.keys() or any(
        kwargs[k] is not case.kwargs[k] for k in case.kwargs
    )
    if not x64 and not changed:
        return None
    label = f"{case.label}, x64 on, NumPy scalars" if x64 else f"{case.label}, NumPy scalars"
    return Case(label, args, kwargs, case.static_argnums, x64=x64)


def _numeric_defaults(fn: Callable | None, case: Case) -> dict[str, Any]:
    """{name: NumPy scalar} for each parameter left at a float or int default by `case`."""
    import numpy as np

    if fn is None:
        return {}
    try:
        signature = inspect.signature(fn)
        bound = signature.bind_partial(*case.args, **case.kwargs)
    except (TypeError, ValueError):
        return {}
    out = {}
    for name, p in signature.parameters.items():
        if name in bound.arguments or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if isinstance(p.default, float):
            out[name] = np.float64(p.default)
        elif isinstance(p.default, int) and not isinstance(p.default, bool):
            out[name] = np.int64(p.default)
    return out


class NoInputs(Exception):
    """No synthesized candidate runs, for a reason that lies outside the inputs (a missing global)."""


class InputError(Exception):
    """User code failed while producing inputs (the factory raised or returned something unusable)."""


# ---------------------------------------------------------------- templates


@dataclass(frozen=True)
class ArrayT:
    """An array whose shape entries are ints or expressions in `T` (the sequence length)."""

    shape: tuple
    dtype: str = "float32"


@dataclass(frozen=True)
class StaticT:
    """A Python value passed as is; `value == "T"` stands for the sequence length."""

    value: Any


@dataclass(frozen=True)
class KeyT:
    """A PRNG key."""


@dataclass(frozen=True)
class DictT:
    items: tuple  # ((key, template), ...)


@dataclass(frozen=True)
class ListT:
    """A Python list of `length` arrays like `element`: what a `for W in Ws` over layers also takes."""

    element: ArrayT
    length: int


Template = ArrayT | StaticT | KeyT | DictT | ListT


def _dim(entry: int | str, length: int) -> int:
    return entry if isinstance(entry, int) else int(eval(entry, {"__builtins__": {}}, {"T": length}))


def _abstract(t: Template, length: int):
    """The value `jax.eval_shape` sees: arrays as ShapeDtypeStruct, Python values as themselves."""
    import jax
    import jax.numpy as jnp

    if isinstance(t, ArrayT):
        return jax.ShapeDtypeStruct(tuple(_dim(e, length) for e in t.shape), jnp.dtype(t.dtype))
    if isinstance(t, KeyT):
        return jax.eval_shape(lambda: jax.random.PRNGKey(SEED))
    if isinstance(t, DictT):
        return {k: _abstract(v, length) for k, v in t.items}
    if isinstance(t, ListT):
        return [_abstract(t.element, length) for _ in range(t.length)]
    return length if t.value == "T" else t.value


def _concrete(t: Template, length: int, counter: Iterator[int]):
    """Fixed-seed values, so the original and the rewrite (and reruns) see the same numbers."""
    import jax
    import jax.numpy as jnp

    if isinstance(t, ArrayT):
        shape = tuple(_dim(e, length) for e in t.shape)
        key = jax.random.fold_in(jax.random.PRNGKey(SEED), next(counter))
        dtype = jnp.dtype(t.dtype)
        if jnp.issubdtype(dtype, jnp.floating):
            return jax.random.normal(key, shape, dtype) * jnp.asarray(0.5, dtype)
        if jnp.issubdtype(dtype, jnp.integer):
            return jax.random.randint(key, shape, 0, D, dtype)
        if dtype == jnp.bool_:
            return jax.random.bernoulli(key, 0.5, shape)
        return jax.random.normal(key, shape).astype(dtype)
    if isinstance(t, KeyT):
        return jax.random.PRNGKey(SEED)
    if isinstance(t, DictT):
        return {k: _concrete(v, length, counter) for k, v in t.items}
    if isinstance(t, ListT):
        return [_concrete(t.element, length, counter) for _ in range(t.length)]
    return length if t.value == "T" else t.value


# ---------------------------------------------------------------- parameters


@dataclass
class Param:
    name: str
    positional: bool
    has_default: bool
    annotation: Any = inspect.Parameter.empty
    spec: dict = field(default_factory=dict)


def python_function(fn: Callable) -> Callable:
    """The plain Python function under jax.jit / functools.wraps layers (they keep it as `__wrapped__`)."""
    try:
        return inspect.unwrap(fn)
    except Exception:
        return fn


def _globals(fn: Callable) -> dict:
    """The module globals behind `fn`, looking through `functools.partial` (a method bound to its receiver)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(python_function(fn), "__globals__", {})


def boolean_defaults(fn: Callable) -> list[dict]:
    """Flips to try when a loop did not run: each boolean default negated alone, then all at once."""
    try:
        sig = inspect.signature(python_function(fn))
    except (TypeError, ValueError):
        return []
    flags = {p.name: not p.default for p in sig.parameters.values() if isinstance(p.default, bool)}
    singles = [{name: value} for name, value in flags.items()]
    return singles + ([flags] if len(flags) > 1 else [])


def _resolve_annotation(ann: Any, globals_: dict) -> Any:
    """String annotations (`from __future__ import annotations`) evaluated in the function's module, else unusable."""
    if not isinstance(ann, str):
        return ann
    try:
        return eval(ann, dict(globals_))
    except Exception:
        return inspect.Parameter.empty


def parameters(fn: Callable, signature: list[dict]) -> list[Param]:
    """Merge the runtime signature (order, kinds, defaults, annotations) with the parent's static ParamSpecs."""
    specs = {s.get("name"): s for s in signature or []}
    raw = python_function(fn)
    try:
        sig = inspect.signature(raw)
    except (TypeError, ValueError):
        return [Param(s["name"], True, bool(s.get("has_default")), spec=s) for s in signature or []]
    globals_ = _globals(fn)
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        params.append(
            Param(
                p.name,
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD),
                p.default is not p.empty,
                _resolve_annotation(p.annotation, globals_),
                specs.get(p.name, {"name": p.name, "kind": "unknown"}),
            )
        )
    return params


def _required(params: list[Param]) -> list[Param]:
    """Parameters we must pass; those with defaults keep them."""
    return [p for p in params if not p.has_default]


def _call_templates(params: list[Param], templates: list[Template]) -> tuple[tuple, dict]:
    args = tuple(t for p, t in zip(params, templates) if p.positional)
    kwargs = {p.name: t for p, t in zip(params, templates) if not p.positional}
    return args, kwargs


def _static_positions(args: tuple) -> tuple[int, ...]:
    """Positions holding Python ints/bools/strings/None (sizes, trip counts, flags): static under jit."""
    return tuple(i for i, a in enumerate(args) if _is_static_value(a))


def _is_static_value(value: Any) -> bool:
    if isinstance(value, (bool, int, str, type(None))):
        return True
    return isinstance(value, tuple) and all(isinstance(v, (bool, int)) for v in value)


def _template_static(t: Template) -> bool:
    return isinstance(t, StaticT) and not isinstance(t.value, float)


# ---------------------------------------------------------------- checking and building


def eval_shape_ok(fn: Callable, args: tuple, kwargs: dict) -> str | None:
    """Trace `fn` abstractly with array leaves as ShapeDtypeStruct and Python values closed over; None if it works."""
    import jax

    flat, treedef = jax.tree_util.tree_flatten((args, kwargs))
    dynamic = [i for i, leaf in enumerate(flat) if isinstance(leaf, jax.ShapeDtypeStruct)]

    def call(*values):
        leaves = list(flat)
        for i, v in zip(dynamic, values):
            leaves[i] = v
        a, k = jax.tree_util.tree_unflatten(treedef, leaves)
        return fn(*a, **k)

    try:
        jax.eval_shape(call, *[flat[i] for i in dynamic])
    except Exception as exc:  # any failure means "not these shapes"
        return f"{type(exc).__name__}: {exc}"
    return None


def _fits(
    fn: Callable, params: list[Param], templates: list[Template], lengths: list[int], errors: list[str] | None = None
) -> bool:
    args, kwargs = _call_templates(params, templates)
    for length in lengths:
        a = tuple(_abstract(t, length) for t in args)
        k = {n: _abstract(t, length) for n, t in kwargs.items()}
        error = eval_shape_ok(fn, a, k)
        if error is not None:
            if errors is not None:
                errors.append(error)
            return False
    return True


def _cases(params: list[Param], templates: list[Template], lengths: list[int]) -> list[Case]:
    args_t, kwargs_t = _call_templates(params, templates)
    static = tuple(i for i, t in enumerate(args_t) if _template_static(t))
    cases = []
    for length in lengths:
        counter = itertools.count()
        args = tuple(_concrete(t, length, counter) for t in args_t)
        kwargs = {n: _concrete(t, length, counter) for n, t in kwargs_t.items()}
        cases.append(Case(f"T={length}", args, kwargs, static))
    return cases


# ---------------------------------------------------------------- 1. factory


def from_factory(target: str) -> list[Case]:
    """Import and call `module:function`; it returns (args, kwargs) or a list of such pairs."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise InputError(f"input factory {target!r} is not of the form 'module:function'")
    factory = importlib.import_module(module_name)
    for part in attr.split("."):
        factory = getattr(factory, part)
    produced = factory()
    pairs = [produced] if _is_pair(produced) else produced
    if not isinstance(pairs, (list, tuple)) or not all(_is_pair(p) for p in pairs):
        raise InputError(f"input factory {target} must return (args, kwargs) or a list of (args, kwargs) pairs")
    return _from_pairs(pairs, "factory" if len(pairs) == 1 else "factory[{i}]")


def _from_pairs(pairs: list, label: str) -> list[Case]:
    """A case per `(args, kwargs)` pair; `label` may number them (`{i}`)."""
    cases = []
    for i, (args, kwargs) in enumerate(pairs):
        args = tuple(args)
        cases.append(Case(label.format(i=i), args, dict(kwargs or {}), _static_positions(args)))
    return cases


MODULE_EXAMPLES = "example_inputs"


def from_recorded(entries: list[dict]) -> list[Case]:
    """Cases from what `jaxloopfix record` saw the function called with (see `recorder`): arrays of
    the recorded shapes and dtypes (fixed-seed values; only shapes were kept), Python values as
    recorded, weakly typed 0-d tracers as Python numbers, NumPy scalars as NumPy scalars."""
    cases = []
    for i, entry in enumerate(entries):
        counter = itertools.count()
        described = entry.get("args") or {}
        positional = [n for n in entry.get("positional") or [] if n in described]
        args = tuple(_replay(described[n], counter) for n in positional)
        kwargs = {n: _replay(d, counter) for n, d in described.items() if n not in positional}
        cases.append(Case(f"recorded[{i}]", args, kwargs, _static_positions(args)))
    return cases


def _replay(entry: dict, counter: Iterator[int]) -> Any:
    import jax
    import numpy as np

    if "py" in entry:
        value = entry["value"]
        return complex(*value) if entry["py"] == "complex" else value
    if "seq" in entry:
        items = [_replay(e, counter) for e in entry["items"]]
        return tuple(items) if entry["seq"] == "tuple" else items
    if "dict" in entry:
        return {k: _replay(v, counter) for k, v in entry["dict"].items()}
    dtype, shape = str(entry["dtype"]), tuple(entry["shape"])
    if dtype.startswith("key<"):
        return jax.random.key(SEED)
    if "numpy_scalar" in entry:
        return np.dtype(dtype).type(entry["numpy_scalar"])
    if entry.get("weak") and not shape:
        kind = np.dtype(dtype).kind
        return {"f": FLOAT_SCALAR, "c": complex(FLOAT_SCALAR, 0.0), "b": True}.get(kind, 1)
    return _concrete(ArrayT(shape, dtype), 0, counter)


_PRODUCED: "weakref.WeakKeyDictionary[Any, list | None]" = weakref.WeakKeyDictionary()


def _module_examples(module: Any) -> list | None:
    """What the module's `example_inputs()` returns, as a list of entries; called once per module,
    since verify reads it for the function itself and again for the functions that reach it."""
    try:
        return _PRODUCED[module]
    except (KeyError, TypeError):
        pass
    factory = getattr(module, MODULE_EXAMPLES, None)
    if not callable(factory):
        return None
    try:
        produced = factory()
    except BaseException as exc:
        raise InputError(f"the module's {MODULE_EXAMPLES}() raised") from exc
    entries = [produced] if _is_pair(produced) else produced
    entries = list(entries) if isinstance(entries, (list, tuple)) else None
    try:
        _PRODUCED[module] = entries
    except TypeError:
        pass  # not weakly referenceable: read it again next time
    return entries


def _named(entry: Any) -> bool:
    return isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str)


def from_module_examples(module: Any, function: str) -> list[Case] | None:
    """The module's own examples: a module-level `example_inputs()` returning `(args, kwargs)`
    pairs, or `(function_name, args, kwargs)` triples of which those naming `function` are used.
    These are the calls the module's author wrote down, so they come before synthesized guesses."""
    pairs = []
    for entry in _module_examples(module) or []:
        if _named(entry):
            if entry[0] == function:
                pairs.append((entry[1], entry[2]))
        elif _is_pair(entry):
            pairs.append(entry)
    return _from_pairs(pairs, MODULE_EXAMPLES + "[{i}]") or None


def caller_examples(module: Any, function: str) -> list[tuple[str, list[Case]]]:
    """(name, cases) for each other module-level function the module's `example_inputs()` names,
    in the order it names them: entry points to verify `function` through (see `through_caller`)."""
    grouped: dict[str, list] = {}
    for entry in _module_examples(module) or []:
        if _named(entry) and entry[0] != function and callable(getattr(module, entry[0], None)):
            grouped.setdefault(entry[0], []).append((entry[1], entry[2]))
    return [(name, _from_pairs(pairs, f"{MODULE_EXAMPLES}[{{i}}] through `{name}`")) for name, pairs in grouped.items()]


def _is_pair(value: Any) -> bool:
    return (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and isinstance(value[0], (tuple, list))
        and isinstance(value[1], (dict, type(None)))
    )


# ---------------------------------------------------------------- 2. annotations


def _dim_entry(token: str) -> int | str | None:
    """One jaxtyping dimension: a number, the time axis `T`, an expression in those, or None for variadic dims."""
    if token == "..." or token.startswith("*"):
        return None
    token = token.lstrip("#_?")
    if token.isdigit():
        return int(token)
    if re.fullmatch(r"\w+", token):
        return "T" if token.lower() in TIME_NAMES else D
    expr = re.sub(r"[A-Za-z_]\w*", lambda m: "T" if m.group(0).lower() in TIME_NAMES else str(D), token)
    return expr


def _annotation_dtype(ann: Any, x64: bool) -> str:
    names = [str(d) for d in (getattr(ann, "dtypes", None) or [])]
    if not names and getattr(ann, "dtype", None) is not None:
        names = [str(getattr(ann.dtype, "__name__", ann.dtype))]
    # With x64 on, the widest the annotation allows (a `Complex` array may be complex128, whose
    # real part is float64); otherwise JAX's defaults.
    preferred = (
        ["float64", "float32", "complex128", "complex64", "int64", "int32"]
        if x64 else ["float32", "float64", "complex64", "complex128", "int32", "int64"]
    )
    for name in preferred + ["bool", "bool_", "uint32"]:
        if name in names:
            return "bool" if name == "bool_" else name
    return names[0] if names and _valid_dtype(names[0]) else ("float64" if x64 else "float32")


def _valid_dtype(name: str) -> bool:
    import jax.numpy as jnp

    try:
        jnp.dtype(name)
    except Exception:
        return False
    return True


def _is_plain_array_annotation(ann: Any) -> bool:
    import jax
    import numpy as np

    return any(ann is a for a in (jax.Array, np.ndarray, getattr(jax.numpy, "ndarray", None)) if a is not None)


def annotation_template(ann: Any, spec: dict, x64: bool) -> Template | None:
    """A template from a runtime annotation, or None if the annotation tells us nothing usable."""
    dim_str = getattr(ann, "dim_str", None)
    if isinstance(dim_str, str):
        entries = [_dim_entry(tok) for tok in dim_str.split()]
        return ArrayT(tuple(e for e in entries if e is not None), _annotation_dtype(ann, x64))
    if _is_plain_array_annotation(ann):
        return _array_options(spec, x64)[0]
    if ann is float:
        return StaticT(ANNOTATED_FLOAT)
    if ann is int:
        return StaticT(D if spec.get("role") == "size" else "T")
    return None


def from_annotations(fn: Callable, params: list[Param], lengths: list[int], x64: bool) -> list[Case] | None:
    """Inputs from annotations when every required parameter is annotated or a static int/scalar/key; None otherwise."""
    required = _required(params)
    templates, annotated = [], 0
    for p in required:
        fixed = p.spec.get("kind") == "fixed"
        t = None if fixed or p.annotation is inspect.Parameter.empty else annotation_template(p.annotation, p.spec, x64)
        if t is not None:
            annotated += 1
        elif p.spec.get("kind") in ("static_int", "scalar", "key", "fixed"):
            t = _options(p.spec, x64)[0]
        else:
            return None
        templates.append(t)
    if not annotated:
        return None
    if not _fits(fn, required, templates, lengths):
        # Dimensions of one shared size do not fit it (a carry raveled or squeezed in the loop
        # grows or shrinks); the annotated ranks may still run with axes of size 1.
        return _unit_family(fn, required, templates, lengths) or None
    return (
        _cases(required, templates, lengths)
        + _variadic_batch(fn, required, templates, lengths)
        + _unit_family(fn, required, templates, lengths)
    )


def _variadic_batch(fn: Callable, params: list[Param], templates: list[Template], lengths: list[int]) -> list[Case]:
    """A batch axis where an annotation allows more axes (`"T ... H"`, `"*B D"`): the annotation
    says callers may pass them, and a carry built from fixed sizes does not follow them."""
    batch = _batch_size(lengths)
    widened, changed = [], False
    for p, t in zip(params, templates):
        dim_str = getattr(p.annotation, "dim_str", None)
        tokens = dim_str.split() if isinstance(dim_str, str) and type(t) is ArrayT else []
        variadic = next((i for i, tok in enumerate(tokens) if _dim_entry(tok) is None), None)
        if variadic is None:
            widened.append(t)
            continue
        at = sum(1 for tok in tokens[:variadic] if _dim_entry(tok) is not None)
        widened.append(BatchedT(t.shape[:at] + (batch,) + t.shape[at:], t.dtype, at))
        changed = True
    return _batch_cases(fn, params, templates, [widened], lengths, batch) if changed else []


def _unit_family(fn: Callable, params: list[Param], templates: list[Template], lengths: list[int]) -> list[Case]:
    """The chosen inputs with every feature dimension of size 1, when the original accepts them: a
    batch or feature axis of one is common, and `squeeze`, `ravel` or broadcasting against it
    change a carry's shape in the loop where a scan's carry cannot change."""
    unit = [ArrayT(tuple(1 if e == D else e for e in t.shape), t.dtype) if type(t) is ArrayT else t for t in templates]
    if unit == templates or not _fits(fn, params, unit, lengths[:1]):
        return []
    cases = _cases(params, unit, lengths[:1])
    for case in cases:
        case.label += ", size-1 axes"
    return cases


# ---------------------------------------------------------------- 3. synthesis


def _float_dtype(x64: bool) -> str:
    return "float64" if x64 else "float32"


def _shape(rank: int, time_axis: int | None) -> tuple | None:
    """Rank `rank` with T at `time_axis` and D elsewhere; None if the axis does not exist at that rank."""
    shape = [D] * rank
    if time_axis is not None:
        axis = time_axis if time_axis >= 0 else rank + time_axis
        if not 0 <= axis < rank:
            return None
        shape[axis] = "T"
    return tuple(shape)


def _array_options(spec: dict, x64: bool) -> list[Template]:
    time_axis = spec.get("time_axis")
    min_rank = max(int(spec.get("min_rank") or 0), 1)
    base = max(min_rank, (time_axis + 1) if isinstance(time_axis, int) and time_axis >= 0 else 1)
    ranks = [r for r in spec.get("rank_hints") or [] if r >= min_rank] + [base, base + 1]
    if spec.get("exact_rank"):
        ranks = [min_rank]
    shapes = [_shape(r, time_axis) for r in dict.fromkeys(ranks)]
    dtype = spec.get("dtype") or _float_dtype(x64)
    return [ArrayT(s, dtype) for s in shapes if s is not None]


def _dict_options(spec: dict, x64: bool) -> list[Template]:
    keys = spec.get("keys") or {}
    per_key = [(k, _options(v, x64)) for k, v in keys.items()]
    sizes = [len(opts) for _, opts in per_key]
    return [
        DictT(tuple((k, opts[i]) for (k, opts), i in zip(per_key, combo)))
        for combo in ranked_product(sizes, MAX_DICT_OPTIONS)
    ]


def _options(spec: dict, x64: bool) -> list[Template]:
    """Candidate templates for one parameter, most likely first."""
    kind = spec.get("kind", "unknown")
    if kind == "fixed":
        return [StaticT(spec["value"])]
    if kind == "array":
        return _array_options(spec, x64)
    if kind == "dict":
        return _dict_options(spec, x64)
    if kind == "static_int":
        role = spec.get("role")
        return [StaticT("T")] if role == "trip" else [StaticT(D)] if role == "size" else [StaticT("T"), StaticT(D)]
    if kind == "scalar":
        return [StaticT(FLOAT_SCALAR)]
    if kind == "key":
        return [KeyT()]
    time_axis = spec.get("time_axis")
    arrays = [_shape(r, time_axis) for r in (1, 2)]
    return [ArrayT(s, _float_dtype(x64)) for s in arrays if s is not None] + [StaticT(FLOAT_SCALAR)]


def ranked_product(sizes: list[int], limit: int) -> Iterator[tuple[int, ...]]:
    """Index tuples into option lists, by increasing index sum, so the jointly most likely assignments come first."""
    if any(s <= 0 for s in sizes):
        return
    produced = 0
    for total in range(sum(s - 1 for s in sizes) + 1):
        for combo in _with_sum(sizes, total):
            yield combo
            produced += 1
            if produced >= limit:
                return


def _with_sum(sizes: list[int], total: int) -> Iterator[tuple[int, ...]]:
    if not sizes:
        if total == 0:
            yield ()
        return
    for i in range(min(sizes[0] - 1, total) + 1):
        for rest in _with_sum(sizes[1:], total - i):
            yield (i, *rest)


def synthesize(
    fn: Callable, params: list[Param], lengths: list[int], x64: bool, prefer: Callable | None = None,
    errors: list[str] | None = None,
) -> list[Case] | None:
    """The first candidate (at most MAX_CANDIDATES tried) that the original traces with.

    Guessed shapes can satisfy a loop yet not the intent (a carry that grows a
    dimension), so among the candidates the original accepts, the first that
    `prefer` (the rewrite) also accepts wins; if it accepts none, the first the
    original accepts is used and the rewrite's failure is reported.
    """
    required = _required(params)
    options = [_options(p.spec, x64) for p in required]
    fallback = None
    for combo in ranked_product([len(o) for o in options], MAX_CANDIDATES):
        templates = [opts[i] for opts, i in zip(options, combo)]
        if not _fits(fn, required, templates, lengths, errors):
            continue
        if prefer is None or _fits(prefer, required, templates, lengths):
            return _with_families(fn, required, options, combo, lengths)
        fallback = fallback or (templates, combo)
    if fallback is None:
        return None
    return _with_families(fn, required, options, fallback[1], lengths)


def _with_families(
    fn: Callable, params: list[Param], options: list[list[Template]], combo: tuple[int, ...], lengths: list[int]
) -> list[Case]:
    """The chosen candidate's cases, then its batch-axis and size-1 families."""
    templates = [opts[i] for opts, i in zip(options, combo)]
    return (
        _cases(params, templates, lengths)
        + _batched_family(fn, params, options, combo, lengths)
        + _unit_family(fn, params, templates, lengths)
        + _list_family(fn, params, templates, lengths)
    )


def _list_family(fn: Callable, params: list[Param], templates: list[Template], lengths: list[int]) -> list[Case]:
    """Arrays a `for` iterates (`for W in Ws`) passed as Python lists of their rows, when the
    original accepts them: layer weights often come as a list, which a fix that stacks or scans
    over them must take as well."""
    listed = [
        ListT(ArrayT(t.shape[1:], t.dtype), _dim(t.shape[0], lengths[0]))
        if p.spec.get("iterated") and type(t) is ArrayT and len(t.shape) >= 2 else t
        for p, t in zip(params, templates)
    ]
    if listed == templates or not _fits(fn, params, listed, lengths[:1]):
        return []
    cases = _cases(params, listed, lengths[:1])
    for case in cases:
        case.label += LIST_LABEL
    return cases


LIST_LABEL = ", iterated arrays as lists"


def _batch_size(lengths: list[int]) -> int:
    """A batch size unlike every other dimension, so code that mixes it up with one fails instead of passing by coincidence."""
    return next(b for b in (3, 6, 7, 11, 13) if b != D and b not in lengths)


@dataclass(frozen=True)
class BatchedT(ArrayT):
    """An array template with a batch axis at `batch_axis`."""

    batch_axis: int = 0


def _with_batch(t: ArrayT, batch: int) -> BatchedT:
    """`t` with a batch axis: after a leading time axis (`(T, B, ...)`, as sequences are stacked), else in front."""
    shape = tuple(t.shape)
    timed = [i for i, e in enumerate(shape) if isinstance(e, str) and "T" in e]
    if timed and timed[0] == 0:
        return BatchedT(shape[:1] + (batch,) + shape[1:], t.dtype, 1)
    return BatchedT((batch, *shape), t.dtype, 0)


def _acts_as_batch(fn: Callable, params: list[Param], templates: list[Template], case: Case, batch: int) -> bool:
    """Whether the original treats the batch axis as a batch: its output on the batched inputs holds,
    along some axis of size `batch`, its output on each element. Inputs it merely broadcasts into
    something else (a state that grows an axis per step) are not a batch, and say nothing of a fix."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    args_t, kwargs_t = _call_templates(params, templates)

    def element(value: Any, t: Template, b: int) -> Any:
        return jnp.take(value, b, axis=t.batch_axis) if isinstance(t, BatchedT) else value

    def holds(whole: Any, one: Any, b: int) -> bool:
        whole, one = np.asarray(whole), np.asarray(one)
        for axis in range(whole.ndim):
            if whole.shape[axis] == batch and np.delete(whole.shape, axis).tolist() == list(one.shape):
                if np.allclose(np.take(whole, b, axis=axis), one, rtol=1e-4, atol=1e-5, equal_nan=True):
                    return True
        return False

    try:
        whole = jax.tree_util.tree_leaves(fn(*case.args, **case.kwargs))
        if not whole:
            return False
        for b in range(batch):
            args = tuple(element(v, t, b) for v, t in zip(case.args, args_t))
            kwargs = {k: element(v, kwargs_t[k], b) for k, v in case.kwargs.items()}
            one = jax.tree_util.tree_leaves(fn(*args, **kwargs))
            if len(one) != len(whole) or not all(holds(w, o, b) for w, o in zip(whole, one)):
                return False
    except Exception:  # noqa: BLE001 - an element the original rejects: not a batch
        return False
    return True


def _batched_family(
    fn: Callable, params: list[Param], options: list[list[Template]], combo: tuple[int, ...], lengths: list[int]
) -> list[Case]:
    """The chosen inputs with a batch axis, when the original accepts them: a rewrite verified only
    on the lowest ranks says nothing of `(T, batch)` arrays, on which a carry that starts as a
    Python scalar becomes a vector.

    The batch size differs from every other dimension, and the original must treat the axis as
    a batch (`_acts_as_batch`). The sequences (arrays with a time axis)
    take it first, as batched callers pass them beside unbatched weights; failing that, every array.
    """
    chosen = [opts[i] for opts, i in zip(options, combo)]
    batch = _batch_size(lengths)
    timed = [isinstance(t, ArrayT) and any(isinstance(e, str) and "T" in e for e in t.shape) for t in chosen]
    variants = [
        [_with_batch(t, batch) if is_timed else t for t, is_timed in zip(chosen, timed)],
        [_with_batch(t, batch) if isinstance(t, ArrayT) else t for t in chosen],
    ]
    return _batch_cases(fn, params, chosen, variants, lengths, batch)


def _batch_cases(
    fn: Callable, params: list[Param], chosen: list[Template], variants: list[list[Template]], lengths: list[int],
    batch: int,
) -> list[Case]:
    """The first of `variants` the original accepts and treats as a batch, as cases labelled so."""
    tried: list[list[Template]] = [chosen]
    for templates in variants:
        if templates in tried:
            continue
        tried.append(templates)
        if not _fits(fn, params, templates, lengths):
            continue
        cases = _cases(params, templates, lengths[:1])
        if not _acts_as_batch(fn, params, templates, cases[0], batch):
            continue
        for case in cases:
            case.label += ", with a batch axis"
        return cases
    return []


# ---------------------------------------------------------------- entry point


def _with_flips(params: list[Param], flips: dict) -> list[Param]:
    """Parameters with the flipped flags passed by keyword as fixed values instead of left at their defaults."""
    out = []
    for p in params:
        if p.name in flips:
            p = Param(p.name, False, False, inspect.Parameter.empty, {"name": p.name, "kind": "fixed", "value": flips[p.name]})
        out.append(p)
    return out


def build_cases(
    fn: Callable,
    inputs: dict,
    lengths: list[int],
    x64: bool = False,
    prefer: Callable | None = None,
    flips: dict | None = None,
    module: Any = None,
    function: str | None = None,
) -> tuple[str | None, list[Case]]:
    """Cases from the first source that yields any: what `jaxloopfix record` saw (unless a factory is
    named), factory, the module's `example_inputs()`, annotations, synthesis. Factory errors raise InputError.

    `prefer` (the rewritten function) only breaks ties between synthesized candidates; see `synthesize`.
    `flips` sets boolean parameters away from their defaults (a flag that selects the loop's branch).
    """
    factory = (inputs or {}).get("factory")
    recorded = (inputs or {}).get("recorded")
    if recorded and not factory and not flips:
        cases = from_recorded(recorded)
        if cases:
            return "recorded", cases
    if factory:
        try:
            return "factory", from_factory(factory)
        except InputError:
            raise
        except BaseException as exc:
            raise InputError(f"input factory {factory} raised") from exc
    if module is not None and function is not None and not flips:
        examples = from_module_examples(module, function)
        if examples:
            return "example_inputs()", examples
    lengths = list(lengths or [5, 9])
    params = _with_flips(parameters(fn, (inputs or {}).get("signature") or []), flips or {})
    try:
        cases = from_annotations(fn, params, lengths, x64)
    except Exception:
        cases = None
    if cases:
        return "annotations", cases
    errors: list[str] = []
    cases = synthesize(fn, params, lengths, x64, prefer, errors)
    if not cases and errors and all(e == errors[0] for e in errors) and errors[0].startswith("NameError"):
        # Every candidate stops at the same missing name: the inputs are not what is wrong.
        raise NoInputs(f"the original raises {errors[0]} before it reads its inputs")
    return ("synthesized", cases) if cases else (None, [])
