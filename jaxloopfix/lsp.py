"""The jaxloopfix language server (pygls 2), started by `jaxloopfix server` on stdio.

- Diagnostics are published on open, save and (debounced, ~300 ms after the last
  keystroke, always on the latest text) on change.
- Diagnostics carry the notes `check` prints below a finding (why the function is traced,
  why no fix, what an unsafe fix assumes) as `relatedInformation`, and the same as `data`.
- Code actions: a quick fix per fixable diagnostic, titled with its fix's headline ("Rewrite
  loop with lax.scan", "Mark n static with static_argnames", ...),
  `source.fixAll.jaxloopfix` (every safe fix, as `check --fix` writes it) and
  "Suppress <CODE> on this line" (`# noqa: <CODE>`).
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
from typing import Any, AsyncIterator, Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from jaxloopfix import __version__
from jaxloopfix.config import ConfigError, Settings, find_pyproject, load_settings
from jaxloopfix.diagnostics import Applicability, Diagnostic, Fix
from jaxloopfix.engine import ParseError, apply_fixes, lint_text
from jaxloopfix.lsp_verify import COMMAND, EQUIVALENT, action_title, record, report, verify_off_loop

__all__ = ["JaxLoopFixServer", "server", "start"]

logger = logging.getLogger(__name__)

SOURCE = "jaxloopfix"
FIX_ALL_KIND = "source.fixAll.jaxloopfix"
SYNTAX_ERROR_CODE = "invalid-syntax"
DEBOUNCE_SECONDS = 0.3

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
        super().__init__("jaxloopfix", __version__)
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
        """After a save: recompute what other modules trace, and re-lint every open document."""
        self.traced_settings.clear()
        self.last_good.clear()
        for open_uri in list(self.workspace.text_documents):
            if open_uri.endswith(".py") or open_uri.endswith(".pyi"):
                self.publish(open_uri)

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

    def publish(self, uri: str) -> bool:
        """Publish the diagnostics of the current text of `uri`: its findings, or the one
        `invalid-syntax` error of a text that does not parse. False: nothing was published
        (the engine failed; the client keeps what it shows)."""
        result = self.lint(uri)
        if result is None:
            error = self.syntax_errors.get(uri)
            if error is None:
                return False
            index = _LineIndex(error.text, self.encoding())
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, diagnostics=[_syntax_diagnostic(error, index)], version=error.version
                )
            )
            return True
        text, diagnostics = result
        index = _LineIndex(text, self.encoding())
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=[_to_lsp_diagnostic(d, index, uri) for d in diagnostics],
                version=self.last_good[uri].version,
            )
        )
        return True

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
                self.publish(uri)
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
        # No codeDescription: the project names no URL for its documentation (pyproject.toml
        # has no [project.urls]); hover shows the rule's documentation instead.
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
    if not ls.publish(uri):
        # The engine failed on it: nothing good to keep, so show nothing.
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@_safe()
def did_change(ls: JaxLoopFixServer, params: types.DidChangeTextDocumentParams) -> None:
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
    uri = params.text_document.uri
    ls.cancel_pending(uri)
    ls.last_good.pop(uri, None)
    ls.syntax_errors.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


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
    actions: list[types.CodeAction] = []
    verified = _verified_functions(ls, uri, text)

    in_range = []
    for diagnostic in diagnostics:
        d_start = index.offset(diagnostic.location.row, diagnostic.location.column)
        d_end = index.offset(diagnostic.end_location.row, diagnostic.end_location.column)
        if d_start <= end and start <= d_end:
            in_range.append(diagnostic)

    if _wanted(only, types.CodeActionKind.QuickFix):
        for diagnostic in in_range:
            lsp_diagnostic = _to_lsp_diagnostic(diagnostic, index, uri)
            if diagnostic.fix is not None:
                equal = diagnostic.extra.get("function") in verified
                title = quickfix_title(diagnostic.fix, equal)
                edits = [
                    types.TextEdit(
                        range=types.Range(start=index.position(e.start), end=index.position(e.end)),
                        new_text=e.content,
                    )
                    for e in sorted(diagnostic.fix.edits, key=lambda e: (e.start, e.end))
                ]
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diagnostic],
                        is_preferred=diagnostic.fix.applicability is Applicability.SAFE or equal,
                        edit=types.WorkspaceEdit(changes={uri: edits}),
                    )
                )
                function = diagnostic.extra.get("function")
                if diagnostic.fix.applicability is Applicability.UNSAFE and not equal and _can_verify(ls, uri, function):
                    actions.append(_verify_action(ls, uri, str(function), lsp_diagnostic))
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

    if _wanted(only, FIX_ALL_KIND) and any(
        d.fix is not None and d.fix.applicability is Applicability.SAFE for d in diagnostics
    ):
        fix_all = _fix_all_edit(ls, uri, text, index)
        if fix_all is not None:
            actions.append(
                types.CodeAction(
                    title="Fix all jaxloopfix findings (safe fixes)",
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [fix_all]}),
                )
            )
    return actions


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
    """Work-done progress (begin ... end) around a long run, where the client shows it."""
    window = ls.client_capabilities.window
    token: str | None = None
    if window is not None and window.work_done_progress:
        token = f"jaxloopfix-verify-{uuid.uuid4().hex}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        except Exception:  # noqa: BLE001 - no progress bar is no reason not to verify
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
    return _whole_lines_edit(text, new_text, _LineIndex(text, ls.encoding()))


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
