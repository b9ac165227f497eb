"""A file checked alone gets the diagnostics it gets when its whole project is checked.

`fixtures/project/` is a package whose loops in `layers.py` are traced only from `train.py`.
Each test copies it, so caches and edits stay in a temporary directory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixture_tools import FIXTURES
from jaxloopfix.cli import main
from jaxloopfix.project_context import context_files, project_root
from jaxloopfix.config import Settings


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", root)
    monkeypatch.chdir(root)
    return root


def _check(*args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["check", "--output-format", "json", "--exit-zero", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _shown(diagnostics: list[dict], filename: str) -> list[tuple]:
    return [
        (d["code"], d["location"]["row"], d["message"], (d.get("fix") or {}).get("message"), d.get("traced_reason"))
        for d in diagnostics
        if Path(d["filename"]).as_posix().endswith(filename)
    ]


def test_the_project_root_is_the_nearest_marked_directory(project):
    assert project_root(project / "seqmodel" / "layers.py") == project
    others = {p.name for p in context_files([project / "seqmodel" / "layers.py"], Settings())}
    assert others == {"__init__.py", "train.py"}
    # A run asked to check the project root itself has walked every file already.
    assert context_files([project / "seqmodel" / "layers.py"], Settings(), given=[project]) == []
    memo: dict = {}
    assert project_root(project / "seqmodel" / "train.py", memo) == project
    assert project_root(project / "seqmodel" / "layers.py", memo) == project and memo


def test_a_file_checked_alone_gets_the_project_diagnostics_and_isolated_turns_that_off(project):
    whole = _shown(_check("."), "seqmodel/layers.py")
    alone = _shown(_check("seqmodel/layers.py"), "seqmodel/layers.py")
    assert [(code, row) for code, row, *_ in whole] == [("JLF001", 7), ("JLF002", 15)]
    assert alone == whole
    # Without the cache too, and given by its absolute path: the notes name the caller's
    # file from the project's root in every kind of run.
    for given in ("seqmodel/layers.py", str(project / "seqmodel" / "layers.py"), "."):
        assert _shown(_check("--no-cache", given), "seqmodel/layers.py") == whole
    # The note still names the caller in the other file.
    assert "called from traced function `loss` on line 11 of" in alone[0][4] and "train.py" in alone[0][4]
    assert _shown(_check("--no-project", "seqmodel/layers.py"), "seqmodel/layers.py") == []
    # Only the requested file is reported.
    assert {Path(d["filename"]).name for d in _check("seqmodel/layers.py")} == {"layers.py"}


def test_fixing_one_file_leaves_the_others_alone(project):
    train = (project / "seqmodel" / "train.py").read_bytes()
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "seqmodel/layers.py"])
    assert result.exit_code == 0, result.output
    assert "lax.scan" in (project / "seqmodel" / "layers.py").read_text()
    assert (project / "seqmodel" / "train.py").read_bytes() == train


def test_two_runs_at_once_agree_and_leave_a_readable_cache(project):
    command = [sys.executable, "-m", "jaxloopfix", "check", "--output-format", "json", "--exit-zero", "seqmodel/layers.py"]
    runs = [subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [json.loads(run.communicate(timeout=240)[0]) for run in runs]
    assert outputs[0] == outputs[1] and len(outputs[0]) == 2
    for cache_file in (project / ".jaxloopfix_cache").glob("*.json"):
        json.loads(cache_file.read_text())
    # A damaged cache is ignored, not fatal, and the answer is the same.
    for cache_file in (project / ".jaxloopfix_cache").glob("*.json"):
        cache_file.write_text("{not json")
    assert _shown(_check("seqmodel/layers.py"), "layers.py") == _shown(outputs[0], "layers.py")


def test_verify_follows_the_project_too(project):
    pytest.importorskip("jax")
    result = CliRunner().invoke(
        main, ["verify", "--no-measure", "--lengths", "4,7", "--output-format", "json", "seqmodel/layers.py::encode"]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["status"] == "equivalent", report["message"]
    isolated = CliRunner().invoke(main, ["verify", "--no-project", "--no-measure", "seqmodel/layers.py::encode"])
    assert "no fixable loop" in isolated.output


def test_a_notebook_traces_project_functions_for_a_file_checked_alone(tmp_path, monkeypatch):
    root = tmp_path / "nbproject"
    shutil.copytree(FIXTURES / "project", root)
    (root / "seqmodel" / "train.py").unlink()  # the notebook is now the only caller
    cell = (
        "import jax\nimport jax.numpy as jnp\nfrom seqmodel.layers import summarize\n\n"
        "@jax.jit\ndef total(history):\n    return summarize(history)\n"
    )
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": cell, "outputs": [], "execution_count": None}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "explore.ipynb").write_text(json.dumps(notebook))
    monkeypatch.chdir(root)
    loop_row = (root / "seqmodel" / "layers.py").read_text().splitlines().index("    for value in history:") + 1
    found = _check("seqmodel/layers.py")
    # Only `summarize` is traced now, by the notebook's jitted `total`.
    assert [d["location"]["row"] for d in found] == [loop_row], found
    assert "explore.ipynb" in found[0]["traced_reason"]
    assert _check("--no-project", "seqmodel/layers.py") == []


def test_a_damaged_project_file_does_not_change_a_file_checked_alone(project):
    expected = _shown(_check("seqmodel/layers.py"), "layers.py")
    (project / "seqmodel" / "broken.py").write_text("def broken(:\n    pass\n")
    (project / "seqmodel" / "undecodable.py").write_bytes(b"\xff\xfe\x00 not text")
    result = CliRunner().invoke(main, ["check", "--output-format", "json", "--exit-zero", "seqmodel/layers.py"])
    # The damaged files are context: left out silently, never reported in a run that did not ask for them.
    assert result.exit_code == 0, result.output
    assert _shown(json.loads(result.stdout), "layers.py") == expected and len(expected) == 2
    whole = CliRunner().invoke(main, ["check", "--output-format", "concise", "--exit-zero", "."])
    assert "broken.py:1" in whole.output and "undecodable.py" in whole.output
