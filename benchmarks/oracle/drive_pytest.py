"""Run a test suite one file at a time, each file for at most a few seconds: breadth over depth
(the first tests of a file reach most of the module it tests; a whole suite does not fit the time).

    python benchmarks/oracle/drive_pytest.py [--one-per-test] SECONDS PER_FILE_SECONDS FILE_OR_DIR [...] [-- PYTEST_ARGS]

Files are `test_*.py` / `*_test.py` under each directory given (sorted), or the files given. Each
runs as `python -m pytest -q -x? ... FILE` in a subprocess; at its limit it gets SIGTERM (the
recorder writes what it saw) and then SIGKILL. Run under record.py, so the subprocesses record.

`--one-per-test`: run only the first parametrization of each test function of a file (collected
with `pytest --collect-only` first). Suites parametrized over dtypes, dimensions and sizes spend
a file's time on one function otherwise; the first case of each reaches more of the code.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

BASE = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", "-W", "ignore"]


def main() -> None:
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    one_per_test = "--one-per-test" in argv
    argv = [a for a in argv if a != "--one-per-test"]
    deadline = time.time() + float(argv[0])
    per = float(argv[1])
    files = []
    for spec in argv[2:]:
        p = Path(spec)
        if p.is_dir():
            files += sorted(f for f in p.rglob("*.py") if f.name.startswith("test_") or f.name.endswith("_test.py"))
        else:
            files.append(p)
    for f in files:
        left = deadline - time.time()
        if left < 8:
            print(f"stopped before {f}", flush=True)
            break
        t0 = time.time()
        targets = _first_cases(f, extra, min(per, left)) if one_per_test else [str(f)]
        proc = subprocess.Popen([sys.executable, *BASE, *extra, *targets], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = proc.communicate(timeout=min(per, left))
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                out, _ = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
            rc = "limit"
        last = [l for l in (out or "").splitlines() if l.strip()][-1:] or [""]
        print(f"{f}: rc={rc} {time.time() - t0:.0f}s {last[0][:120]}", flush=True)


def _first_cases(path: Path, extra: list[str], seconds: float) -> list[str]:
    """The node ids of `path`'s tests, the first parametrization of each function only (the file
    itself when collection fails or runs out of time)."""
    try:
        out = subprocess.run([sys.executable, *BASE, *extra, "--collect-only", str(path)],
                             capture_output=True, text=True, timeout=seconds).stdout
    except subprocess.TimeoutExpired:
        return [str(path)]
    first: dict[str, str] = {}
    for line in out.splitlines():
        if "::" in line and not line.startswith(" "):
            first.setdefault(line.split("[", 1)[0], line.strip())
    return list(first.values()) or [str(path)]


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
