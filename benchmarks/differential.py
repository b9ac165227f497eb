"""The long differential run: generated loop programs fixed and run on JAX against the original.

    python benchmarks/differential.py [--examples 250] [--chunks 4] [--seed 20261122] [--linear]

Runs tests/test_differential.py `--chunks` times, each in a fresh process with
`--examples` Hypothesis examples and seed `seed + i` (XLA's compiled code piles up in
one long-lived process), then prints the summed counts (programs, fixed, fixed and
equal, refused shapes) and the wall time. Any mismatch fails the run and prints the
program. `--linear` runs the linear-recurrence programs instead (every one must get the
`lax.associative_scan` fix and run equal to its loop).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=250)
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--linear", action="store_true", help="only the linear-recurrence programs")
    args = parser.parse_args()
    totals: dict[str, int] = {}
    failures = 0
    start = time.perf_counter()
    for chunk in range(args.chunks):
        seed = args.seed + chunk
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "counts.json"
            env = {**os.environ, "JAXLOOPFIX_DIFF_EXAMPLES": str(args.examples),
                   "JAXLOOPFIX_LINEAR_EXAMPLES": str(args.examples),
                   "JAXLOOPFIX_DIFF_REPORT": str(report), "JAX_PLATFORMS": "cpu"}
            select = ["-k", "linear"] if args.linear else ["-k", "not linear"]
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "tests/test_differential.py", "-q", "-p", "no:xdist", *select,
                 f"--hypothesis-seed={seed}", "-p", "no:cacheprovider"],
                cwd=ROOT, env=env,
            )
            counts = json.loads(report.read_text()) if report.exists() else {}
        failures += done.returncode != 0
        print(json.dumps({"seed": seed, "pytest exit": done.returncode, **counts}), flush=True)
        for key, value in counts.items():
            totals[key] = totals.get(key, 0) + value
    seconds = time.perf_counter() - start
    print(json.dumps({"seeds": f"{args.seed}..{args.seed + args.chunks - 1}", "examples per chunk": args.examples,
                      "seconds": round(seconds, 1), "failed chunks": failures, **dict(sorted(totals.items()))}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
