"""The language server end to end: a real LSP client (pytest-lsp) talking to
`python -m jaxloopfix server` over stdio."""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, make_test_lsp_client  # noqa: E402

from jaxloopfix.config import Settings  # noqa: E402
from jaxloopfix.engine import apply_fixes  # noqa: E402
from fixture_tools import SEED_SOURCE

SEED = SEED_SOURCE
# Characters outside the BMP count twice in UTF-16: positions after them must still be right.
SEED_UNICODE = SEED.replace("    h = jnp.zeros(hidden_dim)\n", "    h = jnp.zeros(hidden_dim)  # état 😀😀\n").replace(
    "        x_t = inputs[i]\n", "        x_t = inputs[i]  # 🚀 ünïcode\n"
).replace("for i in range(inputs.shape[0]):\n", "for i in range(inputs.shape[0]):  # 😀 pas\n")
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
TIMEOUT = 10.0
NOTEBOOKS = types.NotebookDocumentClientCapabilities(synchronization=types.NotebookDocumentSyncClientCapabilities())


def _recording_client() -> LanguageClient:
    """The pytest-lsp client, also keeping every publishDiagnostics (with its version)."""
    client = make_test_lsp_client()
    client.published = []  # type: ignore[attr-defined]
    features = client.protocol.fm.features
    original = features[PUBLISH]

    def record(params: types.PublishDiagnosticsParams):
        client.published.append(params)  # type: ignore[attr-defined]
        return original(params)

    features[PUBLISH] = record
    return client


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "jaxloopfix", "server"],
        client_factory=_recording_client,
    ),
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
                notebook_document=NOTEBOOKS,
            ),
        )
    )
    yield
    await lsp_client.shutdown_session()


# --------------------------------------------------------------------------- helpers


def _offset(text: str, position: types.Position) -> int:
    """Character offset of an LSP (0-based line, UTF-16 character) position."""
    lines = text.splitlines(keepends=True) or [""]
    if position.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line].rstrip("\r\n")
    units = 0
    for i, char in enumerate(line):
        if units >= position.character:
            return start + i
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(line)


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP TextEdits (all against the original text) the way an editor does."""
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        key=lambda s: (s[0], s[1]),
    )
    for (_, end_a, _), (start_b, _, _) in zip(spans, spans[1:]):
        assert end_a <= start_b, "overlapping edits"
    for start, end, new_text in reversed(spans):
        text = text[:start] + new_text + text[end:]
    return text


def _position_after(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1 :]
    return types.Position(line=line, character=len(column.encode("utf-16-le")) // 2)


async def _wait_published(client: LanguageClient, uri: str, since: int, version: int | None = None):
    """The first publishDiagnostics for `uri` after index `since` (with `version`, if given)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for params in client.published[since:]:  # type: ignore[attr-defined]
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics published for {uri} (version {version})")


async def _open(client: LanguageClient, path: Path, text: str) -> types.PublishDiagnosticsParams:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return await _wait_published(client, uri, since)


async def _actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic, only=None):
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
    )
    return result or []


def _edits(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    return list(action.edit.changes[uri])


def _close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))


