"""The jaxloopfix language server (pygls 2), started by `jaxloopfix server` on stdio.

- Diagnostics are published on open, save and (debounced, ~300 ms after the last
  keystroke, always on the latest text) on change. A client that pulls them
  (`textDocument/diagnostic`, LSP 3.17) gets them only so, never pushed as well, and is asked
  to pull again (`workspace/diagnostic/refresh`) after a save changed what other modules trace.
- The first lint of a file follows its project (reads its other modules, seconds on a big
  repository): where the client shows work-done progress, that pass runs under it.
- Notebook documents (LSP 3.17): the code cells are linted as one program, as `check` lints an
  .ipynb file (`lsp_notebooks`), and each cell gets its own findings on its own URI.
- Diagnostics carry the notes `check` prints below a finding (why the function is traced,
  why no fix, what an unsafe fix assumes) as `relatedInformation`, and the same as `data`.
- Code actions: a quick fix per fixable diagnostic, titled with its fix's headline ("Rewrite
  loop with lax.scan", "Mark n static with static_argnames", ...),
  `source.fixAll.jaxloopfix` (every safe fix, as `check --fix` writes it) and
  "Suppress <CODE> on this line" (`# noqa: <CODE>`). Where `check --fix` lays out the lines a
  fix wrote with the project's formatter (`format-fixes`), the editor's fixes are laid out so too.
- Hover on a line with a finding shows its rule's documentation (`jaxloopfix rule CODE`).
- An unsafe fix not yet verified equal also gets "Verify with JAX, then apply": the
  `jaxloopfix.verifyAndApply` command runs `verify` on that function in a child process
  (see `lsp_verify`), reports work-done progress, and applies the fix only when it verified
  equal on the text still in the editor.
- Settings come from the `[tool.jaxloopfix]` table of the document's project,
  looked up once per directory.
- Nothing a handler does may take the server down: every handler is wrapped. Code that does
  not parse gets one `invalid-syntax` error in place of its diagnostics (as `ruff server`
  does); a failure of the engine itself keeps the last good diagnostics of that document.

The engine speaks 1-based rows and code-point columns plus character offsets; LSP
speaks 0-based lines and UTF-16 code units (or whatever encoding was negotiated).
All conversions go through `_LineIndex`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import inspect
import logging
import re
import uuid
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Coroutine

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from jaxloopfix import __version__
from jaxloopfix.config import ConfigError, Settings, find_pyproject, load_settings
from jaxloopfix.diagnostics import Applicability, Diagnostic, Fix
from jaxloopfix.engine import ParseError, apply_fixes, lint_text
from jaxloopfix.lsp_notebooks import CellText, NotebookLint, cells_of, lint_cells, notebook_source
from jaxloopfix.lsp_verify import COMMAND, EQUIVALENT, action_title, record, report, verify_off_loop
from jaxloopfix.rewrite.edits import apply_edits
from jaxloopfix.rewrite.format_fixes import format_changed, format_fixed

__all__ = ["JaxLoopFixServer", "server", "start"]

logger = logging.getLogger(__name__)

SOURCE = "jaxloopfix"
FIX_ALL_KIND = "source.fixAll.jaxloopfix"
SYNTAX_ERROR_CODE = "invalid-syntax"
DEBOUNCE_SECONDS = 0.3
PROJECT_TITLE = "jaxloopfix: reading the project"
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithNotebook(
            notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
        )
    ],
    save=True,
)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# --------------------------------------------------------------------------- positions


class _LineIndex:
    """Character offsets / (row, code-point column) <-> LSP positions for one text."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0]
        # (start, end) of each line's content, without its line break.
        self.spans: list[tuple[int, int]] = []
        for match in _LINE_BREAK.finditer(text):
            self.spans.append((self.starts[-1], match.start()))
            self.starts.append(match.end())
        self.spans.append((self.starts[-1], len(text)))

    def _units(self, chars: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(chars)
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(chars.encode("utf-8", "surrogatepass"))
        return len(chars.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, offset: int) -> types.Position:
        """LSP position of a character offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start, end = self.spans[line]
        # An offset inside a "\r\n" pair is not a valid position: snap to the line end.
        column_text = self.text[start : min(offset, end)]
        return types.Position(line=line, character=self._units(column_text))

    def offset(self, row: int, column: int) -> int:
        """Character offset of a 1-based row and 1-based code-point column."""
        line = max(0, min(row - 1, len(self.spans) - 1))
        start, end = self.spans[line]
        return min(start + max(column - 1, 0), end)

    def position_of(self, row: int, column: int) -> types.Position:
        return self.position(self.offset(row, column))

    def line_end(self, line: int) -> int:
        return self.spans[line][1]

    def end(self) -> types.Position:
        return self.position(len(self.text))

    def offset_of_position(self, position: types.Position) -> int:
        """Character offset of an LSP position (clamped), for matching ranges."""
        line = max(0, min(position.line, len(self.spans) - 1))
        start, end = self.spans[line]
        units = 0
        offset = start
        while offset < end and units < position.character:
            units += self._units(self.text[offset])
            offset += 1
        return offset


# --------------------------------------------------------------------------- state


@dataclass
class _Lint:
    text: str
    version: int | None
    diagnostics: list[Diagnostic]


@dataclass
class _SyntaxError:
    """The last text of a document that did not parse, and where (1-based; None: unknown)."""

    text: str
    version: int | None
    message: str
    row: int | None
    column: int | None


class JaxLoopFixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("jaxloopfix", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.settings_cache: dict[Path, Settings] = {}
        # Per file: its settings with the tracing the rest of its project supplies. Computed on
        # open and after a save (any saved file may change what it traces), not on every edit.
        self.traced_settings: dict[Path, Settings] = {}
        self.last_good: dict[str, _Lint] = {}
        self.syntax_errors: dict[str, _SyntaxError] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.config_errors_shown: set[str] = set()
        # (uri, function) of the `verifyAndApply` runs under way: asked again meanwhile, it is not run twice.
        self.verifying: set[tuple[str, str]] = set()
        # Per notebook URI: the notebook source last linted and its cells' findings.
        self.notebook_lints: dict[str, tuple[str, NotebookLint]] = {}
        # Per file: its project pass under way with progress, for any other handler to wait on.
        self.reading: dict[Path, asyncio.Future[None]] = {}
        self.background: set[asyncio.Task[None]] = set()

    # -- what the client takes

    def pulls(self) -> bool:
        """The client asks for diagnostics (LSP 3.17): pushed as well, it would show each twice."""
        text_document = self.client_capabilities.text_document
        return text_document is not None and text_document.diagnostic is not None

    def refreshes(self) -> bool:
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    def shows_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    # -- settings

    def settings_for(self, path: Path | None) -> Settings:
        if path is None:
            return Settings()
        directory = path.parent
        cached = self.settings_cache.get(directory)
        if cached is not None:
            return cached
        try:
            settings = load_settings(find_pyproject(directory))
        except ConfigError as exc:
            message = f"jaxloopfix: {exc}; using the default settings"
            if message not in self.config_errors_shown:
                self.config_errors_shown.add(message)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
            settings = Settings()
        self.settings_cache[directory] = settings
        return settings

    def lint_settings(self, path: Path | None, text: str) -> Settings:
        """`settings_for(path)` plus the seeds other modules of its project supply (see `project_context`)."""
        settings = self.settings_for(path)
        if path is None:
            return settings
        cached = self.traced_settings.get(path)
        if cached is None:
            from jaxloopfix.api import project_settings
            from jaxloopfix.cache import ResultCache
            from jaxloopfix.project_context import project_root

            root = project_root(path)
            try:
                cache = ResultCache(root) if root is not None else None
                cached = project_settings(path, text, settings, cache=cache)
                if cache is not None:
                    cache.save()
            except Exception:  # noqa: BLE001 - the project's other files must not stop this one's lint
                logger.exception("following the project of %s failed", path)
                cached = settings
            # Following the project linted its other modules here (those the results cache had no
            # answer for), and their trees are cycles now: collected at once, not by the full
            # collections the document's next lints would start, each as long as a lint.
            gc.collect()
            self.traced_settings[path] = cached
        return cached

    def forget_project(self) -> None:
        """After a save: recompute what other modules trace, and re-lint every open document
        (a pulling client is asked to pull again instead)."""
        self.traced_settings.clear()
        self.last_good.clear()
        self.notebook_lints.clear()
        if self.pulls():
            if self.refreshes():
                self.workspace_diagnostic_refresh(None)
            return
        for open_uri in list(self.workspace.text_documents):
            in_notebook = self.workspace.get_notebook_document(cell_uri=open_uri) is not None
            if open_uri.endswith((".py", ".pyi")) and not in_notebook:
                self.after_project_read(open_uri, functools.partial(self.publish, open_uri))
        for notebook_uri in list(self.workspace.notebook_documents):
            self.after_project_read(notebook_uri, functools.partial(self.push, notebook_uri))

    # -- the project pass, under work-done progress

    def project_source(self, uri: str) -> tuple[Path | None, str]:
        """The file whose project pass `uri` needs, and its text: a cell's is its notebook's."""
        notebook = self.notebook_of(uri)
        if notebook is not None:
            return _file_path(notebook.uri), notebook_source(self.cells(notebook))
        text, _, path, _ = self.document(uri)
        return path, text

    def needs_progress(self, uri: str) -> bool:
        """The client shows progress and `uri`'s project pass is still to run."""
        if not self.shows_progress():
            return False
        path, _ = self.project_source(uri)
        return path is not None and path not in self.traced_settings

    async def read_project(self, uri: str) -> None:
        """Run `uri`'s project pass now, under progress, where `needs_progress`; one pass per
        file however many handlers wait for it."""
        if not self.needs_progress(uri):
            return
        path, text = self.project_source(uri)
        assert path is not None
        reading = self.reading.get(path)
        if reading is None:
            reading = asyncio.ensure_future(self._read_with_progress(path, text))
            self.reading[path] = reading
            reading.add_done_callback(lambda _: self.reading.pop(path, None))
        await asyncio.shield(reading)

    async def _read_with_progress(self, path: Path, text: str) -> None:
        # `begin` is written to the client before the pass blocks the event loop, `end` after it.
        async with _progress(self, PROJECT_TITLE):
            self.lint_settings(path, text)

    def after_project_read(self, uri: str, then: Callable[[], object]) -> None:
        """Run `then` at once, or (where `needs_progress`) once the project pass ran under progress."""
        if not self.needs_progress(uri):
            then()
            return

        async def read_then() -> None:
            await self.read_project(uri)
            then()

        self.spawn(read_then())

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task held until it ends, its failure logged (never raised)."""

        async def guarded() -> None:
            try:
                await work
            except Exception:  # noqa: BLE001
                logger.exception("jaxloopfix: background work failed")

        task = asyncio.get_running_loop().create_task(guarded())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    # -- notebooks

    def notebook_of(self, uri: str) -> types.NotebookDocument | None:
        """The open notebook `uri` names, or holds as a cell."""
        workspace = self.workspace
        return workspace.get_notebook_document(notebook_uri=uri) or workspace.get_notebook_document(cell_uri=uri)

    def cells(self, notebook: types.NotebookDocument) -> list[CellText]:
        def document(uri: str) -> tuple[str, int | None, str | None]:
            doc = self.workspace.get_text_document(uri)
            return doc.source, doc.version, doc.language_id

        return cells_of(notebook, document)

    def lint_notebook(self, notebook: types.NotebookDocument) -> NotebookLint:
        """The findings of every cell of `notebook`, linted as one program (memoised on its source)."""
        cells = self.cells(notebook)
        source = notebook_source(cells)
        cached = self.notebook_lints.get(notebook.uri)
        if cached is not None and cached[0] == source:
            return cached[1]
        path = _file_path(notebook.uri)
        settings = self.lint_settings(path, source)
        if path is not None and settings.project_root is not None and settings.is_excluded(path):
            linted = NotebookLint({cell.uri: [] for cell in cells if cell.code})
        else:
            linted = lint_cells(cells, source, str(path) if path else "untitled.ipynb", settings)
        self.notebook_lints[notebook.uri] = (source, linted)
        return linted

    def lint_cell(self, uri: str, notebook: types.NotebookDocument) -> tuple[str, list[Diagnostic]] | None:
        """`lint` of a cell: its part of the notebook's lint, at the cell's rows. Its fixes carry no
        edits (those address the joined program), so the editor offers none."""
        text, version, _, _ = self.document(uri)
        self.syntax_errors.pop(uri, None)
        try:
            linted = self.lint_notebook(notebook)
        except Exception:  # noqa: BLE001 - a rule bug must not end the session
            logger.exception("jaxloopfix failed on notebook %s", notebook.uri)
            return None
        error = linted.syntax_errors.get(uri)
        if error is not None:
            self.syntax_errors[uri] = _SyntaxError(text, version, error.message, error.row, error.column)
            return None
        diagnostics = linted.findings.get(uri, [])
        self.last_good[uri] = _Lint(text, version, diagnostics)
        return text, diagnostics

    # -- documents

    def encoding(self) -> str:
        encoding = self.server_capabilities.position_encoding
        return str(encoding) if encoding else types.PositionEncodingKind.Utf16

    def document(self, uri: str) -> tuple[str, int | None, Path | None, str]:
        """(text, version, path or None, filename for the engine) of an open document."""
        doc = self.workspace.get_text_document(uri)
        path = Path(doc.path) if uri.startswith("file:") and doc.path else None
        return doc.source, doc.version, path, str(path) if path else (doc.filename or "untitled.py")

    def lint(self, uri: str) -> tuple[str, list[Diagnostic]] | None:
        """Lint the current text of `uri`; None when it does not parse (then `syntax_errors[uri]`
        says where) or the engine failed."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            return self.lint_cell(uri, notebook)
        text, version, path, filename = self.document(uri)
        self.syntax_errors.pop(uri, None)
        cached = self.last_good.get(uri)
        if cached is not None and cached.text == text:
            # The same text again (an edit undone): publish it under the current version.
            self.last_good[uri] = _Lint(text, version, cached.diagnostics)
            return text, cached.diagnostics
        settings = self.lint_settings(path, text)
        if path is not None and settings.project_root is not None and settings.is_excluded(path):
            diagnostics: list[Diagnostic] = []
        else:
            try:
                diagnostics = lint_text(text, filename, settings)
            except ParseError as exc:
                self.syntax_errors[uri] = _SyntaxError(text, version, exc.message, exc.row, exc.column)
                return None
            except SyntaxError as exc:
                self.syntax_errors[uri] = _SyntaxError(text, version, f"SyntaxError: {exc.msg}", exc.lineno, exc.offset)
                return None
            except RecursionError:
                self.syntax_errors[uri] = _SyntaxError(text, version, "the code is nested too deeply to analyse", None, None)
                return None
            except Exception:  # noqa: BLE001 - a rule bug must not end the session
                logger.exception("jaxloopfix failed on %s", uri)
                return None
        self.last_good[uri] = _Lint(text, version, diagnostics)
        return text, diagnostics

    def current(self, uri: str) -> tuple[list[types.Diagnostic], int | None] | None:
        """The LSP diagnostics of the current text of `uri` and its version: its findings, or the
        one `invalid-syntax` error of a text that does not parse. None: the engine failed."""
        result = self.lint(uri)
        if result is None:
            error = self.syntax_errors.get(uri)
            if error is None:
                return None
            return [_syntax_diagnostic(error, _LineIndex(error.text, self.encoding()))], error.version
        text, diagnostics = result
        index = _LineIndex(text, self.encoding())
        return [_to_lsp_diagnostic(d, index, uri) for d in diagnostics], self.last_good[uri].version

    def kept(self, uri: str) -> list[types.Diagnostic]:
        """The last good diagnostics of `uri`, for a pull answered while the engine fails on it."""
        last = self.last_good.get(uri)
        if last is None:
            return []
        index = _LineIndex(last.text, self.encoding())
        return [_to_lsp_diagnostic(d, index, uri) for d in last.diagnostics]

    def publish(self, uri: str) -> bool:
        """Publish `current(uri)`. False: nothing was published (the engine failed; the client
        keeps what it shows)."""
        current = self.current(uri)
        if current is None:
            return False
        diagnostics, version = current
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )
        return True

    def push(self, uri: str, clear_on_failure: bool = False) -> None:
        """Publish the diagnostics of `uri` (of a notebook: of each of its cells), unless the
        client pulls them; with `clear_on_failure`, an empty list where the engine failed."""
        if self.pulls():
            return
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        for target in [cell.document for cell in notebook.cells] if notebook is not None else [uri]:
            if not self.publish(target) and clear_on_failure:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=target, diagnostics=[]))

    def clear(self, uri: str) -> None:
        """`uri` closed: forget it, and clear what a pushed-to client shows for it."""
        self.cancel_pending(uri)
        self.last_good.pop(uri, None)
        self.syntax_errors.pop(uri, None)
        if not self.pulls():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def cancel_pending(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    def schedule(self, uri: str) -> None:
        """Publish for `uri` once edits pause for DEBOUNCE_SECONDS (a newer edit restarts the wait)."""
        self.cancel_pending(uri)

        async def later() -> None:
            try:
                await asyncio.sleep(DEBOUNCE_SECONDS)
                # The text is read from the workspace now, so it is the latest one.
                self.push(uri)
            except asyncio.CancelledError:
                pass
            except Exception:  # noqa: BLE001
                logger.exception("debounced lint of %s failed", uri)
            finally:
                if self.pending.get(uri) is task:
                    del self.pending[uri]

        task = asyncio.get_running_loop().create_task(later())
        self.pending[uri] = task


def _to_lsp_diagnostic(diagnostic: Diagnostic, index: _LineIndex, uri: str) -> types.Diagnostic:
    start = index.position_of(diagnostic.location.row, diagnostic.location.column)
    end = index.position_of(diagnostic.end_location.row, diagnostic.end_location.column)
    here = types.Range(start=start, end=end)
    notes = _notes(diagnostic)
    return types.Diagnostic(
        range=here,
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        source=SOURCE,
        code_description=_code_description(diagnostic.code),
        related_information=[
            types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=here), message=note)
            for note in notes
        ]
        or None,
        data=_data(diagnostic),
    )


