"""Notebooks are checked and fixed cell by cell, keeping outputs, metadata and JSON formatting."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from jaxloopfix.cli import main
from jaxloopfix.config import Settings
from jaxloopfix.notebook import lint_notebook

CELLS = [
    ("markdown", "# An RNN\n"),
    ("code", "%matplotlib inline\nimport jax\nimport jax.numpy as jnp"),
    (
        "code",
        "@jax.jit\ndef run(xs: jax.Array):\n    h = jnp.zeros(xs.shape[1])\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        h = jnp.tanh(h + xs[t])\n        outs.append(h)\n"
        "    return jnp.stack(outs)",
    ),
    ("code", "!pip list\nrun(jnp.ones((5, 3))).shape"),
]


def notebook_text() -> str:
    cells = []
    for kind, source in CELLS:
        cell = {"cell_type": kind, "metadata": {"tags": ["keep"]}, "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell["execution_count"] = 3
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["héllo\n"]}]
        cells.append(cell)
    data = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def test_diagnostic_names_the_cell_and_row():
    (diagnostic,) = lint_notebook(notebook_text(), "rnn.ipynb", Settings())
    assert diagnostic.code == "JLF001"
    assert diagnostic.extra["cell"] == "3"
    assert (diagnostic.location.row, diagnostic.location.column) == (5, 5)


def test_fix_rewrites_the_cell_and_keeps_everything_else(tmp_path: Path, monkeypatch):
    path = tmp_path / "rnn.ipynb"
    original = notebook_text()
    path.write_text(original, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report = CliRunner().invoke(main, ["check", "--output-format", "concise", "."])
    assert report.exit_code == 1 and "rnn.ipynb:cell 3:5:5: JLF001" in report.stdout
    # The carry meets `xs[t]` of unknown shape: an unsafe fix.
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "rnn.ipynb"])
    assert result.exit_code == 0, result.output
    fixed_text = path.read_text(encoding="utf-8")
    before, after = json.loads(original), json.loads(fixed_text)
    code = "".join(after["cells"][2]["source"])
    assert "lax.scan(step, h, xs)" in code and "for t in" not in code
    assert "".join(after["cells"][1]["source"]).startswith("%matplotlib inline\n")  # magic kept
    assert "".join(after["cells"][3]["source"]) == "!pip list\nrun(jnp.ones((5, 3))).shape"
    for b, a in zip(before["cells"], after["cells"]):
        assert a.get("outputs") == b.get("outputs") and a["metadata"] == b["metadata"]
    assert after["metadata"] == before["metadata"]
    # Untouched cells are byte-identical in the file, and the file keeps Jupyter's formatting.
    assert json.dumps(after, indent=1, ensure_ascii=False) + "\n" == fixed_text
    assert CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "rnn.ipynb"]).exit_code == 0
    assert path.read_text(encoding="utf-8") == fixed_text


def test_a_block_of_only_shell_magics_parses_and_the_fix_keeps_them(tmp_path: Path, monkeypatch) -> None:
    """`if not ok:` whose body is only `!wget ...` lines (a download cell): the magics stand in
    as `pass` for the analysis, so the notebook is checked (not skipped as unparsable), and a fix
    elsewhere writes every magic back as it was, indentation included."""
    global CELLS
    setup = "import os\nif not os.path.exists('data.npz'):\n    !wget -q https://example.org/data.npz\nelse:\n    %env DATA=data.npz\n"
    saved = CELLS
    CELLS = [*saved[:1], ("code", setup), *saved[1:]]
    try:
        text = notebook_text()
    finally:
        CELLS = saved
    (diagnostic,) = lint_notebook(text, "rnn.ipynb", Settings())
    assert diagnostic.code == "JLF001" and diagnostic.extra["cell"] == "4"
    cells = _fixed_cells(tmp_path, monkeypatch, text)
    assert cells[1] == setup
    assert "lax.scan" in cells[3]


def _with_cells(*extra: tuple[str, str]) -> str:
    global CELLS
    saved = CELLS
    CELLS = [*saved[:2], *extra, *saved[2:]]
    try:
        return notebook_text()
    finally:
        CELLS = saved


def test_a_magic_whose_output_is_assigned_is_not_python(tmp_path: Path, monkeypatch) -> None:
    """`t = %timeit -o run(x)` and `files = !ls` are IPython, hidden from the parser as other
    magics are; the loop of the next cell is still found, and the fix writes them back."""
    timing = "t = %timeit -o run(jnp.ones((5, 3)))\nfiles = !ls\nprint(t.best, files)\n"
    text = _with_cells(("code", timing))
    (diagnostic,) = lint_notebook(text, "rnn.ipynb", Settings())
    assert diagnostic.code == "JLF001"
    cells = _fixed_cells(tmp_path, monkeypatch, text)
    assert cells[2] == timing
    assert "lax.scan" in cells[3]


def test_check_leaves_out_a_cell_that_does_not_parse_and_says_so(tmp_path: Path, monkeypatch) -> None:
    """A code cell holding LaTeX (or a half-written statement) does not parse: `check` analyses
    the other cells, reports the loop there, and warns which cell it left out; `--explain` agrees."""
    latex = "\\begin{aligned} h_t &= \\tanh(h_{t-1} + x_t) \\end{aligned}\n"
    path = tmp_path / "rnn.ipynb"
    path.write_text(_with_cells(("code", latex)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["check", "--no-cache", "rnn.ipynb"])
    assert done.exit_code == 1, done.output
    assert "rnn.ipynb:cell 4:5:5: JLF001" in done.output
    assert "cell 3 does not parse" in done.output and "the other cells were checked without it" in done.output
    explained = CliRunner().invoke(main, ["check", "--explain", "rnn.ipynb:cell 4:5", "rnn.ipynb"])
    assert "cell 3 does not parse" in explained.output and "reported: JLF001" in explained.output


def test_fix_leaves_a_cell_that_does_not_parse_as_it_is(tmp_path: Path, monkeypatch) -> None:
    latex = "\\begin{aligned} h_t &= \\tanh(h_{t-1} + x_t) \\end{aligned}\n"
    path = tmp_path / "rnn.ipynb"
    path.write_text(_with_cells(("code", latex)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes", "rnn.ipynb"])
    assert done.exit_code == 0, done.output
    assert "cell 3 does not parse" in done.output
    after = json.loads(path.read_text(encoding="utf-8"))
    assert "".join(after["cells"][2]["source"]) == latex
    assert "lax.scan" in "".join(after["cells"][3]["source"])
    again = path.read_text(encoding="utf-8")
    assert CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes", "rnn.ipynb"]).exit_code == 0
    assert path.read_text(encoding="utf-8") == again  # fixing twice changes nothing


def test_a_left_out_cell_with_magics_comes_back_byte_for_byte(tmp_path: Path, monkeypatch) -> None:
    broken = "%timeit f(x)\ndef g(:\n!ls\n"
    cells = _fixed_cells(tmp_path, monkeypatch, _with_cells(("code", broken)))
    assert cells[2] == broken
    assert "lax.scan" in cells[3]


def _fixed_cells(tmp_path: Path, monkeypatch, text: str) -> list[str]:
    """Each cell's source after `check --fix --unsafe-fixes` wrote the notebook back."""
    path = tmp_path / "rnn.ipynb"
    path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes", "rnn.ipynb"]).exit_code == 0
    return ["".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
