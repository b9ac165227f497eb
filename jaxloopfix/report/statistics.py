"""`--statistics`: counts per rule instead of the individual diagnostics (triage a big codebase)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TextIO

from jaxloopfix.report import Report
from jaxloopfix.report.style import StyledWriter

__all__ = ["Statistic", "compute", "write_json", "write_text"]


@dataclass(frozen=True)
class Statistic:
    code: str
    name: str
    count: int
    fixable: int  # how many of them `--fix` would fix


def compute(report: Report) -> list[Statistic]:
    """One row per code, most frequent first (ties by code)."""
    counts: Counter[str] = Counter(d.code for d in report.diagnostics)
    fixable: Counter[str] = Counter(
        d.code for d in report.diagnostics if d.fix_applies(report.unsafe_fixes)
    )
    return sorted(
        (Statistic(code, report.rule_names.get(code, ""), count, fixable[code]) for code, count in counts.items()),
        key=lambda s: (-s.count, s.code),
    )


def write_text(report: Report, stream: TextIO, *, color: bool | None = None) -> None:
    """`count<TAB>code<TAB>[*] name` rows, like `ruff --statistics`."""
    rows = compute(report)
    if not rows:
        return
    writer = StyledWriter(stream, color)
    count_width = max(len(str(r.count)) for r in rows)
    code_width = max(len(r.code) for r in rows)
    any_fixable = any(r.fixable for r in rows)
    for r in rows:
        marker = "[*] " if r.fixable else "[ ] " if any_fixable else ""
        writer.line(
            f"{r.count:>{count_width}}\t",
            (f"{r.code:<{code_width}}", "bold red"),
            "\t",
            (marker, "cyan"),
            r.name,
        )


def write_json(report: Report, stream: TextIO) -> None:
    rows = [
        {"code": r.code, "name": r.name, "count": r.count, "fixable": r.fixable > 0}
        for r in compute(report)
    ]
    json.dump(rows, stream, indent=2)
    stream.write("\n")