def _title(fix: Fix) -> str:
    # A fix built without its parts (`title` left empty) has its title first in its message.
    return fix.title or fix.message.split(" (unsafe: ", 1)[0]


def _notes(diagnostic: Diagnostic) -> list[str]:
    """What `check` prints below a finding, one line each: the fix (and what an unsafe one
    assumes), or why there is none, and why the function is traced."""
    notes = []
    fix = diagnostic.fix
    if fix is not None:
        title = _title(fix)
        if fix.applicability is Applicability.UNSAFE:
            settles = ", `jaxloopfix verify` settles this" if fix.verifiable else ""
            notes.append(f"unsafe fix: {title}{settles}")
            notes.extend(f"the fix assumes: {assumption}" for assumption in fix.assumptions)
        else:
            notes.append(f"fix: {title}")
    elif diagnostic.no_fix_reason:
        notes.append(f"no fix available: {diagnostic.no_fix_reason}")
    if diagnostic.traced_reason:
        notes.append(diagnostic.traced_reason)
    return notes


def _data(diagnostic: Diagnostic) -> dict[str, Any]:
    """The same notes as fields, for clients that read `data` rather than `relatedInformation`."""
    data: dict[str, Any] = {}
    if diagnostic.traced_reason:
        data["traced_reason"] = diagnostic.traced_reason
    if diagnostic.no_fix_reason:
        data["no_fix_reason"] = diagnostic.no_fix_reason
    fix = diagnostic.fix
    if fix is not None:
        data["fix"] = {
            "title": _title(fix),
            "applicability": fix.applicability.value,
            "assumptions": list(fix.assumptions),
            "verifiable": fix.verifiable,
        }
    return data


