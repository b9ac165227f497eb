"""Call the fixtures' functions so that the recorder sees their loops traced.

    python benchmarks/oracle/drive_fixtures.py [FIXTURES_DIR]

For each fixture module (not `*.fixed.py`): the entries its `example_inputs()` names
(`(name, args, kwargs)` triples are called by name, `(args, kwargs)` pairs on every function the
module defines). A module without `example_inputs()` has each function it defines called with
the inputs jaxloopfix's verifier would build for it (annotations, then synthesis): the verifier
only chooses inputs; whether a loop ran under a trace, and what it iterated, is what the recorder
sees. Functions are called as the module defines them (jitted or not): the driver never adds a
transform of its own. Every failure is caught; one line per module reports what ran.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from pathlib import Path

import jax

MAX_CASES = 3


def load(path: Path, i: int):
    name = f"oracle_fixture_{i}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    return mod


def own_functions(mod):
    out = []
    for name, obj in vars(mod).items():
        if name.startswith("_") or name == "example_inputs" or not callable(obj) or isinstance(obj, type):
            continue
        raw = inspect.unwrap(getattr(obj, "__wrapped__", obj)) if hasattr(obj, "__wrapped__") else obj
        if getattr(raw, "__module__", None) == mod.__name__:
            out.append((name, obj))
    return out


def call(fn, args, kwargs):
    out = fn(*args, **(kwargs or {}))
    jax.block_until_ready(jax.tree_util.tree_leaves(out))


def drive(path: Path, i: int) -> str:
    try:
        mod = load(path, i)
    except BaseException as exc:  # noqa: BLE001
        return f"import failed: {type(exc).__name__}"
    ok = fail = 0
    factory = getattr(mod, "example_inputs", None)
    if callable(factory):
        try:
            produced = factory()
        except BaseException as exc:  # noqa: BLE001
            return f"example_inputs failed: {type(exc).__name__}"
        entries = [produced] if isinstance(produced, tuple) and len(produced) == 2 and isinstance(produced[1], (dict, type(None))) else list(produced)
        funcs = own_functions(mod)
        for e in entries:
            if isinstance(e, tuple) and len(e) == 3 and isinstance(e[0], str):
                targets, args, kwargs = [(e[0], getattr(mod, e[0], None))], e[1], e[2]
            else:
                targets, (args, kwargs) = funcs, e
            for _, fn in targets:
                try:
                    call(fn, tuple(args), kwargs)
                    ok += 1
                except BaseException:  # noqa: BLE001
                    fail += 1
        return f"example_inputs: {ok} ok, {fail} failed"
    from jaxloopfix.verify import inputs

    recorder = sys.modules.get("oracle_recorder")
    for name, fn in own_functions(mod):
        # Choosing inputs traces the function (`jax.eval_shape` on candidates): not recorded, or a
        # helper only ever called eagerly would count as traced.
        if recorder is not None:
            recorder.paused = True
        try:
            raw = inspect.unwrap(fn) if hasattr(fn, "__wrapped__") else fn
            _, cases = inputs.build_cases(raw, {}, [5, 9], module=mod, function=name)
        except BaseException:  # noqa: BLE001
            cases = []
        finally:
            if recorder is not None:
                recorder.paused = False
        for case in (cases or [])[:MAX_CASES]:
            try:
                call(fn, case.args, case.kwargs)
                ok += 1
            except BaseException:  # noqa: BLE001
                fail += 1
    return f"synthesized: {ok} ok, {fail} failed"


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "fixtures")
    files = sorted(p for p in root.rglob("*.py") if not p.name.endswith(".fixed.py") and p.name != "__init__.py")
    for i, path in enumerate(files):
        try:
            status = drive(path, i)
        except BaseException:  # noqa: BLE001
            status = "driver error: " + traceback.format_exc(limit=1).splitlines()[-1]
        print(f"{path.relative_to(root)}: {status}", flush=True)


if __name__ == "__main__":
    main()
