"""The daily-use tour on a large repository, for two versions of jaxloopfix side by side.

    python benchmarks/daily_use_tour.py --repo /tmp/flax --before /tmp/jlf-before [--after .]

Each version is a source tree (a checkout of this repository) run as `python -m jaxloopfix`
with that tree first on `PYTHONPATH`, on the same copy of the repository, one after the other:

- `check .` with an empty results cache (cold), then again (warm);
- `check FILE` of one module with an empty cache: a one-file commit through the hook;
- the pre-commit hook as pre-commit runs it: with `require_serial: false` pre-commit splits
  the file list over one process per core (each reads the project again for its context),
  with `true` one process gets the whole list; both cold;
- the language server: from opening the largest module to its first diagnostics, cold.

Wall-clock seconds, as a markdown table on stdout (progress on stderr). The machine's other
load is not controlled: compare the two columns of one run, not figures across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CACHE = ".jaxloopfix_cache"


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree.resolve()), "JAXLOOPFIX_OUTPUT_FORMAT": "concise"}


def _cold(repo: Path) -> None:
    shutil.rmtree(repo / CACHE, ignore_errors=True)


def _timed(args: list[str], tree: Path, repo: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jaxloopfix", *args], cwd=repo, env=_env(tree),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def _split_hook(tree: Path, repo: Path, files: list[str], parts: int) -> float:
    """pre-commit's `require_serial: false`: the file list split over `parts` processes at once."""
    chunks = [files[i::parts] for i in range(parts)]
    start = time.perf_counter()
    running = [
        subprocess.Popen([sys.executable, "-m", "jaxloopfix", "check", *chunk], cwd=repo, env=_env(tree),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for chunk in chunks if chunk
    ]
    for process in running:
        process.wait()
    return time.perf_counter() - start


def _first_diagnostics(tree: Path, repo: Path, module: Path) -> float:
    """Seconds from `didOpen` of `module` to the server's first `publishDiagnostics` for it."""
    from lsprotocol import types
    from pytest_lsp import make_test_lsp_client

    async def run() -> float:
        client = make_test_lsp_client()
        published: list[float] = []
        features = client.protocol.fm.features
        original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

        def record(params: types.PublishDiagnosticsParams):  # noqa: ANN202
            published.append(time.perf_counter())
            return original(params)

        features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
        await client.start_io(sys.executable, "-m", "jaxloopfix", "server", env=_env(tree), cwd=str(repo))
        await client.initialize_session(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=repo.resolve().as_uri(),
        ))
        start = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=module.resolve().as_uri(), language_id="python", version=1, text=module.read_text(encoding="utf-8"))))
        while not published and time.perf_counter() - start < 600:
            await asyncio.sleep(0.01)
        elapsed = (published[0] if published else time.perf_counter()) - start
        await client.shutdown_session()
        return elapsed

    return asyncio.run(run())


def tour(tree: Path, repo: Path, jobs: int) -> dict[str, float]:
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.py") if CACHE not in p.parts)
    largest = max((repo / f for f in files), key=lambda p: p.stat().st_size)
    figures: dict[str, float] = {}
    _cold(repo)
    figures["check . (cold)"] = _timed(["check", "."], tree, repo)
    figures["check . (warm)"] = _timed(["check", "."], tree, repo)
    _cold(repo)
    figures[f"check {largest.relative_to(repo)} (cold)"] = _timed(["check", str(largest.relative_to(repo))], tree, repo)
    _cold(repo)
    figures[f"hook, list split over {jobs} processes (cold)"] = _split_hook(tree, repo, files, jobs)
    _cold(repo)
    figures["hook, one process (cold)"] = _split_hook(tree, repo, files, 1)
    _cold(repo)
    figures[f"editor: open {largest.name} to first diagnostics (cold)"] = _first_diagnostics(tree, repo, largest)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    results = {}
    for label, tree in (("before", args.before), ("after", args.after)):
        print(f"touring {label} ({tree})", file=sys.stderr, flush=True)
        results[label] = tour(tree, args.repo, args.jobs)
    files = sum(1 for _ in args.repo.rglob("*.py"))
    print(f"### Daily-use tour: {args.repo.name} ({files} Python files), {os.cpu_count()} cores\n")
    print("| step | before (s) | after (s) |\n|---|---|---|")
    for step in results["before"]:
        print(f"| {step} | {results['before'][step]:.1f} | {results['after'][step]:.1f} |")


if __name__ == "__main__":
    main()