def _syntax_diagnostic(error: _SyntaxError, index: _LineIndex) -> types.Diagnostic:
    """One error at the parser's position (the start of the file where it gave none)."""
    if error.row is None:
        start = end = 0
    else:
        start = index.offset(error.row, error.column or 1)
        line = max(0, min(error.row - 1, len(index.spans) - 1))
        end = min(start + 1, index.line_end(line))  # the character it stopped at, if any
    return types.Diagnostic(
        range=types.Range(start=index.position(start), end=index.position(end)),
        message=error.message,
        severity=types.DiagnosticSeverity.Error,
        code=SYNTAX_ERROR_CODE,
        source=SOURCE,
    )


def _headline(fix: Fix) -> str:
    """The fix's title up to its first note ("; ..." outside backquotes), as plain text: an
    action menu shows no Markdown."""
    title = _title(fix)
    quoted = False
    for i, char in enumerate(title):
        if char == "`":
            quoted = not quoted
        elif not quoted and title.startswith("; ", i):
            title = title[:i]
            break
    return title.replace("`", "")


def quickfix_title(fix: Fix, verified_equal: bool = False) -> str:
    """The quick fix's title: its headline, and whether it is unsafe (or verified equal)."""
    title = _headline(fix)
    if fix.applicability is Applicability.UNSAFE:
        title += " (unsafe, verified equal)" if verified_equal else " (unsafe)"
    return title


