"""Loops that used to vanish without a word, one fixture each (`fixtures/recall/`).

A loop in traced code is reported unless there is positive evidence that it does not
unroll array work. Each fixture's docstring says `report: CODE -- why` (the loop must be
reported, with a fix or with its reason) or `clean: EVIDENCE -- why` (left alone, and the
recorded evidence must name what was seen).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text, parse
from jaxloopfix.rules.base import FileContext

RECALL = Path(__file__).resolve().parent.parent / "fixtures" / "recall"
CASES = sorted(RECALL.glob("*.py"))


def _expectation(path: Path) -> tuple[str, str]:
    first = path.read_text(encoding="utf-8").splitlines()[0].strip('"')
    kind, rest = first.split(":", 1)
    return kind, rest.split("--", 1)[0].strip()


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_former_silent_path(path: Path) -> None:
    kind, detail = _expectation(path)
    text = path.read_text(encoding="utf-8")
    diagnostics = lint_text(text, str(path), Settings())
    loops = [d for d in diagnostics if d.code in ("JLF001", "JLF002")]
    if kind == "report":
        assert [d.code for d in loops] == [detail], [d.message for d in diagnostics]
        diagnostic = loops[0]
        # Reported with a fix, or with the reason it has none.
        assert diagnostic.fix is not None or diagnostic.no_fix_reason, diagnostic.message
    else:
        assert kind == "clean"
        assert loops == [], [d.message for d in loops]
        context = FileContext(parse(text, str(path)), Settings())
        context.loop_plans
        evidence = [e for _, e in context.skipped]
        assert any(detail in e for e in evidence), evidence


def test_every_skip_names_its_evidence() -> None:
    """No loop in a traced function is dropped without recorded evidence."""
    for path in CASES:
        context = FileContext(parse(path.read_text(encoding="utf-8"), str(path)), Settings())
        plans = {id(p.loop) for p in context.loop_plans}
        skipped = {id(loop) for loop, _ in context.skipped}
        from jaxloopfix.analysis.traced_values import own_nodes
        import libcst as cst

        for traced in context.traced.values():
            for loop in own_nodes(traced.node, cst.For):
                assert id(loop) in plans or id(loop) in skipped, (path.name, traced.name)
