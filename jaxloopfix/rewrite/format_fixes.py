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
        return new if settings.format_fixes == "none" else wrap_long_lines(old, new, line_length(settings.project_root))
    return (run or format_changed)(old, new, str(path), executable, settings.project_root)


# The line length black and ruff format to by default (and pycodestyle's E501 under ruff).
LINE_LENGTH = 88


def line_length(root: Path | None) -> int:
    """The project's `[tool.black] line-length`, else 88."""
    if root is None:
        return LINE_LENGTH
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return LINE_LENGTH
    value = data.get("tool", {}).get("black", {}).get("line-length")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else LINE_LENGTH


def wrap_long_lines(old: str, new: str, limit: int = LINE_LENGTH) -> str:
    """`new` with each line the fixes wrote that is longer than `limit` split at its outermost
    call's brackets, as black and ruff split it: the arguments on one indented line when they
    fit, else one per line with a trailing comma. Where no formatter is configured this keeps
    generated code within the line length a user's linter checks; lines outside the fixes, and
    lines no split helps (a long comment, one long argument), stay as they are."""
    lines = new.splitlines(keepends=True)
    for start, stop in reversed(changed_lines(old, new)):
        for index in range(stop - 1, start - 2, -1):
            line = lines[index]
            text = line.rstrip("\r\n")
            if len(text) > limit:
                split = _split_line(text, limit)
                if split is not None:
                    ending = line[len(text):]
                    lines[index] = ending.join(split) + ending
    return "".join(lines)


def _split_line(text: str, limit: int) -> list[str] | None:
    """`name = f(a, b)[:2]` -> [`name = f(`, `    a, b`, `)[:2]`] (or one argument per line).

    The split is at the last call or subscript whose opening line fits, as black's right-hand
    split chooses (`jax.vmap(f)(xs)` splits at `(xs)`, `f(a, b)[:2]` at `[` when `f(a, b)[`
    fits); None when none does. A subscript's body is never split at its commas."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text.lstrip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if any(t.type == tokenize.COMMENT for t in tokens):
        return None
    offset = len(text) - len(text.lstrip())
    indent, inner = text[:offset], text[:offset] + "    "
    calls: list[dict] = []  # each call's (or subscript's) brackets at the statement's own level
    depth, previous = 0, None
    for token in tokens:
        is_op = token.type == tokenize.OP
        if is_op and token.string in "([{":
            if depth == 0 and token.string in "([" and previous is not None and (
                previous.type == tokenize.NAME or previous.string in (")", "]")
            ):
                calls.append({"open": offset + token.end[1], "commas": [], "by_commas": token.string == "("})
            depth += 1
        elif is_op and token.string in ")]}":
            depth -= 1
            if depth == 0 and calls and "close" not in calls[-1]:
                calls[-1]["close"] = offset + token.start[1]
        elif depth == 1 and calls and "close" not in calls[-1]:
            if is_op and token.string == ",":
                calls[-1]["commas"].append(offset + token.start[1])
            elif token.type == tokenize.NAME and token.string == "lambda":
                calls[-1]["by_commas"] = False  # its parameters' commas are not the call's
        if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            previous = token
    fitting = [c for c in calls if "close" in c and c["open"] <= limit and text[c["open"]:c["close"]].strip()]
    if not fitting:
        return None
    call = fitting[-1]
    head, tail = text[: call["open"]], text[call["close"] :]
    body = text[call["open"] : call["close"]].strip()
    if len(inner + body) <= limit and not body.endswith(","):
        return [head, inner + body, indent + tail]
    if not call["by_commas"]:
        return None
    parts, last = [], call["open"]
    for comma in call["commas"]:
        parts.append(text[last:comma].strip())
        last = comma + 1
    final = text[last : call["close"]].strip()
    if final:
        parts.append(final)
    return [head, *(f"{inner}{part}," for part in parts), indent + tail]
