"""`[tool.jaxloopfix]` in pyproject.toml -> Settings.

Keys (kebab-case, as in ruff): select, ignore, extend-select, exclude,
extend-exclude, per-file-ignores, extra-traced-decorators,
extra-traced-base-classes, min-trip-count, max-file-size, unroll, examples, x64,
respect-gitignore.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath

from jaxloopfix.analysis.cross_module import ModuleSite

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".jaxloopfix_cache", "site-packages",
)


class ConfigError(Exception):
    """Raised for an unreadable or invalid `[tool.jaxloopfix]` table (exit code 2)."""


# The form name of a `lax.scan` fix with its step's input products hoisted (see `rewrite/hoist.py`).
HOISTED_FORM = "hoisted"


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] | None = None  # None: every rule
    ignore: frozenset[str] = frozenset()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    # Skip what git ignores (`.gitignore` files, those above a walked directory included), as
    # ruff's `respect-gitignore`: off to check code that lives in an ignored tree (a vendored
    # copy, a library under a git-managed install such as pyenv's `versions/`).
    respect_gitignore: bool = True
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    # Qualified names of user decorators/wrappers that trace a function, e.g. "mylib.jit".
    extra_traced_decorators: tuple[str, ...] = ()
    # Qualified names of base classes whose subclasses' methods (but constructors) run traced.
    extra_traced_base_classes: tuple[str, ...] = ()
    # A loop with a literal trip count below this is left alone: unrolling a few steps (up to 4,
    # as the own corpus's labels have it) is cheap; five steps of a full update already are not.
    min_trip_count: int = 5
    max_file_size: int = 10 * 1024 * 1024
    # The project-context pass (other files of a checked file's project, read for what they
    # trace) costs about 2.5 s and 200 MB per MB of source: files over the first limit (generated
    # modules; hand-written ones stay under 0.5 MB) and, past the second, the largest files are
    # left out, with a warning.
    max_context_file_size: int = 1024 * 1024
    max_context_size: int = 16 * 1024 * 1024
    # Lay out fixed lines with the project's formatter: "auto" (ruff, where the project
    # configures it), "ruff" or "none" (see rewrite/format_fixes.py).
    format_fixes: str = "auto"
    # `lax.scan(..., unroll=k)` in generated code: a project default, and per-function choices
    # written by `verify --tune` (function name -> k).
    scan_unroll: int = 1
    unroll_overrides: tuple[tuple[str, int], ...] = ()
    # How a linear recurrence (`h = a * h + b`) is rewritten: "associative"
    # (`lax.associative_scan`) or "scan" (`lax.scan`, as any other carry), and per-function
    # choices written by `--tune` from measurements (function name -> form).
    linear_recurrences: str = "associative"
    # Per function: "associative", "scan", or `HOISTED_FORM` (a scan whose step input products
    # are computed before it, `rewrite/hoist.py`), as `--tune` measured fastest.
    form_overrides: tuple[tuple[str, str], ...] = ()
    # `verify` input factories: "module:function" of the code -> "module:function" returning (args, kwargs).
    examples: tuple[tuple[str, str], ...] = ()
    # Whether the project runs with jax_enable_x64 (None: look for it; see verify/x64_policy.py).
    x64: bool | None = None
    project_root: Path | None = None
    # Set per file by the project pass: the file's package and the functions other modules trace.
    site: ModuleSite | None = None
    config_file: Path | None = field(default=None, compare=False)

    def is_enabled(self, code: str, filename: str | None = None) -> bool:
        """Whether `code` is reported for `filename` after select/ignore/per-file-ignores."""
        if self.select is not None and not any(code.startswith(s) for s in self.select):
            return False
        if any(code.startswith(i) for i in self.ignore):
            return False
        if filename is not None:
            rel = self.relative(filename)
            for pattern, codes in self.per_file_ignores:
                if _match(rel, pattern) and any(code.startswith(c) for c in codes):
                    return False
        return True

    def is_excluded(self, path: Path, resolved: Path | None = None) -> bool:
        """Whether a pattern matches the path (relative to the project), a directory
        prefix of it, or any one of its parts. `resolved`: the path with symlinks
        resolved, when the caller already knows it (saves a `realpath` per file)."""
        rel = self.relative(str(path), resolved)
        return self.excludes(rel, PurePosixPath(rel).parts)

    def excludes(self, rel: str, parts: tuple[str, ...] | list[str]) -> bool:
        """`is_excluded` for a path already made relative (`relative`), split into its `parts`:
        a directory walk joins both from its root's once, instead of a path per entry."""
        whole, part = _exclusion(self.exclude + self.extend_exclude)
        return bool(whole.match(rel)) or any(part.match(p) for p in parts)

    def unroll_for(self, function: str) -> int:
        return dict(self.unroll_overrides).get(function, self.scan_unroll)

    def recurrence_form(self, function: str) -> str:
        return dict(self.form_overrides).get(function, self.linear_recurrences)

    def hoists_step_inputs(self, function: str) -> bool:
        """Whether `--tune` chose the scan with the step's input products computed before it."""
        return dict(self.form_overrides).get(function) == HOISTED_FORM

    def relative(self, filename: str, resolved: Path | None = None) -> str:
        path = Path(filename)
        if self.project_root is not None:
            try:
                return (resolved or path.resolve()).relative_to(resolved_path(self.project_root)).as_posix()
            except (ValueError, OSError):
                pass
        return path.as_posix()


def _path_regex(pattern: str) -> str:
    """fnmatch's regex for `pattern` matching a relative path or a directory prefix of it."""
    return f"(?:{fnmatch.translate(pattern)})|(?:{fnmatch.translate(pattern.rstrip('/') + '/*')})"


