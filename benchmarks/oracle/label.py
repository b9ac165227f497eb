"""Label recorded loops (the output of `record.py merge`).

    python benchmarks/oracle/label.py MERGED.jsonl -o benchmarks/oracle/labels.jsonl

Rules (per loop = per (root, path, header line), over all its traced executions):
  array-row  some execution iterated `tracer-rows` or `array-axis-range` and turned >= 2 times:
             JAX unrolls one copy of the body per row of a traced array.
  static-steps  not array-row; a `static-range` loop (a range not tied to an array axis) that turned
             >= 5 times in some execution and carried or computed arrays (after an execution, a name
             its body stored to held a Tracer or jax.Array: `arrays` in the record). Neither an
             array-row loop nor "a few static steps": not scored, listed apart by score.py.
             (Records from runs made before the recorder kept `arrays` fall back to the source: the
             body stores to a name and a Tracer was in the frame; `arrays_by: "source"`.)
  clean      every other loop that ran (without raising) while a trace was active (static ranges of
             at most 4 trips included).
  raises     every traced execution raised (concretization errors, bad inputs): no label, not scored.

    python benchmarks/oracle/label.py NEW_MERGED.jsonl -o benchmarks/oracle/labels.jsonl --extend

`--extend` adds the loops of a later stage to an existing labels file (whose raw records are not
kept): a loop not in the file is appended; a loop already there keeps its row unless the new
runs label it higher in the order raises < clean < static-steps < array-row, the label the rules
above give over both sets of executions (array-row: some execution of either set; static-steps:
a static range seen turning >= 5 times and carrying arrays); then its counts are merged.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
from pathlib import Path

from oracle_recorder import _body_stores

ARRAY_KINDS = ("tracer-rows", "array-axis-range")
STATIC_STEPS_MIN = 5
ROOTS: dict[str, str] = {}
_stores_cache: dict[tuple, object] = {}


def source_stores(rec: dict) -> bool:
    """Fallback for records without `arrays`: does the loop body store to a name?"""
    key = (rec["root"], rec["path"], rec["line"])
    if key not in _stores_cache:
        _stores_cache[key] = None
        root = ROOTS.get(rec["root"])
        if root:
            try:
                tree = ast.parse(Path(os.path.dirname(root), rec["path"]).read_text(encoding="utf-8"))
                for n in ast.walk(tree):
                    if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == rec["line"]:
                        names, attrs = _body_stores(n)
                        _stores_cache[key] = bool(names or attrs)
                        break
            except Exception:  # noqa: BLE001
                pass
    return bool(_stores_cache[key])


def carries_arrays(rec: dict) -> tuple[bool, str]:
    if "arrays" in rec:
        return rec["arrays"] > 0, "runtime"
    return bool(rec.get("by", {}).get("locals")) and source_stores(rec), "source"


def label(rec: dict) -> str:
    if not rec.get("kinds"):
        return "raises"
    if any(rec.get("kind_trip_max", {}).get(k, 0) >= 2 for k in ARRAY_KINDS):
        return "array-row"
    if main_kind(rec) == "static-range" and rec.get("kind_trip_max", {}).get("static-range", 0) >= STATIC_STEPS_MIN:
        if carries_arrays(rec)[0]:
            return "static-steps"
    return "clean"


def main_kind(rec: dict) -> str:
    kinds = rec.get("kinds") or {}
    if not kinds:
        return (rec.get("raised_kinds") or ["other"])[0]
    for k in ARRAY_KINDS:
        if rec.get("kind_trip_max", {}).get(k, 0) >= 2:
            return k
    return max(kinds, key=lambda k: kinds[k])


def labelled(rec: dict) -> dict:
    out = {
        "root": rec["root"], "path": rec["path"], "line": rec["line"], "end": rec["end"], "func": rec["func"],
        "iter": rec["iter"], "label": label(rec), "kind": main_kind(rec), "kinds": rec["kinds"],
        "trip_min": rec["trip_min"], "trip_max": rec["trip_max"], "n_exec": rec["n_exec"],
        "n_raised": rec.get("n_raised", 0),
        # "locals": some execution's frame held a Tracer (the primary rule); "context": only ever
        # seen with JAX's trace context active and no Tracer in the frame's locals.
        "active_by": "locals" if rec.get("by", {}).get("locals") else "context",
    }
    if out["kind"] == "static-range":
        out["arrays_by"] = carries_arrays(rec)[1]
    concrete = [d for d in rec.get("details", []) if d == "concrete-jax-array"]
    if concrete:
        out["concrete"] = True  # the rows were those of a concrete jax.Array read inside the trace
    return out


STRENGTH = {"raises": 0, "clean": 1, "static-steps": 2, "array-row": 3}


def extended(old: list[dict], new: list[dict]) -> list[dict]:
    """`old` rows with `new` rows merged in by (root, path, line) (see `--extend`)."""
    rows = {(r["root"], r["path"], r["line"]): r for r in old}
    for r in new:
        key = (r["root"], r["path"], r["line"])
        before = rows.get(key)
        if before is None:
            rows[key] = r
            continue
        merged = dict(r if STRENGTH[r["label"]] > STRENGTH[before["label"]] else before)
        merged["kinds"] = {k: before["kinds"].get(k, 0) + r["kinds"].get(k, 0) for k in {*before["kinds"], *r["kinds"]}}
        merged["n_exec"] = before["n_exec"] + r["n_exec"]
        merged["n_raised"] = before.get("n_raised", 0) + r.get("n_raised", 0)
        merged["trip_min"] = min(before["trip_min"], r["trip_min"])
        merged["trip_max"] = max(before["trip_max"], r["trip_max"])
        if "locals" in (before["active_by"], r["active_by"]):
            merged["active_by"] = "locals"
        rows[key] = merged
    return list(rows.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("merged")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--extend", action="store_true", help="merge into the existing OUTPUT instead of replacing it")
    ap.add_argument("--roots", default=None, help="{root: path} (default: MERGED with .roots.json), for the source fallback")
    ns = ap.parse_args()
    roots_file = Path(ns.roots) if ns.roots else Path(ns.merged).with_suffix(".roots.json")
    if roots_file.exists():
        ROOTS.update(json.loads(roots_file.read_text()))
    rows = [labelled(json.loads(line)) for line in open(ns.merged, encoding="utf-8") if line.strip()]
    if ns.extend and Path(ns.output).exists():
        old = [json.loads(line) for line in open(ns.output, encoding="utf-8") if line.strip()]
        print(f"{len(old)} loops in {ns.output}, {len(rows)} in {ns.merged}")
        rows = extended(old, rows)
    with open(ns.output, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["label"]] = counts.get(r["label"], 0) + 1
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
