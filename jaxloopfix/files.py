"""Finding, reading and writing the Python files we check.

Everything here exists so that a file we do not change comes back byte for byte
and a file we do change differs only where a fix edited it: the text is decoded
with the file's own encoding (BOM, coding cookie) and no newline translation,
and writes are atomic and refused when the file moved under us.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tempfile
import tokenize
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path, PurePosixPath

from jaxloopfix.config import Settings, resolved_path
from jaxloopfix.diagnostics import FileError

__all__ = [
    "Discovery",
    "FileTooLargeError",
    "GitIgnore",
    "SourceError",
    "SourceFile",
    "StaleFileError",
    "decode_source",
    "discover",
    "read_source",
    "write_source_atomic",
]

PYTHON_SUFFIXES: tuple[str, ...] = (".py", ".ipynb")
# Codecs (as `tokenize.detect_encoding` names them) whose decoded text always encodes back to the bytes.
_BIJECTIVE = frozenset({"utf-8", "utf-8-sig"})


# --------------------------------------------------------------------------- errors


class SourceError(Exception):
    """A file we refuse to check or write; the run goes on with the other files."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)
        self.message = message

    @property
    def file_error(self) -> FileError:
        """The reporters' view of this error."""
        return FileError(filename=str(self.path), message=self.message)


class FileTooLargeError(SourceError):
    """Over `max-file-size`: skipped with a warning, not a failure (generated files are big)."""


class StaleFileError(SourceError):
    """The file on disk is not the one we read: writing would drop someone else's change."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class SourceFile:
    """One decoded source file that re-encodes to exactly `raw` when unchanged."""

    path: Path
    raw: bytes
    text: str
    encoding: str  # a codec name as `tokenize.detect_encoding` spells it, e.g. "utf-8-sig"

    def encode(self, text: str) -> bytes:
        """`text` in the file's encoding ("utf-8-sig" puts the BOM back)."""
        return text.encode(self.encoding)

    @cached_property
    def digest(self) -> bytes:
        """A hash of `raw`, computed once: the results cache keys each file's answers by it."""
        return hashlib.sha256(self.raw).digest()


