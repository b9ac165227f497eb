"""The long differential run: generated loop programs fixed and run on JAX against the original.

    python benchmarks/differential.py [--examples 1000] [--seed 20261122]

Runs tests/test_differential.py in one process with the given number of Hypothesis
examples and seed, then prints the counts (programs, fixed, fixed and equal, refused
shapes) and the wall time. Any mismatch fails the run and prints the program.
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
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "counts.json"
        env = {**os.environ, "JAXLOOPFIX_DIFF_EXAMPLES": str(args.examples), "JAXLOOPFIX_DIFF_REPORT": str(report),
               "JAX_PLATFORMS": "cpu"}
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "tests/test_differential.py", "-q", "-p", "no:xdist",
             f"--hypothesis-seed={args.seed}", "-p", "no:cacheprovider"],
            cwd=ROOT, env=env,
        )
        seconds = time.perf_counter() - start
        counts = json.loads(report.read_text()) if report.exists() else {}
    print(json.dumps({"seed": args.seed, "examples": args.examples, "seconds": round(seconds, 1),
                      "pytest exit": done.returncode, **counts}, indent=2))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
