"""Per-loop table of a real-code corpus: what jaxloopfix reports on each reviewed loop.

Runs `jaxloopfix check --unsafe-fixes --output-format json` over each repository of a
manifest (the trees `score.py` extracted into --work), and writes one Markdown row per
loop: kind, found or clean, the code reported, and the fix (safe / unsafe with its named
assumption) or the reason there is none. With `--verify`, each unsafe fix of a found loop is
run through `jaxloopfix verify FILE::FUNCTION` in its tree (the tool's own inputs: annotations
or synthesized; an input factory from `real_corpus/examples/ex_<id>.py` where one is written),
and the cell says unsafe-verified, with the inputs' source, or what verify found. Run `score.py` first
so the trees exist.

    python3 benchmarks/real_corpus_report.py --manifest ../shared/real-corpus/manifest.tsv \
        --work /tmp/jlf-corpus --title "Shared corpus"
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import pathlib
import re
import subprocess
import sys


def _hits(row: dict, dest: pathlib.Path, diags: list[dict]) -> list[dict]:
    mine = [d for d in diags if pathlib.Path(d["filename"]).resolve() == (dest / row["path"]).resolve()]
    cell = re.match(r"code cell (\d+), lines (\d+)-(\d+)", row["lines"])
    if cell:
        nth, lo, hi = map(int, cell.groups())
        cells = json.loads((dest / row["path"]).read_text()).get("cells", [])
        code = [i + 1 for i, c in enumerate(cells) if c.get("cell_type") == "code"]
        want = str(code[nth - 1]) if nth <= len(code) else None
        return [d for d in mine if str(d.get("cell")) == want and lo <= d["location"]["row"] <= hi]
    lo, hi = map(int, row["lines"].split(";")[0].replace("loop", "").strip().split("-"))
    return [d for d in mine if lo <= d["location"]["row"] <= hi]


def _fix_cell(hit: dict, verified: dict | None = None) -> str:
    """safe / unsafe-verified / unsafe with what verify said / none: the reason."""
    fix = hit.get("fix")
    if fix:
        kind = fix.get("applicability", "")
        message = fix.get("message", "")
        detail = message.split("(unsafe:", 1)[1].rstrip(")") if "(unsafe:" in message else ""
        if kind == "unsafe" and verified is not None:
            status = verified.get("status", "error")
            if status == "equivalent":
                return f"unsafe-verified ({verified.get('input_source')} inputs): {detail.strip()}"
            why = verified.get("message") or verified.get("skip_reason") or ""
            return f"unsafe, verify: {status} ({why[:160]}): {detail.strip()}"
        return f"{kind}" + (f": {detail.strip()}" if detail else "")
    return f"none: {hit.get('no_fix_reason') or ''}"


EXAMPLES = pathlib.Path(__file__).parent / "real_corpus" / "examples"


def _verify(jlf: str, dest: pathlib.Path, path: str, function: str, timeout: int, loop_id: str) -> dict:
    """`jaxloopfix verify FILE::FUNCTION` on the tree (unsafe fixes included, no timing).

    `Class.method` is passed as is; a function nested deeper is passed by its own name (verify says why it
    cannot run it). When `real_corpus/examples/ex_<id>.py` exists, its `example()` is the input factory.
    """
    # The extracted tree keeps only source files; the repository's own root holds a pyproject.toml or
    # setup.py. An empty setup.cfg marks the same root, so verify follows tracing from the whole tree.
    if not any((dest / marker).exists() for marker in ("pyproject.toml", "setup.cfg", "setup.py", ".git")):
        (dest / "setup.cfg").write_text("")
    parts = function.split(".")
    name = function if len(parts) <= 2 else parts[-1]
    command = [jlf, "verify", "--no-measure", "--timeout", str(timeout), "--output-format", "json", f"{path}::{name}"]
    env = dict(os.environ)
    factory = EXAMPLES / f"ex_{loop_id.lower()}.py"
    if factory.exists():
        command[2:2] = ["--example", f"{factory.stem}:example"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLES), env.get("PYTHONPATH")]))
    run = subprocess.run(command, capture_output=True, text=True, cwd=dest, env=env)
    try:
        found = json.loads(run.stdout or "[]")
    except json.JSONDecodeError:
        found = []
    if not found:
        return {"status": "unverified", "message": (run.stderr.strip().splitlines() or ["no result"])[-1]}
    return found[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--work", default="/tmp/jlf-corpus")
    ap.add_argument("--title", default="Corpus")
    ap.add_argument("--jlf", default="jaxloopfix")
    ap.add_argument("--verify", action="store_true", help="run `jaxloopfix verify` on each unsafe fix of a found loop")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per verified function")
    ap.add_argument(
        "--jlf-for", action="append", default=[], metavar="ID=PATH",
        help="verify loop ID with this jaxloopfix executable (installed next to the repository's pinned JAX)",
    )
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.manifest), delimiter="\t"))
    by_tree: dict[pathlib.Path, list[dict]] = collections.defaultdict(list)
    for row in rows:
        by_tree[pathlib.Path(a.work) / row["repo"].replace("/", "+") / row["commit"][:12]].append(row)
    out = [f"### {a.title}", "", "| id | kind | repo | function | result | code | fix (kind: assumption) or reason |",
           "|---|---|---|---|---|---|---|"]
    counts = collections.Counter()
    for dest, group in by_tree.items():
        if not dest.exists():
            for row in group:
                out.append(f"| {row['id']} | {row['kind']} | {row['repo']} | `{row['function']}` | not extracted | | |")
            continue
        run = subprocess.run([a.jlf, "check", "--no-cache", "--output-format", "json", "--exit-zero", "--unsafe-fixes",
                              str(dest)], capture_output=True, text=True)
        diags = json.loads(run.stdout or "[]")
        for row in group:
            hits = _hits(row, dest, diags)
            counts[row["kind"]] += 1
            if row["kind"] == "tp":
                counts["found"] += bool(hits)
                counts["fix"] += any(h.get("fix") for h in hits)
                result = "found" if hits else "**missed**"
            else:
                counts["clean"] += not hits
                result = "clean" if not hits else "**flagged**"
            code = ", ".join(sorted({h["code"] for h in hits}))
            verified = None
            if a.verify and hits and row["kind"] == "tp" and (hits[0].get("fix") or {}).get("applicability") == "unsafe":
                jlf = dict(item.split("=", 1) for item in a.jlf_for).get(row["id"], a.jlf)
                verified = _verify(jlf, dest, row["path"], row["function"], a.timeout, row["id"])
                counts["verified"] += verified.get("status") == "equivalent"
            counts["safe"] += bool(hits) and row["kind"] == "tp" and (hits[0].get("fix") or {}).get("applicability") == "safe"
            fix = _fix_cell(hits[0], verified).replace("|", "\\|") if hits else ""
            out.append(f"| {row['id']} | {row['kind']} | {row['repo']} | `{row['function']}` | {result} | {code} | {fix} |")
    verified = f", {counts['verified']} unsafe verified equal" if a.verify else ""
    out += ["", f"Found {counts['found']}/{counts['tp']} (with a fix {counts['fix']}: {counts['safe']} safe{verified}); "
            f"traps clean {counts['clean']}/{counts['fp']}.", ""]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
