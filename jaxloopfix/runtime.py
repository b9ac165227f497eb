"""Interpreter settings for the analysis processes (the CLI, its workers, the language server).

A checked module's libcst tree is hundreds of thousands of live objects. With CPython's
default thresholds the cyclic collector runs every 700 allocations and keeps traversing
that tree, which cost 10-25% of a large module's analysis. The analysis allocates few
reference cycles, so collecting less often keeps memory flat and the time in the analysis.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

# Youngest generation collected after this many net allocations (CPython's default: 700).
GC_THRESHOLDS = (50_000, 20, 20)


def tune_gc() -> None:
    """Collect cycles less often in this process (idempotent)."""
    gc.set_threshold(*GC_THRESHOLDS)


# Set in a process that ends when its command does (`check`, and its workers): see `task_done`.
_ONE_SHOT: list[bool] = []


def one_shot() -> None:
    """Mark this process as one that exits when its command ends (not the language server)."""
    _ONE_SHOT.append(True)


def is_one_shot() -> bool:
    return bool(_ONE_SHOT)


def task_done() -> None:
    """After one file's analysis in a one-shot process: keep the cyclic collector off what is
    alive now. That is the kept trees (for the project pass's later rounds) and the results, which
    live to the end of the run or are freed by their reference counts; the collector traversed
    them again at every collection, an eighth of a one-process check of jax. The language server,
    which runs for hours, keeps collecting everything."""
    if _ONE_SHOT:
        gc.freeze()


def start_worker() -> None:
    """A worker process's set-up: `tune_gc`, and an exit that skips freeing its heap.

    A worker keeps the trees of the modules it linted (the project pass lints them again),
    hundreds of megabytes of small objects; an interpreter's normal exit frees them one by
    one, which took longer than the last rounds of a run. A worker has sent every result
    when it is asked to exit, and writes nothing else."""
    tune_gc()
    one_shot()
    atexit.register(exit_now)


def exit_now(status: int = 0) -> None:
    """End the process with `status` once its standard streams are flushed, without freeing
    its objects one by one (for a process whose output is all written)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing to flush; the status still counts
            pass
    os._exit(status)
