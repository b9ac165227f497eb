"""The language server end to end: a real LSP client (pytest-lsp) talking to
`python -m jaxloopfix server` over stdio."""

from __future__ import annotations

import asyncio
import random
import sys
import time
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
                general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])
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
