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


def _worker_pid(item: int) -> tuple[int, int]:
    import os
    import time

    time.sleep(0.01 * (item % 3))
    return item, os.getpid()


def test_a_key_goes_back_to_the_worker_that_took_it() -> None:
    """A file linted again in a later round reaches the process that holds its parsed tree."""
    from jaxloopfix.parallel import MIN_FILES_PER_WORKER, Pool

    items = list(range(2 * MIN_FILES_PER_WORKER + 4))
    keys = [f"module{i}.py" for i in items]
    workers = Pool(2)
    try:
        first = workers.map(_worker_pid, items, keys=keys, weights=[1.0] * len(items))
        assert [item for item, _ in first] == items  # results in the items' order
        homes = {keys[item]: pid for item, pid in first}
        assert len(set(homes.values())) == 2  # both workers took a share
        by_home: dict[int, list[int]] = {}
        for item in items:
            by_home.setdefault(homes[keys[item]], []).append(item)
        again = [group[-1] for group in by_home.values()]  # a later, smaller round
        second = workers.map(_worker_pid, again, keys=[keys[i] for i in again])
        assert second == [(i, homes[keys[i]]) for i in again]
        # One worker's keys alone: the other worker takes some over rather than waiting.
        mine = [i for i in items if homes[keys[i]] == homes[keys[0]]]
        third = workers.map(_worker_pid, mine, keys=[keys[i] for i in mine])
        assert [item for item, _ in third] == mine
        assert len({pid for _, pid in third}) == 2
    finally:
        workers.close()


def test_a_key_its_worker_holds_nothing_of_goes_to_the_least_loaded_worker() -> None:
    """A file the pre-filter rejected in one round, and parsed in a later one, costs the same on
    any worker: it is shared out by load instead of piling onto the worker that rejected it."""
    from jaxloopfix.parallel import MIN_FILES_PER_WORKER, Pool

    items = list(range(2 * MIN_FILES_PER_WORKER + 4))
    keys = [f"module{i}.py" for i in items]
    workers = Pool(2)
    try:
        first = workers.map(_worker_pid, items, keys=keys, weights=[1.0] * len(items))
        homes = {keys[item]: pid for item, pid in first}
        pair = [i for i in items if homes[keys[i]] == homes[keys[0]]][:2]
        held = workers.map(_worker_pid, pair, keys=[keys[i] for i in pair], sticky=[True, True])
        assert {pid for _, pid in held} == {homes[keys[0]]}
        unheld = workers.map(_worker_pid, pair, keys=[keys[i] for i in pair], sticky=[False, False])
        assert [item for item, _ in unheld] == pair
        assert len({pid for _, pid in unheld}) == 2
    finally:
        workers.close()
