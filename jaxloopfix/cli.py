"""`jaxloopfix` command line: option parsing, settings, exit codes, nothing else.

The analysis lives in the engine (reached through `jaxloopfix.api`), file handling
in `jaxloopfix.files` and output in `jaxloopfix.report`; this module only wires
them together the way ruff's CLI does, so its flags behave as ruff users expect.

Exit codes: 0 nothing left to report, 1 diagnostics remain (or `--diff` has a
diff), 2 a usage, configuration or file error (other files are still checked).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TextIO

import click

from jaxloopfix import __version__
from jaxloopfix.config import ConfigError, Settings, find_pyproject, load_settings
from jaxloopfix.report import OUTPUT_FORMATS

if TYPE_CHECKING:
    from jaxloopfix.api import FileResult

__all__ = ["main", "run"]

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_ERROR = 0, 1, 2

_CONTEXT = {"help_option_names": ["-h", "--help"]}


# Set by `run`: this process is the command's own, which ends with it (not a test's or a caller's).
_OWN_PROCESS: list[bool] = []


def run() -> None:
    """The `jaxloopfix` command: `main`, and after `check` an exit that skips freeing the heap.

    A checked project's trees are millions of small objects; the interpreter's normal exit
    frees them one by one, about a sixth of a one-process `check` of Flax. `check` has
    written its output and its cache (atomically) by then, and its worker pool is closed,
    so the process ends as soon as its streams are flushed, with the same status."""
    _OWN_PROCESS.append(True)
    try:
        main()
    except SystemExit as exc:
        from jaxloopfix.runtime import exit_now, is_one_shot

        if not is_one_shot():  # set by `check` (see there)
            raise

        code = exc.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)  # as the interpreter prints a message given to `sys.exit`
            code = 1
        exit_now(code or 0)


# The shell's status for a command ended by Ctrl-C (128 + SIGINT); 1 means "findings remain".
EXIT_INTERRUPTED = 130


class _Group(click.Group):
    """click's group, except that Ctrl-C ends the command with status 130, not click's 1."""

    def invoke(self, ctx: click.Context):  # noqa: ANN201
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            sys.stderr.write("\nInterrupted.\n")
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=_Group, context_settings=_CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="jaxloopfix", message="%(prog)s %(version)s")
def main() -> None:
    """Find Python loops that JAX unrolls under jit and rewrite them to `lax.scan`."""
    from jaxloopfix.runtime import tune_gc

    tune_gc()


# --------------------------------------------------------------------------- check


@main.command(context_settings=_CONTEXT)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--fix", is_flag=True, help="Apply fixes and write the files.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Treat unsafe fixes as available (and apply them with --fix)."
)
@click.option("--diff", is_flag=True, help="Print a diff of what --fix would change; write nothing.")
@click.option("--select", metavar="CODES", help="Comma-separated rule codes (prefixes) to enable; overrides config.")
@click.option("--ignore", metavar="CODES", help="Comma-separated rule codes (prefixes) to disable; overrides config.")
@click.option("--extend-select", metavar="CODES", help="Comma-separated rule codes to add to the selection.")
@click.option(
    "--output-format",
    type=click.Choice(OUTPUT_FORMATS, case_sensitive=False),
    default="full",
    show_default=True,
    envvar="JAXLOOPFIX_OUTPUT_FORMAT",
    show_envvar=True,
    help="How to print diagnostics.",
)
@click.option("--verify", "verify_fixes", is_flag=True, help="With --fix: run every fix on JAX (`verify`); apply safe fixes unless it finds a mismatch, and unsafe fixes it finds equivalent.")
@click.option(
    "--tune", "--tune-unroll", "tune_unroll", is_flag=True,
    help="With --fix --verify: time lax.scan at unroll 1-16 (and a linear recurrence's lax.associative_scan) "
    "on this backend and write the fastest equivalent form.",
)
@click.option("--exit-zero", is_flag=True, help="Exit with 0 even when diagnostics remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit with 1 when any fix was applied.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each diagnostic.")
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="Read source from stdin (path `-`) and report it as NAME; with --fix the fixed source goes to stdout.",
)
@click.option(
    "--config", "config", multiple=True, metavar="PATH | KEY=VALUE",
    help="pyproject.toml to read [tool.jaxloopfix] from (default: the nearest one above the paths), or a "
    "TOML `KEY = VALUE` that overrides one setting (repeatable).",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), metavar="N",
    help="Worker processes (default: the number of CPU cores).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the results cache (.jaxloopfix_cache/).")
@click.option(
    "--no-project", "isolated", is_flag=True,
    help="Analyse only PATHS: ignore what the rest of each file's project traces (default: follow it).",
)
@click.option(
    "--isolated", "ignore_config", is_flag=True,
    help="Ignore all configuration files (as ruff's `--isolated`): run with the defaults.",
)
@click.option("--fix-only", is_flag=True, help="Apply fixes, but neither report nor exit 1 for what is left (implies --fix).")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to each line with a finding, and exit.")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and exit.")
@click.option("--show-settings", is_flag=True, help="Print the settings the paths are checked with, and exit.")
@click.option("--force-exclude", is_flag=True, help="Apply `exclude` to paths named on the command line too.")
@click.option(
    "--respect-gitignore/--no-respect-gitignore", default=None,
    help="Skip files git ignores (default: on; overrides `respect-gitignore` in config).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary, warnings or progress.")
@click.option("-w", "--watch", is_flag=True, help="Check again whenever a checked file changes (Ctrl-C ends it).")
@click.option(
    "--color", type=click.Choice(["auto", "always", "never"], case_sensitive=False), default="auto", show_default=True,
    help="Colour in the output (auto: when writing to a terminal).",
)
@click.option(
    "--explain", metavar="FILE[:LINE]",
    help="Print why each loop of FILE (or the one at LINE) was or was not reported: the path that traces "
    "it, the kinds that decided, the evidence.",
)
def check(
    paths: tuple[Path, ...],
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    output_format: str,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    statistics: bool,
    stdin_filename: str | None,
    config: tuple[str, ...] | Path | None,
    verify_fixes: bool = False,
    tune_unroll: bool = False,
    jobs: int | None = None,
    no_cache: bool = False,
    isolated: bool = False,
    explain: str | None = None,
    ignore_config: bool = False,
    fix_only: bool = False,
    add_noqa: bool = False,
    show_files: bool = False,
    show_settings: bool = False,
    force_exclude: bool = False,
    respect_gitignore: bool | None = None,
    quiet: bool = False,
    color: str = "auto",
    watch: bool = False,
) -> None:
    """Check PATHS (default: the current directory) for loops unrolled under a JAX trace."""
    if _OWN_PROCESS:
        from jaxloopfix.runtime import one_shot

        # Its heap lives to the end of the run (`runtime.task_done`), and nothing `check` leaves
        # behind needs freeing: `run` ends the process without freeing it.
        one_shot()
    fix = fix or fix_only
    if (verify_fixes or tune_unroll) and not fix:
        raise click.UsageError("--verify and --tune apply to --fix")
    if add_noqa and (fix or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix or --diff")
    output_format = output_format.lower()
    use_stdin = [str(p) for p in paths] == ["-"] or (stdin_filename is not None and not paths)
    if not use_stdin and any(str(p) == "-" for p in paths):
        raise click.UsageError("`-` (stdin) cannot be combined with other paths")

    try:
        settings = _settings(config, [stdin_filename] if use_stdin and stdin_filename else paths, ignore=ignore_config)
    except ConfigError as exc:
        _fail(f"error: {exc}")

    # Imported here so `--version`, `--help` and config errors work without the engine.
    from jaxloopfix import api
    from jaxloopfix.cache import ResultCache
    from jaxloopfix.parallel import default_jobs
    from jaxloopfix.codes import RULE_NAMES

    settings = _override_codes(settings, select=select, ignore=ignore, extend_select=extend_select, known=list(RULE_NAMES))
    if respect_gitignore is not None:
        settings = replace(settings, respect_gitignore=respect_gitignore)
    names = dict(RULE_NAMES)
    if explain is not None:
        _explain(explain, settings, [Path(p) for p in paths if str(p) != "-"])
    given = list(paths) or [Path(".")]
    if force_exclude:
        given = [p for p in given if not (Path(p).is_file() and settings.is_excluded(Path(p)))]
    if show_settings:
        _show_settings(settings)
    if show_files:
        _show_files(given, settings)
    if add_noqa:
        _add_noqa(given, settings, jobs=jobs, isolated=isolated)
    if watch and (fix or diff or use_stdin):
        raise click.UsageError("--watch reports only: it cannot be combined with --fix, --diff or stdin")
    painted = {"always": True, "never": False}.get(color.lower())

    if use_stdin:
        outcome = _check_stdin(
            stdin_filename or "-", settings, api=api, fix=fix, unsafe=unsafe_fixes, diff=diff,
            output_format=output_format, statistics=statistics, rule_names=names, isolated=isolated,
        )
    else:
        verify = None
        if verify_fixes or tune_unroll:
            from jaxloopfix.verify.runner import VerifyOptions

            verify = VerifyOptions(tune_unroll=tune_unroll)
        cache = None if no_cache else ResultCache(settings.project_root or Path.cwd())

        def once() -> _Outcome:
            """One check of the paths: analysed (fixed), cached, reported."""
            with _progress(sys.stderr, quiet=quiet) as progress:
                results = api.check_paths(
                    given, settings, fix=fix or diff, unsafe=unsafe_fixes, write=not diff,
                    verify=verify, jobs=jobs or default_jobs(), cache=cache, isolated=isolated, progress=progress,
                )
            if cache is not None:
                cache.save()
            if fix_only:  # what is left is not reported (ruff's `--fix-only`)
                for result in results:
                    result.diagnostics = []
            return _finish(
                results, diff=diff, unsafe=unsafe_fixes, output_format=output_format,
                statistics=statistics, rule_names=names, out=sys.stdout, verified_run=verify is not None,
                quiet=quiet, color=painted,
            )

        if watch:
            from jaxloopfix.watch import watch_files

            watch_files(given, settings, once)  # until Ctrl-C (exit 130)
        outcome = once()
    sys.exit(_exit_code(outcome, exit_zero=exit_zero, exit_non_zero_on_fix=exit_non_zero_on_fix))


def _show_settings(settings: Settings) -> NoReturn:
    """`--show-settings`: the resolved settings, one `key = value` per line, and where they came from."""
    from dataclasses import fields

    click.echo(f"# from {settings.config_file or 'the defaults (no [tool.jaxloopfix] found)'}")
    for item in fields(settings):
        if item.name in ("site", "config_file"):
            continue
        value = getattr(settings, item.name)
        if isinstance(value, frozenset):
            value = sorted(value)
        click.echo(f"{item.name.replace('_', '-')} = {value!r}")
    sys.exit(EXIT_OK)


def _show_files(paths: list[Path], settings: Settings) -> NoReturn:
    """`--show-files`: each file a check of `paths` reports on, one per line."""
    from jaxloopfix.files import discover

    found = discover(paths, settings)
    for path in found.files:
        click.echo(str(path))
    for error in found.errors:
        click.echo(f"error: {error.filename}: {error.message}", err=True)
    sys.exit(EXIT_ERROR if found.errors else EXIT_OK)


def _add_noqa(paths: list[Path], settings: Settings, *, jobs: int | None, isolated: bool) -> NoReturn:
    """`--add-noqa`: suppress every current finding in place (atomic writes, read-only files
    left alone), so a project can adopt the linter and see only new findings from then on."""
    from jaxloopfix import api
    from jaxloopfix.files import SourceError, read_source, write_source_atomic
    from jaxloopfix.noqa import add_noqa
    from jaxloopfix.parallel import default_jobs

    results = api.check_paths(paths, settings, jobs=jobs or default_jobs(), isolated=isolated)
    added = files = 0
    failed = False
    for result in results:
        if not result.diagnostics or result.filename.endswith(".ipynb"):
            continue
        try:
            source = read_source(result.filename, max_file_size=settings.max_file_size)
            text, count = add_noqa(source.text, result.diagnostics)
            if count:
                write_source_atomic(source, text)
                added, files = added + count, files + 1
        except SourceError as exc:
            click.echo(f"error: {exc}", err=True)
            failed = True
    click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'} to {files} file{'' if files == 1 else 's'}.")
    sys.exit(EXIT_ERROR if failed or any(r.errors for r in results) else EXIT_OK)


@contextmanager
def _progress(stream: TextIO, *, quiet: bool = False) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on `stream` while a run works, when `stream` is a terminal (a pipe, a CI
    log or an editor gets nothing): a cold run of a large project takes a minute."""
    if quiet or not stream.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def report(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total)
            bar.update(tasks[what], completed=done, total=total)

        yield report


