"""Text edits: derived from a rewritten module by a line diff, and applied to text.

libcst round-trips source exactly, so a diff between the original text and
the rewritten module's code touches only the lines the fix changed; every
other byte (line endings, tabs, comments) is untouched by construction.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence

from jaxloopfix.newer_syntax import parse_ast
from jaxloopfix.diagnostics import Applicability, Edit, Fix, Location


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def location_of(text: str, offset: int, starts: list[int] | None = None) -> Location:
    """1-based row and column of a character offset."""
    starts = starts or line_starts(text)
    import bisect

    row = bisect.bisect_right(starts, offset) - 1
    row = min(row, len(starts) - 1)
    return Location(row + 1, offset - starts[row] + 1)


def diff_edits(old: str, new: str) -> tuple[Edit, ...]:
    """Minimal line-granular edits turning `old` into `new`."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    starts = line_starts(old)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[i1], starts[i2]
        edits.append(
            Edit(
                content="".join(new_lines[j1:j2]),
                start=start,
                end=end,
                location=location_of(old, start, starts),
                end_location=location_of(old, end, starts),
            )
        )
    return tuple(edits)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (in any order)."""
    out = text
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.content + out[edit.end :]
    return out


def overlaps(a: Iterable[Edit], b: Iterable[Edit]) -> bool:
    """Whether any edit of `a` touches the range of any edit of `b` (insertions at the same point count)."""
    for x in a:
        for y in b:
            if x.start <= y.end and y.start <= x.end:
                return True
    return False


def fix_from_rewrite(
    old_text: str, render: Callable[[], str], title: str, unsafe_reasons: Sequence[str] = ()
) -> tuple[Fix | None, str | None]:
    """The fix turning `old_text` into what `render()` returns, or the reason there is none.

    A rendering bug must never cost the diagnostic, and a rewrite must itself parse: Python's
    own parser says so (libcst's takes ten times as long on a large module)."""
    try:
        new_text = render()
        parse_ast(new_text)
    except Exception as exc:
        return None, f"the rewrite could not be rendered ({type(exc).__name__}: {exc})"
    edits = diff_edits(old_text, new_text)
    if not edits:
        return None, "the rewrite produced no change"
    if unsafe_reasons:
        return unsafe_fix(title, unsafe_reasons, edits), None
    return Fix(Applicability.SAFE, title, edits, title=title), None


# How an analysis marks an assumption that running both versions on JAX decides.
VERIFY_SETTLES = "; `jaxloopfix verify` settles it"


def unsafe_fix(title: str, reasons: Sequence[str], edits: tuple[Edit, ...]) -> Fix:
    """An unsafe fix whose message states each assumption once, and says once (not after every
    carry's assumption) that `jaxloopfix verify` settles them."""
    assumptions = tuple(dict.fromkeys(r.removesuffix(VERIFY_SETTLES) for r in reasons))
    verifiable = any(r.endswith(VERIFY_SETTLES) for r in reasons)
    hint = "; `jaxloopfix verify` settles this" if verifiable else ""
    message = f"{title} (unsafe: {'; '.join(assumptions)}{hint})"
    return Fix(Applicability.UNSAFE, message, edits, title=title, assumptions=assumptions, verifiable=verifiable)
