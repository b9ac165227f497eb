"""How long the language server takes from `didChange` to `publishDiagnostics`.

    python benchmarks/lsp_latency.py [--package flax] [--rounds 7]

The package's source is copied into a temporary project (with a `pyproject.toml`, so the
server follows the rest of the project's tracing) and its largest module is opened in
`python -m jaxloopfix server` through pytest-lsp's client, over stdio as an editor does.
Each round appends a comment line (a whole-document change, a new version) and waits for
the diagnostics of that version. The figure is the time from sending the change to
receiving them, less the server's debounce (`lsp.DEBOUNCE_SECONDS`): the work an edit
costs. Beside it, in the same run: a fresh Python process that imports libcst and parses
the module, the time one edit's lint is measured against.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import make_test_lsp_client

from jaxloopfix.lsp import DEBOUNCE_SECONDS

PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


def largest_module(root: Path) -> Path:
    return max((p for p in root.rglob("*.py") if "__pycache__" not in p.parts), key=lambda p: p.stat().st_size)


async def _published(published: list, uri: str, version: int | None, timeout: float = 120.0) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for at, params in published:
            if params.uri == uri and (version is None or params.version == version):
                return at
        await asyncio.sleep(0.002)
    raise SystemExit(f"no diagnostics for {uri} version {version}")


async def measure(path: Path, rounds: int) -> tuple[float, list[float], int]:
    """(seconds from didOpen to the first diagnostics, per-edit latencies less the debounce, diagnostics)."""
    client = make_test_lsp_client()
    published: list = []
    features = client.protocol.fm.features
    original = features[PUBLISH]

    def record(params: types.PublishDiagnosticsParams):
        published.append((time.perf_counter(), params))
        return original(params)

    features[PUBLISH] = record
    await client.start_io(sys.executable, "-m", "jaxloopfix", "server")
    await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    sent = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    opened = await _published(published, uri, None) - sent
    latencies = []
    for version in range(2, rounds + 2):
        text += f"\n# edit {version}\n"
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
        )
        latencies.append(await _published(published, uri, version) - sent - DEBOUNCE_SECONDS)
    count = len(published[-1][1].diagnostics)
    await client.shutdown_session()
    return opened, latencies, count


def parse_baseline(path: Path) -> float:
    """Seconds for a fresh Python to import libcst and parse `path` (best of three)."""
    code = f"import libcst; libcst.parse_module(open({str(path)!r}, encoding='utf-8').read())"
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="flax")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    spec = importlib.util.find_spec(args.package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{args.package} is not installed")
    source = Path(next(iter(spec.submodule_search_locations)))
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "pyproject.toml").write_text("[project]\nname = 'bench'\n", encoding="utf-8")
        shutil.copytree(source, project / args.package, ignore=shutil.ignore_patterns("__pycache__"))
        module = largest_module(project / args.package)
        opened, latencies, count = asyncio.run(measure(module, args.rounds))
        baseline = parse_baseline(module)
        lines = len(module.read_text(encoding="utf-8").splitlines())
    median = statistics.median(latencies)
    name = module.relative_to(project)
    print(f"| module | lines | didOpen to diagnostics | didChange to diagnostics, less the {DEBOUNCE_SECONDS} s debounce "
          "(median, max) | Python + libcst import + parse | diagnostics |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| `{name}` | {lines} | {opened:.2f} s | {median:.3f} s, {max(latencies):.3f} s | {baseline:.2f} s | {count} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
