"""Reporters: every output format reads the same `Report` and writes to a text stream.

One module per format (`full`, `concise`, `json`, `github`, and for CI `sarif`,
`junit`, `gitlab`), plus the pieces they share (`summary`, `statistics`, `diff`,
`style`). `emit` decides which stream gets what, so the CLI stays a thin shell:
diagnostics go to `out`; file errors go to `err` as plain lines, except in `github`
format where they become `::error` annotations (that is the only place a CI log
shows them next to the code). The CI document formats (`sarif`, `junit`, `gitlab`)
carry file errors in the document too, and still print them on `err`, since their
`out` usually goes to a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from jaxloopfix.diagnostics import Diagnostic, FileError

__all__ = ["OUTPUT_FORMATS", "Report", "emit", "write_file_errors"]

OUTPUT_FORMATS: tuple[str, ...] = ("full", "concise", "json", "github", "sarif", "junit", "gitlab")
# Formats that write one machine-readable document built from the whole report.
_DOCUMENT_FORMATS: tuple[str, ...] = ("sarif", "junit", "gitlab")


@dataclass(frozen=True)
class Report:
    """What one run found, as every reporter sees it."""

    diagnostics: Sequence[Diagnostic] = ()
    # Files that could not be checked (exit code 2).
    errors: Sequence[FileError] = ()
    # Files skipped on purpose (too large): said on stderr, not a failure.
    warnings: Sequence[FileError] = ()
    # filename -> decoded text, for code frames; a missing file just gets no frame.
    sources: Mapping[str, str] = field(default_factory=dict)
    # Whether unsafe fixes count as available (`--unsafe-fixes`).
    unsafe_fixes: bool = False
    # Fixes applied in this run (`--fix`).
    fixed: int = 0
    # code -> kebab-case rule name, for `--statistics`.
    rule_names: Mapping[str, str] = field(default_factory=dict)
    # No file was checked at all (every one skipped, or none found): never "All checks passed!".
    checked_none: bool = False
    # What the run confirmed, said on stderr: `verified: path: message`.
    notes: Sequence[FileError] = ()
    # `--fix --verify` ran: a fix still offered was held back by verification, not left for `--fix`.
    verified_run: bool = False
    # `-q`: findings and errors only (no summary, warnings or notes).
    quiet: bool = False


def write_file_errors(report: Report, stream: TextIO, *, color: bool | None = None) -> None:
    """`error: path:row:col: message` / `warning: path: message` lines (stderr)."""
    from jaxloopfix.report.style import StyledWriter

    writer = StyledWriter(stream, color)
    for error in report.errors:
        where = error.filename
        if error.location is not None:
            where += f":{error.location.row}:{error.location.column}"
        writer.line(("error", "bold red"), ": ", (where, "bold"), f": {error.message}")
    if report.quiet:
        return
    for warning in report.warnings:
        writer.line(("warning", "bold yellow"), ": ", (warning.filename, "bold"), f": {warning.message}")
    for note in report.notes:
        writer.line(("verified", "bold green"), ": ", (note.filename, "bold"), f": {note.message}")


def emit(
    report: Report,
    output_format: str,
    out: TextIO,
    err: TextIO,
    *,
    statistics: bool = False,
    color: bool | None = None,
    err_color: bool | None = None,
) -> None:
    """Write `report` in `output_format`: results on `out`, file problems on `err`."""
    from jaxloopfix.report import concise, full, github, gitlab, json, junit, sarif, statistics as stats, summary

    if output_format == "github":
        github.write_errors(report, out)
        if statistics:
            stats.write_text(report, out, color=color)
        else:
            github.write(report, out)
        report = Report(warnings=report.warnings, notes=report.notes)  # errors already annotated
        write_file_errors(report, err, color=err_color)
        return

    write_file_errors(report, err, color=err_color)
    if output_format in _DOCUMENT_FORMATS and not statistics:
        {"sarif": sarif, "junit": junit, "gitlab": gitlab}[output_format].write(report, out)
        return
    if output_format == "json":
        if statistics:
            stats.write_json(report, out)
        else:
            json.write(report, out)
        return
    if statistics:
        stats.write_text(report, out, color=color)
        return
    if output_format == "concise":
        concise.write(report, out, color=color)
    elif output_format == "full":
        full.write(report, out, color=color)
    else:
        raise ValueError(f"unknown output format: {output_format!r}")
    summary.write(report, out, color=color)
