"""`gitlab` format: a GitLab Code Quality report (a JSON list), for merge-request widgets.

Each diagnostic is `{description, check_name, fingerprint, severity, location}`
with `location.path` relative to the current directory (the repository root in
CI) and `location.lines.{begin,end}`. Diagnostics are `minor`; files that could
not be checked are `major` entries with `check_name` `jaxloopfix/file-error`
(they also go to stderr, as in every format but `github`).

The fingerprint is the SHA-256 of the path, code, message and range, so it is the
same on every run over the same code, which is what GitLab needs to tell new
findings from fixed ones; identical findings at the same place get an occurrence
number mixed in to keep fingerprints unique.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, TextIO

from jaxloopfix.report import Report
from jaxloopfix.report.sarif import relative_path

__all__ = ["FILE_ERROR_CHECK", "fingerprint", "issues", "write"]

FILE_ERROR_CHECK = "jaxloopfix/file-error"


def fingerprint(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


def issues(report: Report) -> list[dict[str, Any]]:
    seen: Counter[str] = Counter()

    def unique(key: tuple[object, ...]) -> str:
        digest = fingerprint(*key)
        seen[digest] += 1
        return digest if seen[digest] == 1 else fingerprint(*key, seen[digest])

    found: list[dict[str, Any]] = []
    for d in report.diagnostics:
        path = relative_path(d.filename)
        start, end = d.location, d.end_location
        found.append(
            {
                "description": f"{d.code}: {d.message}",
                "check_name": d.code,
                "fingerprint": unique((path, d.code, d.message, start.row, start.column, end.row, end.column)),
                "severity": "minor",
                "location": {"path": path, "lines": {"begin": start.row, "end": max(end.row, start.row)}},
            }
        )
    for e in report.errors:
        path = relative_path(e.filename)
        row = e.location.row if e.location is not None else 1
        found.append(
            {
                "description": e.message,
                "check_name": FILE_ERROR_CHECK,
                "fingerprint": unique((path, FILE_ERROR_CHECK, e.message, row)),
                "severity": "major",
                "location": {"path": path, "lines": {"begin": row, "end": row}},
            }
        )
    return found


def write(report: Report, stream: TextIO) -> None:
    json.dump(issues(report), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
