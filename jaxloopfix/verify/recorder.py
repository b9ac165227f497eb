"""`jaxloopfix record -- COMMAND`: the shapes, dtypes and static values users' own runs pass to
functions with fixable loops, kept for `verify` to replay before anything it could guess.

The command (a test suite, a training script) runs with this module loaded at interpreter start
(a `sitecustomize` on PYTHONPATH, so subprocesses such as pytest-xdist workers record too). A
profile hook looks only at function entries and compares each code object's file and qualified
name with the targets; on a match it describes the arguments as the body receives them: under
`jit`, traced arguments are tracers (recorded as shape, dtype and weak type, never values) and
static ones Python values (recorded when small and plain). Each process writes its own file at
exit; `merge` folds them into `.jaxloopfix_cache/recorded-v1.json`.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

# Loaded at interpreter start in the user's command: standard library only (not libcst and the
# analysis that `jaxloopfix.cache` brings).
CACHE_DIR = ".jaxloopfix_cache"
FILE = "recorded-v1.json"
TARGETS_ENV = "JAXLOOPFIX_RECORD_TARGETS"
OUT_ENV = "JAXLOOPFIX_RECORD_OUT"
MAX_SIGNATURES = 8  # distinct argument descriptions kept per function
MAX_ITEMS = 64  # a longer list or dict is not described (not a pytree of parameters one replays)
OPAQUE = "opaque"


def key(path: str | Path, qualname: str) -> str:
    """`resolved/path.py::Class.name`: how targets and recordings name a function."""
    return f"{os.path.realpath(path)}::{qualname}"


# ---------------------------------------------------------------- describing values


def describe(value: Any, depth: int = 0) -> dict:
    """A JSON description of one argument that `replay` can turn back into a value of its kind."""
    if isinstance(value, (bool, int, float, complex, str, type(None))) and not hasattr(value, "dtype"):
        if isinstance(value, complex):
            return {"py": "complex", "value": [value.real, value.imag]}
        if isinstance(value, str) and len(value) > 200:
            return {OPAQUE: "str"}
        return {"py": type(value).__name__, "value": value}
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        entry = {"shape": [int(d) if isinstance(d, int) else str(d) for d in shape], "dtype": str(dtype)}
        if type(value).__module__ == "numpy" and not shape and type(value).__name__ != "ndarray":
            entry["numpy_scalar"] = value.item()  # np.float64(0.9): strongly typed, unlike a Python float
        aval = getattr(value, "aval", None)
        if bool(getattr(aval, "weak_type", False) or getattr(value, "weak_type", False)):
            entry["weak"] = True
        return entry
    if depth < 4 and isinstance(value, (list, tuple)) and len(value) <= MAX_ITEMS and type(value) in (list, tuple):
        return {"seq": type(value).__name__, "items": [describe(v, depth + 1) for v in value]}
    if depth < 4 and type(value) is dict and len(value) <= MAX_ITEMS and all(isinstance(k, str) for k in value):
        return {"dict": {k: describe(v, depth + 1) for k, v in value.items()}}
    return {OPAQUE: type(value).__qualname__}


def replayable(entry: dict) -> bool:
    if OPAQUE in entry:
        return False
    if "items" in entry:
        return all(replayable(e) for e in entry["items"])
    if "dict" in entry:
        return all(replayable(e) for e in entry["dict"].values())
    return "shape" not in entry or all(isinstance(d, int) for d in entry["shape"])


# ---------------------------------------------------------------- the hook


class Recorder:
    """Collects argument descriptions for the target code objects of this process."""

    def __init__(self, targets: set[str], out: Path) -> None:
        self.targets = targets
        self.out = out
        self.seen: dict[str, list[dict]] = {}
        self.real: dict[str, str] = {}  # co_filename -> realpath, once per file

    def hook(self, frame, event, arg):  # noqa: ARG002 - the profiler's signature
        if event != "call":
            return
        code = frame.f_code
        filename = code.co_filename
        real = self.real.get(filename)
        if real is None:
            real = self.real[filename] = os.path.realpath(filename) if not filename.startswith("<") else filename
        name = f"{real}::{getattr(code, 'co_qualname', code.co_name)}"
        if name in self.targets:
            try:
                self.record(name, frame)
            except Exception:  # noqa: BLE001 - recording never breaks the user's run
                pass

    def record(self, name: str, frame) -> None:
        kept = self.seen.setdefault(name, [])
        if len(kept) >= MAX_SIGNATURES:
            return
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        names = code.co_varnames[:count]
        args = {n: describe(frame.f_locals[n]) for n in names if n in frame.f_locals}
        positional = list(names[: code.co_argcount])
        entry = {"positional": positional, "args": args}
        if entry not in kept:
            kept.append(entry)

    def write(self) -> None:
        if self.seen:
            partial = self.out.with_suffix(".partial")
            partial.write_text(json.dumps(self.seen), encoding="utf-8")
            os.replace(partial, self.out)


def install() -> Recorder | None:
    """Start recording when the environment names targets (called from the `sitecustomize`)."""
    targets_file, out_dir = os.environ.get(TARGETS_ENV), os.environ.get(OUT_ENV)
    if not targets_file or not out_dir:
        return None
    try:
        targets = set(json.loads(Path(targets_file).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    recorder = Recorder(targets, Path(out_dir) / f"{os.getpid()}.json")
    sys.setprofile(recorder.hook)
    threading.setprofile(recorder.hook)
    atexit.register(recorder.write)
    return recorder


SITECUSTOMIZE = """\
try:
    from jaxloopfix.verify.recorder import install
except ImportError:  # an interpreter without jaxloopfix: nothing to record there
    pass
else:
    install()
"""


# ---------------------------------------------------------------- the store


def store_file(root: Path) -> Path:
    return root / CACHE_DIR / FILE


def load(root: Path) -> dict[str, list[dict]]:
    try:
        data = json.loads(store_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def merge(root: Path, out_dir: Path) -> dict[str, int]:
    """Fold each process's file into the store (new descriptions first); {function: kept} of this run."""
    from jaxloopfix.cache import write_json_atomic

    store = load(root)
    counts: dict[str, int] = {}
    for part in sorted(out_dir.glob("*.json")):
        try:
            recorded = json.loads(part.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for name, entries in recorded.items():
            fresh = [e for e in entries if isinstance(e, dict)]
            old = [e for e in store.get(name, []) if e not in fresh]
            store[name] = (fresh + old)[:MAX_SIGNATURES]
            counts[name] = counts.get(name, 0) + len(fresh)
    write_json_atomic(store_file(root), store)
    return counts


def recorded_for(root: Path, path: Path, qualname: str) -> list[dict]:
    """The replayable descriptions recorded for `qualname` in `path`."""
    entries = load(root).get(key(path, qualname), [])
    return [e for e in entries if isinstance(e, dict) and all(replayable(a) for a in e.get("args", {}).values())]
