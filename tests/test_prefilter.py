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
    """Same diagnostics, reasons and fix edits (offsets included) with the fast paths."""
    text = path.read_text(encoding="utf-8")
    try:
        fast = lint_text(text, str(path), Settings())
    except ParseError:
        pytest.skip("not parseable")
    slow = lint_text(text, str(path), Settings(), prefilter=False)
    assert fast == slow


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_same_diagnostics_when_the_reduced_text_is_analysed(path, analyse_reduced):
    """The reduction keeps what the analysis needs, also where a run analyses the whole text."""
    text = path.read_text(encoding="utf-8")
    try:
        reduced = lint_text(text, str(path), Settings())
    except ParseError:
        pytest.skip("not parseable")
    assert reduced == lint_text(text, str(path), Settings(), prefilter=False)


UNRELATED = """
def unrelated_{n}(values):
    \"\"\"Host code the analysis never needs.\x0c\"\"\"
    total = 0
    for v in values:  # a loop, but not traced
        total += v
    return total


class Helper{n}:
    lax = 1

    def method(self):
        return [i for i in range(3)]
"""

TRACED = """
@jax.jit
def rnn(w, xs, h):
    outs = []
    for t in range(xs.shape[0]):  # comment kept
        h = jnp.tanh(w @ h + xs[t])
        outs.append(h)
    return jnp.stack(outs), h
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("shadow", ["", "\n\ndef lax():\n    return None\n"])
def test_left_out_code_gives_the_same_fix(newline, shadow):
    """Left-out code still counts for names: a module-level `lax` it defines is not shadowed."""
    from jaxloopfix.prefilter import scan

    text = "import jax\nimport jax.numpy as jnp\n" + UNRELATED.format(n=1) + TRACED + UNRELATED.format(n=2) + shadow
    text = text.replace("\n", newline)
    reduced = scan(text).reduce(text)
    assert reduced is not None and "unrelated_1" not in reduced.text and "def rnn" in reduced.text
    assert reduced.text.count("\n") == text.count("\n")
    fast = lint_text(text, "m.py", Settings())
    assert fast == lint_text(text, "m.py", Settings(), prefilter=False)
    (diagnostic,) = fast
    assert diagnostic.code == "JLF001" and diagnostic.fix is not None


def test_prefilter_rejects_files_without_jax_or_loops():
    assert not may_have_findings("import numpy as np\n\ndef f(x):\n    for i in range(3):\n        x = x + 1\n")
    assert not may_have_findings("import jax\n\n@jax.jit\ndef f(x):\n    return x + 1\n")
    assert may_have_findings("import jax\n\n@jax.jit\ndef f(xs):\n    for x in xs:\n        pass\n")


def test_local_extra_decorator_is_not_filtered_out():
    source = "def my_jit(f):\n    return f\n\n@my_jit\ndef f(xs):\n    for x in xs:\n        pass\n"
    assert may_have_findings(source, ("my_jit",))


def _shape(found) -> tuple | None:
    """A scan's answer, comparable across parses: which nodes it keeps, by kind and place."""
    if found is None:
        return None
    if found.reached is None:
        return ("whole module",)
    return tuple(sorted((type(n).__name__, n.lineno, n.col_offset) for n in found.reached))


@pytest.mark.parametrize("path", CORPUS[::3], ids=lambda p: str(p.relative_to(p.parents[1])))
def test_a_text_scanned_again_with_seeds_gets_the_answer_of_a_fresh_scan(path):
    """The project pass scans a file again with other seeds; the walk it keeps from the first
    scan must give what a scan of a freshly parsed text gives."""
    import ast

    from jaxloopfix import prefilter

    text = path.read_text(encoding="utf-8")
    try:
        names = sorted({n.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)})
    except SyntaxError:
        pytest.skip("not parseable")
    calls = [
        {},
        {"seeds": frozenset(names[:2]), "project_roots": frozenset({"jax", "fixtures"})},
        {"extra_decorators": ("mylib.trace",), "need_loop": False},
        {"seeds": frozenset(names[-1:]), "project_roots": frozenset({"jax"}), "class_flow": False},
    ]
    kept = [_shape(prefilter.scan(text, **kwargs)) for kwargs in calls]  # the walk reused
    fresh = []
    for kwargs in calls:
        prefilter._COLLECTED.clear()
        fresh.append(_shape(prefilter.scan(text, **kwargs)))
    assert kept == fresh


def test_only_texts_that_go_on_to_a_lint_keep_their_walk():
    """A file the pre-filter rejects is not linted, so its tree is not kept (a project without
    JAX would otherwise hold every file's tree); one that goes through keeps it for the next scan."""
    from jaxloopfix import prefilter

    plain = "def total(values):\n    s = 0\n    for v in values:\n        s += v\n    return s\n"
    traced = "import jax\n\n@jax.jit\ndef run(xs):\n    for x in xs:\n        xs = xs + x\n    return xs\n"
    assert prefilter.scan(plain) is None
    assert plain not in prefilter._COLLECTED
    assert prefilter.scan(traced) is not None
    assert traced in prefilter._COLLECTED


def test_the_pre_filter_walks_every_node_ast_walks_in_its_order() -> None:
    """`ast_walk.walk` and `child_nodes` (the pre-filter's walks, without `ast.walk`'s nested
    generators) give exactly `ast.walk`'s and `ast.iter_child_nodes`'s nodes, in their order."""
    import ast

    from jaxloopfix.ast_walk import child_nodes, walk

    sample = ast.parse("x: int = 1\n@d\nclass A(B, metaclass=M):\n    def f(self, *a, k=2, **kw) -> None:\n"
                       "        return [y async for y in z if y] or {**q} or f'{a!r:>{w}}'\n")
    for tree in [sample, *(ast.parse(path.read_text(encoding="utf-8")) for path in CORPUS)]:
        expected = list(ast.walk(tree))
        assert [id(node) for node in walk(tree)] == [id(node) for node in expected]
        for node in expected:
            assert child_nodes(node) == list(ast.iter_child_nodes(node))


def test_a_subclass_of_kept_code_is_kept():
    """A class deriving from one traced code reaches is kept in the reduced text: what it stores
    in an attribute (an array where the base stores a list) decides the base's loops."""
    from pathlib import Path

    from jaxloopfix.prefilter import scan

    path = Path(__file__).resolve().parent.parent / "fixtures" / "recall" / "attribute_list_overridden_by_subclass.py"
    text = path.read_text(encoding="utf-8") + "\n\nclass Unrelated:\n    def f(self):\n        return 1\n"
    reduced = scan(text).reduce(text)
    assert reduced is not None and "class Stream(Base)" in reduced.text and "class Unrelated" not in reduced.text
    assert [d.code for d in lint_text(text, "m.py", Settings())] == ["JLF002"]
