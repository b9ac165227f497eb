"""What a new user hits in daily use: read-only files, files left unchecked, empty paths, config
mistakes, Ctrl-C, and the project-context pass on a project with a large generated module."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from fixture_tools import SEED_SOURCE
from jaxloopfix.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLEAN = "import jax\n\n\n@jax.jit\ndef f(x):\n    return x + 1\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JAXLOOPFIX_OUTPUT_FORMAT", raising=False)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", *args])


def test_fix_leaves_a_read_only_file_alone(tmp_path: Path) -> None:
    """`--fix` never replaces a file the user cannot write (a rename would, even as root): it
    says "Permission denied", exits 2 and keeps the bytes and the mode."""
    path = tmp_path / "rnn.py"
    path.write_text(SEED_SOURCE)
    path.chmod(0o444)
    result = run("--fix", "--unsafe-fixes", "rnn.py")
    assert result.exit_code == 2, result.output
    assert "Permission denied" in result.stderr and "Fixed" not in result.stdout
    assert path.read_text() == SEED_SOURCE and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not [p for p in tmp_path.iterdir() if p.name != "rnn.py"]  # no temporary file left


def test_summary_says_which_files_were_not_checked(tmp_path: Path) -> None:
    """A file over `max-file-size` is not checked: the summary says so, and never "All checks passed!"."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxloopfix]\nmax-file-size = 100\n")
    (tmp_path / "big.py").write_text(SEED_SOURCE)
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = run(".")
    assert result.exit_code == 0, result.output
    assert "1 file not checked (over `max-file-size`): big.py." in result.stdout
    alone = run("big.py")
    assert "All checks passed!" not in alone.stdout and "1 file not checked" in alone.stdout


def test_a_path_without_python_files_warns(tmp_path: Path) -> None:
    """As ruff does: a directory with no Python files is a warning, not "All checks passed!"."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hello\n")
    result = run("empty")
    assert result.exit_code == 0
    assert "No Python files found" in result.stderr and "All checks passed!" not in result.stdout


@pytest.mark.parametrize(
    ("table", "key", "value"),
    [
        ('select = ["JLF999"]', "select", "JLF999"),
        ('ignore = ["JLF001", "XYZ"]', "ignore", "XYZ"),
        ('max-file-size = "big"', "max-file-size", "'big'"),
        ("max-context-size = -1", "max-context-size", "-1"),
    ],
)
def test_config_errors_name_the_file_the_key_and_the_value(tmp_path: Path, table: str, key: str, value: str) -> None:
    """`select = ["JLF999"]` in pyproject.toml no longer turns every rule off in silence: like
    `--select JLF999`, it is an error (exit 2), which names the file, the key and the bad value."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.jaxloopfix]\n{table}\n")
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    result = run("rnn.py")
    assert result.exit_code == 2, result.output
    assert str(tmp_path / "pyproject.toml") in result.stderr
    assert f"`{key}`" in result.stderr and value in result.stderr


def test_a_selected_prefix_is_still_accepted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nselect = ["JLF00"]\n')
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    assert run("rnn.py").exit_code == 1


def test_the_hooks_run_serially() -> None:
    """pre-commit splits the file list over processes unless a hook is serial, and each process
    reads the project's other files again for its context: every hook is one process."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hooks and all(hook["require_serial"] is True for hook in hooks)


def _generated_module(lines: int) -> str:
    """A large generated module of small jitted-looking functions (what a code generator writes)."""
    body = ["import jax", "import jax.numpy as jnp", ""]
    for i in range(lines):
        body += [f"def g{i}(x):", f"    y = x * {i}", "    for k in range(3):", "        y = y + k", "    return jnp.sum(y)", ""]
    return "\n".join(body)


def test_the_context_pass_leaves_out_a_large_sibling_and_says_so(tmp_path: Path) -> None:
    """Checking a small file alone reads its project's other files for what they trace; a
    generated module over `max-context-file-size` is left out of that pass with a warning naming
    it, instead of costing seconds and hundreds of MB, and the small file is still checked."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxloopfix]\nmax-context-file-size = 20000\n")
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    (tmp_path / "generated.py").write_text(_generated_module(600))
    (tmp_path / "small_helper.py").write_text(CLEAN)
    assert (tmp_path / "generated.py").stat().st_size > 20000
    result = run("rnn.py")
    assert result.exit_code == 1, result.output
    assert "JLF001" in result.stdout or "JLF002" in result.stdout
    warning = [line for line in result.stderr.splitlines() if "project context" in line]
    assert len(warning) == 1 and "generated.py" in warning[0] and "max-context-file-size" in warning[0]
    assert "small_helper.py" not in warning[0]