# --------------------------------------------------------------------------- tests


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("seed", [SEED, SEED_UNICODE], ids=["ascii", "unicode"])
async def test_diagnostic_and_code_actions(client: LanguageClient, tmp_path: Path, seed: str):
    path = tmp_path / "rnn.py"
    uri = path.as_uri()
    published = await _open(client, path, seed)

    assert len(published.diagnostics) == 1
    diagnostic = published.diagnostics[0]
    assert diagnostic.code == "JLF001"
    assert diagnostic.source == "jaxloopfix"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.range.start == types.Position(line=8, character=4)
    assert diagnostic.range.start.line == 8 and diagnostic.range.end.line == 8

    expected, _, count = apply_fixes(seed, str(path), Settings())
    assert count == 1 and expected != seed

    actions = await _actions(client, uri, diagnostic)
    titles = [a.title for a in actions]
    quick = [a for a in actions if a.title == "Rewrite loop with lax.scan"]
    assert len(quick) == 1, titles
    assert quick[0].kind == types.CodeActionKind.QuickFix
    assert apply_text_edits(seed, _edits(quick[0], uri)) == expected

    suppress = [a for a in actions if a.title == "Suppress JLF001 on this line"]
    assert len(suppress) == 1, titles
    suppressed = apply_text_edits(seed, _edits(suppress[0], uri))
    lines = suppressed.splitlines()
    assert lines[8] == seed.splitlines()[8] + "  # noqa: JLF001"
    assert [l for i, l in enumerate(lines) if i != 8] == [l for i, l in enumerate(seed.splitlines()) if i != 8]

    fix_all = [a for a in actions if a.kind == "source.fixAll.jaxloopfix"]
    assert len(fix_all) == 1, titles
    assert apply_text_edits(seed, _edits(fix_all[0], uri)) == expected

    # Asked for the fix-all kind only (as editors do on save): just that action.
    only = await _actions(client, uri, diagnostic, only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in only] == ["source.fixAll.jaxloopfix"]

    # The suppressed text, once the editor has it, is clean.
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=suppressed)],
        )
    )
    assert list((await _wait_published(client, uri, since, version=2)).diagnostics) == []
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_verified_unsafe_fix_is_the_preferred_action(client: LanguageClient, tmp_path: Path, monkeypatch):
    """After `jaxloopfix verify` found the function equal on these exact bytes, the editor offers its
    unsafe fix as the preferred action; one edit later it is plain "(unsafe)" again."""
    from click.testing import CliRunner

    from fixture_tools import FIXTURES
    from jaxloopfix.cli import main

    pytest.importorskip("jax")
    (tmp_path / "pyproject.toml").write_text("[tool.jaxloopfix]\n", encoding="utf-8")
    text = (FIXTURES / "JLF001" / "seed_rnn.py").read_text(encoding="utf-8")
    path = tmp_path / "seed_rnn.py"
    path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    outcome = CliRunner().invoke(main, ["verify", "--no-measure", "--lengths", "4", path.name])
    assert outcome.exit_code == 0 and "equivalent" in outcome.stdout, outcome.output

    uri = path.as_uri()
    (diagnostic,) = (await _open(client, path, text)).diagnostics
    quick = [a for a in await _actions(client, uri, diagnostic) if a.title.startswith("Rewrite loop")]
    assert [(a.title, a.is_preferred) for a in quick] == [("Rewrite loop with lax.scan (unsafe, verified equal)", True)]

    edited = text + "\n# edited\n"
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    (diagnostic,) = (await _wait_published(client, uri, since, version=2)).diagnostics
    quick = [a for a in await _actions(client, uri, diagnostic) if a.title.startswith("Rewrite loop")]
    assert [(a.title, bool(a.is_preferred)) for a in quick] == [("Rewrite loop with lax.scan (unsafe)", False)]
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_extends_existing_noqa(client: LanguageClient, tmp_path: Path):
    text = SEED.replace("for i in range(inputs.shape[0]):", "for i in range(inputs.shape[0]):  # noqa: JLF999")
    path = tmp_path / "noqa.py"
    uri = path.as_uri()
    (diagnostic,) = (await _open(client, path, text)).diagnostics
    actions = await _actions(client, uri, diagnostic)
    (suppress,) = [a for a in actions if a.title == "Suppress JLF001 on this line"]
    new = apply_text_edits(text, _edits(suppress, uri))
    assert new.splitlines()[8].endswith("# noqa: JLF999, JLF001")
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_project_settings_are_honoured(client: LanguageClient, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nignore = ["JLF001"]\n', encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    path = tmp_path / "pkg" / "rnn.py"
    assert list((await _open(client, path, SEED)).diagnostics) == []
    _close(client, path.as_uri())


@pytest.mark.asyncio(loop_scope="module")
async def test_random_edits_do_not_kill_the_server(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "fuzz.py"
    uri = path.as_uri()
    assert len((await _open(client, path, SEED)).diagnostics) == 1

    rng = random.Random(1234)
    alphabet = "abc():=[]{}\n \t#'\"\\é😀forwhile"
    text = SEED
    version = 1
    since = len(client.published)  # type: ignore[attr-defined]
    for _ in range(50):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.choice([0, 0, 1, 2, 5]))
        new_text = "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 1, 3])))
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=_position_after(text, start), end=_position_after(text, end)),
            text=new_text,
        )
        text = text[:start] + new_text + text[end:]
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        if rng.random() < 0.2:
            await asyncio.sleep(0.01)
        if rng.random() < 0.1:
            # Requests in the middle of the storm must be answered, not crash anything.
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0)),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )

    # Debounced: the burst did not produce one publish per keystroke.
    await asyncio.sleep(0.6)
    burst = [p for p in client.published[since:] if p.uri == uri]  # type: ignore[attr-defined]
    assert len(burst) <= 5, len(burst)

    # Still alive: restore the seed and get its diagnostic back for the latest version.
    version += 1
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SEED)],
        )
    )
    final = await _wait_published(client, uri, since, version=version)
    assert [d.code for d in final.diagnostics] == ["JLF001"]
    actions = await _actions(client, uri, final.diagnostics[0])
    assert any(a.title == "Rewrite loop with lax.scan" for a in actions)

    # didSave republishes too.
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [d.code for d in (await _wait_published(client, uri, since)).diagnostics] == ["JLF001"]
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_tracing_from_other_modules_reaches_an_open_document(client: LanguageClient, tmp_path: Path):
    import shutil

    from fixture_tools import FIXTURES

    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", root)
    layers = root / "seqmodel" / "layers.py"
    published = await _open(client, layers, layers.read_text(encoding="utf-8"))
    # Traced only from train.py, which is not open.
    assert sorted((d.code, d.range.start.line) for d in published.diagnostics) == [("JLF001", 6), ("JLF002", 14)]

    # train.py is edited to jit a helper that calls `summarize`, and saved.
    train = root / "seqmodel" / "train.py"
    train.write_text(
        train.read_text(encoding="utf-8") + "\n\n@jax.jit\ndef total(history):\n    return summarize(history)\n",
        encoding="utf-8",
    )
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=train.as_uri())))
    republished = await _wait_published(client, layers.as_uri(), since)
    lines = {d.range.start.line for d in republished.diagnostics}
    summarize_loop = layers.read_text(encoding="utf-8").splitlines().index("    for value in history:")
    assert {6, 14, summarize_loop} <= lines, republished.diagnostics
    _close(client, layers.as_uri())


