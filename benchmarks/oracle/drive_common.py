"""What the drive_*.py scripts share: the deadline taken from the command line and the guarded call
(a time limit by SIGALRM, block until the result is ready, every failure caught). Each driver used
to carry its own copy of this code; one copy here keeps them alike.

The drivers run as scripts (`python benchmarks/oracle/drive_api.py ...`, see run_all.sh), so their
folder is first on `sys.path` and `import drive_common` finds this file. Only the standard library
is imported here (JAX when a guarded call runs), so a driver can take its deadline before it
imports JAX.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time


def deadline_from_argv(default: float) -> float:
    """When the driver stops (a `time.time()` value): now plus `sys.argv[1]` seconds, or `default`."""
    return time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else default)


class Alarm(Exception):
    """Raised by the SIGALRM handler when a guarded call runs past its time."""


def _alarm(signum, frame):
    raise Alarm()


def make_guarded(seconds: int, deadline: float | None = None, counts: list[int] | None = None):
    """Install the SIGALRM handler and return `guarded(fn, seconds=seconds)`.

    `guarded` calls `fn()` with an alarm of `seconds` and blocks until the leaves of its result are
    ready: True if that worked, False on any failure (a KeyboardInterrupt is raised again). With
    `deadline`, once that time has passed it returns False without calling `fn`. With `counts`
    (a list `[ok, tried]`), each call made adds 1 to `counts[1]`, each that worked 1 to `counts[0]`.
    """
    signal.signal(signal.SIGALRM, _alarm)

    def guarded(fn, seconds=seconds):
        if deadline is not None and time.time() > deadline:
            return False
        if counts is not None:
            counts[1] += 1
        import jax

        signal.alarm(seconds)
        try:
            jax.block_until_ready(jax.tree_util.tree_leaves(fn()))
            if counts is not None:
                counts[0] += 1
            return True
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            return False
        finally:
            signal.alarm(0)

    return guarded


def run_sections(script: str, sections: dict, names: list[str], deadline: float, counts: list[int]) -> None:
    """`script DEADLINE --child NAME` runs one section and reports `counts`; otherwise each of
    `names` (the sections given on the command line, else `names`) runs in a child process with
    at most its share of the time left, so one slow or crashing section does not starve or end the rest."""
    if len(sys.argv) > 2 and sys.argv[2] == "--child":
        try:
            sections[sys.argv[3]]()
        finally:
            print(f"{sys.argv[3]}: {counts[0]}/{counts[1]} calls ran", flush=True)
        return
    names = sys.argv[2:] or names
    for i, name in enumerate(names):
        left = deadline - time.time()
        if left <= 5:
            break
        share = max(30.0, left / (len(names) - i))
        proc = subprocess.run([sys.executable, script, str(share), "--child", name], capture_output=True, text=True)
        print(proc.stdout.strip() or f"{name}: rc {proc.returncode} {proc.stderr[-300:]}", flush=True)
        if proc.returncode < 0:
            print(f"{name}: crashed (rc {proc.returncode}): {proc.stderr[-300:]}", flush=True)
