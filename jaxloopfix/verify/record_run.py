"""`jaxloopfix record -- COMMAND`: find the functions with fixable loops, run COMMAND with the
recorder loaded in every Python process it starts, and keep what they were called with.

The targets come from the same analysis as `check` (without fixing anything); the recorder
(`recorder.py`) runs in the user's processes, so COMMAND is anything that runs the user's code:
a test suite, a training script, a notebook runner.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jaxloopfix
from jaxloopfix.config import Settings
from jaxloopfix.files import SourceError, read_source
from jaxloopfix.verify.recorder import OUT_ENV, SITECUSTOMIZE, TARGETS_ENV, key, merge
from jaxloopfix.verify.targets import qualified_names


@dataclass
class Recording:
    returncode: int
    targets: list[str]  # `path::Class.name` keys of the functions looked for
    recorded: dict[str, int]  # key -> argument descriptions kept from this run


def find_targets(paths: Sequence[Path], settings: Settings) -> list[str]:
    """`path::qualname` of every function (as `verify` calls it) with a fixable loop under `paths`."""
    from jaxloopfix.api import check_paths

    keys: list[str] = []
    for result in check_paths(list(paths), settings):
        fixable = [d for d in result.diagnostics if d.fix is not None]
        if not fixable:
            continue
        try:
            text = read_source(result.filename, max_file_size=settings.max_file_size).text
        except SourceError:
            continue
        keys.extend(key(result.filename, name) for name in qualified_names(text, fixable))
    return sorted(set(keys))


def record(command: Sequence[str], paths: Sequence[Path], settings: Settings, root: Path) -> Recording:
    """Run `command` with the recorder on; fold what it saw into `root`'s cache."""
    targets = find_targets(paths, settings)
    with tempfile.TemporaryDirectory(prefix="jaxloopfix-record-") as tmp:
        folder = Path(tmp)
        (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        (folder / "targets.json").write_text(json.dumps(targets), encoding="utf-8")
        out = folder / "out"
        out.mkdir()
        env = dict(os.environ)
        package_parent = str(Path(jaxloopfix.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, package_parent, env.get("PYTHONPATH", "")) if p)
        env[TARGETS_ENV] = str(folder / "targets.json")
        env[OUT_ENV] = str(out)
        try:
            returncode = subprocess.call(list(command), env=env)
        except OSError as exc:
            raise FileNotFoundError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from exc
        recorded = merge(root, out)
    return Recording(returncode, targets, recorded)