# --------------------------------------------------------------------------- issue 31: the editor


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    ("fixture", "code", "title"),
    [
        ("JLF001/vmap_step_def.py", "JLF001", "Rewrite loop with jax.vmap (its steps are independent)"),
        ("JLF001/vmap_decorated.py", "JLF001", "Rewrite the linear recurrence acc = a * acc + b with lax.associative_scan (unsafe)"),
        # Its title goes on ("; `if t == 0:` becomes `jnp.where` ..."): the action keeps the headline.
        ("JLF001/index_select_first_step.py", "JLF001", "Rewrite loop with lax.scan (unsafe)"),
        ("JLF003/bare_jit_power.py", "JLF003", "Mark n static with static_argnames (unsafe)"),
        ("JLF004/masked_update.py", "JLF004", "Select with jnp.where (both branches are evaluated)"),
    ],
    ids=["vmap", "associative_scan", "scan_with_notes", "static_argnames", "jnp_where"],
)
async def test_quick_fix_is_titled_by_its_fix(client: LanguageClient, tmp_path: Path, fixture: str, code: str, title: str):
    from fixture_tools import FIXTURES

    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    path = tmp_path / Path(fixture).name
    uri = path.as_uri()
    (diagnostic,) = [d for d in (await _open(client, path, text)).diagnostics if d.code == code]
    actions = await _actions(client, uri, diagnostic, only=[types.CodeActionKind.QuickFix])
    fixes = [a for a in actions if a.edit is not None and not a.title.startswith("Suppress")]
    assert [a.title for a in fixes] == [title], [a.title for a in actions]
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_syntax_error_replaces_the_diagnostics(client: LanguageClient, tmp_path: Path):
    """Half-typed code gets one `invalid-syntax` error where the parser stopped, not the old findings."""
    path = tmp_path / "typing.py"
    uri = path.as_uri()
    assert [d.code for d in (await _open(client, path, SEED)).diagnostics] == ["JLF001"]

    broken = SEED.replace("        x_t = inputs[i]\n", "        x_t = inputs[i\n")
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    (error,) = (await _wait_published(client, uri, since, version=2)).diagnostics
    assert (error.code, error.source, error.severity) == ("invalid-syntax", "jaxloopfix", types.DiagnosticSeverity.Error)
    assert "SyntaxError" in error.message
    # Where the parser stopped: inside the loop body, not at the top of the file.
    assert 9 <= error.range.start.line <= 11, error
    assert await _actions(client, uri, error) == []

    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SEED)],
        )
    )
    assert [d.code for d in (await _wait_published(client, uri, since, version=3)).diagnostics] == ["JLF001"]
    _close(client, uri)

    # Opened broken: the error at once.
    (error,) = (await _open(client, tmp_path / "opened_broken.py", "def f(:\n    pass\n")).diagnostics
    assert error.code == "invalid-syntax"
    assert error.range.start == types.Position(line=0, character=6)
    _close(client, (tmp_path / "opened_broken.py").as_uri())


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_shows_the_rule_documentation(client: LanguageClient, tmp_path: Path):
    from click.testing import CliRunner

    from jaxloopfix.cli import main

    path = tmp_path / "hover.py"
    uri = path.as_uri()
    (diagnostic,) = (await _open(client, path, SEED)).diagnostics

    async def hover(line: int, character: int) -> types.Hover | None:
        return await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )

    found = await hover(diagnostic.range.start.line, 0)
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    assert found.contents.kind == types.MarkupKind.Markdown
    printed = CliRunner().invoke(main, ["rule", "JLF001"])
    assert printed.exit_code == 0
    assert found.contents.value == printed.stdout.strip()
    assert await hover(0, 3) is None  # `import jax`: no finding on that line
    _close(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostic_code_links_to_the_rule_page(client: LanguageClient, tmp_path: Path):
    """The code in the Problems panel opens the rule's page: a file installed with the package
    whose text is what `jaxloopfix rule CODE` prints."""
    from urllib.parse import unquote, urlparse

    from click.testing import CliRunner

    from jaxloopfix.cli import main

    (diagnostic,) = (await _open(client, tmp_path / "linked.py", SEED)).diagnostics
    assert diagnostic.code_description is not None
    href = urlparse(diagnostic.code_description.href)
    assert href.scheme == "file"
    page = Path(unquote(href.path))
    assert page.name == f"{diagnostic.code}.md"
    assert page.read_text() == CliRunner().invoke(main, ["rule", str(diagnostic.code)]).stdout
    _close(client, (tmp_path / "linked.py").as_uri())


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostics_carry_their_notes(client: LanguageClient, tmp_path: Path):
    """Why the function is traced, why there is no fix, what an unsafe fix assumes: in
    `relatedInformation` (at the finding) and in `data`."""
    from fixture_tools import FIXTURES

    from jaxloopfix.engine import lint_text

    text = (FIXTURES / "JLF004" / "masked_update.py").read_text(encoding="utf-8")
    path = tmp_path / "masked_update.py"
    uri = path.as_uri()
    published = {d.code: d for d in (await _open(client, path, text)).diagnostics}
    engine = {d.code: d for d in lint_text(text, str(path), Settings())}
    refused, fixed = published["JLF002"], published["JLF004"]

    assert engine["JLF002"].fix is None and engine["JLF002"].no_fix_reason and engine["JLF002"].traced_reason
    notes = [(r.location.uri, r.location.range, r.message) for r in refused.related_information or []]
    assert notes == [
        (uri, refused.range, f"no fix available: {engine['JLF002'].no_fix_reason}"),
        (uri, refused.range, engine["JLF002"].traced_reason),
    ]
    assert refused.data == {"traced_reason": engine["JLF002"].traced_reason, "no_fix_reason": engine["JLF002"].no_fix_reason}

    fix = engine["JLF004"].fix
    assert fix is not None
    assert [r.message for r in fixed.related_information or []] == [f"fix: {fix.title}", engine["JLF004"].traced_reason]
    assert fixed.data["fix"]["applicability"] == "safe"

    _close(client, uri)

    # An unsafe fix: its assumptions, one note each.
    text = (FIXTURES / "JLF001" / "seed_rnn.py").read_text(encoding="utf-8")
    path = tmp_path / "seed_rnn.py"
    (unsafe,) = (await _open(client, path, text)).diagnostics
    (seed,) = lint_text(text, str(path), Settings())
    assert seed.fix is not None and seed.fix.assumptions and seed.fix.verifiable
    messages = [r.message for r in unsafe.related_information or []]
    assert messages == [
        f"unsafe fix: {seed.fix.title}, `jaxloopfix verify` settles this",
        *(f"the fix assumes: {a}" for a in seed.fix.assumptions),
        seed.traced_reason,
    ]
    assert unsafe.data["fix"]["assumptions"] == list(seed.fix.assumptions)
    _close(client, path.as_uri())


# --------------------------------------------------------------------------- LSP 3.17 clients


def _ordering_client() -> LanguageClient:
    """The recording client, also keeping the order in which progress and diagnostics arrive."""
    client = _recording_client()
    client.events = []  # type: ignore[attr-defined]
    features = client.protocol.fm.features
    publish, progress = features[PUBLISH], features[types.PROGRESS]

    def on_publish(params: types.PublishDiagnosticsParams):
        client.events.append(("diagnostics", params.uri))  # type: ignore[attr-defined]
        return publish(params)

    def on_progress(params: types.ProgressParams):
        client.events.append((params.value.get("kind"), params.token))  # type: ignore[attr-defined]
        return progress(params)

    features[PUBLISH], features[types.PROGRESS] = on_publish, on_progress
    return client


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "jaxloopfix", "server"],
        client_factory=_ordering_client,
    ),
)
async def progress_client(lsp_client: LanguageClient):
    """A client that shows work-done progress and takes pushed diagnostics."""
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
                window=types.WindowClientCapabilities(work_done_progress=True),
            ),
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "jaxloopfix", "server"],
        client_factory=_recording_client,
    ),
)
async def pull_client(lsp_client: LanguageClient):
    """A client that pulls diagnostics (and takes refresh requests), shows progress and opens notebooks."""
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
                window=types.WindowClientCapabilities(work_done_progress=True),
                text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
                workspace=types.WorkspaceClientCapabilities(
                    diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
                ),
                notebook_document=NOTEBOOKS,
            ),
        )
    )
    lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def _small_project(root: Path) -> Path:
    """A project whose `steps.total` loops and is jitted only by `model.py`: `steps.py` has a
    finding only once the server has read the rest of its project."""
    (root / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0.1"\n', encoding="utf-8")
    steps = root / "steps.py"
    steps.write_text(
        "import jax.numpy as jnp\n\n\ndef total(x):\n    acc = jnp.zeros(x.shape[1:])\n"
        "    for i in range(x.shape[0]):\n        acc = acc + x[i]\n    return acc\n",
        encoding="utf-8",
    )
    (root / "model.py").write_text("import jax\n\nfrom steps import total\n\nrun = jax.jit(total)\n", encoding="utf-8")
    return steps


def _did_open(client: LanguageClient, path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)
        )
    )
    return path.as_uri()


