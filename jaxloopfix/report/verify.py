"""Output of `jaxloopfix verify`: one block (or one JSON object) per function."""

from __future__ import annotations

import json
from typing import Any, TextIO

TIMING_ROWS = (
    ("trace_lower_s", "trace+lower", "s"),
    ("compile_s", "compile", "s"),
    ("jaxpr_eqns", "jaxpr equations", ""),
    ("stablehlo_bytes", "StableHLO bytes", ""),
    ("run_median_s", "run (median)", "s"),
)


def _number(value: Any, unit: str) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    if unit == "s":
        return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"
    return f"{value:,}" if isinstance(value, int) else f"{value:.3g}"


def write_verify_full(results: list[tuple[str, dict[str, Any]]], out: TextIO) -> None:
    for label, result in results:
        status = result.get("status", "error")
        source = result.get("input_source")
        line = f"{label}: {status}"
        if source:
            line += f" ({source} inputs)"
        if status == "equivalent":
            line += f"; max |diff| {result.get('max_abs', 0):.3g}, max rel {result.get('max_rel', 0):.3g}"
        out.write(line + "\n")
        if result.get("notebook"):
            out.write(f"  {result['notebook']}\n")
        if result.get("run_through"):
            out.write(f"  run through `{result['run_through']}`, the function that defines it\n")
        if status != "equivalent" and result.get("message"):
            out.write(f"  {result['message']}\n")
        for advisory in result.get("advisories") or []:
            out.write(f"  note: {advisory}\n")
        for case in result.get("cases") or []:
            if case.get("inputs"):
                out.write(f"  inputs {case.get('label')}: {case['inputs']}\n")
        for case in result.get("cases") or []:
            if case.get("gradients_skipped") and "not requested" not in case["gradients_skipped"]:
                out.write(f"  {case.get('label')}: gradients skipped ({case['gradients_skipped']})\n")
        timings = result.get("timings") or {}
        original, rewritten = timings.get("original"), timings.get("rewritten")
        if isinstance(original, dict) and isinstance(rewritten, dict) and "error" not in original and "error" not in rewritten:
            out.write(f"  {'timed on ' + str(timings.get('case', '')):18} {'loop':>12} {'scan':>12} {'loop/scan':>10}\n")
            for key, name, unit in TIMING_ROWS:
                a, b = original.get(key), rewritten.get(key)
                ratio = f"{a / b:.2f}x" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else "-"
                out.write(f"  {name:18} {_number(a, unit):>12} {_number(b, unit):>12} {ratio:>10}\n")
        elif timings:
            out.write(f"  timings unavailable: {original.get('error') if isinstance(original, dict) else timings}\n")
        unroll = result.get("unroll")
        if isinstance(unroll, dict) and "choice" in unroll:
            from jaxloopfix.verify.gate import tuned_choice

            out.write(f"  tuned: {tuned_choice(unroll)}\n")


def write_verify_json(results: list[tuple[str, dict[str, Any]]], out: TextIO) -> None:
    objects = []
    for label, result in results:
        path, _, function = label.rpartition("::")
        objects.append({"filename": path, "function": function, **result})
    json.dump(objects, out, indent=2, sort_keys=True, default=str)
    out.write("\n")
