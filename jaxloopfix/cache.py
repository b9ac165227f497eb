"""A content-hash cache of per-file results (`.jaxloopfix_cache/`), so a warm run re-analyses
only what changed.

An entry is keyed on the file's bytes, the analysing code (a hash of jaxloopfix's own
sources, so an upgrade or a local edit never reuses old results) and every setting that
can change the result, including what the project pass told the file (its `ModuleSite`).
Entries are JSON, never pickle: a cache directory inside a repository is untrusted input.
One file holds the whole project's entries; it is written atomically at the end of a
run, so concurrent runs can at worst lose each other's new entries, never corrupt them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from dataclasses import replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jaxloopfix.analysis.cross_module import ExternalTrace, ModuleClass, ModuleLinks
from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Applicability, Diagnostic, Edit, FileError, Fix, Location

CACHE_DIR = ".jaxloopfix_cache"
FORMAT = 2


@cache
def code_version() -> str:
    """A hash of the package's own source: results of other code are never reused."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_SCALARS = (str, int, float, type(None))


def _plain(value: Any) -> Any:
    """Settings as JSON-able data in a canonical order (sets sorted, paths as strings)."""
    if isinstance(value, _SCALARS):
        return value
    names = _fields(type(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


@cache
def _fields(kind: type) -> tuple[str, ...] | None:
    """The compared fields of a dataclass (found once per class), None for other types."""
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind) if f.compare)


def entry_key(content: bytes, path: Path | str, settings: Settings, *, shared: Settings | None = None) -> str:
    """The key of `path`'s result with `settings`; `content`: the file's `SourceFile.digest`
    (or another digest of what the result depends on, see `analysed_key`). `shared`: `settings`
    without their `site`, where the caller has them (the settings every file of a run shares)."""
    digest = hashlib.sha256()
    digest.update(code_version().encode())
    site = settings.site
    digest.update(json.dumps(_id(path)).encode())
    if shared is None:
        shared = replace(settings, site=None) if site is not None else settings
    digest.update(_settings_json(shared).encode())
    if site is not None:
        # Every file has a site of its own, but the project's roots are shared by every file
        # of a run: those are serialised once.
        digest.update(_site_json(site).encode())
        digest.update(_settings_json(site.roots).encode())
    digest.update(content)
    return digest.hexdigest()


def _site_json(site: Any) -> str:
    """Canonical JSON of a `ModuleSite` but its `roots`."""
    return json.dumps({name: _plain(getattr(site, name)) for name in _fields(type(site)) or () if name != "roots"},
                      sort_keys=True)


ANALYSED = "analysed:"  # the prefix of `analysed_key`s (an `entry_key` is a bare hex digest)


def analysed_key(digest: str, path: Path | str, settings: Settings, *, shared: Settings | None = None) -> str:
    """The key of a result by the code its analysis read (`prefilter.analysed_digest`) rather
    than the file's bytes: an edit to code the analysis leaves out finds it
    (`engine.ModuleLint.analysed`)."""
    return ANALYSED + entry_key(digest.encode("ascii"), path, settings, shared=shared)


WORDS = "words:"  # the prefix of `words_key`s


def words_key(content: bytes, extra_base_classes: tuple[str, ...]) -> str:
    """The key of a file's word-search answer: its `SourceFile.digest`, with what is searched for."""
    digest = hashlib.sha256()
    digest.update(code_version().encode())
    digest.update(json.dumps(sorted(extra_base_classes)).encode())
    digest.update(content)
    return WORDS + digest.hexdigest()


@lru_cache(maxsize=256)
def _settings_json(value: Any) -> str:
    """Canonical JSON of a (hashable) settings value, computed once per distinct value."""
    return json.dumps(_plain(value), sort_keys=True)


@dataclasses.dataclass
class Cached:
    diagnostics: list[Diagnostic]
    errors: list[FileError]
    links: ModuleLinks


