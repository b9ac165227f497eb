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
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "model.py"])
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "lax.scan" in (tmp_path / "model.py").read_text(encoding="utf-8")


EXCLUDE_PATTERNS = ["build", "*.pyc", "docs/*", "tests/data/", "a?c", "[ab]*", "x/**/y.py", "*_pb2.py"]
EXCLUDE_PATHS = [
    "build/x.py", "src/build", "docs/a.py", "docs", "tests/data/f.py", "tests/datax/f.py", "abc/q.py",
    "b.py", "x/z/y.py", "m_pb2.py", "src/a/b_pb2.py", "ok/fine.py", "a/abc", "Build/x.py", "src/q.py",
]


def test_exclude_patterns_match_like_fnmatch_on_the_path_its_prefixes_and_its_parts(tmp_path: Path) -> None:
    """Excludes are compiled into one regex per pattern set; they must keep fnmatch's meaning:
    a pattern matches the relative path, a directory prefix of it (`docs` excludes
    `docs/a.py`), or any one part (`build` anywhere)."""
    import fnmatch
    from pathlib import PurePosixPath

    def reference(rel: str, pattern: str) -> bool:
        return (
            fnmatch.fnmatch(rel, pattern)
            or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")
            or any(fnmatch.fnmatch(part, pattern) for part in PurePosixPath(rel).parts)
        )

    for size in (1, 2, 3):
        for start in range(len(EXCLUDE_PATTERNS)):
            patterns = tuple(EXCLUDE_PATTERNS[start:start + size])
            settings = Settings(exclude=patterns, project_root=tmp_path)
            for rel in EXCLUDE_PATHS:
                expected = any(reference(rel, p) for p in patterns)
                assert settings.is_excluded(tmp_path / rel) is expected, (patterns, rel)
                resolved = tmp_path.resolve() / rel
                assert settings.is_excluded(tmp_path / rel, resolved) is expected, (patterns, rel)