def _did_change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert report.kind == "full", report
    return list(report.items)


async def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def _pushed(client: LanguageClient, uri: str, since: int) -> list[types.PublishDiagnosticsParams]:
    return [p for p in client.published[since:] if p.uri == uri]  # type: ignore[attr-defined]


@pytest.mark.asyncio(loop_scope="module")
async def test_first_project_pass_runs_under_progress(progress_client: LanguageClient, tmp_path: Path):
    """Opening a file: begin, then the project pass, then end, then its diagnostics; not again on an edit."""
    steps = _small_project(tmp_path)
    uri = steps.as_uri()
    text = steps.read_text(encoding="utf-8")
    since = len(progress_client.events)  # type: ignore[attr-defined]
    published = await _open(progress_client, steps, text)
    # Traced only through model.py: the finding is there because the project was read.
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("JLF002", 5)]

    events = progress_client.events[since:]  # type: ignore[attr-defined]
    (token,) = [token for kind, token in events if kind == "begin"]
    assert [kind for kind, key in events if key in (token, uri)] == ["begin", "end", "diagnostics"]
    assert progress_client.progress_reports[token][0].title == "jaxloopfix: reading the project"

    since, published_since = len(progress_client.events), len(progress_client.published)  # type: ignore[attr-defined]
    _did_change(progress_client, uri, 2, text + "\n")
    edited = await _wait_published(progress_client, uri, published_since, version=2)
    assert [d.code for d in edited.diagnostics] == ["JLF002"]
    assert [kind for kind, _ in progress_client.events[since:]] == ["diagnostics"]  # type: ignore[attr-defined]
    _close(progress_client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_pull_diagnostics(pull_client: LanguageClient, client: LanguageClient, tmp_path: Path):
    """A pulling client gets by `textDocument/diagnostic` what a pushed-to client is published,
    is never pushed to, and is asked to pull again after a save; a push client stays pushed to."""
    provider = pull_client.server_capabilities.diagnostic_provider  # type: ignore[attr-defined]
    assert (provider.identifier, provider.inter_file_dependencies, provider.workspace_diagnostics) == ("jaxloopfix", True, False)

    path = tmp_path / "rnn.py"
    pushed = (await _open(client, path, SEED)).diagnostics
    pull_since, tokens = len(pull_client.published), set(pull_client.progress_reports)  # type: ignore[attr-defined]
    uri = _did_open(pull_client, path, SEED)
    pulled = await _pull(pull_client, uri)
    assert [d.code for d in pulled] == ["JLF001"]
    assert pulled == list(pushed)
    # The project pass the first pull waited for ran under progress, ended before the answer.
    reading = [r for t, r in pull_client.progress_reports.items() if t not in tokens]
    assert [(r[0].title, [k.kind for k in r]) for r in reading] == [("jaxloopfix: reading the project", ["begin", "end"])]

    broken = SEED.replace("        x_t = inputs[i]\n", "        x_t = inputs[i\n")
    _did_change(pull_client, uri, 2, broken)
    (error,) = await _pull(pull_client, uri)
    assert error.code == "invalid-syntax" and 9 <= error.range.start.line <= 11

    # Saved: the pull client is asked to pull again, the push client is published to again.
    refreshes = pull_client.diagnostic_refresh_count
    push_since = len(client.published)  # type: ignore[attr-defined]
    pull_client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await _until(lambda: pull_client.diagnostic_refresh_count == refreshes + 1, "workspace/diagnostic/refresh")
    assert [d.code for d in (await _wait_published(client, uri, push_since)).diagnostics] == ["JLF001"]
    assert client.diagnostic_refresh_count == 0

    _close(pull_client, uri)
    await asyncio.sleep(DEBOUNCE)
    assert _pushed(pull_client, uri, pull_since) == []
    _close(client, uri)


# --------------------------------------------------------------------------- notebooks

IMPORTS_CELL = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef double(x):\n    return 2 * x\n"
LOOP_CELL = (
    "@jax.jit\ndef running_sum(x):\n    carry = jnp.zeros(x.shape[1:])\n"
    "    for i in range(x.shape[0]):\n        carry = carry + x[i]\n    return carry\n"
)
NO_LOOP_CELL = "@jax.jit\ndef running_sum(x):\n    return jnp.sum(x, axis=0)\n"
DEBOUNCE = 0.6


def _open_notebook(client: LanguageClient, path: Path) -> tuple[str, list[str]]:
    """Open a notebook: a code cell of imports, a Markdown cell, then a code cell with a loop.
    Its cells have URIs as VS Code makes them."""
    uri = path.as_uri()
    sources = [("python", IMPORTS_CELL), ("markdown", "The running sum, as a loop:"), ("python", LOOP_CELL)]
    cells = [f"vscode-notebook-cell:{path.as_posix()}#W{i}sZmlsZQ%3D%3D" for i in range(len(sources))]
    kinds = {"python": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kinds[lang], document=cell) for cell, (lang, _) in zip(cells, sources)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=cell, language_id=lang, version=1, text=text)
                for cell, (lang, text) in zip(cells, sources)
            ],
        )
    )
    return uri, cells


