"""Checking files in worker processes (`--jobs`).

Each file's analysis is independent (the project pass exchanges only small
`ModuleLinks` between rounds), so rounds are mapped over a process pool. A pool
costs a few hundred milliseconds to start, so small runs stay in-process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from jaxloopfix.runtime import tune_gc

T = TypeVar("T")
R = TypeVar("R")

# Fewer files than this per worker: not worth a process.
MIN_FILES_PER_WORKER = 8


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Pool:
    """Maps a function over items, in worker processes once there is enough work."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._executor: Executor | None = None

    def map(self, func: Callable[[T], R], items: Sequence[T]) -> list[R]:
        # Once started (a first round with enough files), the workers take any later round of
        # two files or more: the project pass's later rounds are small, and each file is a full analysis.
        if self.jobs == 1 or len(items) < (2 if self._executor is not None else 2 * MIN_FILES_PER_WORKER):
            return [func(item) for item in items]
        if self._executor is None:
            # `spawn` never copies a parent's threads or locks; workers import only jaxloopfix.
            self._executor = ProcessPoolExecutor(
                self.jobs, mp_context=multiprocessing.get_context("spawn"), initializer=tune_gc
            )
        chunk = max(1, min(16, len(items) // (self.jobs * 4)))
        return list(self._executor.map(func, items, chunksize=chunk))

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None


@contextmanager
def pool(jobs: int) -> Iterator[Pool]:
    workers = Pool(jobs)
    try:
        yield workers
    finally:
        workers.close()