def decode_source(raw: bytes, path: Path | str, *, max_file_size: int | None = None) -> SourceFile:
    """Decode bytes we already hold (a file's or stdin's) the way Python would read them.

    Raises SourceError (binary, undecodable) or FileTooLargeError.
    """
    path = Path(path)
    if max_file_size is not None and len(raw) > max_file_size:
        raise FileTooLargeError(path, _too_large(len(raw), max_file_size))
    if b"\0" in raw:
        raise SourceError(path, "not a text file (contains a NUL byte)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:  # unknown codec in the cookie, or BOM + non-utf-8 cookie
        raise SourceError(path, f"cannot decode: {exc.msg}") from exc
    try:
        # bytes.decode, not open(): "\r\n" and lone "\r" must survive so untouched lines round-trip.
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(path, f"cannot decode as {encoding}: {exc}") from exc
    # UTF-8's strict decoder takes only the one encoding of each character (no overlong forms,
    # no surrogates), and "utf-8-sig" is found only for bytes that start with the BOM it puts
    # back: those bytes always come back. Other codecs are checked.
    if encoding not in _BIJECTIVE and text.encode(encoding) != raw:
        # Some codecs are not bijective; a fix written back would silently change other bytes.
        raise SourceError(path, f"cannot decode as {encoding} without changing the bytes")
    return SourceFile(path=path, raw=raw, text=text, encoding=encoding)


def read_source(path: Path | str, *, max_file_size: int | None = None) -> SourceFile:
    """Read and decode one file. Raises SourceError / FileTooLargeError with a message for the user."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            # Check before reading so a multi-gigabyte data file is never pulled into memory.
            if max_file_size is not None and size > max_file_size:
                raise FileTooLargeError(path, _too_large(size, max_file_size))
            raw = handle.read()
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror or exc}") from exc
    return decode_source(raw, path, max_file_size=max_file_size)


def _too_large(size: int, limit: int) -> str:
    return f"skipped: file is {size} bytes, over max-file-size ({limit} bytes)"


# --------------------------------------------------------------------------- writing


def write_source_atomic(source: SourceFile, new_text: str) -> None:
    """Replace `source.path` with `new_text`, all or nothing.

    Refuses (StaleFileError) when the bytes on disk are no longer `source.raw`, so an
    editor save during the run is never overwritten. The new content goes to a temp
    file in the same directory (same filesystem, so `os.replace` is atomic), gets the
    original permission bits, is fsynced, then renamed over the original. A symlink
    is followed: its target is rewritten and the link stays a link.
    """
    try:
        data = source.encode(new_text)
    except UnicodeEncodeError as exc:
        raise SourceError(source.path, f"fixed source cannot be encoded as {source.encoding}: {exc}") from exc
    target = Path(os.path.realpath(source.path))
    try:
        current = target.read_bytes()
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as exc:
        raise StaleFileError(source.path, f"file disappeared or became unreadable during the run: {exc}") from exc
    if current != source.raw:
        raise StaleFileError(source.path, "file changed on disk while it was being checked; fixes not written")
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".jaxloopfix-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX only; best effort)."""
    if os.name != "posix":
        return
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --------------------------------------------------------------------------- .gitignore


@dataclass(frozen=True)
class _IgnoreRule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # contains a slash: matched against the path from the .gitignore's directory


@dataclass(frozen=True)
class GitIgnore:
    """The glob lines of one `.gitignore` (last matching line wins, `!` re-includes).

    Deliberately small: no nested .gitignore files and no global excludes; the
    patterns follow gitignore(5) for `*`, `?`, `[...]`, `**`, a leading or inner
    `/` (anchored), a trailing `/` (directories only) and `\\` escapes.
    """

    rules: tuple[_IgnoreRule, ...] = ()

    @classmethod
    def from_text(cls, text: str) -> GitIgnore:
        rules = []
        for line in text.splitlines():
            rule = _parse_ignore_line(line)
            if rule is not None:
                rules.append(rule)
        return cls(tuple(rules))

    @classmethod
    def load(cls, directory: Path) -> GitIgnore:
        """The `.gitignore` in `directory`; empty when absent or unreadable."""
        try:
            return cls.from_text((directory / ".gitignore").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return cls()

    def is_ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether `rel` (posix, relative to the .gitignore's directory) is ignored."""
        name = rel.rsplit("/", 1)[-1]
        ignored = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(rel if rule.anchored else name):
                ignored = not rule.negate
        return ignored


def _parse_ignore_line(line: str) -> _IgnoreRule | None:
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are ignored unless escaped.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    return _IgnoreRule(re.compile(_glob_to_regex(line)), negate, dir_only, anchored)


def _glob_to_regex(pattern: str) -> str:
    """Translate one gitignore glob: `*`/`?` stop at `/`, `**` spans directories."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")  # "**/x" and "a/**/x": zero or more directories
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(".*")  # "a/**": everything inside
                    i = j
                    continue
                out.append("[^/]*")  # "a**b": an ordinary star
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))  # unterminated: a literal "["
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------- discovery


@dataclass
class Discovery:
    """The files to check, in order, and the paths that could not be expanded."""

    files: list[Path] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    # Each file's path with symlinks resolved (what tells two names of one file apart).
    real: dict[Path, str] = field(default_factory=dict)


def discover(paths: Sequence[Path | str], settings: Settings, *, leave_out: AbstractSet[str] = frozenset()) -> Discovery:
    """Expand CLI paths into the Python files to check.

    A file named explicitly is always checked, whatever its suffix or the exclude
    settings: the user asked for it. A directory is walked recursively in sorted
    order, keeping `*.py` files and skipping hidden directories, `settings.is_excluded`
    paths and whatever the `.gitignore` at the top of that directory ignores.
    Symlinked directories are not followed (no cycles). Each file appears once.
    `leave_out`: resolved paths (`realpath`) of files the caller has already.
    """
    result = Discovery()
    seen: set[str] = set(leave_out)

    def add(path: Path | str, key: str | None = None) -> None:
        key = key or os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            path = Path(path)
            result.files.append(path)
            result.real[path] = key

    for given in paths:
        path = Path(given)
        if path.is_dir():
            for found, resolved in _walk(path, settings):
                add(found, resolved)
        elif path.exists():
            add(path)
        else:
            result.errors.append(FileError(filename=str(path), message="no such file or directory"))
    return result


def _walk(root: Path, settings: Settings) -> list[tuple[str, str | None]]:
    """(path, path with symlinks resolved, or None for a symlinked file) of each file kept.

    Directories below `root` are never symlinks (they are not followed), so a plain
    entry's resolved path is the resolved root joined with its relative parts, and its
    path relative to the project (what excludes match) that of the root joined with them:
    the walk works on strings, and `discover` makes a `Path` only of each file it keeps."""
    gitignore = GitIgnore.load(root)
    # An excluded root was still asked for by name: judge only what lies below it.
    below = replace(settings, project_root=root) if settings.is_excluded(root) else settings
    base = os.path.realpath(root)
    prefix = _walk_prefix(below, root, Path(base))
    found: list[tuple[tuple[str, ...], str, str | None]] = []
    stack: list[tuple[str, tuple[str, ...]]] = [(str(root), ())]
    while stack:
        directory, parts = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # unreadable subdirectory: nothing we can check there
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir:
                    if name.startswith("."):
                        continue
                elif not (name.endswith(PYTHON_SUFFIXES) and entry.is_file()):
                    continue
                symlink = entry.is_symlink()
            except OSError:
                continue
            rel_parts = (*parts, name)
            rel = "/".join(rel_parts)
            resolved = None if symlink else os.path.join(base, rel)
            if resolved is None or prefix is None:
                excluded = below.is_excluded(Path(entry.path), None if resolved is None else Path(resolved))
            else:
                excluded = below.excludes(prefix[0] + rel, (*prefix[1], *rel_parts))
            if excluded or gitignore.is_ignored(rel, is_dir=is_dir):
                continue
            if is_dir:
                stack.append((entry.path, rel_parts))
            else:
                found.append((rel_parts, entry.path, resolved))
    found.sort(key=lambda item: item[0])
    return [(path, resolved) for _, path, resolved in found]


def _walk_prefix(settings: Settings, root: Path, base: Path) -> tuple[str, tuple[str, ...]] | None:
    """What `settings.relative` gives for `root` (resolved: `base`), as a prefix for its entries'
    relative paths ("" or ending in "/"), with its parts; None when entries need their own
    answer (the project's root lies below the walked one, so some entries are inside it)."""
    rel = root.as_posix()
    if settings.project_root is not None:
        try:
            project = resolved_path(settings.project_root)
        except (OSError, RuntimeError):
            return None
        if base == project or project in base.parents:
            rel = base.relative_to(project).as_posix()
        elif base in project.parents:
            return None
    if rel == ".":
        return "", ()
    return (rel if rel.endswith("/") else rel + "/"), PurePosixPath(rel).parts
