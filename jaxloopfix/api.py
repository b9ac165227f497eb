"""The one entry point shared by the CLI, the pre-commit hook and the language server."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxloopfix.analysis.cross_module import ModuleLinks
from jaxloopfix.config import Settings, resolved_path
from jaxloopfix.diagnostics import Diagnostic, FileError, Location
from jaxloopfix.files import (
    FileTooLargeError,
    SourceError,
    SourceFile,
    discover,
    read_source,
    write_source_atomic,
)
from jaxloopfix.cache import Cached, ResultCache, analysed_key, decode_entry, entry_key, words_key
from jaxloopfix.parallel import pool
from jaxloopfix.project import ModuleIndex, TraceFlow, may_define_framework_classes

if TYPE_CHECKING:
    from jaxloopfix.engine import ModuleLint
    from jaxloopfix.verify.runner import VerifyOptions

__all__ = ["FileResult", "check_file", "check_paths", "check_source", "check_text", "fix_text"]


@dataclass
class FileResult:
    filename: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    original: str | None = None
    fixed: str | None = None  # text after fixes, None when nothing changed
    fixed_count: int = 0
    # Files skipped on purpose (over max-file-size): a warning, not a failure.
    warnings: list[FileError] = field(default_factory=list)
    # What the run confirmed (`--fix --verify`: each function verified, and on which inputs).
    notes: list[FileError] = field(default_factory=list)
    # What the project pass learns from this file (see `project`).
    links: ModuleLinks = field(default_factory=ModuleLinks)
    # The digest of the code its analysis read, when the result holds for any text with it
    # (`engine.ModuleLint.analysed`).
    analysed: str | None = None
    # Whether its lint parsed the text with libcst: the worker that did holds the syntax.
    parsed: bool = False


# The engine (libcst and every rule) is imported on first use: a run answered from the
# cache never pays for it.
def lint_text(text: str, filename: str, settings: Settings) -> list[Diagnostic]:
    from jaxloopfix.engine import lint_text as lint

    return lint(text, filename, settings)


def lint_module(
    text: str,
    filename: str,
    settings: Settings,
    *,
    answers: Callable[[str], ModuleLint | None] | None = None,
    digest: bool = False,
) -> ModuleLint:
    from jaxloopfix.engine import lint_module as lint

    return lint(text, filename, settings, answers=answers, digest=digest)


def apply_fixes(text: str, filename: str, settings: Settings, **options) -> tuple[str, list[Diagnostic], int]:
    from jaxloopfix.engine import apply_fixes as fixer

    return fixer(text, filename, settings, **options)


def check_text(text: str, filename: str, settings: Settings) -> list[Diagnostic]:
    """Diagnostics for one decoded source text. Raises `engine.ParseError` for unparseable code."""
    return lint_text(text, filename, settings)


def fix_text(text: str, filename: str, settings: Settings, *, unsafe: bool = False) -> tuple[str, list[Diagnostic], int]:
    """Apply every applicable fix until none is left: (new text, remaining diagnostics, fixes applied)."""
    return apply_fixes(text, filename, settings, unsafe=unsafe)


def check_source(
    source: SourceFile,
    settings: Settings,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = True,
    verify: VerifyOptions | None = None,
    answers: Callable[[str], ModuleLint | None] | None = None,
    digest: bool = False,
) -> FileResult:
    """Lint (and with `fix`, fix) one already-read source.

    `answers` gives known results by the digest of the code the analysis reads, and with
    `digest` the result carries that digest, for a caller that stores it (see
    `engine.lint_module`).

    With `verify`, every function with a fix is verified: safe fixes are applied unless
    `verify` finds a mismatch, unsafe ones (with or without `unsafe`) when it finds the function
    equivalent; the others are reported as warnings with the reason.

    With `write`, changed text is written back atomically; when that is refused
    (the file changed on disk meanwhile) or fails, nothing is written, the error is
    recorded, and the diagnostics of the unfixed file are reported instead. Without
    `write` (`--diff`, stdin) `fixed` just carries the new text.
    """
    from jaxloopfix.engine import ParseError
    from jaxloopfix.notebook import NotebookError

    filename = str(source.path)
    result = FileResult(filename=filename, original=source.text)
    try:
        lint, fixer = lint_text, apply_fixes
        if source.path.suffix == ".ipynb":
            from jaxloopfix.notebook import fix_notebook, lint_notebook

            lint, fixer = lint_notebook, fix_notebook
        if not fix and lint is lint_text:
            linted = lint_module(source.text, filename, settings, answers=answers, digest=digest)
            result.diagnostics, result.links, result.analysed = linted.diagnostics, linted.links, linted.analysed
            result.parsed = linted.parsed
            return result
        if not fix:
            from jaxloopfix.notebook import lint_notebook_module

            left_out: dict[int, str] = {}
            linted = lint_notebook_module(source.text, filename, settings, left_out=left_out)
            result.diagnostics, result.links, result.parsed = linted.diagnostics, linted.links, True
            result.warnings += _left_out_warnings(filename, left_out)
            return result
        if not fix:
            result.diagnostics = lint(source.text, filename, settings)
            return result
        accept = None
        if verify is not None and source.path.suffix == ".ipynb":
            accept = lambda d: False  # noqa: E731 - notebooks cannot be imported to verify
            result.warnings.append(FileError(filename, "verify does not run notebooks; fixes left unapplied"))
        elif verify is not None:
            from jaxloopfix.verify.gate import gate_fixes

            gate = gate_fixes(source.path, source.text, settings, verify)
            settings, accept = gate.settings, gate.accept
            result.warnings.extend(gate.notes)
            result.notes.extend(gate.verified)
            unsafe = True  # the gate admits an unsafe fix only when `verify` found its function equivalent
        left_out: dict[int, str] = {}
        options = {"left_out": left_out} if fixer is not apply_fixes else {}
        new_text, remaining, count = fixer(source.text, filename, settings, unsafe=unsafe, accept=accept, **options)
        result.warnings += _left_out_warnings(filename, left_out)
        if new_text == source.text:
            result.diagnostics = remaining
            return result
        formatted = _formatted(source, new_text, settings)
        if formatted != new_text:
            # The remaining diagnostics must point into the text as written.
            new_text, remaining = formatted, lint(formatted, filename, settings)
        if write:
            try:
                write_source_atomic(source, new_text)
            except SourceError as exc:
                result.errors.append(exc.file_error)
                result.diagnostics = lint(source.text, filename, settings)
                return result
            except OSError as exc:
                result.errors.append(FileError(filename, f"cannot write fixes: {exc.strerror or exc}"))
                result.diagnostics = lint(source.text, filename, settings)
                return result
        result.fixed, result.diagnostics, result.fixed_count = new_text, remaining, count
    except (ParseError, SyntaxError) as exc:
        result.errors.append(_parse_error(filename, exc))
        result.diagnostics = []
    except NotebookError as exc:
        result.errors.append(FileError(filename, str(exc)))
        result.diagnostics = []
    except Exception as exc:  # noqa: BLE001 - a bug on one file must not end the run
        message = f"internal error while checking this file ({type(exc).__name__}: {exc}); please report it"
        result.errors.append(FileError(filename, message))
        result.diagnostics, result.fixed, result.fixed_count = [], None, 0
    return result


def _left_out_warnings(filename: str, left_out: dict[int, str]) -> list[FileError]:
    """One warning per notebook cell that does not parse, left out of the analysis and the fixes."""
    return [
        FileError(filename, f"cell {index + 1} does not parse ({why}); the other cells were checked without it")
        for index, why in sorted(left_out.items())
    ]


def _formatted(source: SourceFile, new_text: str, settings: Settings) -> str:
    """`new_text` with the lines the fixes wrote laid out by the project's formatter, if it has
    one (`rewrite.format_fixes`): Python files in UTF-8, the only encoding ruff reads."""
    from jaxloopfix.rewrite.format_fixes import format_fixed

    if source.encoding not in ("utf-8", "utf-8-sig"):
        return new_text
    return format_fixed(source.text, new_text, source.path, settings)


def check_file(
    path: Path | str,
    settings: Settings,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = True,
    verify: VerifyOptions | None = None,
) -> FileResult:
    """Read, lint, fix and write one file; problems become errors/warnings on the result."""
    try:
        source = read_source(path, max_file_size=settings.max_file_size)
    except FileTooLargeError as exc:
        return FileResult(filename=str(path), warnings=[exc.file_error])
    except SourceError as exc:
        return FileResult(filename=str(path), errors=[exc.file_error])
    return check_source(source, settings, fix=fix, unsafe=unsafe, write=write, verify=verify)


def check_paths(
    paths: Sequence[Path | str],
    settings: Settings,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = True,
    verify: VerifyOptions | None = None,
    jobs: int = 1,
    cache: ResultCache | None = None,
    isolated: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[FileResult]:
    """Check (and fix) everything `paths` expands to, as one project, in a stable order.

    `progress(what, done, total)` hears of each file analysed, fixed or verified, as it finishes.

    Tracing is followed across the checked files: a function another checked module
    traces (calls from jitted code, wraps in `jax.jit`, hands to `lax.scan`) is analysed
    as traced, and so are methods of classes deriving from another module's Flax, Haiku
    or Equinox module. Files are linted, then those that gained such facts are linted
    again until nothing changes; with `fix`, files with applicable fixes are then fixed.
    `jobs` worker processes share each round (verification runs in this process).
    With a `cache`, a file whose bytes and settings were checked before is not analysed again.

    Unless `isolated`, the rest of each file's project (`project_context`) is analysed
    too, for the tracing it supplies, so a file gets the diagnostics it gets when the
    whole project is checked; only the files `paths` expand to are reported and fixed.

    One bad file never stops the run: a path that does not exist, an unreadable
    file or even a crash inside the engine becomes an error on that file's result.
    """
    found = discover(paths, settings)
    results: dict[Path, FileResult] = {}
    sources: dict[Path, SourceFile] = {}
    for path in found.files:
        try:
            sources[path] = read_source(path, max_file_size=settings.max_file_size)
        except FileTooLargeError as exc:
            results[path] = FileResult(filename=str(path), warnings=[exc.file_error])
        except SourceError as exc:
            results[path] = FileResult(filename=str(path), errors=[exc.file_error])
    left_out: dict[Path, str] = {}
    context = {} if isolated else _context_sources(
        list(found.files), settings, [Path(p) for p in paths], found.real, left_out
    )
    sources.update(context)
    with pool(1 if verify is not None else jobs) as workers:
        if progress is not None:
            report = progress
            workers.progress = lambda done, total: report(f"analysing {len(found.files)} files", done, total)
        flow, linted = _rounds(sources, settings, workers, cache)
        results.update(linted)
        if fix:
            candidates = unsafe or verify is not None  # verification may admit unsafe fixes
            to_fix = [
                p for p in sources if p not in context and any(d.fix_applies(candidates) for d in results[p].diagnostics)
            ]
            tasks = [
                _Task(sources[p], flow.settings_for(p, settings), fix=True, unsafe=unsafe, write=write, verify=verify)
                for p in to_fix
            ]
            if progress is not None:
                what = "verifying and fixing" if verify is not None else "fixing"
                workers.progress = lambda done, total: report(what, done, total)
            for path, result in zip(to_fix, _lint_all(workers, to_fix, tasks), strict=True):
                results[path] = result
    errors = [FileResult(filename=error.filename, errors=[error]) for error in found.errors]
    if left_out and found.files:
        from jaxloopfix.project_context import left_out_warning

        first = results[found.files[0]]
        first.warnings.append(FileError(first.filename, left_out_warning(left_out)))
    return errors + [results[path] for path in found.files]


def _context_sources(
    files: list[Path], settings: Settings, given: list[Path] | None = None, real: dict[Path, str] | None = None,
    left_out: dict[Path, str] | None = None,
) -> dict[Path, SourceFile]:
    """The readable other files of the projects `files` belong to, within the context budget
    (`project_context.within_budget`); those over it go into `left_out` with the reason,
    unreadable ones are left out silently."""
    from jaxloopfix.project_context import context_files, within_budget

    sizes: dict[Path, int] = {}
    for path in context_files(files, settings, given or (), real):
        try:
            sizes[path] = os.stat(path).st_size
        except OSError:
            continue
    per_file = min(settings.max_context_file_size, settings.max_file_size)
    kept, over = within_budget(sizes, per_file, settings.max_context_size)
    if left_out is not None:
        left_out.update(over)
    out: dict[Path, SourceFile] = {}
    for path in kept:
        try:
            out[path] = read_source(path, max_file_size=settings.max_file_size)
        except SourceError:
            continue
    return out


def project_settings(
    path: Path, text: str, settings: Settings, *, cache: ResultCache | None = None, jobs: int = 1,
    given: list[Path] | None = None,
) -> Settings:
    """`settings` with the tracing the rest of `path`'s project supplies to it (`text` is its current content).

    What the language server and `verify FILE` lint one file with: the same seeds
    `check_paths` gives the file in a run over its whole project. `given`: the paths of a
    `check` run the file is explained within (`check DIR --explain FILE`): their files are
    analysed with it, as that run analyses them, also where no root marker makes DIR a project.
    """
    target = resolved_path(path)
    files = [path]
    if given:
        files += [f for f in discover(given, settings).files if resolved_path(f) != target]
    context = _context_sources(files, settings, given)
    for other in files[1:]:
        if other in context:
            continue
        try:
            context[other] = read_source(other, max_file_size=settings.max_file_size)
        except SourceError:
            continue
    context = {p: source for p, source in context.items() if resolved_path(p) != target}
    if not context:
        return settings
    from jaxloopfix.files import decode_source

    sources = dict(context)
    sources[path] = decode_source(text.encode("utf-8"), path)
    with pool(jobs) as workers:
        flow, _ = _rounds(sources, settings, workers, cache)
    return flow.settings_for(path, settings)


def _rounds(
    sources: dict[Path, SourceFile], settings: Settings, workers, cache: ResultCache | None
) -> tuple[TraceFlow, dict[Path, FileResult]]:
    """Lint every source, then again those that gained seeds or framework classes, until nothing changes.

    Each round looks up every file whose settings changed in the cache, lints those it has no
    answer for, and then records all of the round's links in the files' order. A warm run, or
    a run after an edit, thus passes through the very rounds and settings of the run that
    filled the cache: the unchanged files are answered by the entries it wrote, and only an
    edited file (once per round whose settings differ for it) and the files its changed
    links reach are linted. The flow only grows (seeds merge, classes and questions
    accumulate), so the fixed point every file's result is read at is that of any order."""
    modules = [p for p in sources if p.suffix in (".py", ".ipynb")]
    class_flow = _may_define_framework_classes([sources[p] for p in modules], settings, cache)
    flow = TraceFlow(ModuleIndex.build(modules, class_flow), lambda p: _text(sources, p))
    results: dict[Path, FileResult] = {}
    # Files in the order of their absolute paths: the order links are recorded in (and so which
    # caller a seed's note names) is the same however the run was given its files.
    absolute = {path: os.path.abspath(path) for path in sources}
    ranked = sorted(sources, key=lambda path: _parts(absolute[path]))
    order = {path: place for place, path in enumerate(ranked)}
    # Every file's settings are the run's with a site of its own.
    shared = replace(settings, site=None) if settings.site is not None else settings
    pending: set[Path] = set(sources)
    while pending:
        done = sorted(pending, key=order.__getitem__)
        misses: list[tuple[Path, _Task, str | None]] = []
        for path in done:
            task = _Task(sources[path], flow.settings_for(path, settings), digest=cache is not None)
            key = entry_key(sources[path].digest, absolute[path], task.settings, shared=shared) if cache is not None else None
            hit = cache.get(path, key) if cache is not None and key is not None else None
            if hit is None:
                # An edit the analysis does not read (a function nothing traced reaches or names)
                # may leave a result of the file's earlier text valid: the lint looks for it.
                known = cache.analysed_entries(path) if cache is not None else {}
                misses.append((path, replace(task, known=known) if known else task, key))
                continue
            results[path] = FileResult(str(path), hit.diagnostics, hit.errors, original=sources[path].text, links=hit.links)
        if misses:
            batch = [path for path, _, _ in misses]
            # A file goes back to the worker that parsed it; one its last lint left unparsed (the
            # pre-filter's, or a cached answer) to whichever worker has the least work.
            held = [path in results and results[path].parsed for path in batch]
            linted = _lint_all(workers, batch, [task for _, task, _ in misses], held)
            for (path, task, key), result in zip(misses, linted, strict=True):
                results[path] = result
                if cache is not None and key is not None and not any("internal error" in e.message for e in result.errors):
                    cached = Cached(result.diagnostics, result.errors, result.links)
                    cache.put(path, key, cached)
                    if result.analysed is not None and not result.errors:
                        cache.put(path, analysed_key(result.analysed, absolute[path], task.settings, shared=shared), cached)
        pending = _grown(flow, done, results)
    return flow, results


