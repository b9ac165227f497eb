"""One step on the fixtures' true positives: how many loops `check --fix --verify` fixes, and whether each fix is the reviewed one.

Copies every fixture that has a reviewed `.fixed.py` into a fresh project (a pyproject.toml with
an empty `[tool.jaxloopfix]`), counts the findings that carry a fix (safe or unsafe), runs
`jaxloopfix check --fix --verify` once, and compares each file with its `.fixed.py` (which the
suite runs on JAX against the original). A changed file that differs from `.fixed.py` (it holds
more fixes than the reviewed one) is run on JAX against the original on every call its
`example_inputs()` names, the original without `jit` where it raises under it; a file whose
outputs differ is WRONG. Prints the counts and, per unfixed function, verify's reason.

    python benchmarks/fix_verify_fixtures.py [--keep DIR] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_true_positives(target: Path) -> list[Path]:
    """Each fixture with a `.fixed.py`, copied under `target` (its `.fixed.py` stays behind)."""
    copied = []
    for fixed in sorted((ROOT / "fixtures").glob("JLF*/*.fixed.py")):
        original = fixed.with_name(fixed.name.removesuffix(".fixed.py") + ".py")
        destination = target / original.relative_to(ROOT / "fixtures")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(original, destination)
        copied.append(destination)
    (target / "pyproject.toml").write_text("[tool.jaxloopfix]\n", encoding="utf-8")
    return copied


def fixable(project: Path) -> Counter:
    """Findings with a fix (any applicability), per file relative to `project`."""
    proc = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", ".", "--output-format", "json", "--no-cache"],
        cwd=project, capture_output=True, text=True, check=False,
    )
    counts: Counter = Counter()
    for finding in json.loads(proc.stdout or "[]"):
        if finding.get("fix"):
            counts[(project / finding["filename"]).resolve().relative_to(project.resolve()).as_posix()] += 1
    return counts


def _load(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare_on_examples(original: Path, fixed: Path) -> str:
    """Runs in a subprocess: "" when every example call gives equal outputs, else what differs."""
    import jax
    import numpy as np

    before, after = _load(original, "fixture_original"), _load(fixed, "fixture_fixed")
    problems = []
    for name, args, kwargs in before.example_inputs():
        try:
            expected = getattr(before, name)(*args, **kwargs)
        except Exception:  # noqa: BLE001 - raises under jit: the reference runs without it
            with jax.disable_jit():
                expected = getattr(before, name)(*args, **kwargs)
        actual = getattr(after, name)(*args, **kwargs)
        for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual), strict=True):
            if np.shape(e) != np.shape(a) or not np.allclose(e, a, rtol=1e-4, atol=1e-5):
                problems.append(f"{name}: outputs differ")
                break
    return "; ".join(problems)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        print(compare_on_examples(Path(sys.argv[2]), Path(sys.argv[3])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", type=Path, help="run in DIR (emptied first) and leave it there")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    holder = None
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
        args.keep.mkdir(parents=True)
        project = args.keep
    else:
        holder = tempfile.TemporaryDirectory()
        project = Path(holder.name)
    files = copy_true_positives(project)
    before = fixable(project)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", ".", "--fix", "--verify", "--no-cache"],
        cwd=project, capture_output=True, text=True, check=False,
    )
    seconds = time.perf_counter() - started
    after = fixable(project)
    fixed_loops = sum(before.values()) - sum(after.values())
    as_reviewed, suspects, unchanged = [], [], []
    for path in files:
        rel = path.relative_to(project).as_posix()
        original = (ROOT / "fixtures" / rel).read_text(encoding="utf-8")
        reviewed = (ROOT / "fixtures" / rel).with_name(path.stem + ".fixed.py").read_text(encoding="utf-8")
        now = path.read_text(encoding="utf-8")
        if now == original:
            unchanged.append(rel)
        elif now == reviewed:
            as_reviewed.append(rel)
        else:
            suspects.append(rel)
    reasons = [line for line in proc.stderr.splitlines() if "left unfixed" in line]
    advisories = [line for line in proc.stderr.splitlines() if "fixed (verified equal);" in line]
    total = sum(before.values())
    print(f"{len(files)} files, {total} loops with a fix; `check --fix --verify` fixed {fixed_loops} "
          f"({100 * fixed_loops / max(total, 1):.0f}%) in {seconds:.0f} s")
    print(f"files equal to their .fixed.py: {len(as_reviewed)}; unchanged: {len(unchanged)}; "
          f"changed beyond its .fixed.py: {len(suspects)}")
    wrong = 0
    for rel in suspects:
        checked = subprocess.run(
            [sys.executable, __file__, "--compare", str(ROOT / "fixtures" / rel), str(project / rel)],
            capture_output=True, text=True, check=False,
        )
        verdict = checked.stdout.strip().splitlines()[-1:] if checked.returncode == 0 else [f"error: {checked.stderr[-300:]}"]
        problem = verdict[0] if verdict else ""
        wrong += bool(problem)
        print(f"  {'WRONG' if problem else 'equal on its examples'}: {rel} (more fixes than its .fixed.py) {problem}")
    bullet = "- " if args.markdown else "  "
    for line in reasons:
        print(bullet + line.removeprefix("warning: ")[:400])
    print(f"fixed with an advisory note (a family that does not decide for this project): {len(advisories)}")
    for line in advisories:
        print(bullet + line.removeprefix("warning: ")[:300])
    if holder is not None:
        holder.cleanup()
    print(f"wrong: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
