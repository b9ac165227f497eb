"""Reporters, fed hand-made diagnostics (no engine needed)."""

from __future__ import annotations

import io
import json
import re

import pytest

from jaxloopfix.diagnostics import Applicability, Diagnostic, Edit, FileError, Fix, Location
from jaxloopfix.report import Report, concise, emit, full, github, statistics, summary
from jaxloopfix.report import json as json_report
from jaxloopfix.report.diff import unified_diff
from jaxloopfix.report.style import split_lines
from fixture_tools import SEED_SOURCE

SEED = SEED_SOURCE

ANSI = re.compile(r"\x1b\[")
GITHUB_LINE = re.compile(r"^::(warning|error) title=.*,file=.*,line=\d+,col=\d+.*::")


def make_diagnostic(
    *,
    filename: str = "rnn.py",
    row: int = 9,
    column: int = 5,
    end: tuple[int, int] = (12, 29),
    applicability: Applicability | None = Applicability.SAFE,
    code: str = "JLF001",
    message: str = "Python `for` loop is unrolled under `jax.jit`",
    no_fix_reason: str | None = None,
    traced_reason: str | None = "`run_rnn` is traced: decorated with `@jax.jit`",
) -> Diagnostic:
    fix = None
    if applicability is not None:
        edit = Edit("h, outputs = jax.lax.scan(...)", 100, 200, Location(row, column), Location(*end))
        fix = Fix(applicability, "Rewrite the loop with `jax.lax.scan`", (edit,))
    return Diagnostic(
        code=code,
        message=message,
        filename=filename,
        location=Location(row, column),
        end_location=Location(*end),
        fix=fix,
        no_fix_reason=no_fix_reason,
        traced_reason=traced_reason,
    )


def render(module, report: Report, **kwargs) -> str:
    stream = io.StringIO()
    module.write(report, stream, **kwargs)
    return stream.getvalue()


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


# --------------------------------------------------------------------------- concise


def test_concise_line() -> None:
    report = Report(diagnostics=[make_diagnostic()])
    assert render(concise, report) == "rnn.py:9:5: JLF001 [*] Python `for` loop is unrolled under `jax.jit`\n"


def test_fix_marker_follows_applicability() -> None:
    unsafe = make_diagnostic(applicability=Applicability.UNSAFE)
    nofix = make_diagnostic(applicability=None, no_fix_reason="carry changes shape")
    assert "[*]" not in render(concise, Report(diagnostics=[unsafe]))
    assert "[*]" in render(concise, Report(diagnostics=[unsafe], unsafe_fixes=True))
    assert "[*]" not in render(concise, Report(diagnostics=[nofix], unsafe_fixes=True))


# --------------------------------------------------------------------------- full


def test_full_has_header_frame_caret_and_help() -> None:
    report = Report(diagnostics=[make_diagnostic()], sources={"rnn.py": SEED})
    out = render(full, report)
    lines = out.splitlines()
    assert lines[0] == "rnn.py:9:5: JLF001 [*] Python `for` loop is unrolled under `jax.jit`"
    assert "  |" in lines[1]
    assert " 7 |     h = jnp.zeros(hidden_dim)" in lines
    assert " 9 |     for i in range(inputs.shape[0]):" in lines
    assert "11 |         h = jnp.tanh(" in out
    caret_line = lines[lines.index(" 9 |     for i in range(inputs.shape[0]):") + 1]
    # carets start under the `f` of `for` (column 5) and run to the end of the line
    prefix, carets = caret_line.split("|", 1)
    assert carets.index("^") == 1 + 4
    assert carets.strip() == "^" * len("for i in range(inputs.shape[0]):") + " JLF001"
    assert "  = help: Rewrite the loop with `jax.lax.scan`" in lines
    assert "  = note: `run_rnn` is traced: decorated with `@jax.jit`" in lines
    assert out.endswith("\n\n")
    assert not ANSI.search(out)