def _edit_cell(client: LanguageClient, notebook: str, cell: str, text: str) -> None:
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cell, version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


def _close_notebook(client: LanguageClient, notebook: str, cells: list[str]) -> None:
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell) for cell in cells],
        )
    )


def _loop_finding(diagnostics: list[types.Diagnostic]) -> None:
    """The loop of the third cell, at its line in that cell (its 4th), not in the joined program."""
    assert [(d.code in ("JLF001", "JLF002"), d.range.start) for d in diagnostics] == [
        (True, types.Position(line=3, character=4))
    ], diagnostics


@pytest.mark.asyncio(loop_scope="module")
async def test_notebook_cells_are_linted_as_one_program(client: LanguageClient, tmp_path: Path):
    """Pushed: each code cell gets its findings on its own URI; an edit that removes the loop clears them."""
    since = len(client.published)  # type: ignore[attr-defined]
    notebook, (imports, markdown, loop) = _open_notebook(client, tmp_path / "sums.ipynb")
    (finding,) = (await _wait_published(client, loop, since)).diagnostics
    _loop_finding([finding])
    assert list((await _wait_published(client, imports, since)).diagnostics) == []
    # A cell's fix would address the joined program: no quick fix, only the line's `# noqa`.
    assert [a.title for a in await _actions(client, loop, finding)] == [f"Suppress {finding.code} on this line"]

    since = len(client.published)  # type: ignore[attr-defined]
    _edit_cell(client, notebook, loop, NO_LOOP_CELL)
    assert list((await _wait_published(client, loop, since, version=2)).diagnostics) == []

    since = len(client.published)  # type: ignore[attr-defined]
    _close_notebook(client, notebook, [imports, markdown, loop])
    assert list((await _wait_published(client, loop, since)).diagnostics) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_notebook_cells_are_pulled(pull_client: LanguageClient, tmp_path: Path):
    """Pulled: a cell's report comes from the lint of its whole notebook, and nothing is pushed."""
    (selector,) = pull_client.server_capabilities.notebook_document_sync.notebook_selector  # type: ignore[attr-defined]
    assert selector.notebook == "jupyter-notebook" and [c.language for c in selector.cells] == ["python"]

    since = len(pull_client.published)  # type: ignore[attr-defined]
    notebook, cells = _open_notebook(pull_client, tmp_path / "sums.ipynb")
    imports, _, loop = cells
    _loop_finding(await _pull(pull_client, loop))
    assert await _pull(pull_client, imports) == []

    _edit_cell(pull_client, notebook, loop, NO_LOOP_CELL)
    assert await _pull(pull_client, loop) == []
    _close_notebook(pull_client, notebook, cells)
    await asyncio.sleep(DEBOUNCE)
    assert [p.uri for p in pull_client.published[since:]] == []  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- fixes laid out like `check --fix`

