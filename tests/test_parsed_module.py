"""`ParsedModule` answers parents, scopes and qualified names without running libcst's
ParentNodeProvider and QualifiedNameProvider passes, and runs the scope analysis per
function on demand (for speed); its answers must be exactly theirs, for every node of
real files."""

from __future__ import annotations

import re

from pathlib import Path

import libcst as cst
import pytest

from jaxloopfix.analysis.public_names import as_public
from libcst.metadata import MetadataWrapper, ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from fixture_tools import FIXTURES
from jaxloopfix.analysis.lazy_scopes import eager_only
from jaxloopfix.analysis.source import ParsedModule, descendants, names_in
from jaxloopfix.analysis.walk import fast_visit, libcst_visit, walk

flax = pytest.importorskip("flax")
jax = pytest.importorskip("jax")

# Every fourth fixture (they grow with every rule, and resemble each other) beside samples of
# real library code: the equivalence checks below run 8 times per file.
CORPUS = (
    sorted(FIXTURES.rglob("*.py"))[::4]
    + sorted(Path(flax.__file__).parent.rglob("*.py"))[::16]
    + sorted(Path(jax.__file__).parent.rglob("*.py"))[::50]
)


@pytest.fixture
def libcst_reference(monkeypatch: pytest.MonkeyPatch):
    """Resolve a libcst provider with libcst's own traversal (the analysis installs `fast_visit`)."""

    def resolve(module: cst.Module, *providers):
        with monkeypatch.context() as patch:
            patch.setattr(cst.CSTNode, "visit", libcst_visit)
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            return wrapper.resolve_many(list(providers)) if len(providers) > 1 else wrapper.resolve(providers[0])

    return resolve


class _HookLog(cst.CSTVisitor):
    """Every hook call a read-only visitor receives, with the node's identity; prunes at lambdas
    to check that a False `on_visit` keeps the children out."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int, str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.log.append(("visit", id(node), type(node).__name__))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.log.append(("leave", id(original_node), ""))

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.log.append(("enter", id(node), attribute))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        self.log.append(("exit", id(original_node), attribute))


class _NamedHooks(cst.CSTVisitor):
    """A visitor on libcst's default dispatch: named `visit_X`/`leave_X` and per-field hooks,
    one returning False (children skipped), one returning None (children visited)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, int]] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.log.append(("visit_Name", id(node)))

    def leave_Name(self, original_node: cst.Name) -> None:
        self.log.append(("leave_Name", id(original_node)))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.log.append(("visit_Lambda", id(node)))
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.log.append(("visit_FunctionDef", id(node)))

    def visit_Call_func(self, node: cst.Call) -> None:
        self.log.append(("visit_Call_func", id(node)))

    def leave_Call_args(self, node: cst.Call) -> None:
        self.log.append(("leave_Call_args", id(node)))

    def leave_FormattedStringExpression_format_spec(self, node: cst.FormattedStringExpression) -> None:
        self.log.append(("leave_format_spec", id(node)))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_fast_visit_calls_the_hooks_libcst_calls(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    for visitor in (_HookLog, _NamedHooks):
        expected, got = visitor(), visitor()
        libcst_visit(module, expected)
        assert fast_visit(module, got) is module
        assert got.log == expected.log
        assert got.log or visitor is _NamedHooks  # the module itself is always visited


def _local_visitor(tag: str) -> type[cst.CSTVisitor]:
    """A visitor class made anew on every call, its hooks closing over `tag`, as the analysis
    defines its visitors inside functions."""

    class Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[str, str, int]] = []

        def visit_Name(self, node: cst.Name) -> None:
            self.log.append((tag, "name", id(node)))

        def visit_Call_args(self, node: cst.Call) -> None:
            self.log.append((tag, "args", id(node)))

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.log.append((tag, "def", id(original_node)))

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            self.log.append((tag, "lambda", id(node)))
            return False

    return Walk


def test_fast_visit_calls_each_local_visitor_class_its_own_hooks() -> None:
    """Every class one `class` statement makes shares the hooks found for the first, but each
    instance is called with its own class's functions (and so its own closures)."""
    module = cst.parse_module((FIXTURES / "JLF001" / "axis1.py").read_text(encoding="utf-8"))
    for tag in ("first", "second", "third"):
        expected, got = _local_visitor(tag)(), _local_visitor(tag)()
        libcst_visit(module, expected)
        fast_visit(module, got)
        assert got.log == expected.log and {entry[0] for entry in got.log} == {tag}
        assert {entry[1] for entry in got.log} >= {"name", "args", "def"}