def test_full_without_fix_shows_the_reason() -> None:
    diagnostic = make_diagnostic(applicability=None, no_fix_reason="`outputs` is read after the loop")
    out = render(full, Report(diagnostics=[diagnostic], sources={"rnn.py": SEED}))
    assert "help:" not in out
    assert "no fix available: `outputs` is read after the loop" in out
    assert "is traced: decorated with" in out


def test_full_single_line_range_caret_width() -> None:
    source = "def f(x):\n    return g(x)\n"
    diagnostic = make_diagnostic(filename="m.py", row=2, column=12, end=(2, 16), applicability=None, traced_reason=None)
    out = render(full, Report(diagnostics=[diagnostic], sources={"m.py": source}))
    lines = out.splitlines()
    caret_line = lines[lines.index("2 |     return g(x)") + 1]
    assert caret_line == "  |            ^^^^ JLF001"


def test_full_frame_with_tabs_crlf_and_form_feed() -> None:
    # \x0c must not count as a line break, \r\n must not leave a stray \r, tabs are expanded
    source = "a = 1\r\n\x0cb = 2\r\ndef f(x):\r\n\tfor i in range(9):\r\n\t\tx = x + i\r\n"
    assert split_lines(source)[3] == "\tfor i in range(9):"
    diagnostic = make_diagnostic(filename="t.py", row=4, column=2, end=(5, 12), traced_reason=None)
    out = render(full, Report(diagnostics=[diagnostic], sources={"t.py": source}))
    assert "\r" not in out
    lines = out.splitlines()
    assert "4 |     for i in range(9):" in lines
    caret_line = lines[lines.index("4 |     for i in range(9):") + 1]
    assert caret_line == "  |     " + "^" * len("for i in range(9):") + " JLF001"


def test_full_without_source_or_with_bad_row_does_not_crash() -> None:
    out = render(full, Report(diagnostics=[make_diagnostic(filename="other.py")], sources={}))
    assert out.startswith("other.py:9:5: JLF001")
    out = render(full, Report(diagnostics=[make_diagnostic(row=99, end=(99, 1))], sources={"rnn.py": SEED}))
    assert " |" not in out.splitlines()[1]


def test_full_colour_only_on_tty() -> None:
    report = Report(diagnostics=[make_diagnostic()], sources={"rnn.py": SEED})
    plain = render(full, report)
    tty = FakeTTY()
    full.write(report, tty)
    assert ANSI.search(tty.getvalue())
    assert ANSI.sub("", re.sub(r"\x1b\[[0-9;]*m", "", tty.getvalue())) == plain


def test_full_no_color_env_is_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTTY()
    concise.write(Report(diagnostics=[make_diagnostic()]), tty)
    assert not re.search(r"\x1b\[[0-9;]*3\dm", tty.getvalue())  # no foreground colours


# --------------------------------------------------------------------------- json


def test_json_shape() -> None:
    report = Report(
        diagnostics=[
            make_diagnostic(),
            make_diagnostic(row=20, end=(22, 3), applicability=None, no_fix_reason="why", traced_reason=None),
        ],
        errors=[FileError("broken.py", "cannot parse")],
    )
    data = json.loads(render(json_report, report))
    assert isinstance(data, list) and len(data) == 2
    first, second = data
    assert set(first) == {
        "code", "message", "filename", "location", "end_location", "fix",
        "noqa_row", "url", "no_fix_reason", "traced_reason", "cell",
    }
    assert first["code"] == "JLF001"
    assert first["filename"] == "rnn.py"
    assert first["location"] == {"row": 9, "column": 5}
    assert first["end_location"] == {"row": 12, "column": 29}
    assert first["noqa_row"] == 9
    assert first["url"] is None
    assert first["no_fix_reason"] is None
    assert first["traced_reason"] == "`run_rnn` is traced: decorated with `@jax.jit`"
    assert first["fix"] == {
        "applicability": "safe",
        "message": "Rewrite the loop with `jax.lax.scan`",
        "edits": [
            {
                "content": "h, outputs = jax.lax.scan(...)",
                "location": {"row": 9, "column": 5},
                "end_location": {"row": 12, "column": 29},
            }
        ],
    }
    assert second["fix"] is None
    assert second["no_fix_reason"] == "why"
    assert second["noqa_row"] == 20


