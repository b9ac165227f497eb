"""Hostile input never crashes a run, never writes a file it should not, and gets the right exit
code: a 10 MB generated file, deep nesting, binary and empty files, syntax errors, and files
that change on disk while `--fix --jobs 2` runs in worker processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixture_tools import FIXTURES, SEED_SOURCE
from jaxloopfix import api
from jaxloopfix.cli import main


def _run(*args: str):
    return CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "json", *args])


def test_ten_megabyte_generated_file_is_checked(tmp_path: Path) -> None:
    """A generated 10 MB module (a data table and host code) is checked, not skipped, and clean;
    one just over `max-file-size` is skipped with a warning. Neither is written by --fix."""
    rows = "".join(f"    ({i}, {i * 0.5!r}, 'row-{i}'),\n" for i in range(270_000))
    text = "import jax\nimport jax.numpy as jnp\n\nTABLE = [\n" + rows + "]\n\n\ndef lookup(i):\n    return TABLE[i]\n"
    assert 9_500_000 < len(text.encode()) < 10 * 1024 * 1024
    big = tmp_path / "table.py"
    big.write_text(text)
    result = _run("--fix", str(big))
    assert result.exit_code == 0 and json.loads(result.output) == [] and "skipped" not in result.stderr
    assert big.read_text() == text
    bigger = tmp_path / "bigger.py"
    bigger.write_text(text + "# padding\n" * 100_000)
    result = _run("--fix", str(bigger))
    assert result.exit_code == 0 and bigger.read_text().endswith("# padding\n")
    assert "skipped" in result.stderr.lower() or "larger" in result.stderr.lower(), result.stderr


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("parens", "x = " + "(" * 300 + "1" + ")" * 300 + "\n", "cannot parse"),
        ("indent", "".join("    " * i + "if True:\n" for i in range(120)) + "    " * 120 + "pass\n", "cannot parse"),
        ("binary", "\x00\x01\x02import jax\n", None),
        ("syntax", "import jax\n\n@jax.jit\ndef f(x:\n    return x\n", "cannot parse"),
    ],
)
def test_unparseable_input_is_reported_and_the_run_continues(tmp_path: Path, name: str, text: str, message) -> None:
    bad = tmp_path / f"{name}.py"
    bad.write_bytes(text.encode("utf-8"))
    good = tmp_path / "rnn.py"
    good.write_text(SEED_SOURCE)
    result = _run("--fix", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert bad.read_bytes() == text.encode("utf-8")  # never written
    assert "lax.scan" in good.read_text()  # the other file was still fixed
    if message:
        assert message in result.stderr


def test_deep_nesting_inside_a_traced_function_does_not_crash(tmp_path: Path) -> None:
    depth = 90
    body = "".join("    " * (i + 1) + f"if x.shape[0] > {i}:\n" for i in range(depth))
    text = "import jax\n\n@jax.jit\ndef f(x):\n" + body + "    " * (depth + 1) + "x = x + 1\n    return x\n"
    path = tmp_path / "deep.py"
    path.write_text(text)
    result = _run(str(path))
    assert result.exit_code in (0, 2), result.output
    assert "internal error" not in result.stderr


def test_empty_and_whitespace_files_are_clean(tmp_path: Path) -> None:
    for name, text in {"empty.py": "", "blank.py": "\n\n  \n", "comment.py": "# nothing\n"}.items():
        (tmp_path / name).write_text(text)
    result = _run(str(tmp_path))
    assert result.exit_code == 0 and json.loads(result.output) == []


def test_fix_with_jobs_never_writes_a_file_that_changed_meanwhile(tmp_path: Path, monkeypatch) -> None:
    """Files are read once, fixed in worker processes, and written only if unchanged on disk."""
    shutil.copytree(FIXTURES / "JLF001", tmp_path / "src", ignore=shutil.ignore_patterns("*.fixed.py"))
    edited: dict[Path, bytes] = {}
    real_read = api.read_source

    def read_then_edit(path, **kwargs):
        source = real_read(path, **kwargs)
        if Path(path).name in ("axis1.py", "seed_rnn.py", "dict_carry.py"):
            data = Path(path).read_bytes() + b"# saved by an editor meanwhile\n"
            Path(path).write_bytes(data)
            edited[Path(path)] = data
        return source

    monkeypatch.setattr(api, "read_source", read_then_edit)
    result = CliRunner().invoke(
        main,
        ["check", "--no-cache", "--fix", "--unsafe-fixes", "--jobs", "2", "--output-format", "concise", str(tmp_path / "src")],
    )
    assert result.exit_code == 2, result.output
    assert len(edited) == 3
    for path, data in edited.items():
        assert path.read_bytes() == data, path  # the editor's version survives
        assert f"{path.name}: cannot write" in result.stderr or "changed on disk" in result.stderr
    others = [p for p in (tmp_path / "src").glob("*.py") if p not in edited]
    assert sum("lax.scan" in p.read_text() for p in others) >= 20  # the rest was fixed in parallel


NEWER_SYNTAX = '''from functools import partial
import jax
import jax.numpy as jnp

type Rows = jax.Array


class Box[T]:
    def __init__(self, item: T):
        self.item = item


def label[T](d: dict[str, T]) -> str:
    return f"{d["name"]}: {d["value"]:>{8}}"


@jax.jit
def recur(xs: Rows, h):
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
    return h
'''


def test_python_312_syntax_is_checked_not_rejected(tmp_path: Path) -> None:
    """Type parameters, `type` aliases and f-strings that reuse their quotes (3.12) are read on
    3.11 too: the traced loop in the same file is reported, and a fix keeps the 3.12 text."""
    path = tmp_path / "newer.py"
    path.write_text(NEWER_SYNTAX)
    result = _run(str(path))
    found = json.loads(result.output)
    assert [d["code"] for d in found] == ["JLF002"], result.output
    fixed = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes", str(path)])
    assert fixed.exit_code in (0, 1), fixed.output
    text = path.read_text()
    assert "lax.scan" in text and 'f"{d["name"]}' in text and "class Box[T]:" in text


def test_calls_inside_312_f_strings_count_for_the_pre_filter() -> None:
    """A 3.12 f-string (nested, in an implicit concatenation, with a nested format spec) that calls
    `jax.jit(step)(x)`: the pre-filter sees the call as the full analysis does."""
    from jaxloopfix.config import Settings
    from jaxloopfix.engine import lint_text
    from jaxloopfix.newer_syntax import parse_ast

    text = (
        "import jax\nimport jax.numpy as jnp\n\n\ndef step(x):\n    h = x[0]\n    for t in range(x.shape[0]):\n"
        "        h = jnp.tanh(h + x[t])\n    return h\n\n\ndef show(d, x):\n"
        '    return "run: " f"{d["k"]} {f"{jax.jit(step)(x):>{d["w"]}}"}"\n'
    )
    assert parse_ast(text).body[-1].lineno == 12  # lines kept
    fast = lint_text(text, "m.py", Settings())
    assert [d.code for d in fast] == ["JLF002"]
    assert fast == lint_text(text, "m.py", Settings(), prefilter=False)
