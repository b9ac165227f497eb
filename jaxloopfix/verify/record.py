"""Verification results kept for the editor (`.jaxloopfix_cache/verified-v1.json`).

`jaxloopfix verify` records each function's status under a hash of the file's exact text and
of jaxloopfix's own code. The language server reads it to offer a fix that verified equal as
the preferred code action; it never runs user code itself, so a result exists only after a
`verify` run on the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from jaxloopfix.cache import CACHE_DIR, code_version

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
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.file.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by jaxloopfix\n*\n", encoding="utf-8")
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".verified-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(self.entries, out, separators=(",", ":"))
                os.replace(tmp, self.file)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return
