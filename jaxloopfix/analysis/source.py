"""A parsed module with the libcst metadata every analysis step needs.

The metadata is resolved once per file and shared by all rules, so adding a
rule never adds a parse or a metadata pass. Only `ScopeProvider` runs as a
analysis, and only over the functions a rule asks about (`lazy_scopes`):
qualified names are asked of the node's scope when a rule needs one (what
`QualifiedNameProvider` does for every node of the module), and parents come
from a walk over the nodes' fields (the same map as `ParentNodeProvider`,
tested against it, at a quarter of the cost of a visitor traversal). Each
provider pass is a full traversal in Python; on a large Flax module the
whole-module passes cost several times the parse.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterator
from functools import cached_property

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    CodePosition,
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
)

from jaxloopfix.analysis.public_names import as_public, with_public
from jaxloopfix.analysis.lazy_scopes import LazyScopes, binding_globals, eager_only, may_bind_globals
from jaxloopfix.analysis.walk import DocumentOrder, indexed, install_fast_visit, install_identity_hash, preorder, walk
from jaxloopfix.newer_syntax import parse_ast, unchecked_nodes
from jaxloopfix.text_memo import TextMemo

install_fast_visit()
install_identity_hash()


def parse_unvalidated(text: str) -> cst.Module:
    """`cst.parse_module` without the check each node's constructor runs (`CSTNode._validate`,
    about a seventh of a parse). The parser only builds nodes that hold what the check asks (its
    own source notes the check could be skipped when parsing a file); nodes a rewrite builds are
    still checked."""
    with unchecked_nodes():
        return cst.parse_module(text)


class _Syntax:
    """What depends on a text alone: the tree, its parents, scopes, order and positions.

    The project pass lints a file again each time other modules trace more of it, with
    other settings but the same text; the last few texts keep their `_Syntax` so those
    rounds (and a language server's repeated lints) parse and resolve scopes once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.module = parse_unvalidated(text)
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.qnames: dict[cst.CSTNode, frozenset[str]] = {}
        self.named: dict[cst.CSTNode, frozenset[str] | None] = {}  # see `ParsedModule.may_be_named`
        # Positions per top-level statement, filled as asked (None: take the whole-module pass).
        self.statement_ranges: dict[cst.CSTNode, dict[cst.CSTNode, CodeRange] | None] = {}

    @cached_property
    def positions(self):
        # Positions cost a full code generation pass: computed only when a diagnostic needs one.
        return self.wrapper.resolve(PositionProvider)

    @cached_property
    def ast_tree(self) -> ast.Module | None:
        """The stdlib parser's tree of the same text (the pre-filter's, when it parsed this text)."""
        try:
            return parse_ast(self.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def statement_lines(self) -> dict[cst.CSTNode, int]:
        """Each top-level statement's first line (its first decorator's for a decorated
        definition) as the stdlib parser places it; empty when the two parsers split the
        module differently (`a = 1; b = 2` is one libcst line and two `ast` statements)."""
        if self.ast_tree is None:
            return {}
        body = self.ast_tree.body
        found: dict[cst.CSTNode, int] = {}
        i = 0
        for statement in self.module.body:
            if i >= len(body):
                return {}
            first = body[i]
            found[statement] = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
            i += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        return found if i == len(body) else {}

    @cached_property
    def line_offsets(self) -> list[int]:
        """Where each line of the text starts (libcst's line breaks: `\\r\\n`, `\\r`, `\\n`)."""
        return [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]

    def statement_positions(self, statement: cst.CSTNode) -> dict[cst.CSTNode, CodeRange] | None:
        """Positions of the nodes of one top-level statement, from a code generation pass over
        that statement alone, moved to its line; None when its place in the text is not
        certain (then the caller takes the whole-module pass)."""
        memo = self.statement_ranges
        if statement in memo:
            return memo[statement]
        memo[statement] = None
        first = self.statement_lines.get(statement)
        leading = getattr(statement, "leading_lines", None)
        if first is None or leading is None:
            return None
        top = first - len(leading)  # the line the statement's code (its leading lines) starts on
        if not 1 <= top < len(self.line_offsets):
            return None
        alone = self.module.with_changes(body=[statement], header=(), footer=())
        start = self.line_offsets[top - 1]
        code = alone.code
        if self.text[start : start + len(code)] != code and not (
            not self.module.has_trailing_newline and self.text[start:] == code.rstrip("\r\n")
        ):
            return None
        relative = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        shift = top - 1
        moved = {}
        for node, value in relative.items():
            if isinstance(value, LazyValue):
                value = value()
            moved[node] = CodeRange(
                CodePosition(value.start.line + shift, value.start.column),
                CodePosition(value.end.line + shift, value.end.column),
            )
        memo[statement] = moved
        return moved

    @cached_property
    def tree(self) -> _Tree:
        tree = _Tree(self.module)
        indexed(tree.order)  # `walk` below this module's nodes now slices `tree.nodes`
        return tree

    @cached_property
    def scopes(self) -> LazyScopes:
        tree = self.tree
        whole = frozenset()
        if may_bind_globals(self.text):
            whole = binding_globals([n for n in tree.nodes if type(n) is cst.Global], tree.parents)
        return LazyScopes(self.module, tree.parents, eager=eager_only(self.text), whole=whole)

    @cached_property
    def nodes(self) -> list[cst.CSTNode]:
        return self.tree.nodes

    def order(self, node: cst.CSTNode) -> tuple[int, int]:
        order = self.tree.order
        start = order.index[node]
        return start, order.ends[start]

    @cached_property
    def call_lines(self) -> tuple[dict[cst.Call, int], list[tuple[int, str]]]:
        """Each libcst call's index in document order, and the stdlib `ast` calls' (line, callee's
        last name) in the same order: the lines of calls without a code generation pass."""
        index = {node: i for i, node in enumerate(n for n in self.nodes if type(n) is cst.Call)}
        if self.ast_tree is None:
            return index, []
        from jaxloopfix.prefilter import calls_of

        calls = calls_of(self.text, self.ast_tree)
        if calls is None:
            calls = [n for n in ast.walk(self.ast_tree) if type(n) is ast.Call]
        calls.sort(key=lambda n: (n.lineno, n.col_offset, -(n.end_lineno or 0), -(n.end_col_offset or 0)))
        return index, [(n.lineno, _ast_tail(n.func)) for n in calls]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# At least the last two texts are kept, and more while they hold at most 4M characters. A
# module's tree and metadata take up to about 200 bytes per character; a 2-job `check` of jax
# (15M characters) peaked at 1.5 GB over its three processes.
_RECENT: TextMemo[_Syntax] = TextMemo(chars=4_000_000, keep=2)


def keep_recent(chars: int) -> None:
    """Keep other texts' syntax (and the pre-filter's walks) while the kept texts hold at
    most `chars` characters; the last texts are always kept. A language server sets 0: an
    edited document's earlier versions are never linted again."""
    from jaxloopfix import prefilter

    _RECENT.chars = prefilter._COLLECTED.chars = chars


def _syntax(text: str) -> _Syntax:
    """The syntax of `text`, kept for the texts linted last: the project pass lints a file
    again, with more seeds, after other modules are linted."""
    found, kept = _RECENT.get(text, _Syntax)
    if kept and "tree" in found.__dict__:
        indexed(found.tree.order)  # `walk` slices its nodes again
    return found


class ParsedModule:
    """A libcst module plus resolved metadata keyed by node identity."""

    def __init__(
        self,
        text: str,
        filename: str,
        hidden: frozenset[str] = frozenset(),
        bound: frozenset[str] = frozenset(),
        ast_tree: ast.Module | None = None,
    ) -> None:
        self.text = text
        self.filename = filename
        # Identifiers of code left out of `text`, and the module-level names it binds
        # (see `prefilter.Reduced`).
        self.hidden = hidden
        self.bound = bound
        syntax = self._syntax = _syntax(text)
        if ast_tree is not None:  # `ast_tree`: the stdlib parser's tree of `text`, if one was made
            syntax.__dict__.setdefault("ast_tree", ast_tree)
        self.module = syntax.module
        self.wrapper = syntax.wrapper
        self._qnames = syntax.qnames
        self._named = syntax.named
        self._code = self.kept("code")

    def kept(self, name: str) -> dict:
        """A dict kept with this text's syntax: what a lint of the same text can take up again."""
        return self._syntax.__dict__.setdefault(f"kept: {name}", {})

    @property
    def _positions(self):
        return self._syntax.positions

    @property
    def _scopes(self) -> LazyScopes:
        return self._syntax.scopes

    @property
    def _tree(self) -> _Tree:
        return self._syntax.tree

    @property
    def nodes(self) -> list[cst.CSTNode]:
        """Every node of the module in document order (walked once per text)."""
        return self._syntax.nodes

    def order(self, node: cst.CSTNode) -> tuple[int, int]:
        """(pre-order index, index of the last node in its subtree): cheap document order."""
        return self._syntax.order(node)

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        o_start, o_end = self.order(outer)
        i_start, _ = self.order(inner)
        return o_start <= i_start <= o_end

    def after(self, node: cst.CSTNode, reference: cst.CSTNode) -> bool:
        """Whether `node` comes after the whole of `reference` in the source."""
        return self.order(node)[0] > self.order(reference)[1]

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        names = self._qnames.get(node)
        if names is None:
            scope = self.scope(node)
            found: set[QualifiedName] = scope.get_qualified_names_for(node) if scope else set()
            names = self._qnames[node] = as_public(frozenset(q.name for q in found))
        return set(names)

    def may_be_named(self, node: cst.CSTNode, targets: frozenset[str]) -> bool:
        """False when no qualified name of `node` (a Name or Attribute) can be one of `targets`,
        known without resolving any scope.

        libcst names a dotted expression after the binding of its longest bound prefix:
        `<what the import binds>.<rest>` for an import, `<dotted>` for a module-level
        binding, `f.<locals>.<dotted>` (never a target) for a local one, `builtins.<dotted>`
        for a builtin. So a target is possible only as the expression itself, as a builtin,
        or through some import in the module (any scope: a superset) binding one of its
        prefixes. Asked first, it spares the scope analysis of the many functions whose calls
        are never transforms."""
        memo = self._named
        if node in memo:
            names = memo[node]
        else:
            names = memo[node] = self._possible_names(node)
        return names is None or not names.isdisjoint(targets)

    def _possible_names(self, node: cst.CSTNode) -> frozenset[str] | None:
        """Every name `may_be_named` lets through for `node` (None: any name)."""
        dotted = get_full_name_for_node(node)
        if dotted is None:
            return None
        names = {dotted}
        head = dotted.partition(".")[0]
        if hasattr(builtins, head):
            names.update((f"builtins.{dotted}", f"builtins.{head}"))
        sources = self._tree.import_sources
        end = -1
        while True:
            end = dotted.find(".", end + 1)
            prefix = dotted if end == -1 else dotted[:end]
            rest = "" if end == -1 else dotted[end:]
            names.update(source + rest for source in sources.get(prefix, ()))
            if end == -1:
                return with_public(frozenset(names))

    def may_import(self, name: str) -> bool:
        """Whether an import anywhere in the module binds `name` (else no binding of it is one)."""
        return name in self._tree.imported

    def imports_from(self, roots: frozenset[str] | set[str]) -> bool:
        """Whether an absolute import anywhere in the module names one of the packages `roots`."""
        return any(source.partition(".")[0] in roots for sources in self._tree.import_sources.values() for source in sources)

    def may_import_from(self, name: str, roots: frozenset[str] | set[str]) -> bool:
        """Whether some import in the module may bind `name` to a module or object under one of
        the top-level packages `roots` (a relative import may: it names the module's own package).
        False spares the scope lookup that decides which import binds it."""
        tree = self._tree
        if name in tree.relative_imported:
            return True
        return any(source.partition(".")[0] in roots for source in tree.import_sources.get(name, ()))

    def may_define(self, name: str, kind: type) -> bool:
        """Whether a `def` (kind FunctionDef) or `class` (ClassDef) anywhere in the module binds `name`."""
        return name in self._tree.defined[kind]

    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """The single qualified name of `node`, or None when unknown or ambiguous."""
        names = self.qualified_names(node)
        return next(iter(names)) if len(names) == 1 else None

    def scope(self, node: cst.CSTNode):
        value = self._scopes.get(node)
        if isinstance(value, LazyValue):
            value = value()
        return value

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._tree.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def position(self, node: cst.CSTNode) -> CodeRange:
        """`PositionProvider`'s range for `node`; for a node inside a top-level statement, from
        a pass over that statement alone (a diagnostic needs a few positions, not all)."""
        if "positions" not in self._syntax.__dict__:
            top = node
            parent = self.parent(top)
            while parent is not None and parent is not self.module:
                top, parent = parent, self.parent(parent)
            if parent is self.module:
                found = self._syntax.statement_positions(top)
                if found is not None and node in found:
                    return found[node]
        value = self._positions[node]
        if isinstance(value, LazyValue):
            value = value()
        return value

    def call_line(self, call: cst.Call) -> int:
        """The line `call` starts on (what `position(call).start.line` gives, usually without
        computing every node's position: the stdlib parser's call at the same index in
        document order, when it calls the same name)."""
        index, lines = self._syntax.call_lines
        i = index.get(call)
        if i is not None and len(lines) == len(index) and lines[i][1] == _cst_tail(call.func):
            return lines[i][0]
        return self.position(call).start.line

    def code(self, node: cst.CSTNode) -> str:
        """The source of `node`, generated once: the kinds' fixpoint and the messages ask for the
        same expressions again, and libcst generates it anew each time."""
        memo = self._code
        found = memo.get(node)
        if found is None:
            found = memo[node] = self.module.code_for_node(node)
        return found

    @cached_property
    def all_names(self) -> frozenset[str]:
        """Every identifier in the module: generated names must avoid all of them."""
        return frozenset(self._tree.names) | self.hidden

    @cached_property
    def module_names(self) -> frozenset[str]:
        """Names bound at module level (functions, classes, imports, globals)."""
        from jaxloopfix.analysis.names import assigned_names

        return frozenset(assigned_names(self.module.body)) | self.bound

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)


def _cst_tail(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return type(func).__name__


def _ast_tail(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return type(func).__name__


def descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node` and every node below it, in document order."""
    return list(walk(node))


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier under `node`."""
    return {inner.value for inner in walk(node) if isinstance(inner, cst.Name)}


def comments_in(node: cst.CSTNode) -> list[cst.Comment]:
    """The comments under `node`, in document order (a rewrite must keep them)."""
    return [inner for inner in descendants(node) if isinstance(inner, cst.Comment)]


def shorten(code: str, limit: int = 60) -> str:
    """Source code on one line, cut to `limit` characters, for messages."""
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


class _Tree:
    """Every node's parent, the nodes in document order and the module's identifiers, from
    one walk over node fields.

    A libcst node's children are exactly the nodes in its dataclass fields (alone or in
    a sequence); the walk reads them directly instead of rebuilding each node as a
    visitor does."""

    def __init__(self, module: cst.Module) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.names: set[str] = set()
        # Names of the module's functions and classes (at any depth).
        self.defined: dict[type, set[str]] = {cst.FunctionDef: set(), cst.ClassDef: set()}
        # What the names absolute imports bind stand for, at any depth of the module:
        # `jnp` -> {"jax.numpy"}, `J` -> {"jax.jit"} (`from jax import jit as J`), and for
        # `import jax.numpy` both `jax` and `jax.numpy` themselves.
        self.import_sources: dict[str, set[str]] = {}
        self.relative_imported: set[str] = set()  # names bound by `from . import x`, `from .m import y`
        # The first names every import binds (`import jax.numpy` binds `jax`), absolute or not.
        self.imported: set[str] = set()
        # Every node in document order (pre-order), as `walk(module)` gives them, and for
        # each place in that order the place of the last node of its subtree.
        names, definitions = self.names, self.defined
        on_kind: dict[type, Callable[[cst.CSTNode], object]] = {
            cst.Name: lambda node: names.add(node.value),  # type: ignore[attr-defined]
            cst.FunctionDef: lambda node: definitions[cst.FunctionDef].add(node.name.value),  # type: ignore[attr-defined]
            cst.ClassDef: lambda node: definitions[cst.ClassDef].add(node.name.value),  # type: ignore[attr-defined]
            cst.Import: self._bind,  # type: ignore[dict-item]
            cst.ImportFrom: self._bind,  # type: ignore[dict-item]
        }
        self.nodes, self.parents, above = preorder(module, on_kind)
        nodes = self.nodes
        # From the right, a node's last child is met before its other children: its end is
        # the parent's end.
        ends = list(range(len(nodes)))
        for place in range(len(nodes) - 1, 0, -1):
            parent = above[place]
            if ends[parent] == parent:
                ends[parent] = ends[place]
        self.order = DocumentOrder(nodes, ends)

    def _bind(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return  # binds nothing libcst names
        for alias in node.names:  # relative imports too
            self.imported.add((alias.evaluated_alias or alias.evaluated_name).partition(".")[0])
        module = None
        if isinstance(node, cst.ImportFrom):
            if node.relative or node.module is None:
                self.relative_imported.update((a.evaluated_alias or a.evaluated_name) for a in node.names)
                return  # named relatively (`.layers.step`): never a target's absolute name
            module = get_full_name_for_node(node.module)
        sources = self.import_sources
        for alias in node.names:
            name, bound = alias.evaluated_name, alias.evaluated_alias
            if module is not None:
                sources.setdefault(bound or name, set()).add(f"{module}.{name}")
            elif bound is not None:
                sources.setdefault(bound, set()).add(name)
            else:
                parts = name.split(".")
                for end in range(1, len(parts) + 1):
                    prefix = ".".join(parts[:end])
                    sources.setdefault(prefix, set()).add(prefix)
