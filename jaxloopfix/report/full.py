"""`full` format (default): the concise header, then the code around the loop and why.

A reader should not need to open the file to see which loop is meant, what the
fix would do, or, when there is no fix, what stopped it and why the function
counts as traced at all.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TextIO

from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.report import Report
from jaxloopfix.report.concise import header
from jaxloopfix.report.style import StyledWriter, display_width, split_lines

__all__ = ["CONTEXT_LINES", "write"]

CONTEXT_LINES = 2  # lines shown before and after the diagnostic's first line
_TAB = "    "


def write(report: Report, stream: TextIO, *, color: bool | None = None) -> None:
    writer = StyledWriter(stream, color)
    lines_cache: dict[str, list[str]] = {}
    for diagnostic in report.diagnostics:
        writer.line(*header(_headline(diagnostic), report.unsafe_fixes))
        source = report.sources.get(diagnostic.filename)
        if source is not None and "cell" not in diagnostic.extra:
            if diagnostic.filename not in lines_cache:
                lines_cache[diagnostic.filename] = split_lines(source)
            _write_frame(writer, diagnostic, lines_cache[diagnostic.filename])
        _write_notes(writer, diagnostic)
        writer.line()


def _write_frame(writer: StyledWriter, diagnostic: Diagnostic, lines: list[str]) -> None:
    row = diagnostic.location.row
    if not 1 <= row <= len(lines):
        return
    first = max(1, row - CONTEXT_LINES)
    last = min(len(lines), row + CONTEXT_LINES)
    gutter = len(str(last))
    blank = " " * gutter
    writer.line(blank, (" |", "blue"))
    for number in range(first, last + 1):
        text = lines[number - 1].replace("\t", _TAB)
        writer.line((f"{number:>{gutter}} |", "blue"), f" {text}".rstrip())
        if number == row:
            indent, width = _underline(diagnostic, lines[number - 1])
            writer.line(blank, (" |", "blue"), " " + " " * indent, ("^" * width + " " + diagnostic.code, "bold red"))
    writer.line(blank, (" |", "blue"))


def _underline(diagnostic: Diagnostic, line: str) -> tuple[int, int]:
    """(cells before the caret, caret count) for the diagnostic's first line.

    A range that continues on later lines is underlined to the end of its first line.
    """
    start = min(max(diagnostic.location.column - 1, 0), len(line))
    if diagnostic.end_location.row == diagnostic.location.row:
        end = min(max(diagnostic.end_location.column - 1, start), len(line))
    else:
        end = len(line.rstrip())
    indent = display_width(line[:start].replace("\t", _TAB))
    width = display_width(line[start:end].replace("\t", _TAB))
    return indent, max(width, 1)


def _headline(diagnostic: Diagnostic) -> Diagnostic:
    """The diagnostic without the "(no fix: ...)" its message ends with: the note below says it."""
    suffix = f" (no fix: {diagnostic.no_fix_reason})"
    if diagnostic.no_fix_reason and diagnostic.message.endswith(suffix):
        return replace(diagnostic, message=diagnostic.message.removesuffix(suffix))
    return diagnostic


def _write_notes(writer: StyledWriter, diagnostic: Diagnostic) -> None:
    fix = diagnostic.fix
    if fix is not None and fix.assumptions:
        # One headline, then one line per assumption.
        check = f", `jaxloopfix verify` settles {'it' if len(fix.assumptions) == 1 else 'them'}" if fix.verifiable else ""
        writer.line("  = ", ("help", "bold cyan"), f": {fix.title} (unsafe{check}):")
        for assumption in fix.assumptions:
            writer.line(f"          - {assumption}")
    elif fix is not None:
        writer.line("  = ", ("help", "bold cyan"), f": {fix.message}")
    elif diagnostic.no_fix_reason:
        writer.line("  = ", ("note", "bold"), f": no fix available: {diagnostic.no_fix_reason}")
    if diagnostic.traced_reason:
        # The engine words it as a sentence, e.g. "`f` is traced: decorated with `@jax.jit`".
        writer.line("  = ", ("note", "bold"), f": {diagnostic.traced_reason}")
