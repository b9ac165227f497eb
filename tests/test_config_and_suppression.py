"""`[tool.jaxloopfix]` settings and `# noqa` comments change what is reported, as documented."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from jaxloopfix.cli import main
from jaxloopfix.config import Settings, settings_from_table
from jaxloopfix.engine import lint_text

LOOP = """\
import jax
import jax.numpy as jnp
{decorator_import}

{decorator}
def run(xs: jax.Array):
    h = jnp.zeros(xs.shape[1])
    outs = []
    for t in range(xs.shape[0]):{comment}
        h = jnp.tanh(h + xs[t])
        outs.append(h)
    return jnp.stack(outs)
"""


def source(decorator: str = "@jax.jit", comment: str = "", decorator_import: str = "") -> str:
    return LOOP.format(decorator=decorator, comment=comment, decorator_import=decorator_import)


def codes(text: str, settings: Settings = Settings(), filename: str = "model.py") -> list[str]:
    return [d.code for d in lint_text(text, filename, settings)]


def test_noqa_with_code_suppresses_only_that_code():
    assert codes(source(comment="  # noqa: JLF001")) == []
    assert codes(source(comment="  # noqa: JLF002")) == ["JLF001"]
    assert codes(source(comment="  # NOQA:JLF002,JLF001")) == []


def test_bare_noqa_suppresses_everything():
    assert codes(source(comment="  # noqa")) == []


def test_select_and_ignore():
    assert codes(source(), settings_from_table({"select": ["JLF002"]}, None)) == []
    assert codes(source(), settings_from_table({"ignore": ["JLF0"]}, None)) == []
    assert codes(source(), settings_from_table({"select": ["JLF"]}, None)) == ["JLF001"]


def test_per_file_ignores(tmp_path: Path):
    settings = settings_from_table({"per-file-ignores": {"tests/*": ["JLF001"]}}, tmp_path)
    assert codes(source(), settings, str(tmp_path / "tests" / "test_model.py")) == []
    assert codes(source(), settings, str(tmp_path / "src" / "model.py")) == ["JLF001"]


def test_extra_traced_decorators_make_functions_traced():
    text = source(decorator="@compile_model", decorator_import="from mylib import compile_model")
    assert codes(text) == []
    settings = settings_from_table({"extra-traced-decorators": ["mylib.compile_model"]}, None)
    assert codes(text, settings) == ["JLF001"]
    diagnostic = lint_text(text, "model.py", settings)[0]
    assert "compile_model" in (diagnostic.traced_reason or "")


def test_min_trip_count_setting():
    text = source().replace("range(xs.shape[0])", "range(10)")
    assert codes(text) == ["JLF001"]
    assert codes(text, settings_from_table({"min-trip-count": 11}, None)) == []


def test_exclude_from_pyproject(tmp_path: Path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nexclude = ["generated"]\n', encoding="utf-8")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "model.py").write_text(source(), encoding="utf-8")
    (tmp_path / "model.py").write_text(source(), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--output-format", "concise", "."])
    assert result.exit_code == 1
    assert "model.py:" in result.stdout and "generated" not in result.stdout


def test_check_never_runs_user_code(tmp_path: Path, monkeypatch):
    marker = tmp_path / "imported.txt"
    text = f"open({str(marker)!r}, 'w').write('ran')\n" + source()
    (tmp_path / "model.py").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--fix", "model.py"])
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "lax.scan" in (tmp_path / "model.py").read_text(encoding="utf-8")
