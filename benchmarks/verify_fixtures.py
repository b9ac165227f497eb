"""How many fixture functions `jaxloopfix verify` can check, per input source.

For every function with a fixable loop in fixtures/JLF001 and fixtures/JLF002, run
verify three ways: with the fixture's own inputs as a factory, from annotations
only (functions whose array parameters are annotated), and with synthesized
inputs. Prints one row per function and the fraction verified per source.

    python benchmarks/verify_fixtures.py [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from jaxloopfix.config import Settings
from jaxloopfix.verify.runner import VerifyOptions, run_target
from jaxloopfix.verify.targets import collect_targets

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = """
import importlib.util

def make():
    spec = importlib.util.spec_from_file_location("fixture_under_test", {path!r})
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(args, kwargs) for name, args, kwargs in module.example_inputs() if name == {function!r}]
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    options = VerifyOptions(lengths=(5, 9), measure=False, timeout=300)
    rows = []
    totals = {"factory": [0, 0], "annotations": [0, 0], "synthesized": [0, 0]}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        paths = sorted(p for code in ("JLF001", "JLF002") for p in (ROOT / "fixtures" / code).glob("*.py") if not p.name.endswith(".fixed.py"))
        for path in paths:
            text = path.read_text(encoding="utf-8")
            for target in collect_targets(path, text, Settings(), unsafe=True):
                row = {"function": f"{path.parent.name}/{path.stem}::{target.function}"}
                adapter = f"adapter_{path.stem}_{target.function}"
                (Path(tmp) / f"{adapter}.py").write_text(ADAPTER.format(path=str(path), function=target.function))
                target.sys_path.insert(0, tmp)
                target.factory = f"{adapter}:make"
                row["factory"] = run_target(target, options)
                target.factory = None
                synthesized = run_target(target, options)
                annotated = any(spec.get("annotation") for spec in target.signature)
                row["annotations"] = synthesized if annotated and synthesized.get("input_source") == "annotations" else None
                row["synthesized"] = synthesized if synthesized.get("input_source") != "annotations" else None
                if annotated and synthesized.get("input_source") != "annotations":
                    row["annotations"] = {"status": "unverified", "message": "annotations not usable"}
                for source in totals:
                    result = row[source]
                    if result is not None:
                        totals[source][1] += 1
                        totals[source][0] += result.get("status") == "equivalent"
                rows.append(row)
                print(
                    row["function"],
                    *(f"{s}={row[s]['status'] if row[s] else '-'}" for s in totals),
                    file=sys.stderr,
                )
    elapsed = time.perf_counter() - started
    header = "| function | factory | annotations | synthesized |\n|---|---|---|---|"
    print(header if args.markdown else "function  factory  annotations  synthesized")
    for row in rows:
        cells = [row[s]["status"] if row[s] else "n/a" for s in totals]
        print(f"| {row['function']} | " + " | ".join(cells) + " |" if args.markdown else f"{row['function']}  " + "  ".join(cells))
    print()
    for source, (ok, total) in totals.items():
        print(f"{source}: {ok}/{total} functions verified equivalent" + (f" ({ok / total:.0%})" if total else ""))
    print(f"({len(rows)} functions, {elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
