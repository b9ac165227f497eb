"""The `jaxloopfix` CLI end to end, against the real engine.

Tests that need diagnostics are skipped only while `jaxloopfix/engine.py` does not
exist yet; once it exists an import error fails them loudly instead of skipping.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import jaxloopfix
from jaxloopfix.cli import main
from fixture_tools import SEED_SOURCE


SEED = SEED_SOURCE
SEED_ROW, SEED_COL = 9, 5

CLEAN = "import jax\n\n\n@jax.jit\ndef f(x):\n    return x + 1\n"

GITHUB_LINE = re.compile(r"^::(warning|error) title=.*,file=.*,line=\d+,col=\d+.*::")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test from an empty directory with no config above it and no env overrides."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JAXLOOPFIX_OUTPUT_FORMAT", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input, env=env, catch_exceptions=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, newline="")
    return path


def rule_name(code: str) -> str:
    from jaxloopfix.rules import ALL_RULES

    return next(r.name for r in ALL_RULES if r.code == code)


# --------------------------------------------------------------------------- no engine needed


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout == f"jaxloopfix {jaxloopfix.__version__}\n"


def test_python_dash_m(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"jaxloopfix {jaxloopfix.__version__}"


def test_usage_error_is_exit_2() -> None:
    assert run("check", "--output-format", "xml").exit_code == 2
    assert run("check", "--no-such-flag").exit_code == 2
    assert run("nonsense").exit_code == 2


def test_stdin_cannot_mix_with_paths(tmp_path: Path) -> None:
    write(tmp_path / "a.py", CLEAN)
    result = run("check", "-", "a.py")
    assert result.exit_code == 2


def test_config_missing_file_is_exit_2(tmp_path: Path) -> None:
    result = run("check", "--config", str(tmp_path / "nope.toml"), ".")
    assert result.exit_code == 2
    assert "cannot read" in result.stderr


def test_config_invalid_toml_is_exit_2(tmp_path: Path) -> None:
    config = write(tmp_path / "custom.toml", "[tool.jaxloopfix\nselect = \n")
    result = run("check", "--config", str(config))
    assert result.exit_code == 2
    assert "invalid TOML" in result.stderr


def test_config_found_from_cwd_with_bad_key_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.jaxloopfix]\nno-such-key = 1\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    result = CliRunner().invoke(main, ["check"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "no-such-key" in result.stderr


def test_config_bad_value_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.jaxloopfix]\nmax-file-size = "big"\n')
    result = run("check")
    assert result.exit_code == 2
    assert "max-file-size" in result.stderr


def test_rule_requires_code_or_all() -> None:
    assert run("rule").exit_code == 2


# --------------------------------------------------------------------------- check: output formats


def test_seed_full_output(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    result = run("check", "rnn.py")
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert out.startswith(f"rnn.py:{SEED_ROW}:{SEED_COL}: JLF001 [*] ")
    assert " 9 |     for i in range(inputs.shape[0]):" in out
    assert "^" in out
    assert "= help: " in out
    assert "= note: `run_rnn` is traced" in out
    assert "Found 1 error.\n[*] 1 fixable with the `--fix` option.\n" in out
    assert "\x1b[" not in out
    assert result.stderr == ""


def test_seed_concise_output(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    result = run("check", "--output-format", "concise", "rnn.py")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert re.fullmatch(rf"rnn\.py:{SEED_ROW}:{SEED_COL}: JLF001 \[\*\] .+", lines[0])
    assert lines[1:] == ["Found 1 error.", "[*] 1 fixable with the `--fix` option."]


@pytest.mark.parametrize("via_env", [False, True])
def test_seed_json_output(tmp_path: Path, via_env: bool) -> None:
    write(tmp_path / "rnn.py", SEED)
    if via_env:
        result = run("check", "rnn.py", env={"JAXLOOPFIX_OUTPUT_FORMAT": "json"})
    else:
        result = run("check", "--output-format=json", "rnn.py")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert len(data) == 1
    item = data[0]
    assert set(item) == {
        "code", "message", "filename", "location", "end_location", "fix",
        "noqa_row", "url", "no_fix_reason", "traced_reason", "cell",
    }
    assert item["code"] == "JLF001"
    assert item["filename"] == "rnn.py"
    assert item["location"] == {"row": SEED_ROW, "column": SEED_COL}
    assert set(item["end_location"]) == {"row", "column"}
    assert item["noqa_row"] == SEED_ROW
    assert item["url"] is None
    assert isinstance(item["traced_reason"], str) and item["traced_reason"]
    fix = item["fix"]
    assert fix["applicability"] == "safe"
    assert isinstance(fix["message"], str)
    assert fix["edits"]
    for edit in fix["edits"]:
        assert set(edit) == {"content", "location", "end_location"}
        assert set(edit["location"]) == set(edit["end_location"]) == {"row", "column"}


def test_seed_github_output(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    write(tmp_path / "broken.py", "def f(:\n")
    result = run("check", "--output-format", "github", "broken.py", "rnn.py")
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines and all(GITHUB_LINE.match(line) for line in lines), lines
    assert any(line.startswith("::error ") and "file=broken.py" in line for line in lines)
    warning = next(line for line in lines if line.startswith("::warning "))
    assert f"file=rnn.py,line={SEED_ROW},col={SEED_COL}," in warning
    assert "title=jaxloopfix (JLF001)" in warning


def test_statistics(tmp_path: Path) -> None:
    write(tmp_path / "a.py", SEED)
    write(tmp_path / "b.py", SEED)
    result = run("check", "--statistics", ".")
    assert result.exit_code == 1
    assert result.stdout == f"2\tJLF001\t[*] {rule_name('JLF001')}\n"


def test_clean_file_exit_0(tmp_path: Path) -> None:
    write(tmp_path / "ok.py", CLEAN)
    result = run("check", "ok.py")
    assert result.exit_code == 0, result.output
    assert result.stdout == "All checks passed!\n"


def test_default_path_is_cwd_and_skips_excluded(tmp_path: Path) -> None:
    write(tmp_path / "src" / "rnn.py", SEED)
    write(tmp_path / "venv" / "lib" / "rnn.py", SEED)
    write(tmp_path / ".tox" / "rnn.py", SEED)
    write(tmp_path / "generated" / "rnn.py", SEED)
    write(tmp_path / ".gitignore", "generated/\n")
    result = run("check", "--output-format", "concise")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith("src/rnn.py:9:5: JLF001")
    assert "Found 1 error." in result.stdout


# --------------------------------------------------------------------------- exit codes


def test_exit_zero(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    result = run("check", "--exit-zero", "rnn.py")
    assert result.exit_code == 0
    assert "JLF001" in result.stdout


def test_noqa_suppresses(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED.replace("range(inputs.shape[0]):", "range(inputs.shape[0]):  # noqa: JLF001"))
    assert run("check", "rnn.py").exit_code == 0


def test_select_and_ignore(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    assert run("check", "--select", "JLF001", "rnn.py").exit_code == 1
    assert run("check", "--select", "jlf", "rnn.py").exit_code == 1
    assert run("check", "--ignore", "JLF001", "rnn.py").exit_code == 0
    assert run("check", "--ignore", " JLF001 , ", "rnn.py").exit_code == 0
    unknown = run("check", "--select", "JLF999", "rnn.py")
    assert unknown.exit_code == 2
    assert "JLF999" in unknown.stderr


def test_cli_overrides_config(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.jaxloopfix]\nignore = ["JLF001"]\n')
    write(tmp_path / "rnn.py", SEED)
    assert run("check", "rnn.py").exit_code == 0
    assert run("check", "--ignore", "", "rnn.py").exit_code == 1
    config = write(tmp_path / "other" / "pyproject.toml", "[tool.jaxloopfix]\n")
    assert run("check", "--config", str(config), "rnn.py").exit_code == 1


def test_bad_files_are_exit_2_but_others_still_checked(tmp_path: Path) -> None:
    write(tmp_path / "a_rnn.py", SEED)
    (tmp_path / "b_binary.py").write_bytes(b"x = 1\n\x00\x00")
    (tmp_path / "c_latin.py").write_bytes(b"x = '\xe9'\n")
    write(tmp_path / "d_syntax.py", "def f(:\n    pass\n")
    write(tmp_path / "e_rnn.py", SEED)
    result = run("check", "--output-format", "concise", ".", "missing.py")
    assert result.exit_code == 2
    assert [line.split(":")[0] for line in result.stdout.splitlines()[:2]] == ["a_rnn.py", "e_rnn.py"]
    assert "Found 2 errors." in result.stdout
    err = result.stderr
    assert "error: b_binary.py: not a text file (contains a NUL byte)" in err
    assert "error: c_latin.py: cannot decode" in err
    assert re.search(r"error: d_syntax\.py:\d+:\d+: cannot parse", err)
    assert "error: missing.py: no such file or directory" in err


def test_parse_error_alone_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path / "bad.py", "for x in\n")
    result = run("check", "bad.py")
    assert result.exit_code == 2
    assert "All checks passed!" not in result.stdout


def test_too_large_is_a_warning_not_an_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.jaxloopfix]\nmax-file-size = 100\n")
    write(tmp_path / "big.py", SEED)
    write(tmp_path / "ok.py", CLEAN)
    result = run("check", ".")
    assert result.exit_code == 0, result.output
    assert f"warning: big.py: skipped: file is {len(SEED)} bytes, over max-file-size" in result.stderr


def test_empty_file_is_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    assert run("check", "empty.py").exit_code == 0


# --------------------------------------------------------------------------- fixing


def test_fix_writes_and_reports(tmp_path: Path) -> None:
    path = write(tmp_path / "rnn.py", SEED)
    result = run("check", "--fix", "rnn.py")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Fixed 1 error.\n"
    fixed = path.read_text()
    assert fixed != SEED
    compile(fixed, "rnn.py", "exec")
    assert "scan" in fixed
    # the code around the loop is untouched (the fix may add an import at the top)
    assert SEED[SEED.index("@partial") : SEED.index("    outputs = []")] in fixed
    assert fixed.startswith(SEED[: SEED.index("\n@partial")])
    # and the fixed file is clean
    again = run("check", "rnn.py")
    assert again.exit_code == 0, again.output


def test_fix_exit_non_zero_on_fix(tmp_path: Path) -> None:
    write(tmp_path / "rnn.py", SEED)
    assert run("check", "--fix", "--exit-non-zero-on-fix", "rnn.py").exit_code == 1


def test_fix_with_unsafe_fixes_flag(tmp_path: Path) -> None:
    path = write(tmp_path / "rnn.py", SEED)
    result = run("check", "--fix", "--unsafe-fixes", "rnn.py")
    assert result.exit_code == 0
    assert path.read_text() != SEED


def test_fix_preserves_crlf_bom_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "rnn.py"
    original = b"\xef\xbb\xbf" + SEED.replace("\n", "\r\n").encode()
    path.write_bytes(original)
    path.chmod(0o600)
    result = run("check", "--fix", "rnn.py")
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data != original
    assert data.startswith(b"\xef\xbb\xbfimport jax\r\n")
    assert b"\n" not in data.replace(b"\r\n", b""), "fix introduced bare LF line endings into a CRLF file"
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name != ".jaxloopfix_cache"] == ["rnn.py"]  # no temp files


def test_fix_one_bad_file_does_not_stop_fixing(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "def f(:\n")
    path = write(tmp_path / "b.py", SEED)
    result = run("check", "--fix", ".")
    assert result.exit_code == 2
    assert path.read_text() != SEED
    assert "Fixed 1 error." in result.stdout


def test_fix_refuses_file_changed_during_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jaxloopfix import api

    path = write(tmp_path / "rnn.py", SEED)
    edited = SEED + "# saved by an editor meanwhile\n"
    real_apply_fixes = api.apply_fixes

    def apply_fixes_then_edit(*args, **kwargs):
        out = real_apply_fixes(*args, **kwargs)
        path.write_text(edited)
        return out

    monkeypatch.setattr(api, "apply_fixes", apply_fixes_then_edit)
    result = run("check", "--fix", "--output-format", "concise", "rnn.py")
    assert result.exit_code == 2
    assert path.read_text() == edited
    assert "changed on disk" in result.stderr
    # the unfixed diagnostic is still reported
    assert result.stdout.startswith("rnn.py:9:5: JLF001")


def test_diff_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "rnn.py", SEED)
    result = run("check", "--diff", "rnn.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/rnn.py\n+++ b/rnn.py\n@@ ")
    assert "-    for i in range(inputs.shape[0]):\n" in result.stdout
    assert "Would fix 1 error." in result.stderr
    assert path.read_text() == SEED
    assert run("check", "--diff", "--exit-zero", "rnn.py").exit_code == 0


def test_diff_with_nothing_to_fix(tmp_path: Path) -> None:
    write(tmp_path / "ok.py", CLEAN)
    result = run("check", "--diff", "ok.py")
    assert result.exit_code == 0
    assert result.stdout == ""


# --------------------------------------------------------------------------- stdin


def test_stdin_check(tmp_path: Path) -> None:
    result = run("check", "--output-format", "concise", "--stdin-filename", "model/rnn.py", "-", input=SEED)
    assert result.exit_code == 1
    assert result.stdout.startswith("model/rnn.py:9:5: JLF001 [*]")


def test_stdin_filename_alone_reads_stdin(tmp_path: Path) -> None:
    result = run("check", "--output-format", "json", "--stdin-filename", "rnn.py", input=SEED)
    assert result.exit_code == 1
    assert json.loads(result.stdout)[0]["filename"] == "rnn.py"


def test_stdin_fix_writes_source_to_stdout(tmp_path: Path) -> None:
    result = run("check", "--fix", "--stdin-filename", "rnn.py", "-", input=SEED)
    assert result.exit_code == 0, result.stderr
    fixed = result.stdout
    assert fixed != SEED
    compile(fixed, "rnn.py", "exec")
    assert "Fixed 1 error." in result.stderr
    assert "Fixed" not in fixed


def test_stdin_fix_clean_source_is_echoed_byte_for_byte(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf" + CLEAN.replace("\n", "\r\n").encode()
    result = run("check", "--fix", "--stdin-filename", "ok.py", "-", input=raw)
    assert result.exit_code == 0
    assert result.stdout_bytes == raw


def test_stdin_fix_unparseable_is_echoed_and_exit_2(tmp_path: Path) -> None:
    result = run("check", "--fix", "--stdin-filename", "bad.py", "-", input="def f(:\n")
    assert result.exit_code == 2
    assert result.stdout == "def f(:\n"
    assert "bad.py" in result.stderr


def test_stdin_diff(tmp_path: Path) -> None:
    result = run("check", "--diff", "--stdin-filename", "rnn.py", "-", input=SEED)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/rnn.py\n+++ b/rnn.py\n")


# --------------------------------------------------------------------------- rule


def test_rule_docs() -> None:
    result = run("rule", "JLF001")
    assert result.exit_code == 0
    name = rule_name("JLF001")
    assert result.stdout.startswith(f"# {name} (JLF001)\n\n")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
        assert section in result.stdout
    assert run("rule", "jlf001").stdout == result.stdout


def test_rule_unknown_code() -> None:
    result = run("rule", "JLF999")
    assert result.exit_code == 2
    assert "unknown rule code" in result.stderr


def test_rule_all() -> None:
    from jaxloopfix.rules import ALL_RULES

    result = run("rule", "--all")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(ALL_RULES)
    jlf001 = next(line for line in lines if line.startswith("JLF001 "))
    assert rule_name("JLF001") in jlf001
    assert next(r.summary for r in ALL_RULES if r.code == "JLF001") in jlf001


# Keep `importlib.util` used: a quick sanity check that the package imports without jax.
def test_package_imports_without_jax() -> None:
    code = (
        "import sys; sys.modules['jax'] = None; sys.modules['jaxlib'] = None\n"
        "import jaxloopfix.cli, jaxloopfix.files, jaxloopfix.report.full, jaxloopfix.report.json\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('jaxloopfix.engine'):\n"
        "    import jaxloopfix.api, jaxloopfix.rules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert importlib.util.find_spec("jaxloopfix.cli") is not None


def test_engine_crash_on_one_file_is_reported_and_others_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jaxloopfix import api

    real_lint = api.lint_module

    def flaky(text: str, filename: str, settings, **options):
        if filename == "a.py":
            raise RuntimeError("boom")
        return real_lint(text, filename, settings, **options)

    monkeypatch.setattr(api, "lint_module", flaky)
    write(tmp_path / "a.py", SEED)
    write(tmp_path / "b.py", SEED)
    result = run("check", "--output-format", "concise", ".")
    assert result.exit_code == 2
    assert result.stdout.startswith("b.py:9:5: JLF001")
    assert "error: a.py: internal error" in result.stderr and "boom" in result.stderr



def test_broken_pyproject_found_by_discovery_is_exit_2(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.jaxloopfix\nselect = [")
    write(tmp_path / "rnn.py", SEED)
    result = run("check", "rnn.py")
    assert result.exit_code == 2
    assert "invalid TOML" in result.stderr


def test_syntax_error_reports_pythons_position(tmp_path: Path) -> None:
    write(tmp_path / "broken.py", "import jax\n\ndef f(:\n    pass\n")
    result = run("check", "--output-format", "concise", "broken.py")
    assert result.exit_code == 2
    assert "broken.py:3:7:" in result.stdout + result.stderr


def test_rule_names_without_the_engine_match_the_rules() -> None:
    from jaxloopfix.codes import RULE_NAMES
    from jaxloopfix.rules import ALL_RULES

    assert RULE_NAMES == {rule.code: rule.name for rule in ALL_RULES}


def test_a_cached_run_does_not_load_the_engine(tmp_path: Path) -> None:
    """The warm path (every file answered from the cache) never imports libcst."""
    write(tmp_path / "rnn.py", SEED)
    code = (
        "import sys\nfrom jaxloopfix.cli import main\n"
        "try:\n    main(['check', '--exit-zero', '-j', '1', '.'])\nexcept SystemExit:\n    pass\n"
        "print('libcst' in sys.modules)\n"
    )
    first = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert first.stdout.strip().endswith("True") and second.stdout.strip().endswith("False")
    assert "JLF001" in second.stdout


def test_only_the_commands_own_process_stops_collecting_what_it_keeps(tmp_path: Path) -> None:
    """`jaxloopfix check` run as its own process keeps the cyclic collector off each file's
    kept analysis (`runtime.task_done`) and reports what a caller's process reports; `check`
    called inside another process (a test, an editor integration) must leave that process's
    collector as it was."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    for path in sorted((Path(__file__).resolve().parent.parent / "fixtures" / "JLF002").glob("*.py"))[:20]:
        (project / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    args = ["check", "--no-cache", "--output-format", "json", "--jobs", "1", str(project)]
    frozen = gc.get_freeze_count()
    here = CliRunner().invoke(main, args)
    assert here.exit_code == 1, here.output
    assert gc.get_freeze_count() == frozen
    own = subprocess.run([sys.executable, "-m", "jaxloopfix", *args], capture_output=True, text=True, check=False)
    assert own.returncode == 1, own.stderr
    assert json.loads(own.stdout) == json.loads(here.stdout) != []


def test_the_command_keeps_its_exit_status_and_output(tmp_path: Path) -> None:
    """`check` ends its process without freeing the heap (`cli.run`): the status, the whole
    output and the cache must still be what a normal exit gives."""
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "pyproject.toml").write_text("")
    (clean / "ok.py").write_text("x = 1\n")

    def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "jaxloopfix", *args]
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)

    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "JLF001"
    found = cli("check", "--output-format", "json", str(fixtures), cwd=tmp_path)
    assert found.returncode == 1
    assert json.loads(found.stdout) and all(d["code"].startswith("JLF") for d in json.loads(found.stdout))
    assert cli("check", "--exit-zero", str(fixtures), cwd=tmp_path).returncode == 0
    assert cli("check", ".", cwd=clean).returncode == 0
    assert (clean / ".jaxloopfix_cache").is_dir()  # written before the process ended
    usage = cli("check", "--no-such-option", cwd=clean)
    assert usage.returncode == 2 and "No such option" in usage.stderr