def test_the_context_budget_keeps_the_small_files() -> None:
    from jaxloopfix.project_context import within_budget

    sizes = {Path("a.py"): 600, Path("b.py"): 100, Path("c.py"): 300, Path("gen.py"): 5000}
    kept, left_out = within_budget(sizes, per_file=1000, total=500)
    assert kept == [Path("b.py"), Path("c.py")]
    assert set(left_out) == {Path("a.py"), Path("gen.py")}
    assert "max-context-size" in left_out[Path("a.py")] and "max-context-file-size" in left_out[Path("gen.py")]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc to find the workers")
def test_ctrl_c_exits_130_and_leaves_no_worker(tmp_path: Path) -> None:
    """Ctrl-C during a run with worker processes ends it at once with the shell's status 130
    (not 1, "findings remain"), and no worker outlives it."""
    generated = _generated_module(10000)
    for i in range(16):  # enough files for worker processes, each seconds of analysis
        (tmp_path / f"gen{i}.py").write_text(generated)
    marker = f"JAXLOOPFIX_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    process = subprocess.Popen(
        [sys.executable, "-m", "jaxloopfix", "check", "--no-cache", "-j", "2", "."], cwd=tmp_path, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job ignores SIGINT
    )
    deadline = time.monotonic() + 60
    while len(_processes_with(marker.encode())) < 3 and time.monotonic() < deadline:  # the workers started
        if process.poll() is not None:
            break
        time.sleep(0.2)
    time.sleep(1.0)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err.decode()
    # Stopped, not waited for: the workers' queued files (seconds of work) are never analysed.
    assert time.monotonic() - interrupted < 3.0
    time.sleep(0.5)
    assert not _processes_with(marker.encode())