LONG_NAMES = '''\
import jax
import jax.numpy as jnp


@jax.jit
def accumulate_squares(initial_running_total, observation_sequence):
    running_total_value = initial_running_total
    for step_index in range(observation_sequence.shape[0]):
        running_total_value = running_total_value + observation_sequence[step_index] ** 2
    return running_total_value
'''


@pytest.mark.asyncio(loop_scope="module")
async def test_quick_fix_is_laid_out_like_check_fix(client: LanguageClient, tmp_path: Path):
    """In a project that formats with ruff, the quick fix writes what `check --fix --unsafe-fixes`
    writes (its long generated lines broken at 60 columns), as one edit of the changed lines."""
    from click.testing import CliRunner

    from jaxloopfix.cli import main
    from jaxloopfix.config import find_pyproject, load_settings

    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 60\n\n[tool.jaxloopfix]\n", encoding="utf-8")
    path = tmp_path / "squares.py"
    uri = path.as_uri()
    (diagnostic,) = (await _open(client, path, LONG_NAMES)).diagnostics
    actions = await _actions(client, uri, diagnostic, only=[types.CodeActionKind.QuickFix])
    (fix,) = [a for a in actions if a.title.startswith("Rewrite")]
    (edit,) = _edits(fix, uri)
    assert edit.range.start.line > 0  # the changed lines, not the whole file
    quick_fixed = apply_text_edits(LONG_NAMES, [edit])

    outcome = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(path)])
    assert outcome.exit_code in (0, 1), outcome.output
    written = path.read_text(encoding="utf-8")
    unformatted, _, _ = apply_fixes(LONG_NAMES, str(path), load_settings(find_pyproject(tmp_path)), unsafe=True)
    assert written != unformatted
    assert all(len(line) <= 60 for line in written.splitlines() if line not in LONG_NAMES.splitlines())
    assert quick_fixed == written
    _close(client, uri)
