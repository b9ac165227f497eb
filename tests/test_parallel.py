"""`--jobs`: worker processes give the same results, in the same order, as one process."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from jaxloopfix.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--output-format", "json", *args])
    return result.exit_code, result.output


def test_jobs_match_a_single_process_on_the_fixtures() -> None:
    serial = _check("-j", "1", str(FIXTURES))
    parallel = _check("-j", "2", str(FIXTURES))
    assert serial[0] == 1 and '"JLF001"' in serial[1] and '"JLF006"' in serial[1]
    assert parallel == serial


def test_fix_with_jobs_matches_a_single_process(tmp_path: Path) -> None:
    for name in ("one", "two"):
        shutil.copytree(FIXTURES / "JLF001", tmp_path / name, ignore=shutil.ignore_patterns("*.fixed.py"))
    # Most fixture carries are not proven to keep their type: their fixes are unsafe.
    assert _check("--fix", "--unsafe-fixes", "-j", "1", str(tmp_path / "one"))[0] in (0, 1)
    assert _check("--fix", "--unsafe-fixes", "-j", "2", str(tmp_path / "two"))[0] in (0, 1)
    one = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.py"))
    assert one == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*.py"))
    changed = 0
    for rel in one:
        text = (tmp_path / "one" / rel).read_text()
        assert (tmp_path / "two" / rel).read_text() == text, rel
        changed += text != (FIXTURES / "JLF001" / rel).read_text()
    assert changed > 25  # the fixes were really applied