def _code_description(code: str) -> types.CodeDescription | None:
    """A link from the diagnostic's code to its rule's page, installed with the package."""
    from jaxloopfix.rules.pages import page_uri

    uri = page_uri(code)
    return None if uri is None else types.CodeDescription(href=uri)


def rule_documentation(code: str) -> str | None:
    """What `jaxloopfix rule CODE` prints (Markdown), or None for a code that is no rule."""
    from jaxloopfix.rules import RULES_BY_CODE, rule_documentation as documentation

    rule = RULES_BY_CODE.get(code)
    return None if rule is None else documentation(rule)


# --------------------------------------------------------------------------- handlers


def _safe(default: Any = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """No exception escapes a handler: it is logged and `default` is answered."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except Exception:  # noqa: BLE001
                    logger.exception("jaxloopfix: %s failed", fn.__name__)
                    return default

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:  # noqa: BLE001
                logger.exception("jaxloopfix: %s failed", fn.__name__)
                return default

        return wrapper

    return decorate


server = JaxLoopFixServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@_safe()
def did_open(ls: JaxLoopFixServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.last_good.pop(uri, None)
    # Where the engine fails on it there is nothing good to keep: show nothing.
    ls.after_project_read(uri, functools.partial(ls.push, uri, clear_on_failure=True))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@_safe()
def did_change(ls: JaxLoopFixServer, params: types.DidChangeTextDocumentParams) -> None:
    if not ls.pulls():
        ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@_safe()
def did_save(ls: JaxLoopFixServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("/pyproject.toml"):
        # The configuration may have changed: forget it and re-lint every open document.
        ls.settings_cache.clear()
    ls.cancel_pending(uri)
    # A saved file may now trace (or stop tracing) functions of other open documents.
    ls.forget_project()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@_safe()
def did_close(ls: JaxLoopFixServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
)
@_safe(default=types.RelatedFullDocumentDiagnosticReport(items=[]))
async def document_diagnostic(
    ls: JaxLoopFixServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    """Pull (LSP 3.17): what a push would publish; where the engine fails, the last good ones."""
    uri = params.text_document.uri
    await ls.read_project(uri)
    current = ls.current(uri)
    return types.RelatedFullDocumentDiagnosticReport(items=current[0] if current is not None else ls.kept(uri))


# --------------------------------------------------------------------------- notebooks


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
@_safe()
def did_open_notebook(ls: JaxLoopFixServer, params: types.DidOpenNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    ls.notebook_lints.pop(uri, None)
    ls.after_project_read(uri, functools.partial(ls.push, uri, clear_on_failure=True))


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
@_safe()
def did_change_notebook(ls: JaxLoopFixServer, params: types.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells is not None else None
    for removed in (structure.did_close or []) if structure is not None else []:
        ls.clear(removed.uri)
    if not ls.pulls():
        ls.schedule(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
@_safe()
def did_save_notebook(ls: JaxLoopFixServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.cancel_pending(params.notebook_document.uri)
    # The saved notebook may now trace (or stop tracing) functions of open modules.
    ls.forget_project()


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
@_safe()
def did_close_notebook(ls: JaxLoopFixServer, params: types.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    ls.cancel_pending(uri)
    ls.notebook_lints.pop(uri, None)
    for cell in params.cell_text_documents:
        ls.clear(cell.uri)


def _verified_functions(ls: JaxLoopFixServer, uri: str, text: str) -> set[str]:
    """Functions that `jaxloopfix verify` found equivalent for exactly this text (read from
    `.jaxloopfix_cache/`; the server never runs user code)."""
    from jaxloopfix.verify.record import VerifyRecord

    _, _, path, _ = ls.document(uri)
    if path is None:
        return set()
    settings = ls.settings_for(path)
    record = VerifyRecord(settings.project_root or path.parent)
    return {f for f, status in record.functions(path, text).items() if status == "equivalent"}


def _can_verify(ls: JaxLoopFixServer, uri: str, function: str | None) -> bool:
    """Verify needs a saved `.py` module to import and a client that applies the edit it sends."""
    workspace = ls.client_capabilities.workspace
    return (
        bool(function)
        and uri.startswith("file:")
        and uri.endswith(".py")
        and workspace is not None
        and bool(workspace.apply_edit)
    )


def _verify_action(
    ls: JaxLoopFixServer, uri: str, function: str, lsp_diagnostic: types.Diagnostic
) -> types.CodeAction:
    """Runs verify first (a command, not an edit): the fix lands only if it verified equal."""
    _, version, _, _ = ls.document(uri)
    return types.CodeAction(
        title=action_title(function),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic],
        is_preferred=False,
        command=types.Command(title=action_title(function), command=COMMAND, arguments=[uri, version, function]),
    )


def _file_path(uri: str) -> Path | None:
    """The file a `file:` URI names (a notebook's, for its settings and project); else None."""
    from pygls.uris import to_fs_path

    fs_path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(fs_path) if fs_path else None


def _wanted(only: list[str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
        resolve_provider=False,
    ),
)
@_safe(default=None)
def code_action(ls: JaxLoopFixServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    result = ls.lint(uri)
    if result is None:
        return None
    text, diagnostics = result
    index = _LineIndex(text, ls.encoding())
    only = [str(k) for k in params.context.only] if params.context.only else None
    start = index.offset_of_position(params.range.start)
    end = index.offset_of_position(params.range.end)
    in_range = [d for d in diagnostics if _touches(d, index, start, end)]
    actions: list[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix):
        actions.extend(_quick_fixes(ls, uri, text, index, in_range))
        actions.extend(_suppress_actions(uri, index, in_range))
    if _wanted(only, FIX_ALL_KIND) and ls.notebook_of(uri) is None:
        actions.extend(_fix_all_actions(ls, uri, text, index, diagnostics))
    return actions


def _touches(diagnostic: Diagnostic, index: _LineIndex, start: int, end: int) -> bool:
    d_start = index.offset(diagnostic.location.row, diagnostic.location.column)
    d_end = index.offset(diagnostic.end_location.row, diagnostic.end_location.column)
    return d_start <= end and start <= d_end


def _quick_fixes(
    ls: JaxLoopFixServer, uri: str, text: str, index: _LineIndex, in_range: list[Diagnostic]
) -> list[types.CodeAction]:
    """The fix of each finding (a notebook cell's carry no edits: none), and "Verify with JAX,
    then apply" beside an unsafe one not yet verified equal."""
    actions: list[types.CodeAction] = []
    verified = _verified_functions(ls, uri, text)
    for diagnostic in in_range:
        fix = diagnostic.fix
        if fix is None or not fix.edits:
            continue
        lsp_diagnostic = _to_lsp_diagnostic(diagnostic, index, uri)
        function = diagnostic.extra.get("function")
        equal = function in verified
        actions.append(
            types.CodeAction(
                title=quickfix_title(fix, equal),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp_diagnostic],
                is_preferred=fix.applicability is Applicability.SAFE or equal,
                edit=types.WorkspaceEdit(changes={uri: _fix_edits(ls, uri, text, index, fix)}),
            )
        )
        if fix.applicability is Applicability.UNSAFE and not equal and _can_verify(ls, uri, function):
            actions.append(_verify_action(ls, uri, str(function), lsp_diagnostic))
    return actions


def _suppress_actions(uri: str, index: _LineIndex, in_range: list[Diagnostic]) -> list[types.CodeAction]:
    actions = []
    for diagnostic in in_range:
        edit = _suppress_edit(diagnostic, index)
        if edit is not None:
            actions.append(
                types.CodeAction(
                    title=f"Suppress {diagnostic.code} on this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[_to_lsp_diagnostic(diagnostic, index, uri)],
                    edit=types.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
    return actions


def _fix_all_actions(
    ls: JaxLoopFixServer, uri: str, text: str, index: _LineIndex, diagnostics: list[Diagnostic]
) -> list[types.CodeAction]:
    if not any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in diagnostics):
        return []
    fix_all = _fix_all_edit(ls, uri, text, index)
    if fix_all is None:
        return []
    return [
        types.CodeAction(
            title="Fix all jaxloopfix findings (safe fixes)",
            kind=FIX_ALL_KIND,
            edit=types.WorkspaceEdit(changes={uri: [fix_all]}),
        )
    ]


def _fix_edits(ls: JaxLoopFixServer, uri: str, text: str, index: _LineIndex, fix: Fix) -> list[types.TextEdit]:
    """The fix's own edits; where the project lays out fixes with its formatter, one edit of the
    lines that changed, as `check --fix` writes them."""
    edits = sorted(fix.edits, key=lambda e: (e.start, e.end))
    fixed = apply_edits(text, edits)
    laid_out = _laid_out(ls, uri, text, fixed)
    if laid_out != fixed:
        return [_whole_lines_edit(text, laid_out, index)]
    return [
        types.TextEdit(range=types.Range(start=index.position(e.start), end=index.position(e.end)), new_text=e.content)
        for e in edits
    ]


def _laid_out(ls: JaxLoopFixServer, uri: str, old: str, new: str) -> str:
    """`new` with the lines a fix wrote laid out by the project's formatter, as `check --fix`
    does (`format_fixes.format_fixed`); `new` itself where none is configured or installed."""
    _, _, path, _ = ls.document(uri)
    if path is None:
        return new
    return format_fixed(old, new, path, ls.settings_for(path), run=_format_changed)


# A code action request comes with every cursor move: the same fix is laid out once.
_format_changed = functools.lru_cache(maxsize=32)(format_changed)


@server.feature(types.TEXT_DOCUMENT_HOVER)
@_safe(default=None)
def hover(ls: JaxLoopFixServer, params: types.HoverParams) -> types.Hover | None:
    """On a line with findings: the documentation of their rules, as `jaxloopfix rule` prints it."""
    result = ls.lint(params.text_document.uri)
    if result is None:
        return None
    _, diagnostics = result
    line = params.position.line + 1
    here = [d for d in diagnostics if d.location.row <= line <= d.end_location.row]
    documents = [doc for doc in (rule_documentation(code) for code in dict.fromkeys(d.code for d in here)) if doc]
    if not documents:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(documents))
    )


def _fix_all_edit(ls: JaxLoopFixServer, uri: str, text: str, index: _LineIndex) -> types.TextEdit | None:
    _, _, path, filename = ls.document(uri)
    try:
        new_text, _, count = apply_fixes(text, filename, ls.lint_settings(path, text))
    except Exception:  # noqa: BLE001 - half-typed code or an engine bug: no action
        return None
    if not count or new_text == text:
        return None
    new_text = _laid_out(ls, uri, text, new_text)
    return types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=index.end()), new_text=new_text)