@dataclass(frozen=True)
class _Outcome:
    """What the exit code depends on."""

    errors: bool
    remaining: bool
    fixed: bool
    diff: bool | None  # None: not in --diff mode; else whether there was a diff


def _exit_code(outcome: _Outcome, *, exit_zero: bool, exit_non_zero_on_fix: bool) -> int:
    if outcome.errors:
        return EXIT_ERROR
    if exit_zero:
        return EXIT_OK
    if outcome.diff is not None:  # --diff: only "would change something" matters
        return EXIT_DIAGNOSTICS if outcome.diff else EXIT_OK
    if outcome.remaining or (exit_non_zero_on_fix and outcome.fixed):
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _settings(
    config: tuple[str, ...] | Path | None, paths: Iterable[Path | str] = (), *, ignore: bool = False
) -> Settings:
    """`--config PATH`, else the nearest pyproject.toml with [tool.jaxloopfix] above the checked
    paths (their common directory: `check proj` from outside `proj` reads `proj/pyproject.toml`,
    as ruff does), else defaults; only the defaults with `ignore` (`--isolated`). `--config
    KEY=VALUE` overrides one setting of either."""
    given = (config,) if isinstance(config, Path) else tuple(config or ())
    overrides = [c for c in given if "=" in c and not Path(c).is_file()]
    files = [Path(c) for c in given if c not in overrides]
    if len(files) > 1:
        raise click.UsageError("--config names one configuration file at most")
    if ignore and files:
        raise click.UsageError("--isolated ignores configuration files; it cannot be combined with --config PATH")
    pyproject = None if ignore else files[0] if files else find_pyproject(_common_directory(paths))
    settings = load_settings(pyproject, overrides)
    if settings.project_root is None:
        # Exclude patterns are relative to the project; without a config, that is where we run.
        settings = replace(settings, project_root=Path.cwd())
    return settings


