"""Dtypes the carry-type proof reasons about, and JAX's rules lifted to them.

A `DType` stands for a set of concrete dtypes (the table's keys, weak ones included) in each x64
mode: a dtype written in the code (`jnp.float32`, the default float), a *symbol* (the dtype of
an argument, `xs.dtype`, the same concrete dtype wherever it appears), or a set of possibilities
with no name. An operation's result is found by asking the table generated from JAX
(`dtype_table.py`) for every assignment of concrete dtypes to its arguments, in both x64 modes;
no promotion rule is written by hand. Two dtypes are *provably equal* only when they are the same
symbol, or both one and the same concrete dtype in each mode.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from jaxloopfix.analysis.dtype_operations import KEY_OF_NAME, KIND_OF, NAME_OF_KEY, WEAK, WEAK_ARRAYS, canonical, universe

MODES = (False, True)
STRONG_OF_WEAK = {
    False: {"wi": "i32", "wf": "f32", "wc": "c64", "wia": "i32", "wfa": "f32", "wca": "c64"},
    True: {"wi": "i64", "wf": "f64", "wc": "c128", "wia": "i64", "wfa": "f64", "wca": "c128"},
}
# Names of dtypes written in code: their keys in each x64 mode.
NAMED = {
    "DF": ("f32", "f64"), "DI": ("i32", "i64"), "DC": ("c64", "c128"),
    "weak-int": ("wi", "wi"), "weak-float": ("wf", "wf"), "weak-complex": ("wc", "wc"),
    **{name: (canonical(key, False), key) for name, key in KEY_OF_NAME.items() if name != "bool_"},
}
KIND_KEYS = {
    "bool": ("bool",), "int": ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "wia"),
    "float": ("bf16", "f16", "f32", "f64", "wfa"), "complex": ("c64", "c128", "wca"),
}
KIND_KEYS["real"] = KIND_KEYS["int"] + KIND_KEYS["float"]
LONG_NAME = NAME_OF_KEY | {
    "wi": "Python int", "wf": "Python float", "wc": "Python complex", "wia": "weak int", "wfa": "weak float",
    "wca": "weak complex"}


@dataclass(frozen=True)
class DType:
    """`name`: a name in NAMED, a symbol (`xs.dtype`; `strong:xs.dtype` is its strongly typed
    version), or None. `domain`: the keys the value may have with x64 off and on (a symbol's
    possible values; for a nameless dtype, what is known of it); None means any."""

    name: str | None
    kind: str | None
    weak: bool = False
    domain: tuple[frozenset[str], frozenset[str]] | None = None


def named(name: str) -> DType:
    off, on = NAMED[name]
    return DType(name, KIND_OF[on], on in WEAK)


def symbol(name: str, kind: str | None, allowed: Sequence[str] | None = None) -> DType:
    """The dtype of an argument: one concrete dtype of `kind` (or of the `allowed` keys)."""
    keys = tuple(allowed) if allowed is not None else (KIND_KEYS[kind] if kind in KIND_KEYS else None)
    if keys is None:
        return DType(name, None, False, None)
    return DType(name, kind, False, _domain(keys))


def one_of(keys: Sequence[str]) -> DType:
    """A nameless dtype that is one of these keys (64-bit ones narrowed with x64 off)."""
    return options(*_domain(keys))


def _domain(keys: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The keys with x64 off and on: 64-bit ones narrowed, then kept to what the mode has."""
    off, on = (frozenset(canonical(k, x64) for k in keys) & frozenset(universe(x64)) for x64 in MODES)
    return off, on


def _strong(key: str, x64: bool) -> str:
    """The strongly typed dtype of a weak key (a Python float is the default float)."""
    return STRONG_OF_WEAK[x64].get(key, key)


def options(keys_off: frozenset[str], keys_on: frozenset[str]) -> DType:
    """A nameless dtype known to be one of these keys in each mode."""
    kinds = {kind_of(k) for k in keys_off | keys_on}
    weak = bool(keys_off | keys_on) and all(is_weak(k) for k in keys_off | keys_on)
    for name, (off, on) in NAMED.items():
        if keys_off == {off} and keys_on == {on}:
            return named(name)
    return DType(None, kinds.pop() if len(kinds) == 1 else None, weak, (keys_off, keys_on))


def kind_of(key: str) -> str:
    """`f32` is a float; `boolw` (a weakly typed bool some comparisons give) a bool."""
    return KIND_OF.get(key) or KIND_OF[key.removesuffix("w")]


def is_weak(key: str) -> bool:
    return key in WEAK or key in WEAK_ARRAYS or (key not in KIND_OF and key.endswith("w"))


def is_symbol(dtype: DType) -> bool:
    return dtype.name is not None and dtype.name not in NAMED


def _base_symbol(dtype: DType) -> str:
    return dtype.name.removeprefix("strong:")  # type: ignore[union-attr]


def possible(dtype: DType, x64: bool) -> frozenset[str]:
    """The keys `dtype` may have in this mode."""
    everything = frozenset(universe(x64))
    if dtype.name in NAMED:
        return frozenset({NAMED[dtype.name][x64]})
    keys = dtype.domain[x64] if dtype.domain is not None else everything
    if dtype.name is not None and dtype.name.startswith("strong:"):
        return frozenset(_strong(k, x64) for k in keys)
    return keys


def provably_equal(a: DType, b: DType) -> bool:
    """Equal in every program and mode: the same symbol, or one and the same concrete dtype."""
    if is_symbol(a) and is_symbol(b) and a.name == b.name:
        return True
    for x64 in MODES:
        pa, pb = possible(a, x64), possible(b, x64)
        if len(pa) != 1 or pa != pb:
            return False
    return True