def _parts(absolute: str) -> tuple[str, ...]:
    """`Path(absolute).parts` of a normalised absolute path, without making a `Path`."""
    if os.sep == "/" and absolute.startswith("/") and not absolute.startswith("//") and len(absolute) > 1:
        return ("/", *absolute[1:].split("/"))
    return Path(absolute).parts


def _may_define_framework_classes(sources: list[SourceFile], settings: Settings, cache: ResultCache | None) -> bool:
    """`project.may_define_framework_classes` over the project's files, each file's answer
    taken from the cache when its bytes were searched before: a warm run reads every file,
    but searching them all again is as slow as reading them."""
    extra = settings.extra_traced_base_classes
    if cache is None:
        return may_define_framework_classes((source.text for source in sources), extra)
    for source in sources:
        key = words_key(source.digest, extra)
        found = cache.words(source.path, key)
        if found is None:
            found = may_define_framework_classes((source.text,), extra)
            cache.put_words(source.path, key, found)
        if found:
            return True
    return False


def _grown(flow: TraceFlow, done: list[Path], results: dict[Path, FileResult]) -> set[Path]:
    """The files whose settings changed once `done`'s links are recorded."""
    if not flow.active:
        return set()
    changed: set[Path] = set()
    for path in done:
        changed |= flow.add(path, results[path].links)
    return changed | flow.waiting()


