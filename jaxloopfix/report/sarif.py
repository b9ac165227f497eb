"""`sarif` format: one SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

One run: the driver lists every rule (summary, and the rule's docstring as full
description and help), each diagnostic is a `result` with its region and, when it
has one, its fix as `fixes[].artifactChanges[].replacements` (the edit's region and
new text). Files that could not be checked, or were skipped, are
`toolExecutionNotifications` of the invocation; `executionSuccessful` is false
when any file could not be checked.

Paths are written relative to the current directory with forward slashes and
`uriBaseId` `%SRCROOT%` (what `upload-sarif` resolves against the checkout);
a path outside the current directory becomes an absolute `file://` URI.
Columns are 1-based counts of code points, as everywhere in jaxloopfix, so the
run says `columnKind: unicodeCodePoints`; end columns are exclusive, as in SARIF.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path, PurePosixPath
from typing import Any, TextIO
from urllib.parse import quote

from jaxloopfix import __version__
from jaxloopfix.diagnostics import Diagnostic, FileError, Location
from jaxloopfix.report import Report

__all__ = ["INFORMATION_URI", "SARIF_SCHEMA", "artifact_location", "relative_path", "sarif_log", "write"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/jaxloopfix/"
SRCROOT = "%SRCROOT%"


def relative_path(filename: str) -> str:
    """`filename` relative to the current directory, with `/` separators, when it lies below it."""
    path = Path(filename)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_posix()
    return PurePosixPath(path.as_posix()).as_posix()  # drops a leading `./`


def artifact_location(filename: str) -> dict[str, str]:
    """A relative URI against `%SRCROOT%`, or an absolute `file://` URI outside the current directory."""
    path = relative_path(filename)
    if Path(filename).is_absolute() and Path(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    # Percent-encode everything but `/`: a `:` in the first segment would read as a scheme.
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _region(start: Location, end: Location | None = None) -> dict[str, int]:
    region = {"startLine": start.row, "startColumn": start.column}
    if end is not None:
        region.update(endLine=end.row, endColumn=end.column)
    return region


def _rules(report: Report) -> list[dict[str, Any]]:
    """Every known rule, then any code seen in the diagnostics that is not one of them."""
    from jaxloopfix.rules import ALL_RULES

    rules: list[dict[str, Any]] = []
    for rule in ALL_RULES:
        doc = inspect.cleandoc(rule.__doc__ or rule.summary)
        rules.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": doc},
                "help": {"text": doc, "markdown": doc},
                "defaultConfiguration": {"level": "warning"},
            }
        )
    known = {rule["id"] for rule in rules}
    for code in sorted({d.code for d in report.diagnostics} - known):
        entry: dict[str, Any] = {"id": code, "defaultConfiguration": {"level": "warning"}}
        if report.rule_names.get(code):
            entry["name"] = report.rule_names[code]
        rules.append(entry)
    return rules


def _result(diagnostic: Diagnostic, rule_index: int) -> dict[str, Any]:
    location = artifact_location(diagnostic.filename)
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": diagnostic.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": _region(diagnostic.location, diagnostic.end_location),
                }
            }
        ],
    }
    fix = diagnostic.fix
    if fix is not None:
        result["fixes"] = [
            {
                "description": {"text": fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": dict(location),
                        "replacements": [
                            {
                                "deletedRegion": _region(edit.location, edit.end_location),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in fix.edits
                        ],
                    }
                ],
                "properties": {"applicability": fix.applicability.value},
            }
        ]
    properties = {
        key: value
        for key, value in (("noFixReason", diagnostic.no_fix_reason), ("tracedReason", diagnostic.traced_reason))
        if value
    }
    if properties:
        result["properties"] = properties
    return result


def _notification(problem: FileError, level: str) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": artifact_location(problem.filename)}
    if problem.location is not None:
        physical["region"] = _region(problem.location)
    return {
        "level": level,
        "message": {"text": f"{problem.filename}: {problem.message}"},
        "locations": [{"physicalLocation": physical}],
    }


def sarif_log(report: Report) -> dict[str, Any]:
    """The whole log as plain JSON data."""
    rules = _rules(report)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    notifications = [_notification(e, "error") for e in report.errors]
    notifications += [_notification(w, "warning") for w in report.warnings]
    invocation: dict[str, Any] = {"executionSuccessful": not report.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxloopfix",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.code]) for d in report.diagnostics],
            }
        ],
    }


def write(report: Report, stream: TextIO) -> None:
    json.dump(sarif_log(report), stream, indent=2, ensure_ascii=False)
    stream.write("\n")