def _processes_with(marker: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_fix_verify_says_what_it_verified_and_holds_back_what_it_could_not(tmp_path: Path) -> None:
    """After `--fix --verify` each fixed function is named with the inputs it was verified on;
    a fix verification could not confirm is not advertised as "[*] fixable with `--fix`"."""
    (tmp_path / "rnn.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs, ws):\n    h = jnp.zeros_like(xs[0])\n"
        "    for t in range(xs.shape[0]):\n        h = jnp.tanh(h @ ws + xs[t])\n    return h\n"
    )
    (tmp_path / "opaque.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef g(xs, model):\n    h = jnp.zeros_like(xs[0])\n"
        "    for t in range(xs.shape[0]):\n        h = model.cell(h, xs[t])\n    return h\n"
    )
    result = run("--fix", "--verify", "--no-project", "rnn.py", "opaque.py")
    assert result.exit_code == 1, result.output
    assert "lax.scan" in (tmp_path / "rnn.py").read_text() and "lax.scan" not in (tmp_path / "opaque.py").read_text()
    verified = [line for line in result.stderr.splitlines() if line.startswith("verified: rnn.py")]
    assert len(verified) == 1 and "`f` fixed: equal to the loop on synthesized inputs (T=5: xs: f32[5," in verified[0]
    assert "[*]" not in result.stdout and "fixable with the `--fix` option" not in result.stdout
    assert "1 fix not applied: `verify` could not confirm it" in result.stdout
    assert "warning: opaque.py: `g` left unfixed" in result.stderr


FORMATTED_FIXTURES = ["JLF001/alias_imports.py", "JLF001/grad_transform.py", "JLF001/reversed_range.py", "JLF001/axis1.py",
                      "JLF002/carry_only_two_carries.py"]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_fixed_files_pass_the_projects_ruff(tmp_path: Path) -> None:
    """In a project that formats with ruff, a fixed file passes `ruff format --check` and
    `ruff check --select I,E` as the file did before: the imports a fix adds sit where isort puts
    them, nested functions get their blank lines, and the lines the fix wrote are laid out by
    ruff itself (`format-fixes`), while every other byte stays as it was."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 88\n\n[tool.jaxloopfix]\n")
    for name in FORMATTED_FIXTURES:
        (tmp_path / Path(name).name).write_text((ROOT / "fixtures" / name).read_text())
    (tmp_path / "first_party.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\nfrom helpers import scale\n\n\n@jax.jit\ndef f(xs):\n"
        "    h = jnp.zeros_like(xs[0])\n    for t in range(xs.shape[0]):\n        h = jnp.tanh(h + scale(xs[t]))\n"
        "    return h\n"
    )
    (tmp_path / "helpers.py").write_text("def scale(x):\n    return 2 * x\n")
    subprocess.run(["ruff", "format", "-q", "."], cwd=tmp_path, check=True)
    before = subprocess.run(["ruff", "check", "--select", "I,E", "--output-format", "concise", "-q", "."], cwd=tmp_path,
                            capture_output=True, text=True).stdout
    originals = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    result = run("--fix", "--unsafe-fixes", ".")
    assert "Fixed" in result.stdout, result.output
    changed = [p for p in tmp_path.glob("*.py") if p.read_text() != originals[p.name]]
    assert len(changed) == len(FORMATTED_FIXTURES) + 1
    assert "from jax import lax\n\nfrom helpers import scale" in (tmp_path / "first_party.py").read_text()
    formatted = subprocess.run(["ruff", "format", "--check", "."], cwd=tmp_path, capture_output=True, text=True)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    after = subprocess.run(["ruff", "check", "--select", "I,E", "--output-format", "concise", "-q", "."], cwd=tmp_path,
                           capture_output=True, text=True).stdout
    assert sorted(line.split(":")[0] + line.split(":", 3)[-1] for line in after.splitlines()) == sorted(
        line.split(":")[0] + line.split(":", 3)[-1] for line in before.splitlines()
    )  # no new finding (the fixtures' own long docstring lines stay E501)


def _run_in_terminal(args: list[str], cwd: Path) -> str:
    """Run the command with a pseudo-terminal as its stdout and stderr; everything it wrote."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "jaxloopfix", *args], cwd=cwd, stdout=follower, stderr=follower)
    os.close(follower)
    data = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        data += chunk
    process.wait()
    os.close(leader)
    return data.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_is_shown_on_a_terminal_only(tmp_path: Path) -> None:
    """A long run shows how far it is on stderr when that is a terminal (rich's progress bar,
    then erased); piped or captured output stays free of it."""
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(CLEAN)
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    shown = _run_in_terminal(["check", "--no-cache", "-j", "1", "."], tmp_path)
    assert "analysing 13 files" in shown and "13/13" in shown and "Found 1 error." in shown
    piped = subprocess.run([sys.executable, "-m", "jaxloopfix", "check", "--no-cache", "-j", "1", "."], cwd=tmp_path,
                           capture_output=True, text=True)
    assert "analysing" not in piped.stderr + piped.stdout and "Found 1 error." in piped.stdout


def test_check_paths_reports_each_file_as_it_finishes(tmp_path: Path) -> None:
    from jaxloopfix import api
    from jaxloopfix.config import Settings

    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(SEED_SOURCE)
    heard: list[tuple[str, int, int]] = []
    api.check_paths([tmp_path], Settings(project_root=tmp_path), fix=True, unsafe=True, progress=lambda *a: heard.append(a))
    analysed = [h for h in heard if h[0].startswith("analysing")]
    assert analysed[-1] == ("analysing 3 files", 3, 3) and [d for _, d, _ in analysed[:3]] == [1, 2, 3]
    assert ("fixing", 3, 3) in heard


LAYERS = """import jax.numpy as jnp


def run(xs):
    h = jnp.zeros_like(xs[0])
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
    return h
"""


def test_stdin_sees_the_project_as_check_file_does(tmp_path: Path) -> None:
    """An editor pipes a buffer with `--stdin-filename`: a loop traced only by another module of
    the project (`jax.jit(run)` in model.py) is reported as `check layers.py` reports it."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text("import jax\nfrom layers import run\n\nstep = jax.jit(run)\n")
    (tmp_path / "layers.py").write_text(LAYERS)
    on_disk = run("--output-format", "concise", "layers.py")
    piped = CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "concise", "--stdin-filename", "layers.py"],
                               input=LAYERS)
    assert on_disk.exit_code == piped.exit_code == 1
    assert "layers.py:6:5: JLF002" in on_disk.stdout and "layers.py:6:5: JLF002" in piped.stdout


def test_explain_within_a_directory_analyses_it_as_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check DIR --explain FILE` explains FILE as `check DIR` analyses it, with DIR's other files,
    also where no root marker makes DIR a project: a loop that module traces is "reported"."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "layers.py").write_text(LAYERS)
    (tmp_path / "bench.py").write_text("import jax\nfrom pkg.layers import run\n\nstep = jax.jit(run)\n")
    monkeypatch.chdir(tmp_path)
    checked = run("--output-format", "concise", ".")
    assert checked.exit_code == 1 and "layers.py:6:5: JLF002" in checked.stdout
    explained = run(".", "--explain", "pkg/layers.py")
    assert "traced: " in explained.stdout and "reported: JLF002" in explained.stdout, explained.stdout
    alone = run("pkg", "--explain", "pkg/layers.py")  # `check pkg` does not see bench.py either
    assert "not reported" in alone.stdout and run("pkg").exit_code == 0


def test_config_is_found_from_the_checked_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`jaxloopfix check proj` from outside `proj` reads `proj/pyproject.toml`, as ruff does."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.jaxloopfix]\nignore = ["JLF002"]\n')
    (project / "layers.py").write_text(LAYERS.replace("def run", "import jax\n\n\n@jax.jit\ndef run"))
    inside = run("proj/layers.py")
    monkeypatch.chdir(project)
    assert run("layers.py").exit_code == inside.exit_code == 0, inside.output


def test_isolated_ignores_the_configuration_as_ruff_does(tmp_path: Path) -> None:
    """`--isolated` is ruff's: every configuration file is ignored (a broken one included);
    analysing only the given paths is `--no-project`."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nselect = ["JLF999"]\n')
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    assert run("rnn.py").exit_code == 2
    isolated = run("--isolated", "--output-format", "concise", "rnn.py")
    assert isolated.exit_code == 1 and "rnn.py:" in isolated.stdout and "JLF001" in isolated.stdout
    assert run("--isolated", "--config", "pyproject.toml", "rnn.py").exit_code == 2


def test_the_flags_ruff_users_reach_for(tmp_path: Path) -> None:
    """`--show-files`, `--show-settings`, `--config KEY=VALUE`, `-q`, `--fix-only`,
    `--force-exclude` and `--color` behave as their ruff namesakes."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nexclude = ["vendored"]\n')
    (tmp_path / "rnn.py").write_text(SEED_SOURCE)
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "copy.py").write_text(SEED_SOURCE)
    files = run("--show-files", ".")
    assert files.exit_code == 0 and files.stdout.split() == ["rnn.py"]
    settings = run("--show-settings", "--config", "unroll = 4", ".")
    assert settings.exit_code == 0 and "scan-unroll = 4" in settings.stdout and "exclude = ('vendored',)" in settings.stdout
    assert "pyproject.toml" in settings.stdout.splitlines()[0]
    narrowed = run("--config", 'select = ["JLF002"]', "rnn.py")
    assert narrowed.exit_code == 0 and "All checks passed!" in narrowed.stdout
    assert run("--config", "unroll = 0", "rnn.py").exit_code == 2
    quiet = run("-q", "--output-format", "concise", "rnn.py")
    assert quiet.exit_code == 1 and quiet.stdout.startswith("rnn.py:") and "Found" not in quiet.stdout
    assert len(quiet.stdout.splitlines()) == 1
    named = run("--output-format", "concise", "vendored/copy.py")
    assert named.exit_code == 1  # a file named on the command line is checked, excluded or not ...
    forced = run("--force-exclude", "vendored/copy.py")
    assert forced.exit_code == 0 and "JLF001" not in forced.stdout  # ... unless --force-exclude
    coloured = run("--color", "always", "--output-format", "concise", "rnn.py")
    assert "\x1b[" in coloured.stdout and "\x1b[" not in run("--color", "never", "rnn.py").stdout
    fixed = run("--fix-only", "--unsafe-fixes", "rnn.py", "vendored/copy.py")
    assert fixed.exit_code == 0 and "Fixed 2 errors." in fixed.stdout and "JLF001" not in fixed.stdout
    assert "lax.scan" in (tmp_path / "rnn.py").read_text()


def test_add_noqa_suppresses_what_is_found_now_and_only_that(tmp_path: Path) -> None:
    """`--add-noqa` lets a project adopt the linter: each finding's line gets `# noqa: CODE`
    (joining an existing list), every other byte stays, and a second run adds nothing."""
    text = SEED_SOURCE.replace("for i in range(inputs.shape[0]):", "for i in range(inputs.shape[0]):  # noqa: E501")
    assert text != SEED_SOURCE
    (tmp_path / "rnn.py").write_bytes(text.replace("\n", "\r\n").encode())
    first = run("--add-noqa", "rnn.py")
    assert first.exit_code == 0 and "Added 1 noqa directive to 1 file." in first.stdout
    after = (tmp_path / "rnn.py").read_bytes().decode()
    assert "for i in range(inputs.shape[0]):  # noqa: E501, JLF001\r\n" in after
    assert after.replace(", JLF001", "") == text.replace("\n", "\r\n")
    assert run("rnn.py").exit_code == 0
    assert "Added 0 noqa directives" in run("--add-noqa", "rnn.py").stdout
    assert (tmp_path / "rnn.py").read_bytes().decode() == after


def test_rule_documentation_as_json() -> None:
    import json

    one = json.loads(CliRunner().invoke(main, ["rule", "JLF001", "--output-format", "json"]).stdout)
    assert one["code"] == "JLF001" and one["name"] == "loop-to-scan" and "## What it does" in one["explanation"]
    every = json.loads(CliRunner().invoke(main, ["rule", "--all", "--output-format", "json"]).stdout)
    assert [r["code"] for r in every] == [f"JLF00{i}" for i in range(1, 7)]
    assert one["url"].startswith("file:") and one["url"].endswith("/JLF001.md")


def test_rule_pages_are_generated_from_the_rules(tmp_path: Path) -> None:
    """The shipped pages (editor links) say what the rules' docstrings say: regenerate them with
    `python -m jaxloopfix.rules.pages` after editing a rule's documentation."""
    from jaxloopfix.rules.pages import PAGES, expected_pages, write_pages

    shipped = {page.name: page.read_text(encoding="utf-8") for page in PAGES.glob("*.md")}
    assert shipped == expected_pages()
    (tmp_path / "JLF999.md").write_text("a rule that is gone\n")
    assert sorted(write_pages(tmp_path)) == sorted([*expected_pages(), "JLF999.md"])
    assert write_pages(tmp_path) == []


def test_ignore_files_as_git_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested `.gitignore` files, `.git/info/exclude`, and the repository's root `.gitignore`
    when only a subdirectory is checked (`pathspec` reads the patterns as git does)."""
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch_*.py\n")
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    pkg = tmp_path / "pkg"
    (pkg / "generated").mkdir(parents=True)
    (pkg / "sub").mkdir()
    for name in ("model.py", "model_pb2.py", "scratch_try.py", "generated/big.py", "sub/keep.py", "sub/local_only.py"):
        (pkg / name).write_text("x = 1\n")
    (pkg / "sub" / ".gitignore").write_text("local_*.py\n!keep.py\n")
    for where, shown in ((tmp_path, ["pkg/model.py", "pkg/sub/keep.py"]), (pkg, ["model.py", "sub/keep.py"])):
        monkeypatch.chdir(where)
        files = run("--show-files", ".")
        assert files.exit_code == 0 and files.stdout.split() == shown, (where, files.output)


def test_a_library_in_an_ignored_tree_is_checked_with_no_respect_gitignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package installed under a git-ignored directory (pyenv's `versions/`, a vendored copy):
    git's ignore files hide it from a walk, as ruff's do; `--no-respect-gitignore` (or
    `respect-gitignore = false` in `[tool.jaxloopfix]`) checks it, and finds its loop."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("/versions/\n")
    lib = tmp_path / "versions" / "lib" / "site-packages" / "steps"
    lib.mkdir(parents=True)
    (lib / "rnn.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef run(xs, w):\n    h = jnp.zeros(xs.shape[1:])\n"
        "    for t in range(xs.shape[0]):\n        h = jnp.tanh(w @ h + xs[t])\n    return h\n"
    )
    monkeypatch.chdir(tmp_path)
    assert run("--show-files", str(lib)).stdout.split() == []
    assert run("--show-files", "--no-respect-gitignore", str(lib)).stdout.split() == [str(lib / "rnn.py")]
    checked = run("--output-format", "concise", "--no-respect-gitignore", str(lib))
    assert checked.exit_code == 1 and "rnn.py:8:5: JLF002" in checked.stdout, checked.output
    (lib / "pyproject.toml").write_text("[tool.jaxloopfix]\nrespect-gitignore = false\n")
    assert run("--show-files", str(lib)).stdout.split() == [str(lib / "rnn.py")]
    assert run("--show-files", "--respect-gitignore", str(lib)).stdout.split() == []


def test_messages_say_each_thing_once_and_name_it(tmp_path: Path) -> None:
    """A refusal is said once in `full` output (the note, not also the headline); an unsafe fix
    is one headline with one line per assumption and "`jaxloopfix verify` settles" once; a loop
    whose list is appended on the `for` line names the list."""
    (tmp_path / "m.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs):\n    outs = []\n"
        "    for t in range(xs.shape[0]): outs.append(xs[t] * 2)\n    return jnp.stack(outs)\n\n\n"
        "@jax.jit\ndef g(xs, ws):\n    h = jnp.zeros_like(xs[0])\n    c = jnp.zeros_like(xs[0])\n"
        "    for t in range(xs.shape[0]):\n        h = jnp.tanh(h @ ws + xs[t])\n        c = c + h\n    return h, c\n"
    )
    full = run("m.py").stdout
    assert "accumulates `outs`" in full and "``" not in full
    refusal = "the loop body is on the `for` line"
    assert full.count(refusal) == 1 and "= note: no fix available: " + refusal in full
    assert full.count("`jaxloopfix verify` settles") == 1
    help_line = next(line for line in full.splitlines() if "= help:" in line)
    assert help_line.endswith("(unsafe, `jaxloopfix verify` settles them):") and len(help_line) < 120
    bullets = [line.strip() for line in full.splitlines() if line.startswith("          - ")]
    assert [b[:34] for b in bullets] == ["- cannot prove the carry `h` keeps", "- cannot prove the carry `c` keeps"]
    concise = run("--output-format", "concise", "m.py").stdout
    assert "(no fix: " + refusal in concise  # one line per finding: the reason stays on it


def test_watch_checks_again_when_a_file_changes(tmp_path: Path) -> None:
    """`--watch` reports, then reports again after a checked file changes, until Ctrl-C (130)."""
    (tmp_path / "m.py").write_text(CLEAN)
    process = subprocess.Popen(
        [sys.executable, "-m", "jaxloopfix", "check", "--watch", "--no-cache", "--output-format", "concise", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    lines: list[str] = []

    def read_until(text: str) -> None:
        deadline = time.monotonic() + 60
        while not any(text in line for line in lines) and time.monotonic() < deadline:
            lines.append(process.stdout.readline())

    read_until("All checks passed!")
    (tmp_path / "m.py").write_text(SEED_SOURCE)
    read_until("Found 1 error.")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert any("JLF001" in line for line in lines) and "File changed: m.py" in err


def _generated_lines(before: str, after: str) -> list[str]:
    import difflib

    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") for line in new[j1:j2]]


@pytest.mark.parametrize(("config", "limit"), [("", 88), ("[tool.black]\nline-length = 100\n", 100)])
def test_fixes_keep_to_the_line_length_without_a_formatter(tmp_path: Path, config: str, limit: int) -> None:
    """Where no formatter lays out fixes, a generated line longer than the project's line length
    (black's, else 88) is split at its outermost brackets as black splits it."""
    (tmp_path / "pyproject.toml").write_text(config)
    names = ["recurrences/forms.py", "JLF001/descending_plain_stack.py", "recall/dispatch_declared_receiver.py"]
    before = {}
    for name in names:
        before[Path(name).name] = (ROOT / "fixtures" / name).read_text()
        (tmp_path / Path(name).name).write_text(before[Path(name).name])
    result = run("--fix", "--unsafe-fixes", str(tmp_path))
    assert "Fixed" in result.stdout, result.output
    generated = [line for name, text in before.items() for line in _generated_lines(text, (tmp_path / name).read_text())]
    assert generated and max(len(line) for line in generated) <= limit
    assert any(len(line) > 88 for line in generated) == (limit > 88)  # the project's length, not 88
    for name in before:
        compile((tmp_path / name).read_text(), name, "exec")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("        level_scale, level_shift = jnp.broadcast_arrays(1 + (-1) / width, signal_t / width, level)[:2]",
         ["        level_scale, level_shift = jnp.broadcast_arrays(", "            1 + (-1) / width, signal_t / width, level",
          "        )[:2]"]),
        ("    running_scale, running_shift = jax.vmap(running_coefficients)((jnp.arange(rewards.shape[0]), rewards))",
         ["    running_scale, running_shift = jax.vmap(running_coefficients)(",
          "        (jnp.arange(rewards.shape[0]), rewards)", "    )"]),
        ("    x = f(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 'a,b(')",
         ["    x = f(", "        aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,", "        bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,",
          "        'a,b(',", "    )"]),
        ("        # `h -> c * h + d` then `h -> a * h + b` is `h -> (a * c) * h + (a * d + b)` and more words", None),
    ],
)
def test_a_long_generated_line_splits_as_black_splits_it(line: str, expected: list[str] | None) -> None:
    from jaxloopfix.rewrite.format_fixes import _split_line

    assert _split_line(line, 88) == expected  # a comment: no split helps


