"""Builds `dtype_table.py` from JAX itself: the result dtype of every operation the carry-type
proof knows, for every input dtype, weak and strong, with x64 off and on.

The proof (`carry_types.py`) never states a dtype rule from memory: it looks results up in the
generated table, and `tests/test_dtype_rules.py` regenerates the table with the installed JAX and
requires it to be identical. Run `python -m jaxloopfix.analysis.dtype_table_from_jax` to rewrite
the table after a JAX upgrade. Needs JAX; the linter itself never imports this module.
"""

from __future__ import annotations

import importlib
import itertools
import operator
import pprint
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from jaxloopfix.analysis.dtype_operations import (
    ATTRIBUTES, BINARY_FUNCTIONS, BINARY_OPERATORS, FUNCTION_MODULES, METHODS, UNARY_FUNCTIONS, UNARY_OPERATORS,
    KEY_OF_NAME, NAME_OF_KEY, WEAK, WEAK_ARRAYS, universe,
)

OPERATORS: dict[str, Callable] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift, "neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
}
# Each operation is evaluated with every argument 0-d (`()`) or an array (`(2, 2)`: matmul and
# dot need two axes), in every combination: JAX's answer can depend on it (`jnp.hypot` of an int8
# and a weak float is weakly typed when both are 0-d, strongly typed otherwise).
SHAPES = {"0": (), "n": (2, 2)}


def _dtype(key: str):  # noqa: ANN202
    import jax.numpy as jnp

    base = key[:-1] if key.endswith("w") else key
    x64 = _x64()
    weak_defaults = {"i": "int64" if x64 else "int32", "f": "float64" if x64 else "float32",
                     "c": "complex128" if x64 else "complex64"}
    if key in WEAK_ARRAYS:
        return jnp.dtype(weak_defaults[key[1]])
    return jnp.dtype(NAME_OF_KEY[base])


def _x64() -> bool:
    import jax

    return bool(jax.config.read("jax_enable_x64"))


def key_of(dtype, weak: bool) -> str:  # noqa: ANN001
    """The table's name for a JAX result dtype."""
    name = KEY_OF_NAME.get(str(dtype))
    if name is None:
        return "!"
    x64 = _x64()
    defaults = {"int64" if x64 else "int32": "wia", "float64" if x64 else "float32": "wfa",
                "complex128" if x64 else "complex64": "wca"}
    if weak:
        return defaults.get(str(dtype), name + "w")
    return name


# The Python scalars standing for `wi`, `wf` and `wc`.
PYTHON_VALUES = {"wi": 2, "wf": 0.5, "wc": 0.5 + 1j}
PYTHON_KEYS = {bool: "bool", int: "wi", float: "wf", complex: "wc"}


def argument(key: str, rank: str = "n"):  # noqa: ANN201
    """An abstract array argument of this key (weak arrays weakly typed), 0-d or not."""
    import jax

    return jax.ShapeDtypeStruct(SHAPES[rank], _dtype(key), weak_type=key in WEAK_ARRAYS)


