"""The hooks in `.pre-commit-hooks.yaml` work when pre-commit installs them.

Each test runs `pre-commit run HOOK --files ...` in a throwaway git repository whose
`.pre-commit-config.yaml` points at a committed snapshot of this working tree
(tracked and untracked, non-ignored files), so the hooks file under test is the one
on disk, committed or not. Not `pre-commit try-repo`: it leaves an untracked hooks
file out of its temporary commit and builds the hook environment in a temporary
store on every call. With one snapshot and one `PRE_COMMIT_HOME` for the module,
the environment (a pip install of this package) is built once, by the first test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_tools import SEED_SOURCE

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed"),
]

# Building the hook environment pip-installs this repository with libcst, click and rich.
ENV_BUILD_TIMEOUT = 600
RUN_TIMEOUT = 60

SEED = SEED_SOURCE

CLEAN = '''\
import jax
import jax.numpy as jnp


@jax.jit
def double(x):
    return 2 * jnp.asarray(x)
'''

_GIT_ENV_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")


def _env(home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_VARS}
    env.pop("JAXLOOPFIX_OUTPUT_FORMAT", None)
    env.update(
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )
    if home is not None:
        env["PRE_COMMIT_HOME"] = str(home)
    return env


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=cwd, env=_env(), check=True, capture_output=True, text=True, timeout=60
    )
    return out.stdout.strip()


def _init_repo(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    _git(path, "config", "user.name", "test")
    _git(path, "config", "user.email", "test@example.com")
    _git(path, "config", "commit.gpgsign", "false")


def _project_files() -> list[str]:
    try:
        listed = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    except (subprocess.CalledProcessError, OSError):
        listed = ""
    names = [n for n in listed.split("\0") if n and (ROOT / n).is_file()]
    if names:
        return names
    ignore = {".git", "__pycache__", ".venv", "venv", "build", "dist", ".pytest_cache", ".hypothesis"}
    return [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file() and not ignore.intersection(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)
    ]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A committed copy of this working tree: (path, commit sha)."""
    assert (ROOT / ".pre-commit-hooks.yaml").is_file()
    repo = tmp_path_factory.mktemp("hook-repo")
    _init_repo(repo)
    for name in _project_files():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot")
    return repo, _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A throwaway git repository for the hooks to run in."""
    work = tmp_path / "project"
    _init_repo(work)
    return work


def _add(project: Path, name: str, text: str) -> Path:
    path = project / name
    path.write_text(text, encoding="utf-8")
    # Tracked, so that pre-commit sees a hook's modifications in `git diff`.
    _git(project, "add", name)
    return path


def _run_hook(project: Path, hook_repo: tuple[Path, str], home: Path, hook: str, *files: str):
    repo, sha = hook_repo
    config = project / ".pre-commit-config.yaml"
    if not config.exists():
        config.write_text(
            "repos:\n"
            f"  - repo: {json.dumps(str(repo))}\n"
            f"    rev: {sha}\n"
            "    hooks:\n"
            "      - id: jaxloopfix\n"
            "      - id: jaxloopfix-fix\n"
            "      - id: jaxloopfix-fix-verified\n",
            encoding="utf-8",
        )
        _git(project, "add", config.name)
    cmd = [sys.executable, "-m", "pre_commit", "run", hook, "--color", "never", "--verbose", "--files", *files]
    # The first call builds the hook environment; the generous limit is for that one.
    return subprocess.run(cmd, cwd=project, env=_env(home), capture_output=True, text=True, timeout=ENV_BUILD_TIMEOUT)


def _output(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def test_manifest_is_valid():
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode == 0, _output(result)


def test_check_hook_fails_on_flagged_loop(project, hook_repo, pre_commit_home):
    model = _add(project, "model.py", SEED)
    result = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix", "model.py")
    assert result.returncode == 1, _output(result)
    assert "JLF001" in result.stdout, _output(result)
    assert "Failed" in result.stdout, _output(result)
    assert model.read_text(encoding="utf-8") == SEED  # report only


def test_fix_hook_rewrites_then_passes(project, hook_repo, pre_commit_home):
    model = _add(project, "model.py", SEED)

    first = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix", "model.py")
    assert first.returncode == 1, _output(first)
    assert "files were modified by this hook" in first.stdout, _output(first)
    fixed = model.read_text(encoding="utf-8")
    assert "lax.scan" in fixed
    assert "for i in range" not in fixed

    second = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix", "model.py")
    assert second.returncode == 0, _output(second)
    assert model.read_text(encoding="utf-8") == fixed

    # The rewritten file also passes the report-only hook.
    check = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix", "model.py")
    assert check.returncode == 0, _output(check)


LSTM = '''\
import jax
import jax.numpy as jnp


@jax.jit
def lstm(params, xs):
    hidden = params["w_h"].shape[0]
    h = jnp.zeros(xs.shape[1:-1] + (hidden,))
    c = jnp.zeros(xs.shape[1:-1] + (hidden,))
    outputs = []
    for t in range(xs.shape[0]):
        z = xs[t] @ params["w_x"] + h @ params["w_h"] + params["b"]
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        outputs.append(h)
    return jnp.stack(outputs)
'''


@pytest.mark.slow  # its hook environment installs JAX: about a minute
def test_verified_fix_hook_rewrites_an_lstm_with_dict_parameters(project, hook_repo, pre_commit_home):
    """The LSTM's fix is unsafe (nothing proves the dict's arrays' dtypes), so `jaxloopfix-fix` leaves
    it; the verified hook runs loop and rewrite on JAX (its environment installs JAX) and applies it."""
    model = _add(project, "lstm.py", LSTM)
    plain = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix", "lstm.py")
    assert model.read_text(encoding="utf-8") == LSTM, _output(plain)

    first = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix-verified", "lstm.py")
    assert first.returncode == 1, _output(first)
    fixed = model.read_text(encoding="utf-8")
    assert "lax.scan" in fixed and "for t in range" not in fixed, _output(first)
    second = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix-verified", "lstm.py")
    assert second.returncode == 0, _output(second)
    assert model.read_text(encoding="utf-8") == fixed


@pytest.mark.parametrize("hook", ["jaxloopfix", "jaxloopfix-fix"])
def test_clean_file_passes(project, hook_repo, pre_commit_home, hook):
    model = _add(project, "model.py", CLEAN)
    result = _run_hook(project, hook_repo, pre_commit_home, hook, "model.py")
    assert result.returncode == 0, _output(result)
    assert "Passed" in result.stdout, _output(result)
    assert model.read_text(encoding="utf-8") == CLEAN


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_hooks_check_and_fix_notebooks(project, hook_repo, pre_commit_home):
    # `types_or: [python, jupyter]`: notebooks reach the hooks, and `check` reads their cells.
    nb = _add(project, "model.ipynb", _notebook(SEED))

    check = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix", "model.ipynb")
    assert check.returncode == 1, _output(check)
    assert "JLF001" in check.stdout, _output(check)

    fix = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix", "model.ipynb")
    assert fix.returncode == 1, _output(fix)
    assert "files were modified by this hook" in fix.stdout, _output(fix)
    fixed = json.loads(nb.read_text(encoding="utf-8"))
    assert "lax.scan" in "".join(fixed["cells"][0]["source"])

    again = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix-fix", "model.ipynb")
    assert again.returncode == 0, _output(again)


def test_check_hook_on_one_changed_file_sees_the_project(project, hook_repo, pre_commit_home):
    # pre-commit passes only the changed file; its loops are traced from `train.py`, which did not change.
    fixture = ROOT / "fixtures" / "project"
    for source in sorted((fixture / "seqmodel").glob("*.py")):
        (project / "seqmodel").mkdir(exist_ok=True)
        _add(project, f"seqmodel/{source.name}", source.read_text(encoding="utf-8"))
    result = _run_hook(project, hook_repo, pre_commit_home, "jaxloopfix", "seqmodel/layers.py")
    assert result.returncode == 1, _output(result)
    assert "seqmodel/layers.py:7:5: JLF001" in result.stdout, _output(result)
    assert "seqmodel/layers.py:15:5: JLF002" in result.stdout, _output(result)
