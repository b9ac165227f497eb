"""`--diff`: what `--fix` would write, as a unified diff, so CI can show it without writing."""

from __future__ import annotations

import difflib
import re

__all__ = ["unified_diff"]

# Only the breaks the tokenizer counts; str.splitlines would also break on \f, \x1c, \u2028...
_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+\Z", re.S)


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def unified_diff(filename: str, old: str, new: str) -> str:
    """A `git apply`-able diff of `old` -> `new`; empty when they are equal.

    Line endings are kept as they are (a CRLF file diffs as CRLF lines), and a last
    line without a newline gets git's `\\ No newline at end of file` marker.
    """
    if old == new:
        return ""
    out: list[str] = []
    for line in difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile=f"a/{filename}",
        tofile=f"b/{filename}",
    ):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)
