"""Lay out the lines a fix wrote as the project's own formatter would.

A fix is generated code: its line breaks cannot follow every project's line length, and a
per-step read replaced by a name changes how a formatter spaces an operator (`x[t] ** 2`
stays spaced, `x_t**2` hugs). A project that formats with ruff would see its format check fail
on the fixed file. Where the project uses ruff (a `[tool.ruff]` table in its pyproject.toml, or
a `ruff.toml`) and the `ruff` command is installed, the changed lines, and only those, are
passed through `ruff format --range` with the project's settings; bytes outside the edits
stay exactly as they were. Anything that goes wrong leaves the fix as generated.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxloopfix.config import Settings

# Seconds one `ruff format` call may take (it formats a file in milliseconds).
TIMEOUT = 20.0


def project_formatter(setting: str, root: Path | None) -> str | None:
    """The `ruff` executable to lay out fixes with, or None.

    `setting` is the config's `format-fixes`: "none", "ruff" (whenever ruff is installed) or
    "auto" (when the project configures ruff)."""
    if setting == "none":
        return None
    executable = shutil.which("ruff")
    if executable is None:
        return None
    if setting == "ruff" or (root is not None and _configures_ruff(root)):
        return executable
    return None


def _configures_ruff(root: Path) -> bool:
    if (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        return True
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "ruff" in data.get("tool", {})


def changed_lines(old: str, new: str) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of `new` that differ from `old`."""
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    ranges = [(j1 + 1, j2) for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") and j2 > j1]
    return ranges


def format_changed(old: str, new: str, filename: str, executable: str, cwd: Path | None) -> str:
    """`new` with its lines that differ from `old` formatted by `ruff format --range`, last range
    first so the earlier ranges' line numbers hold; `new` itself if ruff fails."""
    text = new
    for start, stop in reversed(changed_lines(old, new)):
        try:
            done = subprocess.run(
                # The end of a range is a position (`LINE:COLUMN`, column 1 by default): the start
                # of the line after the last changed one takes that line in whole.
                [executable, "format", "--range", f"{start}-{stop + 1}", "--stdin-filename", filename, "-"],
                input=text.encode("utf-8"), capture_output=True, timeout=TIMEOUT, cwd=cwd,
            )
        except (OSError, subprocess.SubprocessError):
            return new
        if done.returncode != 0:
            return new
        text = done.stdout.decode("utf-8")
    return text


def format_fixed(
    old: str, new: str, path: Path, settings: Settings,
    run: Callable[[str, str, str, str, Path | None], str] | None = None,
) -> str:
    """`new` (the fixed `old`) with the lines the fixes wrote laid out by the project's formatter,
    if it has one (`format-fixes`); a file that is not Python source is left as fixed. `run` is
    `format_changed` or a memoised copy of it (the language server lays out the same fix on
    every cursor move)."""
    if path.suffix != ".py" or new == old:
        return new
    executable = project_formatter(settings.format_fixes, settings.project_root)
    if executable is None:
        return new
    return (run or format_changed)(old, new, str(path), executable, settings.project_root)