def _suppress_edit(diagnostic: Diagnostic, index: _LineIndex) -> types.TextEdit | None:
    from jaxloopfix.noqa import noqa_insertion

    line = diagnostic.location.row - 1
    if not 0 <= line < len(index.spans):
        return None
    line_start, line_end = index.spans[line]
    insertion = noqa_insertion(index.text[line_start:line_end], diagnostic.code)
    if insertion is None:
        return None  # the line's noqa comment suppresses it already
    at, new_text = insertion
    position = index.position(line_start + at)
    return types.TextEdit(range=types.Range(start=position, end=position), new_text=new_text)


# --------------------------------------------------------------------------- verify, then apply


def _message(ls: JaxLoopFixServer, kind: types.MessageType, message: str) -> None:
    ls.window_show_message(types.ShowMessageParams(type=kind, message=message))


@contextlib.asynccontextmanager
async def _progress(ls: JaxLoopFixServer, title: str) -> AsyncIterator[None]:
    """Work-done progress (begin ... end) around a long run, where the client shows it. `begin`
    is written before the body runs, so the body may block the event loop (the project pass)."""
    token: str | None = None
    if ls.shows_progress():
        token = f"jaxloopfix-{uuid.uuid4().hex}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        except Exception:  # noqa: BLE001 - no progress bar is no reason not to do the work
            logger.exception("work-done progress could not start")
            token = None
    try:
        yield
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd())
            ls.work_done_progress.tokens.pop(token, None)