def _match(rel: str, pattern: str) -> bool:
    return re.match(_path_regex(pattern), rel) is not None


@lru_cache(maxsize=32)
def _exclusion(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Exclude patterns compiled once: (against the whole relative path or a directory
    prefix of it, against one part, as `fnmatch.fnmatch` would)."""
    if not patterns:
        never = re.compile(r"(?!)")
        return never, never
    whole = "|".join(_path_regex(p) for p in patterns)
    part = "|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)
    return re.compile(whole), re.compile(part)


@lru_cache(maxsize=32)
def resolved_path(path: Path) -> Path:
    """`path.resolve()`, once per path."""
    return path.resolve()


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.jaxloopfix] table, walking up from `start`."""
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
            except tomllib.TOMLDecodeError as exc:
                # A broken project file must not silently turn the configuration off.
                raise ConfigError(f"invalid TOML in {candidate}: {exc}") from exc
            if "jaxloopfix" in data.get("tool", {}):
                return candidate
    return None


def _codes(value: object, key: str) -> frozenset[str]:
    """Rule codes or prefixes of them (`JLF00`), checked as `--select` checks its own: an unknown
    code in the config would otherwise turn every rule off without a word."""
    from jaxloopfix.codes import RULE_NAMES

    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of rule codes, not {value!r}")
    codes = frozenset(v.strip().upper() for v in value)
    unknown = sorted(c for c in codes if not any(k.startswith(c) for k in RULE_NAMES))
    if unknown:
        raise ConfigError(f"`{key}`: unknown rule code(s) {', '.join(unknown)} (known: {', '.join(RULE_NAMES)})")
    return codes


def load_settings(pyproject: Path | None, overrides: Sequence[str] = ()) -> Settings:
    """Read settings from `pyproject` (None: defaults), then the `KEY = VALUE` TOML lines of
    `overrides` (`--config "select = ['JLF001']"`, as ruff takes them) over its keys."""
    table: dict = {}
    if pyproject is not None:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {pyproject}: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML in {pyproject}: {exc}") from exc
        table = dict(data.get("tool", {}).get("jaxloopfix", {}))
    for override in overrides:
        try:
            table.update(tomllib.loads(override))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {override!r} is not a TOML `KEY = VALUE` line: {exc}") from exc
    return settings_from_table(table, pyproject.parent if pyproject else None, pyproject)


def settings_from_table(table: dict, root: Path | None, source: Path | None = None) -> Settings:
    """Settings from a `[tool.jaxloopfix]` table; a bad key or value raises ConfigError naming
    the file it came from."""
    try:
        return _settings_from_table(table, root, source)
    except ConfigError as exc:
        if source is None:
            raise
        raise ConfigError(f"{source}: [tool.jaxloopfix] {exc}") from exc


def _settings_from_table(table: dict, root: Path | None, source: Path | None) -> Settings:
    known = {
        "select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores",
        "extra-traced-decorators", "extra-traced-base-classes", "min-trip-count", "max-file-size", "unroll", "examples",
        "x64", "linear-recurrences", "max-context-file-size", "max-context-size", "format-fixes",
        "respect-gitignore",
    }
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"unknown key(s) in [tool.jaxloopfix]: {', '.join(sorted(unknown))}")
    settings = Settings(project_root=root, config_file=source)
    if "select" in table:
        settings = replace(settings, select=_codes(table["select"], "select"))
    if "extend-select" in table and settings.select is not None:
        settings = replace(settings, select=settings.select | _codes(table["extend-select"], "extend-select"))
    if "ignore" in table:
        settings = replace(settings, ignore=_codes(table["ignore"], "ignore"))
    for key in ("exclude", "extend-exclude", "extra-traced-decorators", "extra-traced-base-classes"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"`{key}` must be a list of strings, not {value!r}")
            settings = replace(settings, **{key.replace("-", "_"): tuple(value)})
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict):
            raise ConfigError(f"`per-file-ignores` must be a table of glob -> list of codes, not {value!r}")
        settings = replace(
            settings,
            per_file_ignores=tuple((k, _codes(v, f"per-file-ignores.{k}")) for k, v in value.items()),
        )
    for key in ("min-trip-count", "max-file-size", "max-context-file-size", "max-context-size"):
        if key in table:
            value = table[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"`{key}` must be a non-negative integer, not {value!r}")
            settings = replace(settings, **{key.replace("-", "_"): value})
    if "unroll" in table:
        value = table["unroll"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"`unroll` must be a positive integer, not {value!r}")
        settings = replace(settings, scan_unroll=value)
    if "linear-recurrences" in table:
        value = table["linear-recurrences"]
        if value not in ("associative", "scan"):
            raise ConfigError(f'`linear-recurrences` must be "associative" or "scan", not {value!r}')
        settings = replace(settings, linear_recurrences=value)
    if "format-fixes" in table:
        value = table["format-fixes"]
        if value not in ("auto", "ruff", "none"):
            raise ConfigError(f'`format-fixes` must be "auto", "ruff" or "none", not {value!r}')
        settings = replace(settings, format_fixes=value)
    if "examples" in table:
        value = table["examples"]
        if not isinstance(value, dict) or not all(isinstance(v, str) and ":" in v for v in value.values()):
            raise ConfigError(f'`examples` must be a table of "module:function" = "module:factory", not {value!r}')
        settings = replace(settings, examples=tuple(value.items()))
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"`respect-gitignore` must be true or false, not {table['respect-gitignore']!r}")
        settings = replace(settings, respect_gitignore=table["respect-gitignore"])
    if "x64" in table:
        if not isinstance(table["x64"], bool):
            raise ConfigError(f"`x64` must be true or false (whether the project runs with jax_enable_x64), not {table['x64']!r}")
        settings = replace(settings, x64=table["x64"])
    return settings
