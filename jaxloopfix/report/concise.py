"""`concise` format: one `path:row:col: CODE [*] message` line per diagnostic (grep-able)."""

from __future__ import annotations

from typing import TextIO

from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.report import Report
from jaxloopfix.report.style import Part, StyledWriter

__all__ = ["header", "write"]


def header(diagnostic: Diagnostic, unsafe_fixes: bool) -> list[Part]:
    """The `path:row:col: CODE [*] message` line shared with the `full` format."""
    loc = diagnostic.location
    parts: list[Part] = [(diagnostic.filename, "bold"), (":", "cyan")]
    if "cell" in diagnostic.extra:  # a notebook: rows count within the cell
        parts += [f"cell {diagnostic.extra['cell']}", (":", "cyan")]
    parts += [
        str(loc.row),
        (":", "cyan"),
        str(loc.column),
        (":", "cyan"),
        " ",
        (diagnostic.code, "bold red"),
        " ",
    ]
    if diagnostic.fix_applies(unsafe_fixes):
        parts += ["[", ("*", "cyan"), "] "]
    parts.append(diagnostic.message)
    return parts


def write(report: Report, stream: TextIO, *, color: bool | None = None) -> None:
    writer = StyledWriter(stream, color)
    for diagnostic in report.diagnostics:
        writer.line(*header(diagnostic, report.unsafe_fixes))
