"""A cheap first pass with the stdlib `ast` parser (several times faster than libcst).

It checks syntax (with Python's own error positions) and decides whether a
file can have findings at all: every rule needs a `for` loop inside a
function that may be traced. A traced function needs an import from `jax`,
`equinox`, `flax`, `haiku`, `numpyro` or a configured decorator's or base
class's package, and is reached from a decorator or wrapper whose name is a
transform's (`jit`, `grad`, `compact`, `transform`, ...), from a call that
takes functions (`scan`, `cond`, `defvjp`, `NUTS`, ...), from a class whose
base's name is a module's (`Module`: all its methods), by nesting or by
calls. This pass over-approximates that set by names alone, so
files it rejects give identical (empty) results under the full libcst
analysis, which matches transforms by qualified name.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import re
from dataclasses import dataclass, field
from functools import cache, cached_property

from jaxloopfix.newer_syntax import parse_ast
from jaxloopfix.ast_walk import child_nodes, walk
from jaxloopfix.diagnostics import Edit
from jaxloopfix.analysis.library_jits import JAX_LIBRARIES
from jaxloopfix.analysis.partials import PARTIAL_NAMES
from jaxloopfix.rewrite.edits import line_starts, location_of
from jaxloopfix.text_memo import TextMemo

TRACING_ROOTS = frozenset({"jax", "equinox", "flax", "haiku", "numpyro", "objax", "trax", "chex", "optax", "diffrax", "optimistix",
                           "lineax", "jaxopt", "blackjax", "tensorcircuit"})
TRANSFORM_NAMES = frozenset(
    {"jit", "pmap", "pjit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "hessian", "checkpoint",
     "remat", "named_call", "filter_jit", "filter_grad", "filter_value_and_grad", "filter_vmap", "filter_pmap",
     "filter_checkpoint", "shard_map", "custom_vjp", "custom_jvp", "defvjp", "defjvp", "compact",
     "transform", "transform_with_state", "remat_scan", "map_variables", "jvp", "vjp", "custom_gradient",
     "linearize", "linear_transpose", "eval_shape", "make_jaxpr", "closure_convert", "xmap", "convert", "odeint",
     "custom_root", "custom_linear_solve", "jacobian", "Jit", "Grad", "GradValues", "Vectorize", "Parallel",
     "Function", "variant"}
)
# Calls whose function arguments are traced (`lax.scan(step, ...)`, `NUTS(model)`, `nn.scan(Cell)`).
CALLEE_NAMES = frozenset(
    {"scan", "fori_loop", "while_loop", "cond", "switch", "map", "associative_scan", "MCMC", "NUTS", "HMC",
     "SA", "BarkerMH", "SVI", "Predictive", "GradientTransformation", "GradientTransformationExtraArgs", "stateless",
     "stateless_with_tree_map", "ODETerm", "ControlTerm", "root_find", "minimise", "least_squares", "fixed_point",
     "FunctionLinearOperator", "minimize", "LBFGS", "BFGS", "GradientDescent", "ProximalGradient", "OptaxSolver",
     "nuts", "hmc", "mala"}
)
# Base classes whose subclasses' methods may be traced (Flax, Haiku, Equinox modules).
# Environments (gymnax, Brax, Jumanji, pgx, MuJoCo Playground, JaxMARL): `step` and its hooks.
BASE_NAMES = frozenset({"Module", "Layer", "BaseLayer", "Environment", "Env", "PipelineEnv", "MjxEnv", "MultiAgentEnv"})


class SyntaxProblem(Exception):
    def __init__(self, message: str, row: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def _partial_target(decorator: ast.expr) -> ast.expr:
    """`functools.partial(staged, static_argnums=1)` decorates with `staged`: its first argument."""
    if isinstance(decorator, ast.Call) and decorator.args and isinstance(decorator.func, (ast.Name, ast.Attribute)) \
            and (decorator.func.id if isinstance(decorator.func, ast.Name) else decorator.func.attr) in PARTIAL_NAMES:
        return decorator.args[0]
    return decorator


def _roots(extra_decorators: tuple[str, ...]) -> frozenset[str] | None:
    """Import roots that can bring a tracing transform; None when any module may (a local decorator)."""
    roots = set(TRACING_ROOTS)
    for name in extra_decorators:  # decorators and base classes alike
        if "." not in name:
            return None
        roots.add(name.split(".", 1)[0])
    return frozenset(roots)


def may_have_findings(text: str, *args, **kwargs) -> bool:
    """False when no rule can fire (`scan` found nothing); raises SyntaxProblem like `scan`."""
    return scan(text, *args, **kwargs) is not None


@dataclass
class Scan:
    """A file that may have findings, and which of its top-level statements can matter."""

    found: _Collected
    # Functions that may run traced (by name, a superset) and the calls that may make them
    # so (`lax.scan(step, ...)`); None when the whole module is needed.
    reached: list[ast.AST] | None
    # Whether the analysis reads the whole text all the same, the reduction serving only
    # `analysed_digest`: where it keeps parameter flows or passes re-exports on (most of jax),
    # each round's seeds give another reduced text, parsed again in every round (a cold jax
    # check took 27% longer), while the whole text's tree is kept for the later rounds.
    whole: bool = False

    @property
    def tree(self) -> ast.Module:
        return self.found.tree

    def reduce(self, text: str) -> Reduced | None:
        """`text` without the top-level functions and classes no traced code can reach or
        name; None when nothing can be left out. See `Reduced`."""
        if self.reached is None:
            return None
        body = self.tree.body
        owner, mentions = self.found.statements
        droppable = {i for i, st in enumerate(body) if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        keep = {owner[id(f)] for f in self.reached} | (set(range(len(body))) - droppable)
        by_name: dict[str, list[int]] = {}
        for i in droppable:
            by_name.setdefault(body[i].name, []).append(i)  # type: ignore[attr-defined]
        # A class deriving from a kept class is kept too: its overrides and stores decide what the
        # base's traced methods do (a subclass storing an array where the base stores a list).
        subclasses: dict[str, list[int]] = {}
        for i in droppable:
            statement = body[i]
            if isinstance(statement, ast.ClassDef):
                for base in statement.bases:
                    name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
                    if name is not None:
                        subclasses.setdefault(name, []).append(i)
        work = list(keep)
        while work:  # a kept statement naming a definition keeps it too
            index = work.pop()
            statement = body[index]
            derived = subclasses.get(statement.name, []) if isinstance(statement, ast.ClassDef) else []
            for i in [*derived, *(i for name in mentions[index] for i in by_name.get(name, ()))]:
                if i not in keep:
                    keep.add(i)
                    work.append(i)
        dropped = sorted(droppable - keep)
        if not dropped:
            return None
        lines = _LINE.findall(text)
        if "".join(lines) != text or len(lines) < max(st.end_lineno or st.lineno for st in body):
            return None  # line breaks the tokenizer and this split disagree on: keep it whole
        hidden: set[str] = set()
        for i in dropped:
            statement = body[i]
            first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])  # type: ignore[attr-defined]
            last = statement.end_lineno or statement.lineno
            for row in range(first, last + 1):
                line = lines[row - 1]
                ending = line[len(line.rstrip("\r\n")) :]
                lines[row - 1] = f"{PLACEHOLDER}{row}" + ending
            hidden.update(self.found.identifiers(i))
        bound = frozenset(body[i].name for i in dropped)  # type: ignore[attr-defined]
        return Reduced("".join(lines), frozenset(hidden), bound, text)


@dataclass(frozen=True)
class Reduced:
    """A module with unreachable top-level definitions replaced by placeholder comments.

    Every line keeps its number and every kept line its text, so diagnostics need no
    mapping and edits map back by (row, column); libcst's metadata passes, the
    expensive part of the analysis, then run only over code that can matter. The
    placeholders never equal a line of rewritten code, so a diff never edits them.
    `hidden` are the identifiers of the omitted code (generated names avoid them too),
    `bound` the module-level names it defines."""

    text: str
    hidden: frozenset[str]
    bound: frozenset[str]
    original: str = field(repr=False, compare=False)

    @cached_property
    def _rows(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """Line starts of both texts (Python's line breaks, and `location_of`'s), and the
        omitted rows: computed once, whatever the number of fixes to map."""
        reduced_lines = _LINE.findall(self.text)
        omitted = [i for i, line in enumerate(reduced_lines) if line.startswith(PLACEHOLDER)]
        return _starts(reduced_lines), _starts(_LINE.findall(self.original)), omitted, line_starts(self.original)

    def map_edits(self, edits: tuple[Edit, ...]) -> tuple[Edit, ...] | None:
        """`edits` of the reduced text as edits of the original; None if one touches omitted code."""
        starts, original_starts, omitted, location_starts = self._rows
        out = []
        for edit in edits:
            if any(starts[i] < edit.end and edit.start < starts[i + 1] for i in omitted):
                return None
            start, end = (_moved(o, starts, original_starts) for o in (edit.start, edit.end))
            out.append(
                Edit(
                    edit.content, start, end,
                    location_of(self.original, start, location_starts), location_of(self.original, end, location_starts),
                )
            )
        return tuple(out)


PLACEHOLDER = "#jaxloopfix:omitted:"


def analysed_digest(code: str) -> str:
    """A digest of the code the libcst analysis reads: `code` (the pre-filter's reduced text,
    or the whole text) without its trailing blank and left-out lines.

    Two texts with the same digest differ only in code the pre-filter proved no traced code
    reaches or names (`prefilter.Reduced`: left out, every other line in its place) and in
    blank lines at the end. Their analyses see the same statements on the same lines, so
    their diagnostics, reasons and links agree, except what depends on the left-out code's
    identifiers (`Reduced.hidden`, `bound`): the names fixes generate. A result without
    diagnostics is therefore the result of every text with its digest."""
    lines = _LINE.findall(code)
    cut = len(code)
    while lines and (not lines[-1].strip() or lines[-1].startswith(PLACEHOLDER)):
        cut -= len(lines.pop())
    return hashlib.sha256(code[:cut].encode("utf-8", "surrogatepass")).hexdigest()


def _starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _moved(offset: int, starts: list[int], original_starts: list[int]) -> int:
    row = bisect.bisect_right(starts, offset) - 1
    return original_starts[row] + offset - starts[row]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _identifiers(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for inner in walk(node):
        if isinstance(inner, ast.Name):
            found.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            found.add(inner.attr)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(inner.name)
        elif isinstance(inner, ast.arg):
            found.add(inner.arg)
        elif isinstance(inner, ast.alias):
            found.update(inner.name.split("."))
            if inner.asname:
                found.add(inner.asname)
        elif isinstance(inner, ast.ImportFrom) and inner.module:
            found.update(inner.module.split("."))
        elif isinstance(inner, (ast.MatchAs, ast.MatchStar)) and inner.name:
            found.add(inner.name)
        elif isinstance(inner, ast.MatchMapping) and inner.rest:
            found.add(inner.rest)
        elif isinstance(inner, ast.keyword) and inner.arg:
            found.add(inner.arg)
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            found.update(inner.names)
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            found.add(inner.name)
    return found


def scan(text: str, *args, **kwargs) -> Scan | None:
    """See `_scan`. A text that cannot have findings is not linted, so its walk is not kept
    (in a project without JAX most files are such, and keeping their trees slowed every
    collection of the cyclic garbage collector)."""
    found = _scan(text, *args, **kwargs)
    if found is None:
        _COLLECTED.forget(text)
    return found


def _scan(
    text: str,
    extra_decorators: tuple[str, ...] = (),
    extra_base_classes: tuple[str, ...] = (),
    *,
    need_loop: bool = True,
    seeds: frozenset[str] = frozenset(),
    project_roots: frozenset[str] | None = None,
    class_flow: bool = True,
) -> Scan | None:
    """None when no rule can fire; raises SyntaxProblem for code Python cannot parse.

    `need_loop=False` when an enabled rule reports code without loops (slices, `if`s,
    host conversions): then any possibly traced function lets the file through.

    In a project pass, `seeds` names functions other modules trace (they count as
    traced, whatever this file imports), and with `project_roots` a file whose
    possibly traced code calls or wraps a name imported from the project goes
    through too: its analysis says what it traces in other modules. So does a file with a
    class deriving from a project class, unless `class_flow` is False (no checked file can
    define a framework class, see `project.may_define_framework_classes`)."""
    found = _collected(text)
    functions, classes, imports = found.functions, found.classes, found.imports
    roots = _roots(extra_decorators + extra_base_classes)
    imports_tracer = roots is None or bool(seeds) or not found.import_roots.isdisjoint(roots) \
        or (not found.import_roots.isdisjoint(JAX_LIBRARIES)  # `import brainpy.math as bm`, then `@bm.jit`
            and _names_library_jit(found.imports, found.maybe_entries, found.loaded))
    names = set(TRANSFORM_NAMES | CALLEE_NAMES | BASE_NAMES | {d.rsplit(".", 1)[-1] for d in extra_decorators})
    names.update(b.rsplit(".", 1)[-1] for b in extra_base_classes)
    for name, alias in found.aliases:  # `from jax import jit as J`: J is a transform's name too
        if name in names:
            names.add(alias)
    loaded, maybe_entries, shadows_root = found.loaded, found.maybe_entries, found.shadows_root
    # A seed naming no function here: a re-export (`from .layers import step` in `__init__.py`)
    # the analysis passes on, from the module-level imports every reduced text keeps.
    # A seed `Cls.method` (a method called on a parameter declared `Cls`) is passed on when
    # `Cls` is not defined here.
    reexports = any(
        name.split(".", 1)[0] not in found.classes if "." in name else name not in functions for name in seeds
    )
    project_names = _project_imports(imports, project_roots) if project_roots is not None else frozenset()
    # In a project pass, framework classes are passed on to the modules deriving from them:
    # a class on a framework base, or on a project class that may be one, is analysed.
    class_bases = project_names if class_flow else frozenset()
    exported = [
        c for group in classes.values() for c in group
        if project_roots is not None and class_flow and any(_mentions(base, BASE_NAMES | project_names) for base in c.bases)
    ]
    exports = bool(exported)
    # Decorators the project defines (`@staged`, `@utils.staged`): one may apply a transform to
    # what it decorates (`traced._tracing_decorator`), so the functions they decorate are followed.
    own_decorators = frozenset(functions) | project_names
    decorated = [
        f for group in functions.values() for f in group
        if any(_root_name(_partial_target(d)) in own_decorators for d in f.decorator_list
               if isinstance(_partial_target(d), (ast.Name, ast.Attribute)))
    ]
    if not reexports:
        if not (imports_tracer or exports) or not (functions or project_names or exports):
            return None
        configured = bool(extra_decorators or extra_base_classes or seeds or exports or decorated)
        if not configured and not shadows_root and not _names_an_entry(imports, maybe_entries, loaded):
            return None  # nothing here can start a trace: no function is traced, none links elsewhere
    possible, reached, flows = _reach(
        found, frozenset(names), need_loop=need_loop, seeds=seeds, imported=project_names,
        class_bases=class_bases, decorated=decorated, by_name=project_roots is not None,
    )
    if reached is not None:
        reached.extend(exported)  # kept, to be passed on to the modules deriving from them
    return Scan(found, reached, flows or reexports) if possible or exports or reexports else None


@dataclass(frozen=True)
class _Own:
    """A function's own part (its decorators, signature and body, nested functions left out):
    whether it holds a `for` loop or a comprehension, the functions nested in it, and its calls' callee names
    (last parts) and root names."""

    loops: bool
    nested: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...]
    callees: frozenset[str]
    roots: frozenset[str | None]


def _may_step_over_arrays(iterable: ast.expr) -> bool:
    """`comprehensions.candidate` on the stdlib tree: a comprehension over a literal, a dict's
    `.items()`/`.keys()`/`.values()` or a `range` of literals never steps over array data."""
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.JoinedStr)):
        return False
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
            and iterable.func.attr in ("items", "keys", "values"):
        return False
    return not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
                and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in iterable.args))


def _own(func: ast.FunctionDef | ast.AsyncFunctionDef) -> _Own:
    loops = False
    nested: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    callees: set[str] = set()
    roots: set[str | None] = set()
    work = child_nodes(func)
    while work:
        node = work.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested.append(node)
            continue
        if isinstance(node, ast.For) or isinstance(node, ast.comprehension) and _may_step_over_arrays(node.iter):
            loops = True  # a comprehension steps as a loop does (`comprehensions.py`)
        elif isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Name):
                callees.add(callee.id)
            elif isinstance(callee, ast.Attribute):
                callees.add(callee.attr)
            roots.add(_root_name(callee))
        work.extend(child_nodes(node))
    return _Own(loops, tuple(nested), frozenset(callees), frozenset(roots))


@dataclass
class _Collected:
    """What one walk over a text's `ast` tree finds, whatever the settings and seeds: the
    project pass scans a file again each time it is linted again."""

    tree: ast.Module
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]
    classes: dict[str, list[ast.ClassDef]]
    calls: list[ast.Call]
    imports: list[ast.Import | ast.ImportFrom]
    import_roots: frozenset[str]  # first parts of the modules absolute imports name
    aliases: list[tuple[str, str]]  # (name, alias) of `from ... import name as alias`, in order
    maybe_entries: list[ast.Attribute]
    loaded: set[str]
    shadows_root: bool
    # Whether a function binds a module-level name (`global`): a binding outside the
    # module-level statements, which `Scan.reduce` always keeps.
    rebinds_globals: bool = False
    # Assignments of a bare name (`step = f`): where a function may be aliased.
    name_assigns: list[ast.Assign] = field(default_factory=list)
    # Assignments of a call's result (`loss = make_loss(cfg)`, `p, s = make_density(mus)`): where
    # a factory's function may be bound.
    call_assigns: list[ast.Assign] = field(default_factory=list)
    identifier_memo: dict[int, set[str]] = field(default_factory=dict, repr=False)
    own_memo: dict[int, _Own] = field(default_factory=dict, repr=False)

    @cached_property
    def model_functions(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """The functions that call `numpyro.sample`-like primitives (in their body, decorators
        or defaults: what lies between their first decorator and their end), in `functions`'
        order. Found from the module's calls, not by walking every function (nested ones
        again in each enclosing one)."""
        primitives = [(c.lineno, c.col_offset) for c in self.calls if _is_model_primitive(c)]
        if not primitives:
            return []
        return [
            f for group in self.functions.values() for f in group
            if any(_start(f) <= at < _end(f) for at in primitives)
        ]

    @cached_property
    def function_values(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Functions used as values (passed as arguments, assigned to names inside functions):
        what an alias or a parameter handed to a tracing call may name."""
        functions = self.functions
        names = [
            value.id for call in self.calls for value in (*call.args, *(k.value for k in call.keywords))
            if isinstance(value, ast.Name) and value.id in functions
        ]
        names.extend(
            a.value.id for a in self.name_assigns  # type: ignore[attr-defined]
            if a.value.id in functions and self.owner(a) is not None  # type: ignore[attr-defined]
        )
        return [f for name in dict.fromkeys(names) for f in functions[name]]

    @cached_property
    def statements(self) -> tuple[dict[int, int], list[set[str]]]:
        """Which top-level statement each function, class and call is in (by the node's id),
        and the names (`Name`s and attributes) each statement mentions: what `Scan.reduce`
        needs whatever the seeds, found once for all the lints of a text."""
        owner: dict[int, int] = {}
        mentions: list[set[str]] = []
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Call)
        for index, statement in enumerate(self.tree.body):
            names: set[str] = set()
            for node in walk(statement):
                if isinstance(node, kinds):
                    owner[id(node)] = index
                elif isinstance(node, ast.Name):
                    names.add(node.id)
                elif isinstance(node, ast.Attribute):
                    names.add(node.attr)
            mentions.append(names)
        return owner, mentions

    def own(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> _Own:
        """What `func` holds outside its nested functions (`_Own`), found once per text."""
        found = self.own_memo.get(id(func))
        if found is None:
            found = self.own_memo[id(func)] = _own(func)
        return found

    def identifiers(self, index: int) -> set[str]:
        """The identifiers of top-level statement `index` (`_identifiers`), found once."""
        found = self.identifier_memo.get(index)
        if found is None:
            found = self.identifier_memo[index] = _identifiers(self.tree.body[index])
        return found

    @cached_property
    def _function_spans(self) -> tuple[list[tuple[int, int]], list[tuple[tuple[int, int], str]]]:
        """Every function's first position (its first decorator's) in order, beside its end and name."""
        spans = sorted((_start(f), _end(f), f.name) for group in self.functions.values() for f in group)
        return [start for start, _, _ in spans], [(end, name) for _, end, name in spans]

    def owner(self, node: ast.Call | ast.Assign) -> str | None:
        """The name of the innermost function around `node` (libcst's first `FunctionDef`
        ancestor: classes and lambdas are passed through, decorators belong to theirs), or None."""
        starts, ends = self._function_spans
        at = (node.lineno, node.col_offset)
        # Back from the last function starting before the call, the first one still open
        # around it is the innermost: the functions starting later have ended before it.
        for index in range(bisect.bisect_right(starts, at) - 1, -1, -1):
            end, name = ends[index]
            if at < end:
                return name
        return None


def _start(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """Where a function's code starts: its first decorator, or `def`."""
    return min([(func.lineno, func.col_offset), *((d.lineno, d.col_offset) for d in func.decorator_list)])


def _end(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """Where a function's code ends."""
    return (func.end_lineno or func.lineno, func.end_col_offset or 0)


# Texts kept, at least the last one (trees of about 40 bytes per character).
_COLLECTED: TextMemo[_Collected] = TextMemo(chars=8_000_000, keep=1)


def calls_of(text: str, tree: ast.Module) -> list[ast.Call] | None:
    """Every call in `tree`, as this pass's walk of `text` found them when `tree` is its tree."""
    found = _COLLECTED.peek(text)
    return list(found.calls) if found is not None and found.tree is tree else None


def _collected(text: str) -> _Collected:
    return _COLLECTED.get(text, _collect)[0]


def _collect(text: str) -> _Collected:
    try:
        tree = parse_ast(text)
    except SyntaxError as exc:
        message = f"SyntaxError: {exc.msg}"
        raise SyntaxProblem(message, exc.lineno, exc.offset) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SyntaxProblem(f"cannot parse: {type(exc).__name__}: {exc}", None, None) from None
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    classes: dict[str, list[ast.ClassDef]] = {}
    calls: list[ast.Call] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    import_roots: set[str] = set()
    aliases: list[tuple[str, str]] = []
    entry_lasts, entry_heads = _entry_parts()
    maybe_entries: list[ast.Attribute] = []
    loaded: set[str] = set()
    shadows_root = False
    rebinds_globals = False
    name_assigns: list[ast.Assign] = []
    call_assigns: list[ast.Assign] = []
    for node in walk(tree):  # one walk: this pass must stay cheap on big files
        if isinstance(node, ast.Name):
            loaded.add(node.id)
            shadows_root = shadows_root or (node.id in entry_heads and not isinstance(node.ctx, ast.Load))
        elif isinstance(node, ast.Attribute):
            if node.attr in entry_lasts:
                maybe_entries.append(node)
        elif isinstance(node, ast.Import):
            imports.append(node)
            import_roots.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.append(node)
            aliases.extend((a.name, a.asname) for a in node.names if a.asname)
            if node.module and not node.level:
                import_roots.add(node.module.split(".", 1)[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
            shadows_root = shadows_root or node.name in entry_heads
        elif isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append(node)
            shadows_root = shadows_root or node.name in entry_heads
        elif isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Name):
                name_assigns.append(node)
            elif isinstance(node.value, ast.Call):
                call_assigns.append(node)
        elif isinstance(node, ast.Global):
            rebinds_globals = True
    return _Collected(
        tree, functions, classes, calls, imports, frozenset(import_roots), aliases, maybe_entries, loaded, shadows_root,
        rebinds_globals, name_assigns, call_assigns,
    )


@cache
def _entry_parts() -> tuple[frozenset[str], frozenset[str]]:
    """Last parts and first parts of the qualified names that start a trace (`traced.ENTRY_NAMES`)."""
    from jaxloopfix.analysis.traced import ENTRY_NAMES

    return (
        frozenset(n.rpartition(".")[2] for n in ENTRY_NAMES),
        frozenset(n.partition(".")[0] for n in ENTRY_NAMES),
    )


def _dotted(node: ast.AST) -> str | None:
    """The dotted name libcst's `get_full_name_for_node` gives the same expression
    (through calls and subscripts: `jax.jit(f).lower` is `jax.jit.lower`)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        else:
            return None


def _import_bindings(imports: list[ast.Import | ast.ImportFrom]) -> dict[str, set[str]]:
    """What each name the module's absolute imports bind may name (`bm` -> `brainpy.math`)."""
    bindings: dict[str, set[str]] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.split(".", 1)[0]
                    bindings.setdefault(head, set()).add(head)
        elif not node.level and node.module:
            for alias in node.names:
                if alias.name != "*":
                    bindings.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
    return bindings


def _imported_names(imports: list[ast.Import | ast.ImportFrom], attributes: list[ast.Attribute], loaded: set[str]):
    """Each set of absolute names a loaded import binding, or an attribute read through one, may
    have (`bm.jit` after `import brainpy.math as bm`: `brainpy.math.jit`)."""
    bindings = _import_bindings(imports)
    for name, sources in bindings.items():
        if name in loaded:
            yield frozenset(sources)  # `from jax import jit as J`, `from brainpy.math import jit`
    for attribute in attributes:
        dotted = _dotted(attribute)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            yield frozenset(f"{source}.{rest}" for source in bindings.get(head, ()))


def _names_library_jit(imports: list[ast.Import | ast.ImportFrom], attributes: list[ast.Attribute], loaded: set[str]) -> bool:
    """Whether some expression may name a JAX library's own `jit` (`library_jits.library_jit`):
    `bm.jit` after `import brainpy.math as bm`, `jit` after `from brainpy.math import jit`."""
    from jaxloopfix.analysis.library_jits import library_jit

    return any(library_jit(n) for names in _imported_names(imports, attributes, loaded) for n in names)


def _names_an_entry(imports: list[ast.Import | ast.ImportFrom], attributes: list[ast.Attribute], loaded: set[str]) -> bool:
    """Whether some expression may have a transform's, a function taker's, a lifted transform's,
    a model primitive's or a framework base class's qualified name.

    libcst names an expression after the import binding its first name (`jnp.stack` after
    `from jax import numpy as jnp` is `jax.numpy.stack`); every import of the module counts
    here, whatever its scope (a superset). Names bound otherwise are named after their
    scope (`f.<locals>.jax.jit`), or after the module for a module binding: the caller rules
    out a binding named like an entry's first part (`jax = ...`). Relative imports name
    nothing absolute, star imports nothing at all."""
    from jaxloopfix.analysis.public_names import with_public
    from jaxloopfix.analysis.library_jits import library_jit
    from jaxloopfix.analysis.traced import ENTRY_NAMES

    return any(
        not with_public(names).isdisjoint(ENTRY_NAMES) or any(library_jit(n) for n in names)
        for names in _imported_names(imports, attributes, loaded)
    )  # `jax.jit`, `from flax.linen import Module`, `bm.jit`


def _project_imports(imports: list[ast.Import | ast.ImportFrom], project_roots: frozenset[str]) -> frozenset[str]:
    """Names this module binds by importing from the project (relative imports included)."""
    bound: set[str] = set()
    for node in imports:
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module and node.module.split(".", 1)[0] in project_roots):
                bound.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".", 1)[0] in project_roots:
                    bound.add(alias.asname or alias.name.split(".", 1)[0])
    return frozenset(bound)


MODEL_PRIMITIVE_NAMES = frozenset({"sample", "factor"})


def _is_model_primitive(call: ast.Call) -> bool:
    """`numpyro.sample(...)` / `npyro.factor(...)` (a superset: any root)."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in MODEL_PRIMITIVE_NAMES and isinstance(func.value, ast.Name)


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _mentions(node: ast.AST, names: frozenset[str]) -> bool:
    for inner in walk(node):
        if isinstance(inner, ast.Name) and inner.id in names:
            return True
        if isinstance(inner, ast.Attribute) and inner.attr in names:
            return True
    return False


def _reach(
    found: _Collected,
    names: frozenset[str],
    *,
    need_loop: bool = True,
    seeds: frozenset[str] = frozenset(),
    imported: frozenset[str] = frozenset(),
    class_bases: frozenset[str] = frozenset(),
    decorated: list[ast.FunctionDef | ast.AsyncFunctionDef] = (),  # type: ignore[assignment]
    by_name: bool = False,
) -> tuple[bool, list[ast.AST] | None, bool]:
    """(whether a rule may fire, the functions that may run traced and the calls making
    them so, None: all of the module; whether a function may reach a tracing call through a
    parameter or an alias). `imported`: names bound by imports of project modules;
    `class_bases`: those of them that may be framework classes; `by_name`: in a project pass, where
    a transform of an untyped object's method (`jax.jit(env.step)`) traces methods elsewhere."""
    functions, calls, classes = found.functions, found.calls, found.classes
    work: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
        f for group in functions.values() for f in group if any(_mentions(d, names) for d in f.decorator_list)
    ]
    work.extend(f for name in seeds for f in functions.get(name.rsplit(".", 1)[-1], ()))
    work.extend(decorated)
    # NumPyro models: inference traces any function that calls `numpyro.sample` / `factor`.
    work.extend(found.model_functions)
    # Module classes: a base named like a framework's, or a class of this file that is one.
    module_classes: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, group in classes.items():
            if name not in module_classes and any(
                _mentions(b, names | module_classes | class_bases) for c in group for b in c.bases
            ):
                module_classes.add(name)
                changed = True
    lifted: set[str] = set()
    aliased: list[ast.Call] = []
    anchors: list[ast.AST] = []
    possible = False
    aliases_imported: bool | None = None  # `_aliases_imported`, asked at most once
    for call in calls:
        if _mentions(call.func, names):
            anchors.append(call)
            if imported and any(_mentions(arg, imported) for arg in (*call.args, *call.keywords)):
                possible = True  # `jax.jit(layers.step)`, `lax.scan(step, ...)` with `step` imported
            if by_name and any(isinstance(arg, ast.Attribute) and _root_name(arg) not in ("self", "cls", None)
                               for arg in walk(call) if arg is not call.func):
                possible = True  # `jax.jit(sim.integrate)`: the project pass traces every class's `integrate`
            flows = False
            for arg in walk(call):
                if isinstance(arg, ast.Name) and arg.id in functions:
                    work.extend(functions[arg.id])
                if isinstance(arg, ast.Attribute) and arg.attr in functions:
                    work.extend(functions[arg.attr])  # `jax.vmap(self.run)`: a bound method
                elif isinstance(arg, ast.Attribute) and arg is not call.func and isinstance(arg.value, ast.Name) \
                        and arg.value.id == "self":
                    work.extend(functions.get("__call__", ()))  # `jax.grad(self.loss)`: an object's `__call__`
                if isinstance(arg, ast.Name) and arg.id in classes:
                    lifted.add(arg.id)  # `nn.scan(Cell, ...)`
                if isinstance(arg, ast.Name) and arg is not call.func and arg.id not in functions:
                    flows = True  # `NUTS(model)` with `model = f` or a parameter: any function value
            if flows:
                if imported and aliases_imported is None:
                    aliases_imported = _aliases_imported(found, imported)
                if aliases_imported:
                    possible = True  # `step = partial(train_step, cfg=cfg)` with `train_step` imported, then `jax.jit(step)`
                aliased.append(call)
                # `lax.scan(cell, ...)` with `cell = Cell()`: the value may be an object, whose `__call__` runs.
                work.extend(functions.get("__call__", ()))
    if aliased:
        work.extend(found.function_values)
    for name in module_classes | lifted:
        for cls in classes[name]:
            work.extend(m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    possible = possible or (bool(work) and not need_loop)
    reached: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    objects_called = False  # the `__call__` methods joined `work` once for all callees
    while work:
        func = work.pop()
        if id(func) in reached:
            continue
        reached[id(func)] = func
        own = found.own(func)  # nested functions are reached too, each with its own part
        possible = possible or own.loops
        work.extend(own.nested)
        called_parameters = own.callees & _parameter_names(func)
        if called_parameters:
            # `def step(x, force): return force(x)` reached: whatever function a caller passes
            # for `force` runs traced, so function values, and the calls handing them on, are kept.
            handed = [c for c in walk(func) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                      and c.func.id in called_parameters]
            if not aliased:
                work.extend(found.function_values)
            aliased.extend(handed)
        for name in own.callees:
            if name in classes:
                work.extend(_constructors(name, classes))  # `Kernel(...)`: its `__init__` runs traced
            if name in functions:
                work.extend(functions[name])
            elif "__call__" in functions and not objects_called:
                objects_called = True
                work.extend(functions["__call__"])  # `stage(x)` on an item or attribute: an object's `__call__`
        if imported and not own.roots.isdisjoint(imported):
            possible = True  # traced code calling into the project: follow it there
    if aliased:
        if found.rebinds_globals:
            return possible, None, True  # `global model` in a function: a binding the alias may name
        anchors.extend(_parameter_callers(found, aliased))
    return possible, [*reached.values(), *anchors], bool(aliased)


def _aliases_imported(found: _Collected, imported: frozenset[str]) -> bool:
    """Whether the module binds a name to a project import (`step = train_step`), to a
    `partial` of one, or to what one returns (`p, s = make_density(mus)`: a factory's functions)
    (a superset: any such binding, whatever name a transform wraps)."""
    if any(_mentions(a.value.func, imported) for a in found.call_assigns):  # type: ignore[attr-defined]
        return True
    return any(isinstance(a.value, ast.Name) and a.value.id in imported for a in found.name_assigns) or any(
        isinstance(c.func, (ast.Name, ast.Attribute)) and (c.func.id if isinstance(c.func, ast.Name) else c.func.attr)
        in PARTIAL_NAMES and c.args and _mentions(c.args[0], imported)
        for c in found.calls
    )


def _parameter_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = func.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return names - {"self", "cls"}


def _constructors(name: str, classes: dict[str, list[ast.ClassDef]]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """`__init__` and `__post_init__` of the classes named `name` and of their bases in this module."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in classes:
            continue
        seen.add(current)
        for cls in classes[current]:
            found.extend(m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and m.name in ("__init__", "__post_init__"))
            pending.extend(b.id for b in cls.bases if isinstance(b, ast.Name))
    return found


def _parameter_callers(found: _Collected, aliased: list[ast.Call]) -> list[ast.Call]:
    """The calls that may hand a function to a parameter reaching a tracing call.

    `def run(model): NUTS(model)` traces what the calls `run(f)` pass (`traced._passed_functions`),
    and what their own callers pass when `f` is again a parameter, a few levels up. A call of a
    function (by name, at any depth) that holds such a tracing call is kept, and so, in turn,
    are the calls of the function holding that call. The functions they pass are named in the
    statements kept, which keeps them too (`Scan.reduce`)."""
    callers = {owner for owner in map(found.owner, aliased) if owner is not None}
    kept: list[ast.Call] = []
    taken: set[int] = set()
    grown = bool(callers)
    while grown:
        grown = False
        for call in found.calls:
            if id(call) in taken or not (isinstance(call.func, ast.Name) and call.func.id in callers):
                continue
            taken.add(id(call))
            kept.append(call)
            owner = found.owner(call)
            if owner is not None and owner not in callers:
                callers.add(owner)
                grown = True
    return kept