def test_linting_a_document_again_and_again_keeps_no_earlier_tree() -> None:
    """A language server lints every version of an edited document: what it keeps stays the
    same size. Visitor classes defined inside the analysis's functions (one per call) once kept
    the hooks found for them, and with them every tree those hooks' closures reached."""
    import gc

    from jaxloopfix import prefilter
    from jaxloopfix.analysis import source
    from jaxloopfix.config import Settings
    from jaxloopfix.engine import lint_text

    text = (FIXTURES / "JLF001" / "axis1.py").read_text(encoding="utf-8")
    kept = source._RECENT.chars, prefilter._COLLECTED.chars
    source.keep_recent(0)  # as the language server does: only the last texts are kept
    try:
        alive = []
        for version in range(6):
            assert lint_text(text + f"\n# edit {version}\n", "axis1.py", Settings())
            gc.collect()
            alive.append(sum(isinstance(o, cst.Module) for o in gc.get_objects()))
    finally:
        source._RECENT.chars, prefilter._COLLECTED.chars = kept
    assert alive[-1] == alive[2], alive


def _scope_facts(scope, name: str | None) -> object:
    """What the analysis reads of a scope: its kind and name chain, and for a name the
    bindings `scope[name]` gives (by node identity and position)."""
    if scope is None:
        return None
    chain = []
    current = scope
    while True:
        chain.append((type(current).__name__, current._name_prefix))
        if current.parent is current:
            break
        current = current.parent
    if name is None:
        return tuple(chain)
    bindings = frozenset(
        (type(a).__name__, a.name, id(getattr(a, "node", None)), getattr(a, "_index", None)) for a in scope[name]
    )
    return tuple(chain), bindings, name in scope


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_scopes_per_function_match_the_whole_module_pass(path: Path, libcst_reference) -> None:
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    reference = libcst_reference(parsed.module, ScopeProvider)
    for node in reversed(descendants(parsed.module)):  # inner nodes first: functions expand on demand
        name = node.value if isinstance(node, cst.Name) else None
        assert _scope_facts(parsed.scope(node), name) == _scope_facts(reference.get(node), name), (node, name)


# Real modules with `global` statements (bound at module level from inside functions).
GLOBALS = [
    path
    for path in sorted(Path(flax.__file__).parent.rglob("*.py")) + sorted(Path(jax.__file__).parent.rglob("*.py"))
    if re.search(r"^[ \t]*global\b", path.read_text(encoding="utf-8"), re.MULTILINE)
]


@pytest.mark.parametrize("path", GLOBALS, ids=lambda p: p.name)
def test_scopes_of_modules_with_global_statements_match_the_whole_module_pass(path: Path, libcst_reference) -> None:
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    reference = libcst_reference(parsed.module, ScopeProvider)
    for node in reversed(descendants(parsed.module)):
        name = node.value if isinstance(node, cst.Name) else None
        assert _scope_facts(parsed.scope(node), name) == _scope_facts(reference.get(node), name), (node, name)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_call_lines_match_libcst_positions(path: Path, libcst_reference) -> None:
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    reference = libcst_reference(parsed.module, cst.metadata.PositionProvider)
    for node in descendants(parsed.module):
        if isinstance(node, cst.Call):
            assert parsed.call_line(node) == reference[node].start.line


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_positions_per_statement_match_the_whole_module_pass(path: Path, libcst_reference) -> None:
    text = path.read_text(encoding="utf-8")
    parsed = ParsedModule(text, str(path))
    reference = libcst_reference(parsed.module, cst.metadata.PositionProvider)
    statements = set(parsed.module.body)
    inside = [n for n in descendants(parsed.module) if any(a in statements for a in (n, *parsed.ancestors(n)))]
    for node in inside:
        assert parsed.position(node) == reference[node], node
    assert "positions" not in parsed._syntax.__dict__  # no whole-module pass was needed


