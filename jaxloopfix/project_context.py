"""The project a checked file belongs to, so a file checked alone sees the tracing other modules supply.

`check src/layers.py`, the pre-commit hook (which passes only changed files), the language
server (one document) and `verify FILE` each see one file; a loop there is traced when a
jitted function in another module calls it. The project is found from the file (the nearest
directory holding `pyproject.toml`, `setup.cfg`, `setup.py` or `.git`), and its other Python
files join the run as context: they are analysed for what they trace (results cache
included), never reported or fixed. `--isolated` turns this off.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from jaxloopfix.config import Settings
from jaxloopfix.files import discover

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def project_root(path: Path | str, memo: dict[str, Path | None] | None = None) -> Path | None:
    """The nearest directory at or above `path` that marks a project, or None.

    `memo` keeps each directory's answer across the files of one run."""
    start = os.path.abspath(path)
    directory = start if os.path.isdir(start) else os.path.dirname(start)
    memo = {} if memo is None else memo
    visited = []
    found: Path | None = None
    while True:
        if directory in memo:
            found = memo[directory]
            break
        visited.append(directory)
        if any(os.path.exists(os.path.join(directory, marker)) for marker in ROOT_MARKERS):
            found = Path(directory)
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for seen in visited:
        memo[seen] = found
    return found


def context_files(
    files: Iterable[Path], settings: Settings, given: Iterable[Path] = (), real: Mapping[Path, str] | None = None
) -> list[Path]:
    """The other Python files of the projects that `files` belong to (excludes and `.gitignore` honoured).

    `given`: the paths the run was asked to check; a project root among them was walked
    already, so it has no other files to add. `real`: the files' paths with symlinks
    resolved, where the discovery that found them knows them already."""
    files = list(files)
    real = real or {}
    memo: dict[str, Path | None] = {}
    roots = sorted({root for f in files if (root := project_root(f, memo)) is not None})
    walked = {os.path.realpath(p) for p in given if os.path.isdir(p)}
    roots = [root for root in roots if os.path.realpath(root) not in walked]
    if not roots:
        return []
    have = {real[f] if f in real else os.path.realpath(f) for f in files}
    found = discover(roots, settings, leave_out=have)
    return [p for p in found.files if p.suffix in (".py", ".ipynb")]
