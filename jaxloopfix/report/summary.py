"""The closing lines of `full`/`concise` output, worded like ruff's so users know them."""

from __future__ import annotations

from typing import TextIO

from jaxloopfix.diagnostics import Applicability
from jaxloopfix.report import Report
from jaxloopfix.report.style import StyledWriter

__all__ = ["first_few", "plural", "summary_lines", "write"]


def plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def first_few(names: list[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`: a list a summary line names without growing with the project."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def summary_lines(report: Report) -> list[str]:
    """Plain summary lines (no colour), e.g. ["Found 2 errors.", "[*] 1 fixable with the `--fix` option."]."""
    remaining = len(report.diagnostics)
    fixed = report.fixed
    lines: list[str] = []
    if remaining and fixed:
        lines.append(f"Found {plural(remaining + fixed, 'error')} ({fixed} fixed, {remaining} remaining).")
    elif remaining:
        lines.append(f"Found {plural(remaining, 'error')}.")
    elif fixed:
        lines.append(f"Fixed {plural(fixed, 'error')}.")
    elif not report.errors and not report.checked_none:
        lines.append("All checks passed!")
    skipped = sorted({w.filename for w in report.warnings if w.skipped})
    if skipped:
        lines.append(f"{plural(len(skipped), 'file')} not checked (over `max-file-size`): {first_few(skipped)}.")

    applicable = sum(d.fix_applies(report.unsafe_fixes) for d in report.diagnostics)
    hidden = sum(
        d.fix is not None and d.fix.applicability is Applicability.UNSAFE and not report.unsafe_fixes
        for d in report.diagnostics
    )
    hint = f"{plural(hidden, 'hidden fix', 'es')} can be enabled with the `--unsafe-fixes` option"
    if report.verified_run and (applicable or hidden):
        # `--fix --verify` already offered them: verification held them back, `--fix` would not help.
        held = applicable + hidden
        lines.append(
            f"{plural(held, 'fix', 'es')} not applied: `verify` could not confirm {'it' if held == 1 else 'them'} "
            "(see the warnings)."
        )
        return lines
    if applicable and hidden:
        lines.append(f"[*] {applicable} fixable with the `--fix` option ({hint}).")
    elif applicable:
        lines.append(f"[*] {applicable} fixable with the `--fix` option.")
    elif hidden:
        lines.append(f"No fixes available ({hint}).")
    return lines


def write(report: Report, stream: TextIO, *, color: bool | None = None) -> None:
    if report.quiet:
        return
    writer = StyledWriter(stream, color)
    for line in summary_lines(report):
        if line.startswith("[*]"):
            writer.line("[", ("*", "cyan"), "]", line[3:])
        else:
            writer.line(line)