def _common_directory(paths: Iterable[Path | str]) -> Path:
    """The deepest directory holding every path (the working directory when none is given)."""
    import os

    directories = [
        os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) or ".")
        for p in paths if str(p) != "-"
    ]
    return Path(os.path.commonpath(directories)) if directories else Path.cwd()


def _parse_codes(value: str, option: str, known: Iterable[str]) -> frozenset[str]:
    codes = frozenset(part.strip().upper() for part in value.split(",") if part.strip())
    known = list(known)
    unknown = sorted(c for c in codes if not any(k.startswith(c) for k in known))
    if unknown:
        raise click.BadParameter(f"unknown rule code(s): {', '.join(unknown)}", param_hint=f"'{option}'")
    return codes


def _override_codes(
    settings: Settings, *, select: str | None, ignore: str | None, extend_select: str | None, known: list[str]
) -> Settings:
    """Command-line selection replaces the config's (ruff semantics)."""
    if select is not None:
        settings = replace(settings, select=_parse_codes(select, "--select", known))
    if extend_select is not None and settings.select is not None:
        # With no explicit selection every rule is already on.
        settings = replace(settings, select=settings.select | _parse_codes(extend_select, "--extend-select", known))
    elif extend_select is not None:
        _parse_codes(extend_select, "--extend-select", known)
    if ignore is not None:
        settings = replace(settings, ignore=_parse_codes(ignore, "--ignore", known))
    return settings


