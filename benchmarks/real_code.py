"""Run jaxloopfix over the installed sources of real JAX libraries.

    python benchmarks/real_code.py            # Markdown table per package
    python benchmarks/real_code.py --list     # ... and every diagnostic

For each installed package among jax, flax, optax, equinox, haiku and numpyro the
package's source directory is checked as one project (tracing followed across its
modules), with `--processes` worker processes. Parse errors and crashes (any other
exception) are counted; crashes are printed. Nothing is imported from the packages except to
locate them and read their version.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

from jaxloopfix import api
from jaxloopfix.config import Settings

PACKAGES = ("jax", "flax", "optax", "equinox", "haiku", "numpyro")
DISTRIBUTIONS = {"haiku": "dm-haiku"}
CODES = tuple(f"JLF00{i}" for i in range(1, 7))


def source_dirs(name: str) -> list[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def version(name: str) -> str:
    try:
        return importlib.metadata.version(DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return "?"


def check_package(dirs: list[Path], jobs: int) -> list[tuple[str, str, list[tuple[int, int, str, str, str]], str]]:
    """(path, status, diagnostics, detail) per file; status is ok / parse / crash.

    The package is checked as one project (`api.check_paths`), so tracing is followed
    across its modules as `jaxloopfix check PACKAGE_DIR` would."""
    out = []
    # Installed packages may lie under a git-ignored tree (pyenv's `versions/`): check them anyway.
    for result in api.check_paths(dirs, Settings(respect_gitignore=False), jobs=jobs):
        if result.errors:
            detail = "; ".join(e.message for e in result.errors)
            status = "crash" if "internal error" in detail else "parse"
            out.append((result.filename, status, [], detail))
            continue
        rows = []
        for d in result.diagnostics:
            if d.fix is not None:
                how = f"fix: {d.fix.applicability.value}"
            else:
                how = f"no fix: {d.no_fix_reason}" if d.no_fix_reason else "no fix"
            message = d.message
            if d.no_fix_reason and message.endswith(f" ({how})"):
                message = message[: -len(f" ({how})")]  # the engine already appends the reason
            rows.append((d.location.row, d.location.column, d.code, message, how))
        out.append((result.filename, "ok", rows, ""))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every diagnostic")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("packages", nargs="*", default=list(PACKAGES))
    args = parser.parse_args()

    table = []
    listing: list[str] = []
    crashes: list[str] = []
    for name in args.packages:
        dirs = source_dirs(name)
        if not dirs:
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        start = time.perf_counter()
        results = check_package(dirs, args.processes)
        seconds = time.perf_counter() - start
        status = Counter(r[1] for r in results)
        codes: Counter[str] = Counter()
        for path, st, rows, detail in results:
            if st == "crash":
                crashes.append(f"{path}: {detail}")
                print(f"CRASH {path}: {detail}", file=sys.stderr)
            for row, col, code, message, how in rows:
                codes[code] += 1
                listing.append(f"{path}:{row}:{col} {code} {message} ({how})")
        table.append(
            (name, version(name), len(results), status["parse"], status["crash"],
             *(codes[c] for c in CODES), f"{seconds:.1f}")
        )

    header = ("package", "version", "files", "parse errors", "crashes", *CODES, "seconds")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|")
    totals = [sum(int(r[i]) for r in table) for i in range(2, 5 + len(CODES))]
    for r in table:
        print("| " + " | ".join(str(x) for x in r) + " |")
    total_seconds = sum(float(r[-1]) for r in table)
    print("| **total** | | " + " | ".join(str(t) for t in totals) + f" | {total_seconds:.1f} |")
    if args.list:
        print()
        print(f"{len(listing)} diagnostics:")
        print()
        for line in listing:
            print(line)
    if crashes:
        print(f"\n{len(crashes)} crashes (details on stderr)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
