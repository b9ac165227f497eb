"""The editor's "Verify with JAX, then apply" (`jaxloopfix.verifyAndApply`), without the server.

An unsafe fix rests on an assumption the analysis could not prove; `jaxloopfix verify` settles
it by running the function and its rewrite on JAX. The command does that for one function from
the editor, as `jaxloopfix verify FILE::FUNCTION` would:

- in a child process: the server's event loop keeps answering, and the engine's per-process
  memos (`analysis.source`, `prefilter`) are never used from two threads at once. The child
  starts the verify worker, which imports the user's code; the server itself never does.
- on the file's saved bytes only: the worker imports the module from disk and compares it with
  the rewrite of the editor's text, so the two must be the same text, before and after.

`lsp.py` registers the command and applies the fix; this module holds what needs no server.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxloopfix.config import Settings

COMMAND = "jaxloopfix.verifyAndApply"
TITLE = "Verify with JAX, then apply"
EQUIVALENT = "equivalent"
# Not a worker status: the editor's text is not what the worker would import.
UNSAVED = "unsaved"
MESSAGE_CHARS = 300

Found = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Verdict:
    """What verify said about one function: its status, why, and every result (to record)."""

    status: str
    message: str
    found: tuple[tuple[str, dict[str, Any]], ...] = ()


def action_title(function: str) -> str:
    """Names the function, since choosing the action runs it (and its rewrite)."""
    return f"{TITLE} (runs `{function}`)"


def verdict_of(found: Found, function: str) -> Verdict:
    """One status for `function` as `by_name` gives it, with the message of a result that has it."""
    from jaxloopfix.verify.gate import by_name

    if not found:
        return Verdict("unverified", f"no fixable loop in `{function}`")
    status = by_name(found).get(function, "unverified")
    mine = [r for q, r in found if q.rsplit(".", 1)[-1] == function] or [r for _, r in found]
    result = next((r for r in mine if r.get("status") == status), mine[0])
    return Verdict(status, str(result.get("message") or ""), tuple(found))


def _on_disk(path: Path, text: str, settings: Settings) -> bool:
    from jaxloopfix.files import SourceError, read_source

    try:
        return read_source(path, max_file_size=settings.max_file_size).text == text
    except SourceError:
        return False


def verify_saved(path: Path, text: str, settings: Settings, function: str) -> Verdict:
    """`verify_file` for `function` (unsafe fixes included), only while the file on disk is `text`."""
    from jaxloopfix.verify.gate import verify_file
    from jaxloopfix.verify.runner import VerifyOptions

    if not _on_disk(path, text, settings):
        return Verdict(UNSAVED, "save the file first: verify imports it from disk")
    # Whether the rewrite is equal is the question here, not how fast it runs.
    found = verify_file(path, text, settings, VerifyOptions(measure=False), unsafe=True, function=function)
    if not _on_disk(path, text, settings):
        return Verdict(UNSAVED, "the file changed on disk during verification")
    return verdict_of(found, function)


def _quiet_stdout() -> None:
    """The child inherits the server's stdout, which is the LSP channel: nothing may be written there."""
    os.dup2(2, 1)
    sys.stdout = sys.stderr


async def verify_off_loop(path: Path, text: str, settings: Settings, function: str) -> Verdict:
    """`verify_saved` in a fresh child process (spawned: the server has threads), awaited."""
    pool = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet_stdout
    )
    try:
        return await asyncio.get_running_loop().run_in_executor(pool, verify_saved, path, text, settings, function)
    except Exception as exc:  # noqa: BLE001 - a broken child is a verdict, not a server failure
        return Verdict("error", f"the verification could not run: {exc!r}")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def record(root: Path, path: Path, text: str, verdict: Verdict) -> None:
    """Keep every status for this exact text, as `jaxloopfix verify` does (the quick fix reads it)."""
    from jaxloopfix.verify.gate import by_name
    from jaxloopfix.verify.record import VerifyRecord

    if verdict.status == UNSAVED or not verdict.found:
        return
    kept = VerifyRecord(root)
    for name, status in by_name(list(verdict.found)).items():
        kept.put(path, text, name, status)
    kept.save()


def report(verdict: Verdict, function: str, path: Path) -> str:
    """The warning shown when nothing was applied: the status and (the start of) verify's message."""
    message = verdict.message.strip()
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3].rstrip() + "..."
    return f"jaxloopfix: `{function}` in {path.name}: {verdict.status}" + (f": {message}" if message else "") + "; not applied"