def _finish(
    results: list[FileResult],
    *,
    diff: bool,
    unsafe: bool,
    output_format: str,
    statistics: bool,
    rule_names: dict[str, str],
    out: TextIO,
    verified_run: bool = False,
    quiet: bool = False,
    color: bool | None = None,
) -> _Outcome:
    """Print what `results` say and return what the exit code depends on."""
    from jaxloopfix.report import Report, emit, write_file_errors
    from jaxloopfix.report.diff import unified_diff
    from jaxloopfix.report.summary import plural

    errors = [e for r in results for e in r.errors]
    warnings = [w for r in results for w in r.warnings]
    fixed = sum(r.fixed_count for r in results)

    if diff:
        changed = False
        for result in results:
            if result.fixed is not None and result.original is not None:
                text = unified_diff(result.filename, result.original, result.fixed)
                if text:
                    changed = True
                    sys.stdout.write(text)
        write_file_errors(Report(errors=errors, warnings=warnings), sys.stderr)
        if fixed:
            sys.stderr.write(f"Would fix {plural(fixed, 'error')}.\n")
        return _Outcome(errors=bool(errors), remaining=False, fixed=False, diff=changed)

    diagnostics = [d for r in results for d in r.diagnostics]
    # Remaining diagnostics point into the text as fixed, so frames must show that text.
    sources: dict[str, str] = {}
    for r in results:
        text = r.fixed if r.fixed is not None else r.original
        if r.diagnostics and text is not None:
            sources[r.filename] = text
    skipped = {w.filename for w in warnings if w.skipped}
    if not results and not quiet:
        # ruff's wording: a directory of no Python files is not a passing check.
        sys.stderr.write("warning: No Python files found under the given path(s)\n")
    report = Report(
        diagnostics=diagnostics, errors=errors, warnings=warnings, sources=sources,
        unsafe_fixes=unsafe, fixed=fixed, rule_names=rule_names,
        checked_none=all(r.filename in skipped for r in results),
        notes=[n for r in results for n in r.notes], verified_run=verified_run, quiet=quiet,
    )
    emit(report, output_format, out, sys.stderr, statistics=statistics, color=color, err_color=color)
    return _Outcome(errors=bool(errors), remaining=bool(diagnostics), fixed=bool(fixed), diff=None)


