"""Score `jaxloopfix check` against the oracle's labels.

    python benchmarks/oracle/score.py --labels benchmarks/oracle/labels.jsonl \
        --roots RUNS/merged.roots.json [--results benchmarks/oracle/results.md]

Runs `jaxloopfix check --no-cache --no-respect-gitignore --output-format json --exit-zero --unsafe-fixes ROOT` on each
root that has labelled loops. A loop counts as reported when a diagnostic with a code JLF001..
JLF006 starts inside it (header line .. last body line) and no loop nested inside it holds that
line: a diagnostic belongs to the innermost loop around it, so a flagged inner loop does not make
its clean outer loop a false flag.

`static-steps` loops (a static range of >= 5 trips that carried or computed arrays: neither array
rows nor a few static steps) are in neither percentage; they are counted and listed apart, with how
many the tool reports.
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODES = {f"JLF00{i}" for i in range(1, 7)}


def loop_spans(path: str) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001
        return []
    return sorted((n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor)))


def innermost(spans: list[tuple[int, int]], row: int) -> int | None:
    best = None
    for a, b in spans:
        if a <= row <= b and (best is None or a >= best[0]):
            best = (a, b)
    return best[0] if best else None


def run_check(root: str) -> tuple[list[dict], float]:
    t0 = time.time()
    proc = subprocess.run(
        ["jaxloopfix", "check", "--no-cache", "--no-respect-gitignore", "--output-format", "json", "--exit-zero",
         "--unsafe-fixes", root],
        capture_output=True, text=True,
    )
    try:
        return json.loads(proc.stdout or "[]"), time.time() - t0
    except ValueError:
        print(f"[score] {root}: unreadable output (rc={proc.returncode}): {proc.stderr[-400:]}", file=sys.stderr)
        return [], time.time() - t0


def tool_version() -> str:
    """The commit the checker ran from, and whether its working tree had changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "jaxloopfix"], cwd=HERE.parents[1],
            capture_output=True, text=True,
        ).stdout.strip()
        return f"commit {head}" + (" with uncommitted changes to jaxloopfix/" if dirty else "")
    except Exception:  # noqa: BLE001
        return "unknown"


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.1f}%)" if b else "0/0"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=str(HERE / "labels.jsonl"))
    ap.add_argument("--roots", required=True, help="{root name: path} (written by record.py merge)")
    ap.add_argument("--results", default=str(HERE / "results.md"))
    ap.add_argument("--diagnostics", default=None, help="reuse a saved {root: diagnostics} JSON instead of running check")
    ap.add_argument("--save-diagnostics", default=None)
    ap.add_argument("--cache-dir", default=None, help="keep each root's diagnostics in DIR/NAME.json and reuse them")
    ns = ap.parse_args()
    labels = [json.loads(l) for l in open(ns.labels, encoding="utf-8") if l.strip()]
    roots = json.loads(Path(ns.roots).read_text())
    # A root whose sources are not on this machine cannot be checked: its loops are left out
    # (and counted as such), never counted as clean.
    absent = sorted({r["root"] for r in labels if r["root"] not in roots})
    unsourced = [r for r in labels if r["root"] not in roots]
    labels = [r for r in labels if r["root"] in roots]
    if absent:
        print(f"[score] no sources for {', '.join(absent)}: {len(unsourced)} labelled loops left out", file=sys.stderr)
    used = sorted({r["root"] for r in labels})
    if ns.diagnostics:
        diags_by_root = json.loads(Path(ns.diagnostics).read_text())
        seconds = {}
    else:
        diags_by_root, seconds = {}, {}
        for name in used:
            cached = Path(ns.cache_dir) / f"{name}.json" if ns.cache_dir else None
            if cached is not None and cached.exists():
                diags_by_root[name] = json.loads(cached.read_text())
                continue
            diags_by_root[name], seconds[name] = run_check(roots[name])
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_text(json.dumps(diags_by_root[name]))
            print(f"[score] {name}: {len(diags_by_root[name])} diagnostics in {seconds[name]:.0f}s", file=sys.stderr)
        if ns.save_diagnostics:
            Path(ns.save_diagnostics).write_text(json.dumps(diags_by_root))

    # (root, rel path, loop line) -> codes
    reported: dict[tuple, set] = collections.defaultdict(set)
    spans_cache: dict[str, list] = {}
    for name, diags in diags_by_root.items():
        base = os.path.dirname(os.path.realpath(roots[name]))
        for d in diags:
            if d.get("code") not in CODES:
                continue
            real = os.path.realpath(d["filename"])
            if real not in spans_cache:
                spans_cache[real] = loop_spans(real)
            line = innermost(spans_cache[real], d["location"]["row"])
            if line is not None:
                reported[(name, os.path.relpath(real, base), line)].add(d["code"])

    for r in labels:
        r["codes"] = sorted(reported.get((r["root"], r["path"], r["line"]), ()))
    scored = [r for r in labels if r["label"] in ("array-row", "clean")]
    arr = [r for r in scored if r["label"] == "array-row"]
    clean = [r for r in scored if r["label"] == "clean"]
    hit = [r for r in arr if r["codes"]]
    misses = [r for r in arr if not r["codes"]]
    flags = [r for r in clean if r["codes"]]
    steps = [r for r in labels if r["label"] == "static-steps"]
    steps_hit = [r for r in steps if r["codes"]]
    print(f"array-row loops reported: {pct(len(hit), len(arr))}")
    print(f"clean loops left clean:   {pct(len(clean) - len(flags), len(clean))}")
    print(f"static-steps loops (not scored): {len(steps)}, reported {len(steps_hit)}")
    # The labels call a static range of at most 4 trips "a few static steps" (clean), but an
    # array-axis loop of 2 trips array-row: the same threshold applied to array-row loops.
    longer = [r for r in arr if r["trip_max"] >= 5]
    few_line = (
        f"array-row loops that ran at least 5 trips reported {pct(sum(1 for r in longer if r['codes']), len(longer))} "
        f"({len(arr) - len(longer)} array-row loops never ran more than 4, the threshold of a few static steps)"
    )
    print(few_line)
    loc_arr = [r for r in arr if r.get("active_by") == "locals"]
    loc_clean = [r for r in clean if r.get("active_by") == "locals"]
    loc_line = (
        f"a Tracer in the frame's locals (the primary rule): array-row reported "
        f"{pct(sum(1 for r in loc_arr if r['codes']), len(loc_arr))}, clean left clean "
        f"{pct(sum(1 for r in loc_clean if not r['codes']), len(loc_clean))}"
    )
    print("only loops seen with " + loc_line)

    def where(r):
        return f"{r['root']}:{r['path']}:{r['line']}"

    lines = ["# Runtime oracle: results", ""]
    lines += [
        "Labels come from running code (see README.md): a loop is `array-row` when, under an active",
        "JAX trace, it iterated the rows of a traced array (or a `range` over one of its axes, indexing",
        "it) at least twice; `static-steps` when it iterated a static range (not tied to an array axis)",
        "at least 5 times and carried or computed arrays; `clean` when it ran under a trace otherwise",
        "(static ranges of at most 4 trips included). `static-steps` loops and loops whose every traced",
        "execution raised are not scored.", "",
        f"- jaxloopfix: {tool_version()}",
        f"- traced loops: {len(labels)} ({len(scored)} scored, {len(steps)} static-steps, "
        f"{sum(1 for r in labels if r['label'] == 'raises')} raised only)"
        + (f"; {len(unsourced)} more left out, their sources not on this machine ({', '.join(absent)})" if absent else ""),
        f"- **array-row loops reported: {pct(len(hit), len(arr))}**",
        f"- **clean loops left clean: {pct(len(clean) - len(flags), len(clean))}**",
        f"- **static-steps loops (in neither percentage): {len(steps)}, reported by the tool: {len(steps_hit)}**",
        f"- {few_line}",
        f"- only loops seen with {loc_line}; the rest ran only while JAX's trace context was active",
        "  with no Tracer in their frame (`active_by: context` in labels.jsonl)", "",
        "## By source", "",
        "| root | traced loops | array-row | reported | clean | flagged | static-steps | reported | raises |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in used:
        rs = [r for r in labels if r["root"] == name]
        a = [r for r in rs if r["label"] == "array-row"]
        c = [r for r in rs if r["label"] == "clean"]
        lines.append(
            f"| {name} | {len(rs)} | {len(a)} | {sum(1 for r in a if r['codes'])} | {len(c)} | {sum(1 for r in c if r['codes'])} | "
            f"{sum(1 for r in rs if r['label'] == 'static-steps')} | {sum(1 for r in rs if r['label'] == 'static-steps' and r['codes'])} | "
            f"{sum(1 for r in rs if r['label'] == 'raises')} |"
        )
    lines += ["", "## By runtime kind", "", "| kind | array-row | reported | clean | flagged |", "|---|---|---|---|---|"]
    kinds = sorted({r["kind"] for r in scored})
    for k in kinds:
        a = [r for r in arr if r["kind"] == k]
        c = [r for r in clean if r["kind"] == k]
        lines.append(f"| {k} | {len(a)} | {sum(1 for r in a if r['codes'])} | {len(c)} | {sum(1 for r in c if r['codes'])} |")
    by_code = collections.Counter(code for r in flags for code in r["codes"])
    lines += ["", "False flags by code: " + (", ".join(f"{c} {n}" for c, n in sorted(by_code.items())) or "none"), ""]

    lines += ["## Misses (array-row, not reported)", ""]
    groups = collections.defaultdict(list)
    for r in misses:
        groups[(r["kind"], "concrete jax.Array" if r.get("concrete") else "tracer")].append(r)
    for (kind, src), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"### {kind} ({src}): {len(rs)}")
        lines += [f"- `{where(r)}` `for ... in {r['iter']}` in `{r['func']}` (trips {r['trip_min']}..{r['trip_max']}, {r.get('active_by')})" for r in rs]
        lines.append("")
    lines += ["## False flags (clean, reported)", ""]
    groups = collections.defaultdict(list)
    for r in flags:
        groups[(r["kind"], ",".join(r["codes"]))].append(r)
    for (kind, codes), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"### {kind}, reported as {codes}: {len(rs)}")
        lines += [f"- `{where(r)}` `for ... in {r['iter']}` in `{r['func']}` (trips {r['trip_min']}..{r['trip_max']}, {r.get('active_by')})" for r in rs]
        lines.append("")
    lines += ["## static-steps (not scored): a static range of >= 5 trips carrying or computing arrays", ""]
    lines.append(f"{len(steps)} loops, {len(steps_hit)} reported by the tool (codes: "
                 + (", ".join(f"{c} {n}" for c, n in sorted(collections.Counter(c for r in steps_hit for c in r['codes']).items())) or "none") + ").")
    lines.append("")
    lines += [f"- `{where(r)}` `for ... in {r['iter']}` in `{r['func']}` (trips {r['trip_min']}..{r['trip_max']}, "
              f"arrays seen {r.get('arrays_by', 'runtime')}): {','.join(r['codes']) or 'not reported'}" for r in steps]
    lines.append("")
    if seconds:
        lines += ["## Check times", ""] + [f"- {n}: {s:.0f}s" for n, s in seconds.items()] + [""]
    Path(ns.results).write_text("\n".join(lines), encoding="utf-8")
    print(f"misses: {len(misses)}, false flags: {len(flags)}; details in {ns.results}")
    for r in misses:
        print(f"MISS  {where(r)} {r['kind']} iter={r['iter']}")
    for r in flags:
        print(f"FLAG  {where(r)} {r['kind']} {','.join(r['codes'])} iter={r['iter']}")


if __name__ == "__main__":
    main()
