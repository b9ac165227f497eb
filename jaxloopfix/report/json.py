"""`json` format: a list shaped like ruff's `--output-format json`, for tools.

Only diagnostics go in the list (file errors are printed on stderr), so a consumer
can always `json.loads` stdout.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from jaxloopfix.diagnostics import Diagnostic, Location
from jaxloopfix.report import Report

__all__ = ["diagnostic_to_dict", "write"]


def _location(location: Location) -> dict[str, int]:
    return {"column": location.column, "row": location.row}


def diagnostic_to_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    """One diagnostic in ruff's JSON shape, plus `no_fix_reason` and `traced_reason`."""
    fix = diagnostic.fix
    return {
        "cell": int(diagnostic.extra["cell"]) if "cell" in diagnostic.extra else None,
        "code": diagnostic.code,
        "end_location": _location(diagnostic.end_location),
        "filename": diagnostic.filename,
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "edits": [
                {
                    "content": edit.content,
                    "end_location": _location(edit.end_location),
                    "location": _location(edit.location),
                }
                for edit in fix.edits
            ],
            "message": fix.message,
        },
        "location": _location(diagnostic.location),
        "message": diagnostic.message,
        "no_fix_reason": diagnostic.no_fix_reason,
        "noqa_row": diagnostic.location.row,
        "traced_reason": diagnostic.traced_reason,
        "url": None,
    }


def write(report: Report, stream: TextIO) -> None:
    json.dump([diagnostic_to_dict(d) for d in report.diagnostics], stream, indent=2, ensure_ascii=False)
    stream.write("\n")
