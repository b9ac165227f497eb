"""Plain data shared by rules, the engine, reporters and the language server.

Locations are 1-based rows and columns (as ruff reports them); edits also keep
character offsets into the decoded text so the engine can apply them without
re-deriving positions.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How sure we are that a fix keeps behaviour (ruff's vocabulary)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] with `content`."""

    content: str
    start: int
    end: int
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str  # one line: the title, and for an unsafe fix its assumptions
    edits: tuple[Edit, ...]
    # The parts of `message`, for reporters that lay them out: the headline, what an unsafe
    # fix assumes (one item each), and whether `jaxloopfix verify` can check the assumptions.
    title: str = ""
    assumptions: tuple[str, ...] = ()
    verifiable: bool = False


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = None
    # Why no fix is offered, when the loop was recognised but not provably rewritable.
    no_fix_reason: str | None = None
    # Why the enclosing function is considered traced.
    traced_reason: str | None = None
    # Extra context for reporters (e.g. notebook cell); never needed to apply a fix.
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def fix_applies(self, unsafe: bool) -> bool:
        """Whether `--fix` (with `--unsafe-fixes` when `unsafe`) applies this fix: what `[*]` promises."""
        return self.fix is not None and (self.fix.applicability is Applicability.SAFE or unsafe)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (unreadable, not text, not Python)."""

    filename: str
    message: str
    location: Location | None = None
    # A file left out on purpose (over `max-file-size`): not checked, and the summary says so.
    skipped: bool = False
