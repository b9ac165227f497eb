"""Per-process memos keyed by a source text, bounded by the characters they hold.

The project pass lints a file again when other modules trace more of it; what depends on
the text alone (its parsed trees, the pre-filter's walk) is kept for the texts seen last,
while the kept texts hold at most `chars` characters. The `keep` most recent are kept
whatever their size, so a text asked for twice in a row is never computed twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

V = TypeVar("V")


class TextMemo(Generic[V]):
    def __init__(self, chars: int, keep: int) -> None:
        self.chars = chars
        self.keep = keep
        self._values: OrderedDict[str, V] = OrderedDict()
        self._held = 0  # characters of the kept texts

    def get(self, text: str, make: Callable[[str], V]) -> tuple[V, bool]:
        """(the value for `text`, whether it was kept): made by `make` when it was not."""
        value = self._values.pop(text, None)
        kept = value is not None
        if value is None:
            value = make(text)
            self._held += len(text)
        self._values[text] = value
        while len(self._values) > self.keep and self._held > self.chars:
            self._held -= len(self._values.popitem(last=False)[0])
        return value, kept

    def peek(self, text: str) -> V | None:
        """The kept value for `text`, if any, without making it the most recent."""
        return self._values.get(text)

    def forget(self, text: str) -> None:
        if self._values.pop(text, None) is not None:
            self._held -= len(text)

    def clear(self) -> None:
        self._values.clear()
        self._held = 0

    def __contains__(self, text: object) -> bool:
        return text in self._values

    def __iter__(self) -> Iterator[str]:
        """The kept texts, least recent first."""
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
