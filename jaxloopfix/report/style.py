"""Colour only for people: rich styling when the stream is a terminal, plain text otherwise.

Piped output (CI logs, files, editors) must be byte-for-byte plain, so the same
styled line is either rendered by rich or written as its `.plain` text.
"""

from __future__ import annotations

import re
from typing import TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

__all__ = ["StyledWriter", "display_width", "split_lines", "stream_is_tty"]

Part = str | tuple[str, str]

# The line breaks Python's tokenizer (and so every row number) counts; str.splitlines
# would also split on \f, \v, \x1c.. and \u2028 and shift every row after them.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Source lines without their line endings, numbered as the parser numbers them."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def display_width(text: str) -> int:
    """Terminal cells `text` takes (wide CJK characters count twice)."""
    return cell_len(text)


def stream_is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # closed or detached stream
        return False


class StyledWriter:
    """Writes lines made of (text, style) parts, coloured only on a TTY."""

    def __init__(self, stream: TextIO, color: bool | None = None) -> None:
        self.stream = stream
        self.color = stream_is_tty(stream) if color is None else color
        self._console: Console | None = None
        if self.color:
            self._console = Console(
                file=stream, force_terminal=True, highlight=False, markup=False, emoji=False, soft_wrap=True
            )

    def line(self, *parts: Part) -> None:
        text = Text()
        for part in parts:
            if isinstance(part, tuple):
                text.append(part[0], style=part[1])
            else:
                text.append(part)
        if self._console is not None:
            self._console.print(text)
        else:
            self.stream.write(text.plain + "\n")
