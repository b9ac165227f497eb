"""The editor's "Verify with JAX, then apply" end to end: a pytest-lsp client that takes
work-done progress and `workspace/applyEdit`, talking to `python -m jaxloopfix server`.

Each verification runs the verify worker (a process importing jax): a few seconds each."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any, Union

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
pytest.importorskip("jax")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from test_lsp import _actions, _close, _open, _recording_client, apply_text_edits  # noqa: E402

from fixture_tools import FIXTURES  # noqa: E402
from jaxloopfix.lsp_verify import COMMAND  # noqa: E402

SEED_RNN = (FIXTURES / "JLF001" / "seed_rnn.py").read_text(encoding="utf-8")
# The same loop, but the inputs verify needs cannot be built: verify says "error".
NO_INPUTS = SEED_RNN[: SEED_RNN.index("def example_inputs")] + (
    'def example_inputs():\n    raise RuntimeError("no inputs for this model")\n'
)
VERIFY_TIMEOUT = 120.0


def _editor_client() -> LanguageClient:
    """The recording client of `test_lsp`, also answering (and keeping) every workspace/applyEdit."""
    client = _recording_client()
    client.applied = []  # type: ignore[attr-defined]
    converter = client.protocol._converter

    def command_or_action(value: Any, _: type) -> types.Command | types.CodeAction:
        # lsprotocol's own hook reads any object with a "command" key as a Command; a CodeAction
        # carrying a command has an object there (editors tell them apart by its type, as here).
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.applied.append(params)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    return client


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "jaxloopfix", "server"],
        client_factory=_editor_client,
    ),
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(
                    apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
                ),
            ),
        )
    )
    yield
    await lsp_client.shutdown_session()


# --------------------------------------------------------------------------- helpers


def _project(tmp_path: Path, name: str, text: str) -> Path:
    """`name` holding `text` in a project of its own (its verify record goes to tmp_path)."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxloopfix]\n", encoding="utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


async def _verify_action(client: LanguageClient, path: Path, text: str) -> types.CodeAction:
    (diagnostic,) = (await _open(client, path, text)).diagnostics
    actions = await _actions(client, path.as_uri(), diagnostic)
    found = [a for a in actions if a.title.startswith("Verify with JAX, then apply")]
    assert len(found) == 1, [a.title for a in actions]
    return found[0]


def _execute(client: LanguageClient, command: types.Command) -> asyncio.Task:
    return asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        )
    )


def _progress_titles(client: LanguageClient, since: set) -> list[tuple[str, list[str]]]:
    """(title, kinds) of each progress begun after the tokens in `since`."""
    out = []
    for token, reports in client.progress_reports.items():
        if token in since or not reports:
            continue
        title = getattr(reports[0], "title", "")
        out.append((title, [r.kind for r in reports]))
    return out


def _messages(client: LanguageClient, since: int) -> list[types.ShowMessageParams]:
    return list(client.messages[since:])


def _edits(params: types.ApplyWorkspaceEditParams, uri: str, version: int) -> list[types.TextEdit]:
    """The edits of a versioned applyEdit for `uri` (the client declared documentChanges)."""
    (change,) = params.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == uri and change.text_document.version == version
    return list(change.edits)


def _check_fix_unsafe(tmp_path: Path, name: str, text: str, monkeypatch) -> str:
    """What `jaxloopfix check --fix --unsafe-fixes` writes for `text`."""
    from click.testing import CliRunner

    from jaxloopfix.cli import main

    elsewhere = tmp_path / "cli"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text("[tool.jaxloopfix]\n", encoding="utf-8")
    path = elsewhere / name
    path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", name])
    fixed = path.read_text(encoding="utf-8")
    assert fixed != text
    return fixed


# --------------------------------------------------------------------------- tests


