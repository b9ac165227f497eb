"""`# noqa: CODE` comments: where one goes on a line, and adding them for every finding.

`check --add-noqa` and the editor's "Suppress" quick fix both add the code to the line's
existing `# noqa: A` list, leave a bare `# noqa` (it suppresses everything already) alone,
and otherwise append `  # noqa: CODE` to the line, keeping every other byte.
"""

from __future__ import annotations

from collections.abc import Iterable

from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.engine import NOQA


def noqa_insertion(line: str, code: str) -> tuple[int, str] | None:
    """(offset in `line`, text to insert there) that suppresses `code` on `line` (its line
    ending excluded), or None when the line's `# noqa` already does."""
    if line.rstrip().endswith("\\"):
        return None  # a comment cannot follow a line continuation
    match = NOQA.search(line)
    if match is not None:
        codes = match.group("codes")
        if codes is None or code.upper() in {c.strip().upper() for c in codes.replace(",", " ").split()}:
            return None
        return match.end("codes"), f", {code}"
    return len(line), f"  # noqa: {code}"


def add_noqa(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int]:
    """`text` with a `# noqa` for each diagnostic on its first line, and how many were added."""
    lines = text.splitlines(keepends=True)
    added = 0
    for diagnostic in sorted(diagnostics, key=lambda d: (d.location.row, d.code)):
        row = diagnostic.location.row - 1
        if not 0 <= row < len(lines):
            continue
        line = lines[row]
        body = line.rstrip("\r\n")
        insertion = noqa_insertion(body, diagnostic.code)
        if insertion is None:
            continue
        at, new = insertion
        lines[row] = body[:at] + new + body[at:] + line[len(body):]
        added += 1
    return "".join(lines), added
