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
from collections.abc import Iterable
from pathlib import Path

from jaxloopfix.config import Settings
from jaxloopfix.files import discover

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def project_root(path: Path) -> Path | None:
    """The nearest directory at or above `path` that marks a project, or None."""
    start = Path(os.path.abspath(path))
    directories = [start, *start.parents] if start.is_dir() else list(start.parents)
    for directory in directories:
        if any((directory / marker).exists() for marker in ROOT_MARKERS):
            return directory
    return None


def context_files(files: Iterable[Path], settings: Settings) -> list[Path]:
    """The other Python files of the projects that `files` belong to (excludes and `.gitignore` honoured)."""
    files = list(files)
    roots = sorted({root for f in files if (root := project_root(f)) is not None})
    if not roots:
        return []
    have = {os.path.realpath(f) for f in files}
    found = discover(roots, settings)
    return [p for p in found.files if p.suffix in (".py", ".ipynb") and os.path.realpath(p) not in have]