@pytest.mark.parametrize(
    "text",
    [
        "import jax\r\nx = 1; y = 2\r\n\r\n# note\r\n@jax.jit\r\ndef f(a):\r\n    return a\r\n",
        "x = 1\n\n\n@(\n    deco\n)\ndef f():\n    pass",
        "class A:\n    pass\n# trailing comment",
        "if x:\n    y = 1\nelse:\n    y = 2\n\n\n",
    ],
)
def test_positions_per_statement_on_unusual_layouts(text: str, libcst_reference) -> None:
    parsed = ParsedModule(text, "t.py")
    reference = libcst_reference(parsed.module, cst.metadata.PositionProvider)
    for node in descendants(parsed.module):
        assert parsed.position(node) == reference[node], node


def test_type_parameters_take_the_whole_module_pass() -> None:
    assert eager_only("def first[T](xs: list[T]) -> T:\n    return xs[0]\n")
    assert eager_only("type Vector = list[float]\n")
    assert not eager_only("def f(x):\n    globals_seen = x\n    return x\n")
    assert not eager_only("def f():\n    global counter\n    counter = 1\n")


@pytest.mark.parametrize(
    "text",
    [
        "import jax\nstate = 0\n\ndef bump():\n    global state\n    state = jax.numpy.ones(3)\n\ndef read():\n    return state\n",
        # Read before the function binding it, from a method, a nested function and a lambda.
        (
            "def read():\n    return state + 1\n\nclass C:\n    def m(self):\n        return state\n\n"
            "def outer():\n    def inner():\n        global state\n        state = 2\n    return inner\n\nf = lambda: state\n"
        ),
        # On one line with other statements, where a line-start search would miss it.
        "def set_both(v):\n    x = 1; global a, b\n    a = b = v\n\ndef get():\n    return a, b\n",
        "class Config:\n    def load(self):\n        if True: global loaded\n        loaded = self\n\nprint(loaded)\n",
    ],
)
def test_functions_binding_globals_are_visited_with_the_module(text: str, libcst_reference) -> None:
    parsed = ParsedModule(text, "t.py")
    reference = libcst_reference(parsed.module, ScopeProvider)
    for node in reversed(descendants(parsed.module)):
        name = node.value if isinstance(node, cst.Name) else None
        assert _scope_facts(parsed.scope(node), name) == _scope_facts(reference.get(node), name), (node, name)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_parents_names_and_qualified_names_match_libcst_providers(path: Path, libcst_reference) -> None:
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    reference = libcst_reference(parsed.module, ParentNodeProvider, QualifiedNameProvider)
    parents, qualified = reference[ParentNodeProvider], reference[QualifiedNameProvider]
    nodes = descendants(parsed.module)
    assert len(nodes) > 1
    for node in nodes:
        assert parsed.parent(node) is parents.get(node)
        expected = qualified.get(node)
        if callable(expected):  # resolved lazily by the provider
            expected = expected()
        # JAX's private spellings of its transforms read as their public names (`public_names`).
        assert parsed.qualified_names(node) == set(as_public(frozenset(q.name for q in expected or ())))
    assert parsed.all_names == frozenset(names_in(parsed.module))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_name_screen_never_rules_out_a_qualified_name(path: Path) -> None:
    """`may_be_named(node, targets)` answers without scopes; it may say yes wrongly, never no
    wrongly: for every name libcst gives a node (outside a function's locals, a class body or
    a relative import), the screen lets it through."""
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    for node in descendants(parsed.module):
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        for name in parsed.qualified_names(node):
            head = name.split(".", 1)[0]
            if "<locals>" in name or name.startswith(".") or parsed.may_define(head, cst.ClassDef):
                continue
            assert parsed.may_be_named(node, frozenset({name})), (name, parsed.code(node))


def test_the_name_screen_follows_imports_and_rules_out_the_rest() -> None:
    text = (
        "import jax.numpy\nimport jax.numpy as jnp\nfrom jax import jit as J\nfrom .layers import scan\n\n"
        "def f(xs, jit):\n    def g(): import flax.linen as nn; return nn.scan\n"
        "    return J, jnp.stack, jax.numpy.stack, jit, scan, range, xs.map\n"
    )
    parsed = ParsedModule(text, "t.py")
    by_code = {parsed.code(n): n for n in descendants(parsed.module) if isinstance(n, (cst.Name, cst.Attribute))}
    targets = frozenset({"jax.jit", "jax.numpy.stack", "jax.lax.scan", "flax.linen.scan", "builtins.range", "jax.lax.map"})
    passed = {code for code, node in by_code.items() if parsed.may_be_named(node, targets)}
    assert {"J", "jnp.stack", "jax.numpy.stack", "range", "nn.scan"} <= passed
    # A parameter named `jit`, a relative import's `scan`, a method on a parameter: never targets.
    assert not {"jit", "scan", "xs.map"} & passed


