"""`github` format: workflow commands, so GitHub Actions annotates the pull request diff.

Escaping follows the workflow-command rules (actions/toolkit `command.ts`): `%`,
`\\r`, `\\n` in the message; additionally `:` and `,` in property values.
"""

from __future__ import annotations

from typing import TextIO

from jaxloopfix.report import Report

__all__ = ["escape_data", "escape_property", "write", "write_errors"]


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, properties: dict[str, str | int], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{kind} {props}::{escape_data(message)}\n"


def write(report: Report, stream: TextIO) -> None:
    """One `::warning` per diagnostic."""
    for d in report.diagnostics:
        properties: dict[str, str | int] = {
            "title": f"jaxloopfix ({d.code})",
            "file": d.filename,
            "line": d.location.row,
            "col": d.location.column,
            "endLine": d.end_location.row,
            "endColumn": d.end_location.column,
        }
        stream.write(_command("warning", properties, f"{d.code} {d.message}"))


def write_errors(report: Report, stream: TextIO) -> None:
    """One `::error` per file that could not be checked (row 1 when the error has no position)."""
    for error in report.errors:
        location = error.location
        properties: dict[str, str | int] = {
            "title": "jaxloopfix",
            "file": error.filename,
            "line": location.row if location else 1,
            "col": location.column if location else 1,
        }
        stream.write(_command("error", properties, error.message))