def result_keys(function: Callable, calls: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """JAX's result for each (keys, ranks) in `calls`, Python scalar keys passed as Python
    scalars, from one `jax.eval_shape` that applies `function` to every combination in turn:
    JAX computes each result's dtype while tracing, so one trace answers them all (one trace
    per combination made the table slow to check). A combination JAX rejects raises inside the
    trace and is recorded as an error there."""
    import jax

    arguments: list = []
    positions: list[list[int]] = []
    for keys, ranks in calls:
        positions.append([])
        for key, rank in zip(keys, ranks):
            if key not in WEAK:
                positions[-1].append(len(arguments))
                arguments.append(argument(key, rank))
    results = ["!"] * len(calls)

    def every(*arrays):  # noqa: ANN002, ANN202
        for n, ((keys, _), where) in enumerate(zip(calls, positions)):
            given = iter(arrays[i] for i in where)
            try:
                out = function(*(PYTHON_VALUES[k] if k in WEAK else next(given) for k in keys))
            except Exception:  # noqa: BLE001 - JAX rejects the dtype: the table records an error
                continue
            results[n] = _value_key(out)
        return 0

    jax.eval_shape(every, *arguments)
    return results


def _value_key(out) -> str:  # noqa: ANN001
    """The table's key of one traced result: its dtype and weak type, a Python scalar's as
    `jax.eval_shape` returns it (a weakly typed array)."""
    if type(out) in PYTHON_KEYS:
        import jax

        out = jax.eval_shape(lambda: out)
        if type(out) in PYTHON_KEYS:
            return PYTHON_KEYS[type(out)]
    if not hasattr(out, "dtype") or not hasattr(out, "shape") or isinstance(out, type):
        return "!"
    return key_of(out.dtype, bool(getattr(getattr(out, "aval", out), "weak_type", False)))


def operations() -> Iterator[tuple[str, int, Callable]]:
    """(key, arity, function) for every operation the table covers."""
    for name in UNARY_OPERATORS:
        yield f"op:{name}", 1, OPERATORS[name]
    for name in BINARY_OPERATORS:
        yield f"op:{name}", 2, OPERATORS[name]
    for name in METHODS:
        yield f"method:{name}", 1, (lambda name: lambda x: getattr(x, name)())(name)
    for name in ATTRIBUTES:
        yield f"attr:{name}", 1, (lambda name: lambda x: getattr(x, name))(name)
    for names, arity in ((UNARY_FUNCTIONS, 1), (BINARY_FUNCTIONS, 2)):
        for module_name in FUNCTION_MODULES:
            module = importlib.import_module(module_name)
            for name in sorted(names):
                function = getattr(module, name, None)
                if callable(function):
                    yield f"fn{arity}:{module_name}.{name}", arity, _wrapped(module_name, name, function)


def _wrapped(module: str, name: str, function: Callable) -> Callable:
    """`where` takes a boolean condition first (0-d, as broadcasting allows); the table records
    its two branches."""
    if name == "where":
        return lambda a, b: function(True, a, b)
    return function


def rank_configurations(arity: int) -> list[str]:
    """`"0n"`: the first argument 0-d, the second an array."""
    return ["".join(c) for c in itertools.product(SHAPES, repeat=arity)]


def generate(chunk: int = 0, chunks: int = 1, inline: bool = False) -> dict[str, dict[tuple[bool, str], str]]:
    """Every operation's results, one entry per input combination, per x64 mode and ranks.

    `inline` traces JAX's own jitted functions inline (`jax.disable_jit`) inside the one outer
    trace: half the time, and a second path through JAX; the test suite compares what it gives
    with the table written from the jitted path, so the two must agree."""
    import contextlib

    import jax

    # JAX filters the traceback of every rejected combination: pure cost here.
    jax.config.update("jax_traceback_filtering", "off")
    with jax.disable_jit() if inline else contextlib.nullcontext():
        return _generate(chunk, chunks)


def _generate(chunk: int, chunks: int) -> dict[str, dict[tuple[bool, str], str]]:
    import jax

    table: dict[str, dict[tuple[bool, str], str]] = {}
    listed = [op for i, op in enumerate(operations()) if i % chunks == chunk]
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        keys = universe(x64)
        for key, arity, function in listed:
            # A Python scalar has no rank: one evaluation serves every rank it is listed under.
            shown = {
                ranks: [(combo, "".join("n" if k in WEAK else r for k, r in zip(combo, ranks)))
                        for combo in itertools.product(keys, repeat=arity)]
                for ranks in rank_configurations(arity)
            }
            distinct = list(dict.fromkeys(call for calls in shown.values() for call in calls))
            seen = dict(zip(distinct, result_keys(function, distinct)))
            for ranks, calls in shown.items():
                table.setdefault(key, {})[(x64, ranks)] = ",".join(seen[call] for call in calls)
    jax.config.update("jax_enable_x64", False)
    return {key: modes for key, modes in table.items() if any(set(v.split(",")) != {"!"} for v in modes.values())}


def render(table: dict[str, dict[tuple[bool, str], str]]) -> str:
    import jax

    header = (
        '"""Result dtypes of JAX operations, generated from JAX by\n'
        "`python -m jaxloopfix.analysis.dtype_table_from_jax` (JAX "
        f"{jax.__version__}); do not edit.\n\n"
        "COLUMNS[TABLE[operation][(x64, ranks)]] lists, comma-separated, the result for each input\n"
        "combination in the order of `itertools.product(universe(x64), repeat=arity)`, with each\n"
        "argument 0-d or not as `ranks` says (`0n`: the first 0-d); `!` means JAX rejects it.\n"
        '"""\n\n'
    )
    columns: dict[str, int] = {}
    indexed = {op: {mode: columns.setdefault(text, len(columns)) for mode, text in modes.items()}
               for op, modes in table.items()}
    return (
        header + f"JAX_VERSION = {jax.__version__!r}\n\nCOLUMNS = " + pprint.pformat(list(columns), width=110)
        + "\n\nTABLE = " + pprint.pformat(indexed, width=110, compact=True) + "\n"
    )


def load_table() -> dict[str, dict[tuple[bool, str], str]]:
    """The written table, each entry as its text."""
    from jaxloopfix.analysis.dtype_table import COLUMNS, TABLE

    return {op: {mode: COLUMNS[i] for mode, i in modes.items()} for op, modes in TABLE.items()}


def main() -> None:
    """Generates in worker processes (x64 is process-wide state) and writes the table."""
    import json
    import os
    import subprocess

    chunks = max(1, min(8, os.cpu_count() or 1))
    if sys.argv[1:] == ["--render"]:  # rewrite the file from the table it holds (a format change)
        Path(__file__).with_name("dtype_table.py").write_text(render(load_table()), encoding="utf-8")
        return
    if len(sys.argv) in (3, 4):  # a worker: one chunk, as JSON on stdout
        part = generate(int(sys.argv[1]), int(sys.argv[2]), inline=sys.argv[3:] == ["--inline"])
        print(json.dumps({k: {f"{x64}|{r}": v for (x64, r), v in m.items()} for k, m in part.items()}))
        return
    workers = [
        subprocess.Popen([sys.executable, "-W", "ignore", "-m", __name__.replace("__main__", "jaxloopfix.analysis.dtype_table_from_jax"), str(i), str(chunks)],
                         stdout=subprocess.PIPE, text=True)
        for i in range(chunks)
    ]
    table: dict = {}
    for worker in workers:
        out, _ = worker.communicate()
        for key, modes in json.loads(out).items():
            table[key] = {(m.split("|")[0] == "True", m.split("|")[1]): v for m, v in modes.items()}
    path = Path(__file__).with_name("dtype_table.py")
    path.write_text(render(dict(sorted(table.items()))), encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
