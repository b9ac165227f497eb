"""`ParsedModule` answers parents and qualified names without running libcst's
ParentNodeProvider and QualifiedNameProvider passes (for speed); its answers must be
exactly theirs, for every node of real files."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, QualifiedNameProvider

from fixture_tools import FIXTURES
from jaxloopfix.analysis.source import ParsedModule, descendants, names_in

flax = pytest.importorskip("flax")

CORPUS = sorted(FIXTURES.rglob("*.py")) + sorted(Path(flax.__file__).parent.rglob("*.py"))[::12]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_parents_names_and_qualified_names_match_libcst_providers(path: Path) -> None:
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    reference = MetadataWrapper(parsed.module, unsafe_skip_copy=True).resolve_many(
        [ParentNodeProvider, QualifiedNameProvider]
    )
    parents, qualified = reference[ParentNodeProvider], reference[QualifiedNameProvider]
    nodes = descendants(parsed.module)
    assert len(nodes) > 1
    for node in nodes:
        assert parsed.parent(node) is parents.get(node)
        expected = qualified.get(node)
        if callable(expected):  # resolved lazily by the provider
            expected = expected()
        assert parsed.qualified_names(node) == {q.name for q in expected or ()}
    assert parsed.all_names == frozenset(names_in(parsed.module))


def test_qualified_names_follow_aliases_and_shadowing() -> None:
    parsed = ParsedModule(
        "import jax as jx\nfrom jax import lax as L\n\ndef f(jx):\n    return jx.jit\n\ng = L.scan\nh = jx.jit\n",
        "t.py",
    )
    attributes = [n for n in descendants(parsed.module) if isinstance(n, cst.Attribute)]
    # The parameter `jx` shadows the import: not `jax.jit`.
    assert [parsed.qualified_name(a) for a in attributes] == ["f.<locals>.jx.jit", "jax.lax.scan", "jax.jit"]
