"""How fast `jaxloopfix check` is on real code, beside parsers and ruff measured in the same run.

    python benchmarks/lint_speed.py [--jobs N] [--markdown] [packages...]

For each installed package (default: jax, flax, optax, equinox; `stdlib` names the
standard library, a tree of 1,790 files for the warm figure) its source is copied into a
fresh temporary project (a directory with a `pyproject.toml`, so the results cache starts
empty and lives there) and checked as one project by the real CLI in a subprocess:

- cold: first `jaxloopfix check` run, cache empty, `--jobs N`;
- warm: the same command again (every file answered from `.jaxloopfix_cache/`);
- cold, 1 job, no cache: the whole analysis in one process;
- edited file: the package's largest module gets a new function appended, and
  `jaxloopfix check MODULE` re-checks it alone, with the cache warm (the rest of the
  project supplies its tracing from the cache). Its baseline is a fresh Python process
  that imports libcst and parses the edited module (best of three, like the check).
  A function nothing names is code the analysis leaves out, so a module without findings
  is answered by the result of the code it analyses; "every line moved" then times an
  edit that re-analyses the module (a comment line added at its top).

Beside them, on the same files: `libcst.parse_module` of every file (one process), stdlib
`ast.parse` of every file, and `ruff check --select E9` (if ruff is installed) as a speed
reference. Times are wall-clock seconds; ratios are against libcst's parse-all in this run.

jaxloopfix's own modules are compiled to bytecode first, as `pip install` leaves them (and
as libcst's are): where `PYTHONDONTWRITEBYTECODE` is set, an editable checkout would
otherwise compile them from source in every process the benchmark starts.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

PACKAGES = ("jax", "flax", "optax", "equinox")


def source_dir(name: str) -> Path | None:
    if name == "stdlib":
        return Path(sysconfig.get_paths()["stdlib"])
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def python_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.py")
        if p.is_file() and not {"__pycache__", "site-packages"} & set(p.relative_to(root).parts)
    )


def largest_module(files: list[Path]) -> Path:
    return max(files, key=lambda p: p.stat().st_size)


def best_of(runs: int, measure) -> float:
    return min(measure() for _ in range(runs))


def parse_process(path: Path) -> float:
    """A fresh Python process importing libcst and parsing `path`."""
    code = f"import libcst; libcst.parse_module(open({str(path)!r}, encoding='utf-8').read())"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def run_cli(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jaxloopfix", *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    # 2: some files could not be read or parsed (the standard library's test data).
    if done.returncode not in (0, 1, 2) or "internal error" in done.stderr:
        raise SystemExit(f"jaxloopfix failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def parse_all(files: list[Path], parse) -> float:
    texts = []
    for path in files:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            pass
    start = time.perf_counter()
    for text in texts:
        try:
            parse(text)
        except Exception:  # noqa: BLE001 - a file a parser rejects still cost its time
            pass
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("packages", nargs="*", default=list(PACKAGES))
    args = parser.parse_args()
    import libcst

    import jaxloopfix

    compileall.compile_dir(Path(jaxloopfix.__file__).parent, quiet=1)

    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    ruff = ruff if Path(ruff).exists() else None
    rows = []
    edited_rows = []
    for name in args.packages:
        root = source_dir(name)
        if root is None:
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        files = python_files(root)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "pyproject.toml").write_text("[project]\nname = 'bench'\n", encoding="utf-8")
            copy = work / name
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__", "site-packages"), symlinks=True)
            check = ["check", "--exit-zero", "--output-format", "concise", str(copy)]
            cold = run_cli([*check, "--jobs", str(args.jobs)], work)
            warm = run_cli([*check, "--jobs", str(args.jobs)], work)
            module = largest_module(python_files(copy))
            edits = iter(range(3))

            def edit_and_check() -> float:
                with module.open("a", encoding="utf-8") as handle:  # new bytes: the module's cache entry misses
                    handle.write(f"\n\ndef _edited_by_the_benchmark_{next(edits)}(values):\n    return [v for v in values]\n")
                return run_cli(["check", "--exit-zero", "--output-format", "concise", str(module)], work)

            edited = best_of(3, edit_and_check)
            moves = iter(range(3))

            def move_and_check() -> float:
                # A line added above everything: every line of the analysed code moves, so no
                # result is reused by the code it analysed (`prefilter.analysed_digest`).
                text = module.read_text(encoding="utf-8")
                module.write_text(f"# edited by the benchmark {next(moves)}\n{text}", encoding="utf-8")
                return run_cli(["check", "--exit-zero", "--output-format", "concise", str(module)], work)

            moved = best_of(3, move_and_check)
            baseline = best_of(3, lambda: parse_process(module))
            single = run_cli([*check, "--jobs", "1", "--no-cache"], work)
            lines = len(module.read_text(encoding="utf-8").splitlines())
            edited_rows.append((name, module.relative_to(work).as_posix(), lines, edited, moved, baseline))
        libcst_s = parse_all(files, libcst.parse_module)
        ast_s = parse_all(files, ast.parse)
        ruff_s = None
        if ruff is not None:
            start = time.perf_counter()
            subprocess.run([ruff, "check", "--isolated", "--no-cache", "--select", "E9", "--exit-zero", "--quiet", str(root)],
                           capture_output=True)
            ruff_s = time.perf_counter() - start
        rows.append((name, len(files), cold, warm, single, libcst_s, ast_s, ruff_s))
        print(f"{name}: {len(files)} files, cold {cold:.2f} s, warm {warm:.2f} s, 1 job {single:.2f} s, "
              f"libcst {libcst_s:.2f} s, ast {ast_s:.2f} s, ruff {ruff_s if ruff_s is None else round(ruff_s, 2)} s, "
              f"edited {edited:.2f} s (every line moved {moved:.2f} s) against {baseline:.2f} s",
              file=sys.stderr)

    header = ["package", "files", f"cold (-j {args.jobs})", "warm", "cold, 1 job", "libcst parse", "ast parse",
              "ruff E9", "cold / libcst", "warm s per 1,000 files"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    totals = [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for name, n, cold, warm, single, lib, ast_s, ruff_s in rows:
        totals = [totals[0] + n, totals[1] + cold, totals[2] + warm, totals[3] + single, totals[4] + lib,
                  totals[5] + ast_s, totals[6] + (ruff_s or 0.0)]
        print(f"| {name} | {n} | {cold:.2f} s | {warm:.2f} s | {single:.2f} s | {lib:.2f} s | {ast_s:.2f} s | "
              f"{'-' if ruff_s is None else f'{ruff_s:.2f} s'} | {cold / lib:.1f}x | {warm / n * 1000:.2f} s |")
    n, cold, warm, single, lib, ast_s, ruff_s = totals
    if rows:
        print(f"| **total** | {n} | {cold:.2f} s | {warm:.2f} s | {single:.2f} s | {lib:.2f} s | {ast_s:.2f} s | "
              f"{ruff_s:.2f} s | {cold / lib:.1f}x | {warm / n * 1000:.2f} s |")
    print()
    print("| package | edited module | lines | check MODULE, cache warm | Python + libcst import + parse | ratio "
          "| every line moved | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, module, lines, edited, moved, baseline in edited_rows:
        print(f"| {name} | `{module}` | {lines} | {edited:.2f} s | {baseline:.2f} s | {edited / baseline:.2f}x "
              f"| {moved:.2f} s | {moved / baseline:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