def test_qualified_names_follow_aliases_and_shadowing() -> None:
    parsed = ParsedModule(
        "import jax as jx\nfrom jax import lax as L\n\ndef f(jx):\n    return jx.jit\n\ng = L.scan\nh = jx.jit\n",
        "t.py",
    )
    attributes = [n for n in descendants(parsed.module) if isinstance(n, cst.Attribute)]
    # The parameter `jx` shadows the import: not `jax.jit`.
    assert [parsed.qualified_name(a) for a in attributes] == ["f.<locals>.jx.jit", "jax.lax.scan", "jax.jit"]


class _Preorder(cst.CSTVisitor):
    """The nodes libcst's own visit enters, in order; `stop` nodes are entered but not descended."""

    def __init__(self, stop: type | None = None, root: cst.CSTNode | None = None) -> None:
        super().__init__()
        self.seen: list[cst.CSTNode] = []
        self.stop, self.root = stop, root

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(node)
        return self.stop is None or node is self.root or type(node) is not self.stop


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_walks_from_the_document_order_match_libcst_visits(path: Path) -> None:
    """`walk` below a node of an indexed module reads a slice of the module's node order; it must
    yield what libcst's own visit enters, with and without a subtree cut off."""
    parsed = ParsedModule(path.read_text(encoding="utf-8"), str(path))
    nodes = parsed.nodes  # indexes the module
    roots = [parsed.module] + [n for n in nodes if type(n) in (cst.FunctionDef, cst.ClassDef, cst.For, cst.Call)][::3]
    for root in roots:
        whole = _Preorder()
        libcst_visit(root, whole)
        assert list(walk(root)) == whole.seen
        start, end = parsed.order(root)
        assert nodes[start] is root and end - start + 1 == len(whole.seen)
        cut = _Preorder(cst.FunctionDef, root)
        libcst_visit(root, cut)
        assert list(walk(root, lambda n, r=root: n is r or type(n) is not cst.FunctionDef)) == cut.seen


def test_the_scope_visitors_leave_hook_is_the_one_reproduced() -> None:
    """`lazy_scopes` re-states `ScopeVisitor.on_leave` with an exact-type test; a libcst that
    changes that hook must be looked at again."""
    import inspect

    from libcst.metadata.scope_provider import ScopeVisitor

    body = [line.strip() for line in inspect.getsource(ScopeVisitor.on_leave).splitlines()[1:] if line.strip()]
    assert body == [
        "self.provider.set_metadata(original_node, self.scope)",
        "if isinstance(original_node, _ASSIGNMENT_LIKE_NODES):",
        "self.scope._assignment_count += 1",
        "super().on_leave(original_node)",
    ]


def test_recent_syntax_is_kept_within_its_budget() -> None:
    """A project run keeps the syntax of the texts it linted last, within a character budget;
    the language server keeps only the last two (`keep_recent(0)`)."""
    from jaxloopfix.analysis import source

    texts = [f"def f{i}(x):\n    return x + {i}\n" for i in range(6)]
    from jaxloopfix import prefilter

    saved = source._RECENT.chars, prefilter._COLLECTED.chars
    try:
        source.keep_recent(10_000)
        first = [ParsedModule(t, "m.py")._syntax for t in texts]
        assert all(source._RECENT.peek(t) is syntax for t, syntax in zip(texts, first))  # all kept
        assert ParsedModule(texts[0], "m.py")._syntax is first[0]  # and reused, not parsed again
        source.keep_recent(0)
        ParsedModule("x = 1\n", "m.py")
        assert list(source._RECENT)[-2:] == [texts[0], "x = 1\n"] and len(source._RECENT) == 2
    finally:
        source._RECENT.chars, prefilter._COLLECTED.chars = saved


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_unvalidated_parse_builds_libcst_s_tree(path: Path) -> None:
    from jaxloopfix.analysis.source import parse_unvalidated

    text = path.read_text(encoding="utf-8")
    module = parse_unvalidated(text)
    assert module.deep_equals(cst.parse_module(text)) and module.code == text


def test_nodes_built_after_an_unvalidated_parse_are_validated() -> None:
    from jaxloopfix.analysis.source import parse_unvalidated

    parse_unvalidated("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        parse_unvalidated("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # and still after a parse that failed