def test_json_empty_is_an_empty_list() -> None:
    assert json.loads(render(json_report, Report())) == []


def test_json_unsafe_applicability() -> None:
    data = json.loads(render(json_report, Report(diagnostics=[make_diagnostic(applicability=Applicability.UNSAFE)])))
    assert data[0]["fix"]["applicability"] == "unsafe"


# --------------------------------------------------------------------------- github


def test_github_annotations() -> None:
    report = Report(diagnostics=[make_diagnostic()], errors=[FileError("bad.py", "cannot parse", Location(3, 7))])
    stream = io.StringIO()
    github.write_errors(report, stream)
    github.write(report, stream)
    lines = stream.getvalue().splitlines()
    assert all(GITHUB_LINE.match(line) for line in lines), lines
    assert lines[0] == "::error title=jaxloopfix,file=bad.py,line=3,col=7::cannot parse"
    assert lines[1] == (
        "::warning title=jaxloopfix (JLF001),file=rnn.py,line=9,col=5,endLine=12,endColumn=29"
        "::JLF001 Python `for` loop is unrolled under `jax.jit`"
    )


def test_github_escaping() -> None:
    diagnostic = make_diagnostic(filename="we:ird,name%.py", message="100% sure\r\nsecond line: a, b")
    out = render(github, Report(diagnostics=[diagnostic]))
    assert out.count("\n") == 1
    assert "file=we%3Aird%2Cname%25.py," in out
    assert out.rstrip("\n").endswith("::JLF001 100%25 sure%0D%0Asecond line: a, b")
    assert GITHUB_LINE.match(out)


def test_github_error_without_location_uses_line_1() -> None:
    stream = io.StringIO()
    github.write_errors(Report(errors=[FileError("blob.py", "not a text file")]), stream)
    assert stream.getvalue() == "::error title=jaxloopfix,file=blob.py,line=1,col=1::not a text file\n"


# --------------------------------------------------------------------------- summary


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (Report(), ["All checks passed!"]),
        (Report(errors=[FileError("x.py", "bad")]), []),
        (Report(diagnostics=[make_diagnostic()]), ["Found 1 error.", "[*] 1 fixable with the `--fix` option."]),
        (
            Report(diagnostics=[make_diagnostic(), make_diagnostic(applicability=None)]),
            ["Found 2 errors.", "[*] 1 fixable with the `--fix` option."],
        ),
        (Report(diagnostics=[make_diagnostic(applicability=None)]), ["Found 1 error."]),
        (
            Report(diagnostics=[make_diagnostic(), make_diagnostic(applicability=Applicability.UNSAFE)]),
            [
                "Found 2 errors.",
                "[*] 1 fixable with the `--fix` option "
                "(1 hidden fix can be enabled with the `--unsafe-fixes` option).",
            ],
        ),
        (
            Report(diagnostics=[make_diagnostic(applicability=Applicability.UNSAFE)] * 2),
            ["Found 2 errors.", "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)."],
        ),
        (
            Report(diagnostics=[make_diagnostic(applicability=Applicability.UNSAFE)], unsafe_fixes=True),
            ["Found 1 error.", "[*] 1 fixable with the `--fix` option."],
        ),
        (Report(fixed=2), ["Fixed 2 errors."]),
        (Report(fixed=1), ["Fixed 1 error."]),
        (
            Report(diagnostics=[make_diagnostic(applicability=None)], fixed=2),
            ["Found 3 errors (2 fixed, 1 remaining)."],
        ),
    ],
)
def test_summary_lines(report: Report, expected: list[str]) -> None:
    assert summary.summary_lines(report) == expected
    assert render(summary, report) == "".join(line + "\n" for line in expected)