@dataclass(frozen=True)
class _Task:
    source: SourceFile
    settings: Settings
    fix: bool = False
    unsafe: bool = False
    write: bool = False
    verify: VerifyOptions | None = None
    # Cache entries of this file's results by the code their analyses read (`analysed_key`),
    # and whether its result is stored by that code too (it then carries the digest).
    known: dict[str, Any] = field(default_factory=dict)
    digest: bool = False


def _lint(task: _Task) -> FileResult:
    """`check_source` for one task (module-level: worker processes call it)."""
    from jaxloopfix.runtime import task_done

    answers = None
    if task.known:
        from jaxloopfix.engine import ModuleLint

        path, settings, known = task.source.path, task.settings, task.known

        def answers(digest: str) -> ModuleLint | None:
            found = decode_entry(known.get(analysed_key(digest, path, settings)), str(path))
            return ModuleLint(found.diagnostics, found.links, digest) if found is not None else None

    result = check_source(
        task.source, task.settings, fix=task.fix, unsafe=task.unsafe, write=task.write, verify=task.verify,
        answers=answers, digest=task.digest,
    )
    task_done()
    return result


def _lint_all(workers, paths: list[Path], tasks: list[_Task], held: list[bool] | None = None) -> list[FileResult]:
    """`_lint` over `tasks` (one per path), each file whose syntax a worker `held` sent back to it."""
    return workers.map(_lint, tasks, keys=paths, weights=[len(t.source.text) for t in tasks], sticky=held)


def _text(sources: dict[Path, SourceFile], path: Path) -> str | None:
    source = sources.get(path)
    return source.text if source is not None else None


def _parse_error(filename: str, exc: Exception) -> FileError:
    from jaxloopfix.engine import ParseError

    if isinstance(exc, ParseError):
        row, column, message = exc.row, exc.column, exc.message
    else:
        assert isinstance(exc, SyntaxError)
        row, column, message = exc.lineno, exc.offset, exc.msg
    location = Location(row, column or 1) if row is not None else None
    return FileError(filename=filename, message=f"cannot parse: {message}", location=location)
