"""`junit` format: JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure).

One `<testsuite name="jaxloopfix">` inside `<testsuites>`: each diagnostic is a
`<testcase>` with a `<failure>`, each file that could not be checked a
`<testcase>` with an `<error>`. With nothing to report the suite holds a single
passing testcase named `jaxloopfix`, so the report never looks empty.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TextIO

from jaxloopfix.report import Report

__all__ = ["junit_tree", "write"]

SUITE = "jaxloopfix"


def junit_tree(report: Report) -> ET.ElementTree:
    failures = len(report.diagnostics)
    errors = len(report.errors)
    tests = max(failures + errors, 1)
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors)}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, **counts, "skipped": "0"})

    for d in report.diagnostics:
        where = f"{d.filename}:{d.location.row}:{d.location.column}"
        case = ET.SubElement(
            suite,
            "testcase",
            {"name": f"{where}: {d.code}", "classname": d.filename, "file": d.filename, "line": str(d.location.row)},
        )
        failure = ET.SubElement(case, "failure", {"message": f"{d.code} {d.message}", "type": d.code})
        lines = [f"{where}: {d.code} {d.message}"]
        if d.fix is not None:
            lines.append(f"fix ({d.fix.applicability.value}): {d.fix.message}")
        if d.no_fix_reason:
            lines.append(f"no fix available: {d.no_fix_reason}")
        if d.traced_reason:
            lines.append(f"note: {d.traced_reason}")
        failure.text = "\n".join(lines)

    for e in report.errors:
        attrs = {"name": e.filename, "classname": e.filename, "file": e.filename}
        if e.location is not None:
            attrs["line"] = str(e.location.row)
        case = ET.SubElement(suite, "testcase", attrs)
        ET.SubElement(case, "error", {"message": e.message, "type": "file-error"}).text = e.message

    if not report.diagnostics and not report.errors:
        ET.SubElement(suite, "testcase", {"name": SUITE, "classname": SUITE})
    return ET.ElementTree(root)


def write(report: Report, stream: TextIO) -> None:
    tree = junit_tree(report)
    ET.indent(tree)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    tree.write(stream, encoding="unicode")
    stream.write("\n")