def _check_stdin(
    filename: str,
    settings: Settings,
    *,
    api: ModuleType,
    fix: bool,
    unsafe: bool,
    diff: bool,
    output_format: str,
    statistics: bool,
    rule_names: dict[str, str],
    isolated: bool = False,
) -> _Outcome:
    """Check source from stdin; with --fix the (fixed) source is echoed to stdout, so
    editors can pipe a buffer through us, and everything else goes to stderr."""
    from jaxloopfix.files import FileTooLargeError, SourceError, decode_source

    raw = _binary(sys.stdin).read()
    source = None
    try:
        source = decode_source(raw, filename, max_file_size=settings.max_file_size)
    except FileTooLargeError as exc:
        result = api.FileResult(filename=filename, warnings=[exc.file_error])
    except SourceError as exc:
        result = api.FileResult(filename=filename, errors=[exc.file_error])
    else:
        if filename != "-" and not isolated:
            # An editor pipes one buffer: it gets what the rest of its project traces, as `check FILE` does.
            settings = _project_settings(Path(filename), source.text, settings)
        result = api.check_source(source, settings, fix=fix or diff, unsafe=unsafe, write=False)

    fixing = fix and not diff
    outcome = _finish(
        [result], diff=diff, unsafe=unsafe, output_format=output_format, statistics=statistics,
        rule_names=rule_names, out=sys.stderr if fixing else sys.stdout,
    )
    if fixing:
        data = source.encode(result.fixed) if source is not None and result.fixed is not None else raw
        sys.stdout.flush()
        stdout = _binary(sys.stdout)
        stdout.write(data)
        stdout.flush()
    return outcome


def _binary(stream: TextIO) -> BinaryIO:
    """The byte layer under a text stream: source must pass through without newline or codec changes."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        raise click.UsageError("stdin/stdout is not a byte stream; cannot pass source through unchanged")
    return buffer


def _project_settings(path: Path, text: str, settings: Settings) -> Settings:
    """`settings` plus what the rest of the file's project traces in it, as `check` of the project sees it."""
    from jaxloopfix.api import project_settings
    from jaxloopfix.cache import ResultCache
    from jaxloopfix.project_context import project_root

    root = project_root(path)
    cache = ResultCache(root) if root is not None else None
    seeded = project_settings(path, text, settings, cache=cache)
    if cache is not None:
        cache.save()
    return seeded


def _explain(target: str, settings: Settings, given: list[Path]) -> NoReturn:
    """`check [PATHS] --explain FILE[:LINE]`: print the explanation, with PATHS analysed as
    `check PATHS` analyses them, and exit 0 (2 when FILE cannot be read)."""
    from jaxloopfix.explain import explain, parse_target
    from jaxloopfix.files import SourceError

    path, line, cell = parse_target(target)
    try:
        click.echo(explain(path, line, settings, given or None, cell))
    except (SourceError, OSError) as exc:
        _fail(f"error: {path}: {exc}")
    sys.exit(0)


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(EXIT_ERROR)


# --------------------------------------------------------------------------- rule