class ResultCache:
    """path -> {key: result} for the lint results of one project.

    A file can have several live entries in one run: the project pass checks it again
    once other modules are known to trace it, with other settings, hence another key."""

    def __init__(self, root: Path) -> None:
        self.directory = root / CACHE_DIR
        self.file = self.directory / f"results-v{FORMAT}.json"
        self.entries: dict[str, dict[str, Any]] = {}
        self.used: dict[str, set[str]] = {}
        self.dirty = False
        self._ids: dict[Path | str, str] = {}
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("entries"), dict):
                self.entries = {k: v for k, v in data["entries"].items() if isinstance(v, dict)}
        except (OSError, ValueError):
            pass  # no cache yet, or a damaged one: start afresh

    def _id(self, path: Path | str) -> str:
        """`_id(path)`, once per path of the run."""
        found = self._ids.get(path)
        if found is None:
            found = self._ids[path] = _id(path)
        return found

    def _use(self, path: Path, key: str) -> None:
        """Keep `path`'s entry `key` when the cache is saved (an entry this run read or wrote)."""
        self.used.setdefault(self._id(path), set()).add(key)

    def get(self, path: Path, key: str) -> Cached | None:
        found = decode_entry(self.entries.get(self._id(path), {}).get(key), str(path))
        if found is not None:
            self._use(path, key)
        return found

    def words(self, path: Path, key: str) -> bool | None:
        """What the project's word search (`project.may_define_framework_classes`) found in
        this file's text when it was last the one keyed by `key` (`words_key`)."""
        entry = self.entries.get(self._id(path), {}).get(key)
        found = entry.get("found") if isinstance(entry, dict) else None
        if not isinstance(found, bool):
            return None
        self._use(path, key)
        return found

    def put_words(self, path: Path, key: str, found: bool) -> None:
        self.entries.setdefault(self._id(path), {})[key] = {"found": found}
        self._use(path, key)
        self.dirty = True

    def analysed_entries(self, path: Path) -> dict[str, Any]:
        """This file's entries by `analysed_key`, as stored: the lint, which alone learns the
        digest, decodes the one it needs. The one it uses is `put` again, and so kept."""
        return {k: v for k, v in self.entries.get(self._id(path), {}).items() if k.startswith(ANALYSED)}

    def put(self, path: Path, key: str, result: Cached) -> None:
        self.entries.setdefault(self._id(path), {})[key] = _encode(result)
        self._use(path, key)
        self.dirty = True

    def save(self) -> None:
        """Write atomically; a cache that cannot be written is silently not written."""
        if not self.dirty:
            return
        for path, keys in self.used.items():  # a file checked in this run keeps this run's entries
            self.entries[path] = {k: v for k, v in self.entries.get(path, {}).items() if k in keys}
        if write_json_atomic(self.file, {"format": FORMAT, "entries": self.entries}):
            self.dirty = False


def write_json_atomic(file: Path, data: Any) -> bool:
    """Write `data` to `file` in `.jaxloopfix_cache/` whole or not at all (a temporary file, then
    `os.replace`), creating the directory with its `.gitignore`. False when it cannot be written."""
    directory = file.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by jaxloopfix\n*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{file.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, separators=(",", ":"))
            os.replace(tmp, file)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def _id(path: Path | str) -> str:
    return os.path.abspath(path)


def _location(value: Location | None) -> list[int] | None:
    return [value.row, value.column] if value is not None else None


def _encode(result: Cached) -> dict[str, Any]:
    def diagnostic(d: Diagnostic) -> dict[str, Any]:
        fix = None
        if d.fix is not None:
            edits = [[e.content, e.start, e.end, _location(e.location), _location(e.end_location)] for e in d.fix.edits]
            fix = [d.fix.applicability.value, d.fix.message, edits, d.fix.title, list(d.fix.assumptions), d.fix.verifiable]
        return {
            "code": d.code, "message": d.message, "location": _location(d.location),
            "end_location": _location(d.end_location), "fix": fix, "no_fix_reason": d.no_fix_reason,
            "traced_reason": d.traced_reason, "extra": d.extra,
        }

    return {
        "diagnostics": [diagnostic(d) for d in result.diagnostics],
        "errors": [[e.message, _location(e.location)] for e in result.errors],
        "external": [_plain(t) for t in result.links.external],
        "classes": [_plain(c) for c in result.links.classes],
        "wanted": sorted(result.links.wanted),
        "declarations": sorted(result.links.declarations),
        "passings_asked": sorted(result.links.passings_asked),
    }


def _loc(value: list[int] | None) -> Location | None:
    return Location(int(value[0]), int(value[1])) if value is not None else None


def decode_entry(entry: Any, filename: str) -> Cached | None:
    """A stored entry as a result; None for no entry, or a damaged one."""
    if entry is None:
        return None
    try:
        return _decode(entry, filename)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _decode(data: dict[str, Any], filename: str) -> Cached:
    diagnostics = []
    for d in data["diagnostics"]:
        fix = None
        if d["fix"] is not None:
            applicability, message, edits, title, assumptions, verifiable = d["fix"]
            fix = Fix(
                Applicability(applicability),
                message,
                tuple(Edit(c, int(s), int(e), _loc(a), _loc(b)) for c, s, e, a, b in edits),  # type: ignore[arg-type]
                str(title), tuple(str(a) for a in assumptions), bool(verifiable),
            )
        diagnostics.append(
            Diagnostic(
                code=d["code"], message=d["message"], filename=filename, location=_loc(d["location"]),  # type: ignore[arg-type]
                end_location=_loc(d["end_location"]), fix=fix, no_fix_reason=d["no_fix_reason"],  # type: ignore[arg-type]
                traced_reason=d["traced_reason"], extra=dict(d["extra"]),
            )
        )
    errors = [FileError(filename, message, _loc(location)) for message, location in data["errors"]]
    external = [
        ExternalTrace(t["module"], t["name"], t["reason"], t["transformed"], frozenset(t["static_names"]),
                      frozenset(int(n) for n in t["static_nums"]))
        for t in data["external"]
    ]
    classes = [ModuleClass(c["qualified"], c["label"], c["entries"]) for c in data["classes"]]
    return Cached(diagnostics, errors, ModuleLinks(
        external, classes, set(data["wanted"]), set(data.get("declarations", ())), set(data.get("passings_asked", ()))
    ))