# --------------------------------------------------------------------------- statistics


def _stats_report() -> Report:
    return Report(
        diagnostics=[
            make_diagnostic(),
            make_diagnostic(row=30, end=(31, 1)),
            make_diagnostic(code="JLF002", applicability=None),
        ],
        rule_names={"JLF001": "unrolled-loop", "JLF002": "other-rule"},
    )


def test_statistics_text() -> None:
    stream = io.StringIO()
    statistics.write_text(_stats_report(), stream)
    assert stream.getvalue() == "2\tJLF001\t[*] unrolled-loop\n1\tJLF002\t[ ] other-rule\n"


def test_statistics_json() -> None:
    stream = io.StringIO()
    statistics.write_json(_stats_report(), stream)
    assert json.loads(stream.getvalue()) == [
        {"code": "JLF001", "name": "unrolled-loop", "count": 2, "fixable": True},
        {"code": "JLF002", "name": "other-rule", "count": 1, "fixable": False},
    ]


def test_statistics_without_any_fix_has_no_marker() -> None:
    stream = io.StringIO()
    statistics.write_text(Report(diagnostics=[make_diagnostic(applicability=None)]), stream)
    assert stream.getvalue() == "1\tJLF001\t\n"


# --------------------------------------------------------------------------- emit routing


def _emit(fmt: str, report: Report, **kwargs) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    emit(report, fmt, out, err, **kwargs)
    return out.getvalue(), err.getvalue()


ROUTING_REPORT = Report(
    diagnostics=[make_diagnostic()],
    errors=[FileError("bad.py", "cannot parse: invalid syntax", Location(2, 3))],
    warnings=[FileError("huge.py", "skipped: file is 99 bytes, over max-file-size (10 bytes)")],
    sources={"rnn.py": SEED},
)


@pytest.mark.parametrize("fmt", ["full", "concise", "json"])
def test_emit_puts_file_errors_on_err(fmt: str) -> None:
    out, err = _emit(fmt, ROUTING_REPORT)
    assert "bad.py" not in out
    assert "error: bad.py:2:3: cannot parse: invalid syntax" in err
    assert "warning: huge.py: skipped: file is 99 bytes" in err
    if fmt == "json":
        assert len(json.loads(out)) == 1
    else:
        assert "Found 1 error." in out


def test_emit_github_annotates_errors_on_out() -> None:
    out, err = _emit("github", ROUTING_REPORT)
    lines = out.splitlines()
    assert len(lines) == 2 and all(GITHUB_LINE.match(line) for line in lines)
    assert lines[0].startswith("::error ")
    assert "bad.py" not in err
    assert "warning: huge.py" in err


def test_emit_statistics_replaces_listing() -> None:
    out, _ = _emit("full", _stats_report(), statistics=True)
    assert out == "2\tJLF001\t[*] unrolled-loop\n1\tJLF002\t[ ] other-rule\n"
    out, _ = _emit("json", _stats_report(), statistics=True)
    assert json.loads(out)[0]["count"] == 2


def test_emit_unknown_format() -> None:
    with pytest.raises(ValueError):
        _emit("xml", Report())


def test_outputs_are_plain_when_not_a_tty() -> None:
    for fmt in ("full", "concise", "json", "github"):
        out, err = _emit(fmt, ROUTING_REPORT)
        assert not ANSI.search(out + err), fmt


# --------------------------------------------------------------------------- diff


def test_unified_diff() -> None:
    assert unified_diff("a.py", "x = 1\n", "x = 1\n") == ""
    assert unified_diff("a.py", "x = 1\n", "x = 2\n") == "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_unified_diff_no_final_newline_and_crlf() -> None:
    text = unified_diff("a.py", "x = 1\r\ny = 1", "x = 1\r\ny = 2")
    assert "-y = 1\n\\ No newline at end of file\n+y = 2\n\\ No newline at end of file\n" in text
    assert " x = 1\r\n" in text  # CRLF context lines keep their ending, so the patch applies