def known(dtype: DType) -> bool:
    """One concrete dtype in each mode, or a symbol."""
    return is_symbol(dtype) or all(len(possible(dtype, x64)) == 1 for x64 in MODES)


def text(dtype: DType) -> str:
    if dtype.name == "DF":
        return "the default float dtype"
    if dtype.name == "DI":
        return "the default int dtype"
    if dtype.name is not None and dtype.name.startswith("weak-"):
        return f"a weakly typed Python {dtype.kind or 'number'}"
    keys = sorted(possible(dtype, False) | possible(dtype, True), key=_order)
    listed = ", ".join(f"`{LONG_NAME.get(k, k)}`" for k in keys)
    if dtype.name is not None:
        shown = f"`{dtype.name.removeprefix('strong:')}`"
        return f"{shown} ({listed})" if dtype.domain is not None and len(keys) <= 6 else shown
    if len(keys) == 1:
        return listed
    if len(keys) <= 6:
        return "one of " + listed
    return "any dtype"


def _order(key: str) -> int:
    order = universe(True)
    return order.index(key) if key in order else len(order)


class Rejected(Exception):
    """JAX rejects the operation for every dtype its arguments may have."""


class Untabled(Exception):
    """An argument may have a dtype the table has no inputs for (a weakly typed bool)."""


@lru_cache(maxsize=None)
def _column(operation: str, x64: bool, ranks: str) -> tuple[str, ...] | None:
    from jaxloopfix.analysis.dtype_table import COLUMNS, TABLE

    modes = TABLE.get(operation)
    if modes is None or (x64, ranks) not in modes:
        return None
    return _split(COLUMNS[modes[(x64, ranks)]])


@lru_cache(maxsize=None)
def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


@lru_cache(maxsize=None)
def arity(operation: str) -> int | None:
    from jaxloopfix.analysis.dtype_table import TABLE

    modes = TABLE.get(operation)
    return None if not modes else len(next(iter(modes))[1])


def known_operation(operation: str) -> bool:
    return arity(operation) is not None


def lookup(operation: str, x64: bool, keys: Sequence[str], ranks: str | None = None) -> str:
    """JAX's result key for concrete argument keys, each 0-d or not as `ranks` says (`!`: JAX
    rejects it)."""
    column = _column(operation, x64, ranks or "n" * len(keys))
    assert column is not None
    index = 0
    order = universe(x64)
    for key in keys:
        index = index * len(order) + order.index(key)
    return column[index]


def apply(operation: str, arguments: Sequence[DType], ranks: Sequence[str | None] | None = None) -> DType:
    """The dtype of `operation(*arguments)`, from JAX's table, for every dtype the arguments may
    have and each argument 0-d (`"0"`), an array (`"n"`) or either (None); correlated symbols take
    the same value everywhere. Raises Rejected when JAX rejects every combination (the loop itself
    would fail)."""
    shapes = list(ranks) if ranks is not None else [None] * len(arguments)
    configurations = ["".join(c) for c in itertools.product(*(("0", "n") if r is None else (r,) for r in shapes))]
    outcomes: dict[bool, list[tuple[dict[str, str], str]]] = {}
    for x64 in MODES:
        symbols: dict[str, frozenset[str]] = {}
        for argument in arguments:
            if is_symbol(argument):
                base = _base_symbol(argument)
                raw = DType(base, argument.kind, False, argument.domain)
                symbols[base] = symbols.get(base, possible(raw, x64)) & possible(raw, x64)
        names = sorted(symbols)
        found: list[tuple[dict[str, str], str]] = []
        for values in itertools.product(*(sorted(symbols[n]) for n in names)):
            assignment = dict(zip(names, values))
            free = [
                [_concrete(a, assignment, x64)] if is_symbol(a) else sorted(possible(a, x64)) for a in arguments
            ]
            for keys in itertools.product(*free):
                if any(k not in universe(x64) for k in keys):
                    raise Untabled(operation)
                for configuration in configurations:
                    result = lookup(operation, x64, keys, configuration)
                    if result != "!":
                        found.append((assignment, result))
        outcomes[x64] = found
    if not outcomes[False] and not outcomes[True]:
        raise Rejected(operation)
    results = {x64: frozenset(r for _, r in outcomes[x64]) for x64 in MODES}
    if all(len(results[x64]) == 1 for x64 in MODES):
        return options(results[False], results[True])
    for argument in arguments:
        if not is_symbol(argument):
            continue
        base = _base_symbol(argument)
        for candidate, convert in ((base, lambda k, x64: k), (f"strong:{base}", _strong)):
            if all(r == convert(assignment[base], x64) for x64 in MODES for assignment, r in outcomes[x64]):
                return DType(candidate, argument.kind, False, argument.domain)
    return options(results[False], results[True])


def _concrete(argument: DType, assignment: dict[str, str], x64: bool) -> str:
    value = assignment[_base_symbol(argument)]
    if argument.name is not None and argument.name.startswith("strong:"):
        return _strong(value, x64)
    return value


def cast(dtype: DType) -> DType:
    """`x.astype(d)`, `jnp.zeros(..., dtype=d)`: a strongly typed value of `d`."""
    if is_symbol(dtype):
        return DType("strong:" + _base_symbol(dtype), dtype.kind, False, dtype.domain)
    return options(*(frozenset(_strong(k, x64) for k in possible(dtype, x64)) for x64 in MODES))
