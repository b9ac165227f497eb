"""`check --watch`: run again whenever a checked file changes, as `ruff check --watch` does.

Changes are found by polling the files' modification times and sizes once per `INTERVAL`
(no watcher dependency, the same on every platform): a project's few hundred `stat` calls
take about a millisecond. A run starts with a line saying why, on stderr.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from jaxloopfix.config import Settings
from jaxloopfix.files import discover

INTERVAL = 0.5  # seconds between polls


def snapshot(paths: Sequence[Path], settings: Settings) -> dict[str, tuple[int, int]]:
    """(mtime in ns, size) of each file a check of `paths` would read, and of the config file."""
    found = discover(paths, settings)
    watched = [*found.files, *([settings.config_file] if settings.config_file else [])]
    state: dict[str, tuple[int, int]] = {}
    for path in watched:
        try:
            info = os.stat(path)
        except OSError:
            continue
        state[str(path)] = (info.st_mtime_ns, info.st_size)
    return state


def watch_files(paths: Sequence[Path], settings: Settings, run: Callable[[], object]) -> NoReturn:
    """Call `run` now and after every change to the watched files, until interrupted."""
    state = snapshot(paths, settings)
    while True:
        sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] checking {len(state)} files\n")
        sys.stderr.flush()
        run()
        sys.stdout.flush()
        while True:
            time.sleep(INTERVAL)
            current = snapshot(paths, settings)
            if current != state:
                changed = sorted(set(current.items()) ^ set(state.items()))
                state = current
                sys.stderr.write(f"File changed: {changed[0][0]}\n")
                break
