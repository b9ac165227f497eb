"""Whether `verify`'s x64 family decides the verdict: from the project's own configuration.

With `jax_enable_x64` on, promotions differ (int32 sums become int64, a NumPy float64
argument makes a float32 carry float64), and a rewrite equal with x64 off can raise. Whether
that concerns a function depends on whether its project ever runs with x64 on, which the
project says itself:

- `[tool.jaxloopfix] x64 = true`: the family is *required* (a difference is a mismatch);
- `x64 = false`: the family is not run;
- unset: required when any file of the project turns x64 on (`jax.config.update(
  "jax_enable_x64", True)`, `JAX_ENABLE_X64=1`, `jax.experimental.enable_x64()`, a
  conftest, a tox or CI file), else *advisory*: it still runs, and a difference is reported
  beside an `equivalent` verdict instead of blocking the fix.

A setting whose value the text does not show (`config.update("jax_enable_x64", args.x64)`)
counts as turning it on: the family is skipped only on positive evidence.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REQUIRED = "required"
ADVISORY = "advisory"
OFF = "off"

# The name, then (after a quote, `"`, `,`, `=` or `:`) the value; a literal off value is not a use.
_USE = re.compile(r"""jax_enable_x64\b|enable_x64\s*\(""", re.IGNORECASE)
_OFF_VALUE = re.compile(r"""^['"]?\s*[,=:]\s*['"]?(?:False|0|false|no|off)\b""")
# Where a project switches it on: code, test configuration, environment and CI files.
_SUFFIXES = (".py", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".env", ".sh")
_CI_DIRS = frozenset({".github", ".circleci", ".gitlab", ".buildkite"})
_MAX_FILES = 5000
_MAX_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class X64Policy:
    """The family's role, and the evidence for it (shown in verdicts)."""

    family: str
    evidence: str


def turns_x64_on(text: str) -> int | None:
    """1-based line of the first place `text` turns x64 on (or sets it to a value it does not show)."""
    for match in _USE.finditer(text):
        if match.group(0).lower().startswith("jax_enable_x64") and _OFF_VALUE.match(text[match.end():match.end() + 24]):
            continue
        return text.count("\n", 0, match.start()) + 1
    return None


@lru_cache(maxsize=16)
def _project_use(root: Path, excluded: tuple[str, ...]) -> str | None:
    """`path:line` of the first file under `root` that turns x64 on, or None."""
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in excluded and (not d.startswith(".") or d in _CI_DIRS))
        for name in sorted(files):
            if not (name.endswith(_SUFFIXES) or name.startswith(".env")):
                continue
            seen += 1
            if seen > _MAX_FILES:
                return None
            path = Path(directory, name)
            try:
                if path.stat().st_size > _MAX_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            line = turns_x64_on(text)
            if line is not None:
                return f"{path.relative_to(root).as_posix()}:{line}"
    return None


def x64_policy(setting: bool | None, root: Path, excluded: tuple[str, ...] = ()) -> X64Policy:
    """The x64 family's role for functions of the project at `root`."""
    if setting is True:
        return X64Policy(REQUIRED, "`x64 = true` in [tool.jaxloopfix]")
    if setting is False:
        return X64Policy(OFF, "`x64 = false` in [tool.jaxloopfix]")
    where = _project_use(root.resolve(), excluded)
    if where is not None:
        return X64Policy(REQUIRED, f"the project turns x64 on ({where})")
    return X64Policy(
        ADVISORY,
        f"nothing under {root} turns x64 on (set `x64 = true` under [tool.jaxloopfix] if the project runs with it)",
    )