@main.command(context_settings={**_CONTEXT, "ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "--path", "paths", multiple=True, type=click.Path(path_type=Path),
    help="Where the code with loops lives (default: the current directory).",
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="pyproject.toml to read settings from.")
def record(command: tuple[str, ...], paths: tuple[Path, ...], config: Path | None) -> None:
    """Run COMMAND (after `--`) and keep what it passes to functions with fixable loops.

    Every Python process COMMAND starts (a test suite, its workers, a training script) records the
    shapes, dtypes and static values those functions receive, never array values, into
    `.jaxloopfix_cache/recorded-v1.json`; `verify` and `check --fix --verify` replay them before
    any inputs they could guess. Exits with COMMAND's exit code.

        jaxloopfix record -- pytest -q tests/
    """
    from jaxloopfix.verify.record_run import record as run_recording

    try:
        settings = _settings(config)
    except ConfigError as exc:
        _fail(f"error: {exc}")
    root = settings.project_root or Path.cwd()
    try:
        outcome = run_recording(command, list(paths) or [Path(".")], settings, root)
    except FileNotFoundError as exc:
        _fail(f"error: {exc}")
    if not outcome.targets:
        sys.stderr.write("jaxloopfix record: no function with a fixable loop found; nothing to record\n")
    for name in outcome.targets:
        calls = outcome.recorded.get(name, 0)
        shown = name.rpartition("::")[2]
        where = Path(name.rpartition("::")[0])
        try:
            where = where.relative_to(root.resolve())
        except ValueError:
            pass
        described = f"{calls} call{'s' if calls != 1 else ''} recorded" if calls else "no call recorded"
        sys.stderr.write(f"jaxloopfix record: {where}::{shown}: {described}\n")
    sys.exit(outcome.returncode)


@main.command(context_settings=_CONTEXT)
@click.argument("targets", nargs=-1, required=True)
@click.option("--example", metavar="MODULE:FUNCTION", help="Input factory returning (args, kwargs) for the function.")
@click.option("--safe-only", is_flag=True, help="Verify only safe fixes (unsafe ones are verified by default).")
@click.option("--unsafe-fixes", is_flag=True, hidden=True, help="Kept for old scripts: unsafe fixes are verified by default.")
@click.option("--grad/--no-grad", default=True, show_default=True, help="Also compare gradients.")
@click.option("--x64", is_flag=True, help="Compare in float64 (jax_enable_x64).")
@click.option("--lengths", default="5,9", show_default=True, help="Sequence lengths to try (synthesized/annotated inputs).")
@click.option("--measure/--no-measure", default=True, show_default=True, help="Time both versions and count program size.")
@click.option(
    "--tune", "--tune-unroll", "tune_unroll", is_flag=True,
    help="Time lax.scan at unroll 1-16 (and a linear recurrence's lax.associative_scan) on these inputs.",
)
@click.option("--timeout", default=300.0, show_default=True, help="Seconds per function before giving up.")
@click.option("--strict", is_flag=True, help="Exit 2 when a function could not be verified (no inputs found).")
@click.option(
    "--output-format", type=click.Choice(["full", "json"], case_sensitive=False), default="full", show_default=True
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="pyproject.toml to read settings from.")
@click.option("--no-project", "isolated", is_flag=True, help="Analyse only the file: ignore what the rest of its project traces.")
@click.option("--isolated", "ignore_config", is_flag=True, help="Ignore all configuration files: run with the defaults.")
def verify(
    targets: tuple[str, ...],
    example: str | None,
    safe_only: bool,
    unsafe_fixes: bool,
    grad: bool,
    x64: bool,
    lengths: str,
    measure: bool,
    tune_unroll: bool,
    timeout: float,
    strict: bool,
    output_format: str,
    config: Path | None,
    isolated: bool = False,
    ignore_config: bool = False,
) -> None:
    """Run original and rewritten functions on JAX and compare them (FILE or FILE::FUNCTION).

    Unsafe fixes are verified too: settling the assumption an unsafe fix names is what
    `verify` is for. `--safe-only` leaves them out.

    Exit codes: 0 every function equivalent, 1 a mismatch, 2 errors (import failures,
    exceptions, timeouts; unverified functions with --strict)."""
    try:
        settings = _settings(config, [t.split('::', 1)[0] for t in targets], ignore=ignore_config)
    except ConfigError as exc:
        _fail(f"error: {exc}")
    try:
        seq_lengths = tuple(int(v) for v in lengths.split(",") if v.strip())
    except ValueError:
        raise click.UsageError("--lengths takes comma-separated integers") from None
    if example is not None and ":" not in example:
        raise click.UsageError("--example takes MODULE:FUNCTION")

    from jaxloopfix.engine import ParseError
    from jaxloopfix.files import SourceError, read_source
    from jaxloopfix.report.verify import write_verify_full, write_verify_json
    from jaxloopfix.verify.gate import by_name, verify_file
    from jaxloopfix.verify.record import VerifyRecord
    from jaxloopfix.verify.runner import VerifyOptions

    options = VerifyOptions(
        lengths=seq_lengths or (5, 9), grad=grad, x64=x64, measure=measure, tune_unroll=tune_unroll, timeout=timeout
    )
    results: list[tuple[str, dict]] = []
    errors = False
    from rich.progress import Progress

    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("verifying", total=None)
        for spec in targets:
            file_part, _, function = spec.partition("::")
            path = Path(file_part)
            try:
                source = read_source(path, max_file_size=settings.max_file_size)
                file_settings = settings if isolated else _project_settings(path, source.text, settings)
                found = verify_file(
                    path, source.text, file_settings, options, unsafe=not safe_only, function=function or None,
                    factory=example, progress=lambda label: progress.update(task, description=f"verifying {label}"),
                )
            except (SourceError, ParseError) as exc:
                message = getattr(exc, "message", None) or str(exc)
                sys.stderr.write(f"{path}: error: {message}\n")
                errors = True
                continue
            record = VerifyRecord(settings.project_root or Path.cwd())
            for name, status in by_name(found).items():
                record.put(path, source.text, name, status)
            record.save()
            if not found:
                what = "no safe fix (`--safe-only`)" if safe_only else "no fixable loop"
                sys.stderr.write(f"{path}: nothing to verify ({what})\n")
            results.extend((f"{path}::{name}", result) for name, result in found)
    if output_format.lower() == "json":
        write_verify_json(results, sys.stdout)
    else:
        write_verify_full(results, sys.stdout)
    statuses = [r.get("status") for _, r in results]
    if "mismatch" in statuses:
        sys.exit(EXIT_DIAGNOSTICS)
    if errors or "error" in statuses or (strict and "unverified" in statuses):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)