def test_explain_names_a_notebooks_loops_by_cell_as_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--explain nb.ipynb` explains the loops `check nb.ipynb` reports, named as `check` names
    them (`nb.ipynb:cell 3:4`); `nb.ipynb:cell 3:4` (or `nb.ipynb:3:4`) picks one loop."""
    import json

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# RNN"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["import jax\n", "import jax.numpy as jnp\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["@jax.jit\n", "def f(xs):\n", "    h = jnp.zeros(3)\n", "    for t in range(xs.shape[0]):\n",
                    "        h = jnp.tanh(h + xs[t])\n", "    return h\n"]},
    ]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    monkeypatch.chdir(tmp_path)
    checked = run("--output-format", "concise", "nb.ipynb")
    assert "nb.ipynb:cell 3:4:5: JLF002" in checked.stdout, checked.stdout
    for target in ("nb.ipynb", "nb.ipynb:cell 3:4", "nb.ipynb:3:4"):
        explained = run("nb.ipynb", "--explain", target)
        assert explained.stdout.startswith("nb.ipynb:cell 3:4: `for t in range(xs.shape[0]):` in `f`"), explained.stdout
        assert "reported: JLF002" in explained.stdout
    assert "no `for` loop or comprehension at line 4 of cell 2" in run("nb.ipynb", "--explain", "nb.ipynb:cell 2:4").stdout
