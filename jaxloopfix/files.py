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
import stat
import tempfile
import tokenize
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path, PurePosixPath

import pathspec

from jaxloopfix.config import Settings, resolved_path
from jaxloopfix.diagnostics import FileError

__all__ = [
    "Discovery",
    "FileTooLargeError",
    "GitIgnore",
    "IgnoreFiles",
    "ReadOnlyFileError",
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

    @property
    def file_error(self) -> FileError:
        return FileError(filename=str(self.path), message=self.message, skipped=True)


class StaleFileError(SourceError):
    """The file on disk is not the one we read: writing would drop someone else's change."""


class ReadOnlyFileError(SourceError):
    """The user cannot write the file (no write permission, or none of its write bits set):
    a fix is never written over it, even where the directory would allow the rename."""


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
    # `os.access` answers for this user; the mode bits also hold for root, whom the OS lets write anything.
    if not os.access(target, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ReadOnlyFileError(source.path, "Permission denied: the file is read-only; fixes not written")
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
class GitIgnore:
    """The patterns of one ignore file (`.gitignore`, `.git/info/exclude`), matched by
    `pathspec`'s implementation of gitignore(5): last matching line wins, `!` re-includes."""

    spec: pathspec.GitIgnoreSpec = field(default_factory=lambda: pathspec.GitIgnoreSpec.from_lines([]))

    @classmethod
    def from_text(cls, text: str) -> GitIgnore:
        return cls(pathspec.GitIgnoreSpec.from_lines(text.splitlines()))

    @classmethod
    def load(cls, path: Path) -> GitIgnore | None:
        """The ignore file at `path`; None when absent or unreadable."""
        try:
            return cls.from_text(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return None

    def decides(self, rel: str, *, is_dir: bool) -> bool | None:
        """True (ignored) or False (re-included by `!`) when a line matches `rel` (posix,
        relative to the file's directory), None when none does."""
        return self.spec.check_file(rel + "/" if is_dir else rel).include

    def is_ignored(self, rel: str, *, is_dir: bool) -> bool:
        return bool(self.decides(rel, is_dir=is_dir))


class IgnoreFiles:
    """Every ignore file git would apply to a walk: the repository's `.git/info/exclude`, the
    `.gitignore` of each directory from the repository's top down to the walked one, and those
    found in the walked directories. A deeper file's matching line wins over a shallower one's."""

    def __init__(self, root: Path) -> None:
        resolved = root.resolve()
        top = _repository_top(root)
        above: list[tuple[str, GitIgnore]] = []
        directories = [resolved]
        if top is not None:
            exclude = GitIgnore.load(top / ".git" / "info" / "exclude")
            if exclude is not None:
                above.append((str(top), exclude))
            directories = [top, *reversed([d for d in resolved.parents if top in d.parents]), resolved]
        for directory in dict.fromkeys(directories):
            found = GitIgnore.load(directory / ".gitignore")
            if found is not None:
                above.append((str(directory), found))
        self._root = str(resolved)
        # Per walked directory, the ignore files that apply to its entries, shallowest first.
        self._chains: dict[str, list[tuple[str, GitIgnore]]] = {self._root: above}

    def is_ignored(self, directory: str, name: str, *, is_dir: bool) -> bool:
        """Whether `name` in `directory` (a resolved path at or below the walked root) is ignored."""
        path = os.path.join(directory, name)
        for base, ignore in reversed(self._chain(directory)):
            decided = ignore.decides(os.path.relpath(path, base).replace(os.sep, "/"), is_dir=is_dir)
            if decided is not None:
                return decided
        return False

    def _chain(self, directory: str) -> list[tuple[str, GitIgnore]]:
        """The ignore files for entries of `directory`: its parent's, then its own `.gitignore`."""
        chain = self._chains.get(directory)
        if chain is None:
            parent = os.path.dirname(directory)
            chain = list(self._chain(parent)) if parent != directory else []
            found = GitIgnore.load(Path(directory) / ".gitignore")
            if found is not None:
                chain.append((directory, found))
            self._chains[directory] = chain
        return chain


def _repository_top(root: Path) -> Path | None:
    """The nearest directory at or above `root` holding `.git` (a directory or a worktree's file)."""
    resolved = root.resolve()
    for directory in [resolved, *resolved.parents]:
        if (directory / ".git").exists():
            return directory
    return None


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
    paths and whatever git ignores there (`IgnoreFiles`: nested `.gitignore` files, those
    above it up to the repository's top, and `.git/info/exclude`) unless
    `settings.respect_gitignore` is off.
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
    ignored = IgnoreFiles(root) if settings.respect_gitignore else None
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
            if excluded or (ignored is not None and ignored.is_ignored(os.path.join(base, *parts), name, is_dir=is_dir)):
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