@main.command(context_settings=_CONTEXT)
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule with its summary.")
@click.option(
    "--output-format", type=click.Choice(["text", "json"], case_sensitive=False), default="text", show_default=True,
    help="json: one object per rule (code, name, summary, explanation, url of its page), as `ruff rule` writes it.",
)
def rule(code: str | None, show_all: bool, output_format: str = "text") -> None:
    """Show the documentation of the rule CODE (e.g. JLF001)."""
    if show_all == (code is not None):
        raise click.UsageError("give either a rule code or --all")
    from jaxloopfix.rules import ALL_RULES

    from jaxloopfix.rules import rule_documentation, rule_explanation
    from jaxloopfix.rules.pages import page_uri

    rules = sorted(ALL_RULES, key=lambda r: r.code)
    match = None
    if code is not None:
        match = next((r for r in rules if r.code.upper() == code.strip().upper()), None)
        if match is None:
            _fail(f"error: unknown rule code: {code} (see `jaxloopfix rule --all`)")
    if output_format.lower() == "json":
        import json

        def described(r) -> dict[str, str]:  # noqa: ANN001 - a rule class
            return {
                "code": r.code, "name": r.name, "summary": r.summary, "explanation": rule_explanation(r),
                "url": page_uri(r.code),
            }

        click.echo(json.dumps([described(r) for r in rules] if match is None else described(match), indent=2))
        return
    if match is None:
        name_width = max((len(r.name) for r in rules), default=0)
        for r in rules:
            click.echo(f"{r.code}  {r.name:<{name_width}}  {r.summary}")
        return
    click.echo(rule_documentation(match))


@main.command(context_settings=_CONTEXT)
def server() -> None:
    """Run the language server on stdin/stdout (needs the `lsp` extra)."""
    try:
        from jaxloopfix import lsp
    except ImportError as exc:
        _fail(f"error: the language server needs pygls: pip install 'jaxloopfix[lsp]' ({exc})")
    lsp.start()
