"""The project a checked file belongs to, so a file checked alone sees the tracing other modules supply.

`check src/layers.py`, the pre-commit hook (which passes only changed files), the language
server (one document) and `verify FILE` each see one file; a loop there is traced when a
jitted function in another module calls it. The project is found from the file (the nearest
directory holding `pyproject.toml`, `setup.cfg`, `setup.py` or `.git`), and its other Python
files join the run as context: they are analysed for what they trace (results cache
included), never reported or fixed. `--no-project` turns this off.
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


def within_budget(sizes: Mapping[Path, int], per_file: int, total: int) -> tuple[list[Path], dict[Path, str]]:
    """The context files to read, and why each other one is left out.

    A file over `per_file` is left out (generated code, data tables); of the rest, the smallest
    are kept until `total` bytes, so a budget spent on one large module still keeps the many
    small ones that usually hold the jitted entry points."""
    kept: list[Path] = []
    left_out: dict[Path, str] = {}
    spent = 0
    for path in sorted(sizes, key=lambda p: (sizes[p], str(p))):
        size = sizes[path]
        if size > per_file:
            left_out[path] = f"over max-context-file-size ({per_file} bytes)"
        elif spent + size > total:
            left_out[path] = f"beyond max-context-size ({total} bytes in all)"
        else:
            kept.append(path)
            spent += size
    order = {path: i for i, path in enumerate(sizes)}
    return sorted(kept, key=order.__getitem__), left_out


def left_out_warning(left_out: Mapping[Path, str]) -> str:
    """One line for the files the context pass left out: what the user loses and how to get it back."""
    from jaxloopfix.report.summary import first_few

    names = sorted(_shown(p) for p in left_out)
    reasons = sorted(set(left_out.values()))
    return (
        f"project context: {len(names)} file(s) left out ({'; '.join(reasons)}): {first_few(names)}; "
        "what they trace is not seen here (check them too, or raise the limit)"
    )


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is below it, as the checked files are shown."""
    relative = os.path.relpath(os.path.abspath(path))
    return str(path) if relative.startswith("..") else relative
