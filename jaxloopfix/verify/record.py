"""Verification results kept for the editor (`.jaxloopfix_cache/verified-v1.json`).

`jaxloopfix verify` records each function's status under a hash of the file's exact text and
of jaxloopfix's own code. The language server reads it to offer a fix that verified equal as
the preferred code action; it never runs user code itself, so a result exists only after a
`verify` run on the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from jaxloopfix.cache import CACHE_DIR, code_version, write_json_atomic

FILE = "verified-v1.json"


def _key(path: Path, text: str) -> str:
    digest = hashlib.sha256()
    for part in (str(path.resolve()), text, code_version()):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


class VerifyRecord:
    """{function: status} per (file, exact text) under one project root."""

    def __init__(self, root: Path) -> None:
        self.file = root / CACHE_DIR / FILE
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            self.entries: dict[str, object] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.entries = {}  # none yet, or damaged: start afresh

    def functions(self, path: Path, text: str) -> dict[str, str]:
        """{function: status} recorded for this exact text of `path`."""
        value = self.entries.get(_key(path, text))
        return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}

    def put(self, path: Path, text: str, function: str, status: str) -> None:
        self.entries.setdefault(_key(path, text), {})[function] = status  # type: ignore[union-attr]

    def save(self) -> None:
        """Write atomically; a record that cannot be written is not written."""
        write_json_atomic(self.file, self.entries)
