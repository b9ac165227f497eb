"""Checking files in worker processes (`--jobs`).

Each file's analysis is independent (the project pass exchanges only small
`ModuleLinks` between rounds), so rounds are mapped over worker processes. A worker
costs a few hundred milliseconds to start, so small runs stay in-process.

The project pass lints a file again when other modules trace more of it, and a
process that linted the file before still holds its parsed tree and scopes
(`analysis.source`). Items given with a key therefore go back to the worker that
took the same key before, unless another worker runs out of work first and takes
them over.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from jaxloopfix.runtime import start_worker

T = TypeVar("T")
R = TypeVar("R")

# Fewer files than this per worker: not worth a process.
MIN_FILES_PER_WORKER = 8
# An idle worker takes another's item when that many wait there: a worker linting a file
# again from its kept tree takes about half the time of a fresh lint.
STEAL_AFTER = 2
# The most items sent to a worker in one message.
MAX_CHUNK = 16


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Pool:
    """Maps a function over items, in worker processes once there is enough work."""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._workers: list[ProcessPoolExecutor] = []
        self._home: dict[Hashable, int] = {}  # key -> the worker that last took it
        # Told how many items of the current `map` are done, as they finish (progress display).
        self.progress: Callable[[int, int], None] | None = None

    def map(
        self,
        func: Callable[[T], R],
        items: Sequence[T],
        keys: Sequence[Hashable] | None = None,
        weights: Sequence[float] | None = None,
        sticky: Sequence[bool] | None = None,
    ) -> list[R]:
        """`[func(item) for item in items]`, spread over the workers.

        `keys` name what an item is about (a file): an item goes to the worker its key last
        went to, unless `sticky` says that worker holds nothing of it (the file was not parsed
        there). `weights` estimate each item's cost (its text's length), to share the rest."""
        # Once started (a first round with enough files), the workers take any later round of
        # two files or more, or one a worker has seen: each file is a full analysis.
        started = bool(self._workers)
        homes = self._homes(len(items), keys, sticky)
        known = any(home is not None for home in homes)
        if self.jobs == 1 or len(items) < (2 if started else 2 * MIN_FILES_PER_WORKER) and not (started and known):
            return [self._told(func(item), index + 1, len(items)) for index, item in enumerate(items)]
        if not started:
            # `spawn` never copies a parent's threads or locks; workers import only jaxloopfix.
            context = multiprocessing.get_context("spawn")
            self._workers = [
                ProcessPoolExecutor(1, mp_context=context, initializer=start_worker) for _ in range(self.jobs)
            ]
        queues = self._queues(homes, weights)
        results: list[R | None] = [None] * len(items)
        running: dict[Future, tuple[list[int], int]] = {}  # future -> (items, worker)

        def feed(worker: int) -> None:
            queue = queues[worker]
            if not queue:  # an idle worker takes over work that would wait behind a busy one
                longest = max(queues, key=len)
                queue = longest if len(longest) >= STEAL_AFTER else queue
            # Several small items per message while much is left (a file the pre-filter rejects
            # takes about a millisecond), one at a time towards the end.
            count = max(1, min(MAX_CHUNK, len(queue) // 4))
            if queue is queues[worker]:
                chunk, queue[:count] = queue[:count], []
            else:
                chunk, queue[-count:] = queue[-count:], []
            if chunk:
                if keys is not None:
                    for index in chunk:
                        self._home[keys[index]] = worker
                future = self._workers[worker].submit(_each, func, [items[i] for i in chunk])
                running[future] = (chunk, worker)

        for worker in range(self.jobs):
            for _ in range(2):  # two in flight, so a worker never waits on the parent
                feed(worker)
        finished = 0
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                chunk, worker = running.pop(future)
                for index, result in zip(chunk, future.result(), strict=True):
                    results[index] = result
                finished += len(chunk)
                self._told(None, finished, len(items))
                feed(worker)
        return results  # type: ignore[return-value]

    def _told(self, result: R, done: int, total: int) -> R:
        if self.progress is not None:
            self.progress(done, total)
        return result

    def _homes(self, count: int, keys: Sequence[Hashable] | None, sticky: Sequence[bool] | None) -> list[int | None]:
        """Per item, the worker it goes back to (None: any)."""
        if keys is None:
            return [None] * count
        return [
            self._home.get(key) if sticky is None or sticky[index] else None for index, key in enumerate(keys)
        ]

    def _queues(self, homes: list[int | None], weights: Sequence[float] | None) -> list[list[int]]:
        """Each worker's items, largest first: an item goes to its home worker, the rest to
        whichever worker has the least work so far."""
        order = sorted(range(len(homes)), key=lambda i: -(weights[i] if weights is not None else 1.0))
        queues: list[list[int]] = [[] for _ in range(self.jobs)]
        load = [0.0] * self.jobs
        for index in order:
            home = homes[index]
            worker = home if home is not None else min(range(self.jobs), key=load.__getitem__)
            queues[worker].append(index)
            load[worker] += weights[index] if weights is not None else 1.0
        return queues

    def close(self) -> None:
        for executor in self._workers:
            executor.shutdown()
        self._workers = []

    def terminate(self) -> None:
        """End the workers now, mid-task (Ctrl-C, an error): waiting for them, as `close` does,
        would leave them running, each holding its project's trees, after the command is gone."""
        for executor in self._workers:
            # `ProcessPoolExecutor` has no public way to stop a running task before Python 3.14.
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                process.terminate()
            executor.shutdown(wait=False, cancel_futures=True)
        self._workers = []


def _each(func: Callable[[T], R], items: list[T]) -> list[R]:
    """`func` over a chunk of items, in a worker."""
    return [func(item) for item in items]


@contextmanager
def pool(jobs: int) -> Iterator[Pool]:
    workers = Pool(jobs)
    try:
        yield workers
    except BaseException:
        workers.terminate()
        raise
    workers.close()
