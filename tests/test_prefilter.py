"""The ast pre-filter only skips work: results are identical with and without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_tools import FIXTURES
from jaxloopfix.config import Settings
from jaxloopfix.engine import ParseError, lint_text
from jaxloopfix.prefilter import may_have_findings

jax = pytest.importorskip("jax")

CORPUS = sorted(FIXTURES.rglob("*.py")) + sorted(Path(jax.__file__).parent.rglob("*.py"))[::25]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_same_diagnostics_with_and_without_prefilter(path):
    text = path.read_text(encoding="utf-8")
    try:
        fast = lint_text(text, str(path), Settings())
    except ParseError:
        pytest.skip("not parseable")
    slow = lint_text(text, str(path), Settings(), prefilter=False)
    assert [(d.code, d.location, d.message) for d in fast] == [(d.code, d.location, d.message) for d in slow]


def test_prefilter_rejects_files_without_jax_or_loops():
    assert not may_have_findings("import numpy as np\n\ndef f(x):\n    for i in range(3):\n        x = x + 1\n")
    assert not may_have_findings("import jax\n\n@jax.jit\ndef f(x):\n    return x + 1\n")
    assert may_have_findings("import jax\n\n@jax.jit\ndef f(xs):\n    for x in xs:\n        pass\n")


def test_local_extra_decorator_is_not_filtered_out():
    source = "def my_jit(f):\n    return f\n\n@my_jit\ndef f(xs):\n    for x in xs:\n        pass\n"
    assert may_have_findings(source, ("my_jit",))
