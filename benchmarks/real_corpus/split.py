#!/usr/bin/env python3
"""Which half of the own corpus a repository belongs to, and scoring one half.

The split is by repository and fixed by a hash of its name, so it was decided
before any row was read and cannot drift toward rows the analysis already
handles: development looks at `tune`, `check` is only scored.

    python3 benchmarks/real_corpus/split.py --half check -- --mirror /work/.mirror --work /tmp/jlf-check

runs the shared scorer (`../shared/real-corpus/score.py`, or `--score PATH`) on
the rows of that half; the arguments after `--` go to the scorer.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.tsv"
COLUMNS = ["id", "kind", "repo", "path", "commit", "function", "lines", "jit_context", "variant", "description", "half"]


def half_of(repo: str) -> str:
    """`check` for repositories whose name hashes odd, `tune` otherwise."""
    return "check" if hashlib.sha256(repo.lower().encode()).digest()[0] % 2 else "tune"


def rows(manifest: pathlib.Path = MANIFEST) -> list[dict[str, str]]:
    with manifest.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=["tune", "check", "all"], required=True)
    ap.add_argument("--manifest", type=pathlib.Path, default=MANIFEST)
    ap.add_argument("--score", type=pathlib.Path, default=HERE.parents[2] / "shared" / "real-corpus" / "score.py")
    ap.add_argument("scorer_args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    chosen = [r for r in rows(a.manifest) if a.half == "all" or half_of(r["repo"]) == a.half]
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, newline="") as out:
        w = csv.DictWriter(out, fieldnames=COLUMNS, delimiter="\t", extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows({**r, "half": half_of(r["repo"])} for r in chosen)
    extra = [x for x in a.scorer_args if x != "--"]
    return subprocess.call([sys.executable, str(a.score), "--manifest", out.name, *extra])


if __name__ == "__main__":
    sys.exit(main())
