"""`check` (and the fix renderer) never crash on real-world Python: the installed jax and libcst sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import ParseError, apply_fixes, lint_text

libcst = pytest.importorskip("libcst")
jax = pytest.importorskip("jax")

FILES = sorted(
    p for root in (Path(jax.__file__).parent, Path(libcst.__file__).parent) for p in root.rglob("*.py")
)
CHUNKS = 8


# Two of the eight chunks (a quarter of the files, spread over both packages) by default.
@pytest.mark.parametrize("chunk", [c if c < 2 else pytest.param(c, marks=pytest.mark.slow) for c in range(CHUNKS)])
def test_check_and_fix_never_crash_on_installed_packages(chunk):
    checked = 0
    for path in FILES[chunk::CHUNKS]:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            diagnostics = lint_text(text, str(path), Settings())
        except ParseError:
            continue  # reported to the user as a parse error, not a crash
        if any(d.fix for d in diagnostics):
            new, _, _ = apply_fixes(text, str(path), Settings(), unsafe=True)
            compile(new, str(path), "exec")
        checked += 1
    assert checked > 0


def test_corpus_is_the_real_thing():
    assert len(FILES) > 500