def _whole_lines_edit(old: str, new: str, index: _LineIndex) -> types.TextEdit:
    """One edit turning `old` into `new`: the changed lines only, so the editor keeps the rest
    (cursor, folds) as it was."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    start = old.rfind("\n", 0, start) + 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    end = len(old) - tail
    if end > 0 and old[end - 1] != "\n":  # the common tail starts mid-line: keep that line in the edit
        newline = old.find("\n", end)
        end = len(old) if newline < 0 else newline + 1
    tail = len(old) - end
    return types.TextEdit(
        range=types.Range(start=index.position(start), end=index.position(end)), new_text=new[start : len(new) - tail]
    )


def _function_fix(ls: JaxLoopFixServer, uri: str, text: str, function: str) -> types.TextEdit | None:
    """The fix of `function`'s loops, made from this text as verify made the rewrite it ran
    (`verify.targets`: every unsafe fix of that function, fixed until none applies)."""
    _, _, path, filename = ls.document(uri)
    settings = ls.lint_settings(path, text)
    new_text, _, count = apply_fixes(
        text, filename, settings, unsafe=True, accept=lambda d: d.extra.get("function") == function
    )
    if not count or new_text == text:
        return None
    return _whole_lines_edit(text, _laid_out(ls, uri, text, new_text), _LineIndex(text, ls.encoding()))


def _workspace_edit(ls: JaxLoopFixServer, uri: str, version: int | None, edit: types.TextEdit) -> types.WorkspaceEdit:
    """Versioned where the client takes it, so a client whose text moved on refuses the edit."""
    workspace = ls.client_capabilities.workspace
    versioned = workspace is not None and workspace.workspace_edit is not None and workspace.workspace_edit.document_changes
    if versioned and version is not None:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=[edit])])
    return types.WorkspaceEdit(changes={uri: [edit]})


def _unchanged(ls: JaxLoopFixServer, uri: str, text: str, version: int | None) -> bool:
    if uri not in ls.workspace.text_documents:
        return False
    now_text, now_version, _, _ = ls.document(uri)
    return now_text == text and now_version == version


async def _apply(ls: JaxLoopFixServer, uri: str, text: str, version: int | None, function: str) -> None:
    """Send the fix of `function` that verified equal on `text`; say what happened."""
    edit = _function_fix(ls, uri, text, function)
    if edit is None:
        _message(ls, types.MessageType.Warning, f"jaxloopfix: `{function}` verified equal, but it has no fix to apply")
        return
    label = f"jaxloopfix: apply the fix of `{function}` (verified equal)"
    result = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=_workspace_edit(ls, uri, version, edit), label=label)
    )
    if result.applied:
        _message(ls, types.MessageType.Info, f"jaxloopfix: `{function}` verified equal on JAX: applied")
    else:
        reason = f": {result.failure_reason}" if result.failure_reason else ""
        _message(ls, types.MessageType.Warning, f"jaxloopfix: `{function}` verified equal, but the editor did not apply the fix{reason}")


@server.command(COMMAND)
@_safe()
async def verify_and_apply(ls: JaxLoopFixServer, uri: str, version: int | None, function: str) -> None:
    """Verify `function` of `uri` at `version` with JAX off the event loop; apply its unsafe fix
    only when it verified equal and the document is still that text."""
    text, current, path, _ = ls.document(uri)
    if path is None or uri not in ls.workspace.text_documents:
        _message(ls, types.MessageType.Warning, "jaxloopfix: verify needs an open file on disk")
        return
    if current != version:
        _message(ls, types.MessageType.Warning, f"jaxloopfix: {path.name} changed since the action was offered; ask again")
        return
    key = (uri, function)
    if key in ls.verifying:
        _message(ls, types.MessageType.Info, f"jaxloopfix: `{function}` is being verified already")
        return
    ls.verifying.add(key)
    try:
        async with _progress(ls, f"jaxloopfix: verifying {function}"):
            verdict = await verify_off_loop(path, text, ls.lint_settings(path, text), function)
    finally:
        ls.verifying.discard(key)
    record(ls.settings_for(path).project_root or path.parent, path, text, verdict)
    if verdict.status != EQUIVALENT:
        _message(ls, types.MessageType.Warning, report(verdict, function, path))
    elif not _unchanged(ls, uri, text, version):
        _message(
            ls,
            types.MessageType.Warning,
            f"jaxloopfix: `{function}` verified equal, but {path.name} changed during verification: not applied; ask again",
        )
    else:
        await _apply(ls, uri, text, version, function)


def start() -> None:
    """Serve on stdin/stdout until the client exits."""
    logging.basicConfig(level=logging.WARNING, format="jaxloopfix-lsp %(levelname)s: %(message)s")
    from jaxloopfix.analysis.source import keep_recent
    from jaxloopfix.runtime import tune_gc

    tune_gc()
    keep_recent(0)
    server.start_io()
