"""`check` and `check --fix --diff` over the standard library and installed JAX packages: no crash.

    python benchmarks/no_crash.py [--jobs N] [trees...]

Runs the real CLI (no cache) on each source tree (default: the standard library and the
installed jax, flax, libcst, optax, equinox, haiku, numpyro) and counts files, files
reported as unreadable or unparsable (test data this Python rejects on purpose: bad
encodings, Python 2 syntax) and crashes: any "internal error" (an exception escaping a
rule) or an exit other than 0/1/2. Nothing is imported from the checked packages except
to locate them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

TREES = ("stdlib", "jax", "flax", "libcst", "optax", "equinox", "haiku", "numpyro")


def tree(name: str) -> Path | None:
    if name == "stdlib":
        return Path(sysconfig.get_paths()["stdlib"])
    spec = importlib.util.find_spec(name)
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("trees", nargs="*", default=list(TREES))
    args = parser.parse_args()
    print("| tree | files | mode | not readable or parsable | crashes | diagnostics | seconds |")
    print("|---|---:|---|---:|---:|---:|---:|")
    crashes_total = 0
    for name in args.trees:
        root = tree(name)
        if root is None:
            continue
        files = sum(1 for p in root.rglob("*.py") if "site-packages" not in p.relative_to(root).parts)
        for mode, extra in (("check", []), ("check --fix --diff", ["--fix", "--diff"])):
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "jaxloopfix", "check", "--no-cache", "--exit-zero", "--jobs", str(args.jobs),
                     "--output-format", "concise", *extra, str(root)],
                    cwd=tmp, capture_output=True, text=True,
                )
                seconds = time.perf_counter() - start
            internal = [line for line in done.stderr.splitlines() if "internal error" in line]
            parse = len(re.findall(r"^error: .*: cannot (?:parse|read|decode)", done.stderr, re.M))
            diagnostics = len(re.findall(r"^\S+:\d+:\d+: JLF\d{3}", done.stdout, re.M))
            crashed = len(internal) + (done.returncode not in (0, 1, 2))
            crashes_total += crashed
            for line in internal:
                print(f"CRASH {line}", file=sys.stderr)
            shown = diagnostics if mode == "check" else "-"
            print(f"| {name} | {files} | `{mode}` | {parse} | {crashed} | {shown} | {seconds:.1f} |", flush=True)
    return 1 if crashes_total else 0


if __name__ == "__main__":
    sys.exit(main())
