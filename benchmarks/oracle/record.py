"""Run a command with the oracle's loop recorder in every Python process it starts.

    python benchmarks/oracle/record.py --out RUN_DIR --root NAME=PATH [--root NAME=PATH ...] \
        [--timeout SECONDS] -- COMMAND ...
    python benchmarks/oracle/record.py merge RUN_DIR [RUN_DIR ...] -o merged.jsonl

A root is a directory whose `.py` files are measured; loops are named by root and the path
relative to the root's parent folder (`equinox/nn/_mlp.py`, `tests/test_nn.py`). Each process
writes RUN_DIR/raw/<pid>.jsonl; `RUN_DIR/roots.json` keeps {name: path} for score.py.
`merge` folds the raw files of several runs into one record per (root, path, line).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(argv: list[str]) -> int:
    if "--" not in argv:
        sys.exit("usage: record.py --out DIR --root NAME=PATH ... -- COMMAND ...")
    split = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--cwd", default=None)
    ns = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    roots = {}
    for spec in ns.root:
        name, _, path = spec.partition("=")
        roots[name] = os.path.realpath(path)
    out = Path(ns.out).resolve()
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    old = json.loads((out / "roots.json").read_text()) if (out / "roots.json").exists() else {}
    old.update(roots)
    (out / "roots.json").write_text(json.dumps(old, indent=1))
    env = dict(os.environ)
    env["ORACLE_ROOTS"] = json.dumps(roots)
    env["ORACLE_OUT"] = str(raw)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "site")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, cwd=ns.cwd, start_new_session=True)
    try:
        rc = proc.wait(timeout=ns.timeout)
    except subprocess.TimeoutExpired:
        import signal
        os.killpg(proc.pid, signal.SIGTERM)  # the recorder writes on SIGTERM
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        rc = 124
    with open(out / "runs.log", "a") as fh:
        fh.write(json.dumps({"cmd": cmd, "cwd": ns.cwd, "rc": rc, "seconds": round(time.time() - t0, 1), "roots": list(roots)}) + "\n")
    print(f"[oracle] rc={rc} in {time.time() - t0:.0f}s; raw files: {len(list(raw.glob('*.jsonl')))}", file=sys.stderr)
    return rc


def merge_records(records):
    merged: dict[tuple, dict] = {}
    for r in records:
        key = (r["root"], r["path"], r["line"])
        m = merged.get(key)
        if m is None:
            merged[key] = json.loads(json.dumps(r))
            continue
        m["n_exec"] += r["n_exec"]
        m["trip_min"] = min(m["trip_min"], r["trip_min"])
        m["trip_max"] = max(m["trip_max"], r["trip_max"])
        for k, v in r["kinds"].items():
            m["kinds"][k] = m["kinds"].get(k, 0) + v
        for k, v in r.get("by", {}).items():
            m.setdefault("by", {})
            m["by"][k] = m["by"].get(k, 0) + v
        if "arrays" in r:
            m["arrays"] = m.get("arrays", 0) + r["arrays"]
        for k, v in r["kind_trip_max"].items():
            m["kind_trip_max"][k] = max(m["kind_trip_max"].get(k, 0), v)
        for d in r["details"]:
            if d not in m["details"] and len(m["details"]) < 3:
                m["details"].append(d)
    return merged


def merge(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ns = ap.parse_args(argv)
    records, roots = [], {}
    for run_dir in ns.runs:
        run_dir = Path(run_dir)
        if (run_dir / "roots.json").exists():
            roots.update(json.loads((run_dir / "roots.json").read_text()))
        for part in sorted((run_dir / "raw").glob("*.jsonl")):
            for line in part.read_text(encoding="utf-8").splitlines():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    merged = merge_records(records)
    with open(ns.output, "w", encoding="utf-8") as fh:
        for key in sorted(merged):
            fh.write(json.dumps(merged[key], sort_keys=True) + "\n")
    Path(ns.output).with_suffix(".roots.json").write_text(json.dumps(roots, indent=1))
    print(f"[oracle] {len(merged)} traced loops from {len(records)} process records -> {ns.output}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "merge":
        sys.exit(merge(args[1:]))
    sys.exit(run(args))