@pytest.mark.asyncio(loop_scope="module")
async def test_verified_equal_fix_is_applied(client: LanguageClient, tmp_path: Path, monkeypatch):
    path = _project(tmp_path, "seed_rnn.py", SEED_RNN)
    uri = path.as_uri()
    action = await _verify_action(client, path, SEED_RNN)
    assert action.kind == types.CodeActionKind.QuickFix and not action.is_preferred and action.edit is None
    assert action.command is not None and action.command.command == COMMAND
    assert list(action.command.arguments or []) == [uri, 1, "run_rnn"]

    tokens, messages = set(client.progress_reports), len(client.messages)
    assert await asyncio.wait_for(_execute(client, action.command), VERIFY_TIMEOUT) is None

    assert _progress_titles(client, tokens) == [("jaxloopfix: verifying run_rnn", ["begin", "end"])]
    (applied,) = client.applied  # type: ignore[attr-defined]
    expected = _check_fix_unsafe(tmp_path, "seed_rnn.py", SEED_RNN, monkeypatch)
    assert apply_text_edits(SEED_RNN, _edits(applied, uri, 1)) == expected
    assert [(m.type, m.message) for m in _messages(client, messages)] == [
        (types.MessageType.Info, "jaxloopfix: `run_rnn` verified equal on JAX: applied")
    ]

    # Recorded for these bytes, as `jaxloopfix verify` records it: the quick fix is now the
    # preferred one, and there is nothing left to verify.
    (diagnostic,) = client.diagnostics[uri]
    titles = [(a.title, bool(a.is_preferred)) for a in await _actions(client, uri, diagnostic)]
    assert ("Rewrite loop with lax.scan (unsafe, verified equal)", True) in titles
    assert not any(t.startswith("Verify with JAX") for t, _ in titles)
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_not_equivalent_is_reported_and_not_applied(client: LanguageClient, tmp_path: Path):
    path = _project(tmp_path, "no_inputs.py", NO_INPUTS)
    action = await _verify_action(client, path, NO_INPUTS)
    assert action.command is not None
    tokens, messages, applied = set(client.progress_reports), len(client.messages), len(client.applied)  # type: ignore[attr-defined]
    await asyncio.wait_for(_execute(client, action.command), VERIFY_TIMEOUT)

    assert client.applied[applied:] == []  # type: ignore[attr-defined]
    assert _progress_titles(client, tokens) == [("jaxloopfix: verifying run_rnn", ["begin", "end"])]
    (shown,) = _messages(client, messages)
    assert shown.type == types.MessageType.Warning
    assert shown.message.startswith("jaxloopfix: `run_rnn` in no_inputs.py: error: ")
    assert "no inputs for this model" in shown.message and shown.message.endswith("; not applied")
    _close(client, path.as_uri())


@pytest.mark.asyncio(loop_scope="module")
async def test_unsaved_text_is_not_verified(client: LanguageClient, tmp_path: Path):
    """The worker imports the file from disk: an editor text that is not the file's is refused."""
    path = _project(tmp_path, "unsaved.py", SEED_RNN)
    edited = SEED_RNN.replace("* 0.5", "* 0.25")
    action = await _verify_action(client, path, edited)
    path.write_text(SEED_RNN, encoding="utf-8")  # `_open` saved the edited text: put the old one back
    assert action.command is not None
    messages, applied = len(client.messages), len(client.applied)  # type: ignore[attr-defined]
    await asyncio.wait_for(_execute(client, action.command), VERIFY_TIMEOUT)
    assert client.applied[applied:] == []  # type: ignore[attr-defined]
    (shown,) = _messages(client, messages)
    assert shown.type == types.MessageType.Warning and "save the file first" in shown.message
    _close(client, path.as_uri())


@pytest.mark.asyncio(loop_scope="module")
async def test_server_answers_while_verifying_and_an_edit_cancels_the_apply(client: LanguageClient, tmp_path: Path):
    path = _project(tmp_path, "busy.py", SEED_RNN)
    uri = path.as_uri()
    action = await _verify_action(client, path, SEED_RNN)
    assert action.command is not None
    other = tmp_path / "other.py"
    (other_diagnostic,) = (await _open(client, other, NO_INPUTS)).diagnostics
    tokens, messages, applied = set(client.progress_reports), len(client.messages), len(client.applied)  # type: ignore[attr-defined]

    running = _execute(client, action.command)
    deadline = time.monotonic() + 10
    while not _progress_titles(client, tokens):
        assert time.monotonic() < deadline, "no progress began"
        await asyncio.sleep(0.02)
    # Another document's code actions come back while the verification runs.
    answer = await asyncio.wait_for(_actions(client, other.as_uri(), other_diagnostic), 5)
    assert any(a.title.startswith("Rewrite loop") for a in answer)
    assert not running.done(), "the verification ended before the other request was answered"

    # The document is edited before the verdict: nothing is applied.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SEED_RNN + "\n# edited\n")],
        )
    )
    await asyncio.wait_for(running, VERIFY_TIMEOUT)
    assert client.applied[applied:] == []  # type: ignore[attr-defined]
    (shown,) = _messages(client, messages)
    assert shown.type == types.MessageType.Warning
    assert "verified equal, but busy.py changed during verification" in shown.message
    _close(client, uri)
    _close(client, other.as_uri())
