"""Comprehensions in traced code that step over array data: unrolled like a `for` loop.

Under a trace `[f(r) for r in xs]` runs `f` once per row of `xs`, and the compiled
program holds one copy of its work per row, exactly as `for r in xs:
out.append(f(r))` does; `sum(w[i] * x[i] for i in range(len(x)))` likewise. The
comprehension is judged from the kinds of its values (`value_kinds.py`), clause by
clause (`[x[i, j] for i in range(2) for j in range(x.shape[1])]` steps along an axis
in its second clause):

- a clause steps over array data when what it iterates is an array (its rows; also
  inside `zip`, `enumerate` and `reversed`), or a `range` as long as an array
  axis (`range(x.shape[0])`, `range(0, len(x), 2)` of an array);
- a comprehension is left alone when it runs only outside a trace (the branch of
  `if jax.config.jax_disable_jit:`), when each step calls an item the index selects
  (`nets[i](x[i])`, a list of functions) or builds a module (`nn.Dense(1)(...)`),
  when, stepping over a `range`, each step builds a Python value or repeats one
  value, when it builds the index of a subscript (`tuple(idx[..., d] for d in
  range(k))`), when it takes a few static steps or steps over axes, and when nothing
  shows it steps over array data: a list of layers, a dict of parameters, a traced
  argument that may be a pytree (iterating a bare `jit` argument is left alone: it
  may be a list of arrays), a `range` of a Python count (agents, dimensions).

A comprehension gets no fix: the rewrite (`jax.vmap` of the element, or
`lax.map`) is the user's to write. Lambdas are judged as their own functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from jaxloopfix.analysis.array_fields import array_fields
from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.containers import _shape_arguments, string_from
from jaxloopfix.analysis.loops import IterationAnalyzer, TripCount
from jaxloopfix.analysis.names import parameters
from jaxloopfix.analysis.planner import untraced_branch_of
from jaxloopfix.analysis.per_step_lists import PerStepLists, iterated_names
from jaxloopfix.analysis.source import ParsedModule, descendants, shorten
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.value_kinds import ARRAY, CONTAINER, SHAPE, STATIC, TRACED, ValueKinds, for_clauses
from jaxloopfix.analysis.walk import walk

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
COMPREHENSION_TYPES = frozenset(COMPREHENSIONS)  # exact classes: `isinstance` on libcst's ABCs is slow
# What owns a comprehension: the innermost function, lambda or class around it.
SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
# What a comprehension's node is called in messages.
NAMES = {cst.ListComp: "list comprehension", cst.SetComp: "set comprehension",
         cst.GeneratorExp: "generator expression", cst.DictComp: "dict comprehension"}
# Calls that wrap what a comprehension iterates without changing whose rows it steps over.
WRAPPERS = frozenset({"builtins.zip", "builtins.enumerate", "builtins.reversed"})

# `jax.numpy` calls that stack a list's items into one array, one row (or block) per item.
STACKING_CALLS = frozenset(f"jax.numpy.{name}" for name in (
    "stack", "array", "asarray", "vstack", "hstack", "dstack", "column_stack", "row_stack", "concatenate"))

Decision = tuple[str, str]
NO_ARRAY_STEPS: Decision = ("no_array_steps", "nothing shows that it steps over array data (rows of an array, or an array axis)")


@dataclass(frozen=True)
class ComprehensionReport:
    """A comprehension that unrolls array work, with what it steps over in words."""

    node: cst.BaseComp
    function: TracedFunction
    steps: str

    @property
    def name(self) -> str:
        return NAMES[type(self.node)]


class ComprehensionJudge:
    """Decides the comprehensions of one traced function (`decide`), from two tables of rows:
    `COMPREHENSION_ROWS` on the whole comprehension, then `CLAUSE_ROWS` on each `for` clause."""

    def __init__(
        self, parsed: ParsedModule, traced: TracedFunction, constants: dict[str, int], min_trip_count: int,
        is_module_class: Callable[[cst.BaseExpression], bool],
        reported_loop: Callable[[cst.For], bool] = lambda loop: False,
    ) -> None:
        self.parsed = parsed
        self.traced = traced
        # Whether a loop of the function is reported (it unrolls): what it appends is per-step data.
        self.reported_loop = reported_loop
        self.constants = constants
        self.min_trip_count = min_trip_count
        self.is_module_class = is_module_class
        self._indexed_memo: dict[int, list[cst.Subscript]] = {}
        self._trips: dict[int, TripCount | None] = {}

    @cached_property
    def kinds(self) -> ValueKinds:
        return ValueKinds(self.parsed, self.traced, self.constants)

    @cached_property
    def iterations(self) -> IterationAnalyzer:
        possible = {p.name.value for p in parameters(self.traced.node, stars=False)} - self.traced.static_params - {"self", "cls"}
        facts = ArrayFacts(self.parsed, self.traced.node, possible, array_fields(self.parsed, self.traced.node))
        return IterationAnalyzer(self.parsed, self.traced, facts, self.constants)

    def decide(self, comp: cst.BaseComp) -> Decision:
        """(the row that decided, its evidence); the row `reported` reports it. Most comprehensions
        step over lists, dicts and Python counts: when no clause iterates something `ArrayFacts`
        calls an array, or a `range` whose count is an array length, the clause rows decide without
        the function's kinds (worked out only for comprehensions that may be reported)."""
        if not any(self._may_step_over_arrays(clause) or self._per_step_list(clause) for clause in _clauses(comp)):
            for clause in _clauses(comp):
                found = self.few_steps(comp, clause)
                if found is not None:
                    return found
            return NO_ARRAY_STEPS
        for row in COMPREHENSION_ROWS:
            found = row(self, comp)
            if found is not None:
                return found
        clauses = _clauses(comp)
        first: Decision | None = None
        for clause in clauses:
            for clause_row in CLAUSE_ROWS:
                found = clause_row(self, comp, clause)
                if found is not None:
                    if found[0] == "reported":
                        return found
                    first = first or found
                    break
        return first or NO_ARRAY_STEPS

    # -- rows on the whole comprehension ------------------------------------------------------
    def untraced_branch(self, comp: cst.BaseComp) -> Decision | None:
        """The eager fallback under `if jax.config.jax_disable_jit:` or a runtime tracer check."""
        evidence = untraced_branch_of(self.parsed, self.traced.node, comp)
        return ("untraced_branch", evidence) if evidence is not None else None

    def structure_per_step(self, comp: cst.BaseComp) -> Decision | None:
        """`[nets[i](obs[i]) for i in ...]`: the index selects a function or module that is called;
        `[nn.Dense(1)(x[:, i]) for i in ...]`: each step builds a module. Distinct computations
        (or module state, `nn.scan`'s territory), not one step mapped over rows."""
        targets = _target_names(comp)
        for node in descendants(_element(comp)):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            selected = {n.value for n in descendants(func) if isinstance(n, cst.Name)} if isinstance(func, cst.Subscript) else set()
            if targets & selected:
                return "structure_per_step", f"the index selects `{shorten(self.parsed.code(func), 30)}`, which is called (a list of functions or modules)"
            built = func.func if isinstance(func, cst.Call) else func
            if isinstance(built, (cst.Name, cst.Attribute)) and self.is_module_class(built):
                return "structure_per_step", f"each step builds the module `{shorten(self.parsed.code(built), 30)}(...)` (`nn.scan`/`hk.scan` territory)"
        return None

    def python_element(self, comp: cst.BaseComp) -> Decision | None:
        """Over `range`s only (iterating an array slices it per row, whatever the element):
        `[x.shape[i] for i in range(x.shape[0])]` and strings `"".join` takes build Python values;
        `[mask for _ in range(n)]` repeats one value, no operation per step."""
        if any(self._array_sources(clause) for clause in _clauses(comp)):
            return None
        element = _element(comp)
        kind = self.kinds._comprehension_kind(comp, element)
        if kind.python or kind.text:
            return "python_element", f"each step builds a Python value ({kind.why or kind.name})"
        parent = self.parsed.parent(comp)
        if isinstance(parent, cst.Arg) and isinstance(call := self.parsed.parent(parent), cst.Call) \
                and isinstance(call.func, cst.Attribute) and call.func.attr.value == "join" \
                and isinstance(call.func.value, (cst.SimpleString, cst.ConcatenatedString)):
            return "python_element", f"`{shorten(self.parsed.code(call.func), 20)}` joins its steps into text: each step is a string"
        if isinstance(element, (cst.Name, cst.Attribute)) and len(_clauses(comp)) == 1 and not _target_names(comp) & {
                n.value for n in (element, *descendants(element)) if isinstance(n, cst.Name)}:
            return "repeats_value", f"each step repeats `{shorten(self.parsed.code(element), 30)}`: no operation per step"
        return None

    def index_tuple(self, comp: cst.BaseComp) -> Decision | None:
        """`ind = tuple(idx[..., i] for i in range(d))`, then `mesh.at[ind]`: one index per
        dimension, a Python tuple that selects elements (the items of an index, not rows of work)."""
        parent = self.parsed.parent(comp)
        holder: cst.CSTNode = comp
        if isinstance(parent, cst.Arg) and isinstance(call := self.parsed.parent(parent), cst.Call) \
                and self.parsed.qualified_name(call.func) == "builtins.tuple":
            holder = call
        around = self.parsed.parent(holder)
        if isinstance(around, cst.Index):
            return "index_tuple", "it builds the index of a subscript, one item per dimension"
        if not (isinstance(around, cst.Assign) and len(around.targets) == 1 and isinstance(around.targets[0].target, cst.Name)):
            return None
        name = around.targets[0].target.value
        reads = [n for n in walk(self.traced.node.body) if isinstance(n, cst.Name) and n.value == name
                 and self.parsed.after(n, around)]  # the reads after it (`ind, w = f(x); ind = tuple(ind[..., i] ...)`)
        if reads and all(isinstance(self.parsed.parent(n), cst.Index) for n in reads):
            return "index_tuple", f"`{name}` is used only as the index of a subscript: one item per dimension"
        return None

    def unstacks(self, comp: cst.BaseComp) -> Decision | None:
        """`tuple(x[..., i] for i in range(len(xs)))`, over a count of Python structure (the length
        of a list, a rank, a literal): each step only takes `x[..., i]`, one item along an axis of
        an array the function holds, taking it apart into a known number of pieces (as
        `jnp.unstack` does), with no work per step. Over an array axis or an unknown count the
        pieces are rows, reported; a slice (`x[i:]`) or a computed array (`f(x)[i]`) is work."""
        element = _element(comp)
        if not (isinstance(element, cst.Subscript) and isinstance(element.value, (cst.Name, cst.Attribute))):
            return None
        if any(isinstance(e.slice, cst.Slice) and _reads(e.slice, _target_names(comp)) for e in element.slice):
            return None
        for clause in _clauses(comp):
            if not self._structure_count(clause) or not any(s is element for s in self._indexed_in(comp, clause)):
                continue
            evidence = self._array_read(element)
            if evidence is not None:
                return "unstacks", (
                    f"each step only takes `{shorten(self.parsed.code(element), 30)}` ({evidence}) over "
                    f"`{shorten(self.parsed.code(clause.iter), 30)}`: it takes the array apart, as `jnp.unstack` "
                    "does, with no work per step"
                )
        return None

    def keyed_entries(self, comp: cst.BaseComp) -> Decision | None:
        """`{f"col{i}": jnp.mean(x[:, i]) for i in range(d)}`, `{NAMES[i]: ...}`: each step stores
        its value under a key built from the index, as a loop's `keyed_entries` (named metrics,
        per-field statistics): Python structure per step."""
        if not isinstance(comp, cst.DictComp) or not _reads(comp.key, _target_names(comp)):
            return None
        return "keyed_entries", f"each step stores its value under a key built from the index (`{shorten(self.parsed.code(comp.key), 30)}`)"

    # -- rows on one `for` clause -------------------------------------------------------------
    def per_step_list(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`[z / 2 + x / 2 for z, x in zip(exp_z, exp_x)]` after a reported loop appended one
        array per step to each list (`per_step_lists`): a step per unrolled step."""
        held = self._per_step_lists.filled(clause.iter, comp)
        return ("reported", held) if held is not None else None

    @cached_property
    def _per_step_lists(self) -> PerStepLists:
        return PerStepLists(self.parsed, self.traced.node, lambda: self.kinds, self.reported_loop)

    def _per_step_list(self, clause: cst.CompFor) -> bool:
        """Cheap screen for `per_step_list`: it iterates a name some loop of the function appends to."""
        return any(n.value in self._per_step_lists.appended_names for n in iterated_names(self.parsed, clause.iter))

    def few_steps(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`[f(x, k) for k in range(3)]`: a few static steps (fewer than `min-trip-count`)."""
        trip = self._range_trip(clause.iter)
        if trip is not None and trip.kind in ("literal", "constant", "bounded") and trip.value is not None \
                and trip.value < self.min_trip_count:
            return "few_steps", f"it takes {trip.value} static steps (fewer than `min-trip-count` = {self.min_trip_count})"
        if trip is not None and trip.kind == "ndim":
            return "array_axes", "it steps over the axes of an array (`range(x.ndim)`, the length of a shape), a few static steps"
        return None

    def array_rows(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`[f(r) for r in xs]`, `zip(xs, ys)`, `enumerate(xs)` with `xs` an array: its rows. Every
        source of a `zip` must be an array: zipped with a list (`zip(agents, jnp.eye(n))`), the
        steps follow the list."""
        sources = self._array_sources(clause)
        if not sources:
            return None
        source = sources[0]
        kind = self.kinds.of(source)
        why = f": {kind.why}" if kind.why and kind.why != f"`{self.parsed.code(source)}`" else ""
        return "reported", f"the rows of `{shorten(self.parsed.code(source), 40)}` (an array{why})"

    def axis_range(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`[x[i] * w for i in range(x.shape[0])]`: a range as long as an array axis."""
        trip = self._range_trip(clause.iter)
        if trip is not None and trip.kind == "shape":
            return "reported", f"`{shorten(self.parsed.code(clause.iter), 40)}` (as long as an array axis)"
        return None

    def indexed_reads(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`[m[i * d:(i + 1) * d, i * d:(i + 1) * d] for i in range(n)]`: the index selects rows or
        blocks of an array, as the same `for` loop's index does. The value is an array by its kind,
        or by the subscript itself: a tuple of indices (`m[a, b]`, `m[:, i]`, `m[..., i]`) indexes
        only arrays. `ws[i]` of a traced argument or a parameter may pick a list's item (a layer),
        and a count that is the length of a value not shown to be an array (`len(self.layers)`)
        counts items of Python structure."""
        if self._range_trip(clause.iter) is None:
            return None
        structure = self._selects_structure(comp, clause)
        if structure is not None:
            return "index_as_structure", structure
        for subscript in self._indexed_in(comp, clause):
            evidence = self._array_read(subscript)
            if evidence is not None:
                return "reported", (
                    f"`{shorten(self.parsed.code(clause.iter), 40)}`, whose index reads "
                    f"`{shorten(self.parsed.code(subscript), 40)}` per step ({evidence})"
                )
        return None

    def stacked_rows(self, comp: cst.BaseComp, clause: cst.CompFor) -> Decision | None:
        """`jnp.array([jnp.roll(sites, -i - 1) for i in range(n)])`, `jnp.stack([sol[Var(t)] for t
        in range(1, n + 1)])`: over a `range` of more than a few steps, each step computes a value
        from the index and a stacking call makes the steps the rows (or blocks) of one array,
        as a loop appending one array per step and stacking the list after it does. The steps
        are rows of the result: `jax.vmap` of the element over `jnp.arange(n)` builds it at once.
        A count of Python structure (`range(len(self.layers))`, an item picked per step) is left
        to `indexed_reads`'s evidence, and Python elements to `python_element`."""
        if self._range_trip(clause.iter) is None:
            return None
        stacking = self._stacked_by(comp)
        if stacking is None or not self._index_work(_element(comp), _clause_names(clause)):
            return None
        if self._selects_structure(comp, clause) is not None:
            return None
        return "reported", (
            f"`{shorten(self.parsed.code(clause.iter), 40)}`, each step computing one row of the array "
            f"`{stacking}` builds"
        )

    # -- evidence ------------------------------------------------------------------------------
    def _index_work(self, element: cst.BaseExpression, index: set[str]) -> bool:
        """Whether the element does work that depends on the index: it is an array by its kind,
        or a call or subscript in it reads the index (`jnp.roll(x, -i)`, `sol[Var(t)]`). The
        index only formatted into a key (`actions[f"agent_{i}"]`, a dict of named entries) or
        only in arithmetic (`BASE + i`, a Python int) is no such evidence."""
        if not _reads(element, index):
            return False
        evidence, keyed_only = False, True
        for node in (element, *descendants(element)):
            if not (isinstance(node, cst.Name) and node.value in index):
                continue
            around = []
            for ancestor in self.parsed.ancestors(node):
                around.append(ancestor)
                if ancestor is element:
                    break
            if any(isinstance(a, cst.Slice) for a in around) or any(
                    isinstance(a, cst.Call) and any(self.parsed.contains(arg, node) for arg in _shape_arguments(self.parsed, a))
                    for a in around):
                return False  # `x[:i + 1]`, `jnp.zeros(sizes[i])`: a shape per step, ragged pieces (as a loop's)
            if any(isinstance(a, (cst.FormattedString, cst.FormattedStringExpression)) or (
                    isinstance(a, cst.BaseExpression) and string_from(a, node.value)) or (
                    isinstance(a, cst.Call) and self.parsed.qualified_name(a.func) == "builtins.str") for a in around):
                continue  # `table[str(i)]`, `p["head" + str(i)]`: a key built from the index
            keyed_only = False
            if any(isinstance(a, (cst.Call, cst.Subscript)) for a in around):
                evidence = True
        if keyed_only:
            return False  # the index only names entries: a dict of named parts, as `keyed_entries`
        return evidence or self.kinds.of(element).name in (ARRAY, TRACED)

    def _stacked_by(self, comp: cst.BaseComp) -> str | None:
        """The `jax.numpy` call (`jnp.stack`) whose first argument `comp` is, stacking its items
        into one array, else None."""
        arg = self.parsed.parent(comp)
        call = self.parsed.parent(arg) if isinstance(arg, cst.Arg) else None
        if not (isinstance(call, cst.Call) and call.args and call.args[0] is arg and arg.keyword is None and not arg.star):
            return None
        func = call.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or self.parsed.qualified_name(func) not in STACKING_CALLS:
            return None
        return shorten(self.parsed.code(func), 30)

    def _may_step_over_arrays(self, clause: cst.CompFor) -> bool:
        """Without kinds: every source is an array to `ArrayFacts`, or a `range` as long as an
        array, or a `range` whose index subscripts a value in the element (see `indexed_reads`),
        or a `range` whose steps a stacking call makes rows of (see `stacked_rows`)."""
        sources = _sources(self.parsed, clause.iter)
        if sources and all(self.iterations.facts.is_array(source) or self._axis_long(source) for source in sources):
            return True
        trip = self._range_trip(clause.iter)
        if trip is None:
            return False
        if trip.kind == "shape" or self._indexed(clause):
            return True
        comp = self._owner(clause)
        return comp is not None and self._stacked_by(comp) is not None

    def _owner(self, clause: cst.CompFor) -> cst.BaseComp | None:
        """The comprehension a `for` clause belongs to."""
        comp = self.parsed.parent(clause)
        while comp is not None and not isinstance(comp, COMPREHENSIONS):
            comp = self.parsed.parent(comp)
        return comp  # type: ignore[return-value]

    def _indexed(self, clause: cst.CompFor) -> list[cst.Subscript]:
        comp = self._owner(clause)
        return self._indexed_in(comp, clause) if comp is not None else []

    def _indexed_in(self, comp: cst.BaseComp, clause: cst.CompFor) -> list[cst.Subscript]:
        """`_indexed_by`, worked out once per clause."""
        found = self._indexed_memo.get(id(clause))
        if found is None:
            found = self._indexed_memo[id(clause)] = _indexed_by(comp, clause)
        return found

    def _structure_count(self, clause: cst.CompFor) -> bool:
        """A `range` over a count of Python structure: a literal or bounded count, a rank, or the
        length of a Python container (`len(xs)` with `xs` a list or tuple)."""
        trip = self._range_trip(clause.iter)
        if trip is None:
            return False
        if trip.kind in ("literal", "constant", "bounded", "ndim"):
            return True
        measured = self._range_measured(clause.iter)
        return measured is not None and self._container(measured)

    def _range_measured(self, iterable: cst.BaseExpression) -> cst.BaseExpression | None:
        """`xs` of `range(len(xs))` (inside `reversed` too), else None."""
        args = _range_args(self.parsed, iterable)
        if args is None:
            return None
        stop = args[1] if len(args) > 1 else args[0]
        if isinstance(stop, cst.Call) and self.parsed.qualified_name(stop.func) == "builtins.len" and len(stop.args) == 1:
            return stop.args[0].value
        return None

    def _selects_structure(self, comp: cst.BaseComp, clause: cst.CompFor) -> str | None:
        """The index counts or picks items of Python structure: the count is the length of a value
        not shown to be an array (`range(len(self.layers))`), the index picks an item of a Python
        container directly (`tensors[row][c]`, `SIZES[i]`, `keys[i]` of a key table) or is handed
        to a call beside one (`_site(tensors, row, c)`): each step works on a different item, as a
        loop's `index_as_structure`."""
        measured = self._range_measured(clause.iter)
        if measured is not None and not self._array(measured) and self.kinds.of(measured).name != ARRAY:
            return (
                f"the count is the length of `{shorten(self.parsed.code(measured), 30)}`, not shown to be an array: "
                "the index counts items of Python structure"
            )
        index = _clause_names(clause)
        indexed = self._indexed_in(comp, clause)
        for node in _own_nodes(comp):
            if isinstance(node, cst.Subscript) and any(node is s for s in indexed) and self._container(node.value):
                return f"the index picks items of a Python container (`{shorten(self.parsed.code(node), 30)}`): a different item each step"
            if isinstance(node, cst.Call):
                values = [a.value for a in node.args]
                held = next((v for v in values if self._container(v)), None)
                if held is not None and any(isinstance(v, cst.Name) and v.value in index for v in values):
                    return (
                        f"the index is handed to `{shorten(self.parsed.code(node.func), 30)}` with a Python container "
                        f"(`{shorten(self.parsed.code(held), 30)}`), which may pick an item of it: a different item each step"
                    )
        return None

    def _container(self, expr: cst.BaseExpression) -> bool:
        """A Python list, tuple or dict (of arrays, layers, or Python values such as sizes and names)."""
        return self.kinds.of(expr).name in (CONTAINER, SHAPE)

    def _array_read(self, subscript: cst.Subscript) -> str | None:
        """Why `subscript`'s value is an array, in words, or None: its kind, or an index only
        arrays take (a Python value, a host table or a list of layers is none)."""
        value = subscript.value
        kind = self.kinds.of(value)
        if kind.host or kind.python or kind.name in (CONTAINER, STATIC, SHAPE):
            return None
        if kind.name == ARRAY:
            return f"`{shorten(self.parsed.code(value), 30)}` is an array"
        if self.iterations.facts.is_array(value):
            return f"`{shorten(self.parsed.code(value), 30)}` is an array"
        if isinstance(value, cst.Name) and _array_only_index(subscript):
            return f"an index of {len(subscript.slice)} axes, which only an array takes"
        return None

    def _array_sources(self, clause: cst.CompFor) -> list[cst.BaseExpression]:
        """What the clause steps over the rows of, when every source is an array, or a `range`
        as long as an array axis zipped with one (`zip(seq, range(len(seq)))`), else none."""
        sources = _sources(self.parsed, clause.iter)
        arrays = [source for source in sources if self._array(source)]
        return arrays if arrays and all(s in arrays or self._axis_long(s) for s in sources) else []

    def _axis_long(self, source: cst.BaseExpression) -> bool:
        """A `range` as long as an array axis (`range(len(xs))`, `range(x.shape[0])`)."""
        trip = self._range_trip(source)
        return trip is not None and trip.kind == "shape"

    def _array(self, expr: cst.BaseExpression) -> bool:
        """Both analyses agree `expr` is one array (a traced argument only with array evidence)."""
        kind = self.kinds.of(expr)
        return self.iterations.facts.is_array(expr) and (kind.name == ARRAY and not kind.host or kind.name == TRACED)

    def _range_trip(self, iterable: cst.BaseExpression) -> TripCount | None:
        """`_trip_of`, worked out once per iterable."""
        key = id(iterable)
        if key not in self._trips:
            self._trips[key] = self._trip_of(iterable)
        return self._trips[key]

    def _trip_of(self, iterable: cst.BaseExpression) -> TripCount | None:
        """The trip count of `range(stop)`, `range(start, stop)` or `range(start, stop, k)` with a
        positive literal `k` (inside `reversed`), else None. A length or dimension of a Python value
        (a shape, a list, a host NumPy table) is no array axis."""
        args = _range_args(self.parsed, iterable)
        if args is None:
            return None
        if len(args) == 3 and not (isinstance(args[2], cst.Integer) and int(args[2].evaluated_value) > 0):
            return TripCount("unknown")
        stop = self.iterations.trip_count(args[1] if len(args) > 1 else args[0])
        if stop.kind == "shape":
            measured = self.kinds.of(_measured(self.parsed, args[1] if len(args) > 1 else args[0]) or args[0])
            if measured.name == SHAPE:
                return TripCount("ndim")
            if measured.name in (CONTAINER, STATIC) or measured.host:
                return TripCount("static")
        if len(args) >= 2 and stop.kind in ("literal", "constant") and stop.value is not None:
            start = self.iterations.trip_count(args[0])
            if start.kind in ("literal", "constant") and start.value is not None:
                return TripCount(stop.kind, len(range(start.value, stop.value, int(args[2].evaluated_value) if len(args) == 3 else 1)))  # type: ignore[union-attr]
            return TripCount("bounded", stop.value) if self.iterations._non_negative(args[0]) else TripCount("unknown")
        return stop


def _clauses(comp: cst.BaseComp) -> list[cst.CompFor]:
    return for_clauses(comp.for_in)


def _range_args(parsed: ParsedModule, iterable: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The positional arguments of `range(...)` (inside `reversed` too), one to three of them
    and nothing else; None for any other iterable."""
    if isinstance(iterable, cst.Call) and parsed.qualified_name(iterable.func) == "builtins.reversed" \
            and len(iterable.args) == 1:
        iterable = iterable.args[0].value
    if not (isinstance(iterable, cst.Call) and parsed.qualified_name(iterable.func) == "builtins.range"):
        return None
    args = [a.value for a in iterable.args if a.keyword is None and not a.star]
    return args if len(args) in (1, 2, 3) and len(args) == len(iterable.args) else None


def _clause_names(clause: cst.CompFor) -> set[str]:
    """The names one `for` clause binds."""
    return {n.value for n in (clause.target, *descendants(clause.target)) if isinstance(n, cst.Name)}


def _indexed_by(comp: cst.BaseComp, clause: cst.CompFor) -> list[cst.Subscript]:
    """The element's subscripts that read the clause's index (`m[i]`, `m[i * d:(i + 1) * d]`,
    `m[:, i]`) on a value that does not (`xs[i][0]` counts once, as `xs[i]`); not inside a
    lambda or comprehension of the element that binds the same name (its own `i`)."""
    index = _clause_names(clause)
    found: list[cst.Subscript] = []
    for node in _own_nodes(comp, index):
        if not isinstance(node, cst.Subscript):
            continue
        in_slice = {n.value for e in node.slice for n in descendants(e) if isinstance(n, cst.Name)}
        in_value = {n.value for n in (node.value, *descendants(node.value)) if isinstance(n, cst.Name)}
        if index & in_slice and not index & in_value:
            found.append(node)
    return found


def _own_nodes(comp: cst.BaseComp, names: set[str] | None = None) -> list[cst.CSTNode]:
    """The nodes of the element (and of a dict comprehension's key), leaving out lambdas and
    comprehensions nested in it that bind one of `names` (all of them when `names` is None)."""
    roots: list[cst.CSTNode] = [_element(comp)] + ([comp.key] if isinstance(comp, cst.DictComp) else [])
    out: list[cst.CSTNode] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Lambda, *COMPREHENSIONS)) and _binds(node, names):
            continue
        out.append(node)
        stack.extend(reversed(list(node.children)))
    return out


def _binds(node: cst.CSTNode, names: set[str] | None) -> bool:
    """Whether a lambda or comprehension binds one of `names` (any name when None)."""
    if names is None:
        return True
    if isinstance(node, cst.Lambda):
        bound = {p.name.value for p in (*node.params.params, *node.params.posonly_params, *node.params.kwonly_params)}
    else:
        bound = _target_names(node)  # type: ignore[arg-type]
    return bool(bound & names)


def _reads(node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in (node, *descendants(node)))


def _array_only_index(subscript: cst.Subscript) -> bool:
    """`m[a, b]`, `m[:, i]`, `m[..., i]`, `m[None, i]`: several axes at once, which lists, tuples
    and dicts do not take (a dict keyed by tuples takes `d[a, b]` without slices: not counted)."""
    elements = [e.slice for e in subscript.slice]
    if any(isinstance(e, cst.Slice) for e in elements) and len(elements) > 1:
        return True
    return any(isinstance(e, cst.Index) and (isinstance(e.value, cst.Ellipsis) or
               (isinstance(e.value, cst.Name) and e.value.value == "None")) for e in elements)


def _element(comp: cst.BaseComp) -> cst.BaseExpression:
    return comp.value if isinstance(comp, cst.DictComp) else comp.elt  # type: ignore[attr-defined]


def _target_names(comp: cst.BaseComp) -> set[str]:
    """Every name a clause of the comprehension binds (walrus targets included)."""
    names = {name for clause in _clauses(comp) for name in _clause_names(clause)}
    names |= {n.target.value for n in descendants(comp) if isinstance(n, cst.NamedExpr) and isinstance(n.target, cst.Name)}
    return names


def _sources(parsed: ParsedModule, iterable: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What `iterable` steps over the items of: itself, or the arguments of `zip`/`enumerate`/`reversed`."""
    if isinstance(iterable, cst.Call) and parsed.qualified_name(iterable.func) in WRAPPERS:
        return [a.value for a in iterable.args if a.keyword is None and not a.star]
    return [iterable]


def _measured(parsed: ParsedModule, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`xs` of `len(xs)` or of `xs.shape[k]`, else None."""
    if isinstance(expr, cst.Call) and parsed.qualified_name(expr.func) == "builtins.len" and len(expr.args) == 1:
        return expr.args[0].value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return expr.value.value
    return None


def candidate(parsed: ParsedModule, comp: cst.BaseComp) -> bool:
    """A cheap test before kinds are computed: a comprehension each of whose clauses iterates a
    literal, a dict's `.items()`/`.keys()`/`.values()` or a `range` of literals is never reported."""
    return any(_may_step_over_arrays(clause.iter) for clause in _clauses(comp))


def _may_step_over_arrays(iterable: cst.BaseExpression) -> bool:
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.SimpleString, cst.ConcatenatedString)):
        return False
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value in ("items", "keys", "values"):
        return False
    return not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"
                and all(isinstance(a.value, cst.Integer) for a in iterable.args))


# The decision tables of `ComprehensionJudge.decide`, in order: the first row that answers decides.
COMPREHENSION_ROWS: tuple[Callable[[ComprehensionJudge, cst.BaseComp], Decision | None], ...] = (
    ComprehensionJudge.untraced_branch,
    ComprehensionJudge.structure_per_step,
    ComprehensionJudge.python_element,
    ComprehensionJudge.index_tuple,
    ComprehensionJudge.keyed_entries,
    ComprehensionJudge.unstacks,
)
CLAUSE_ROWS: tuple[Callable[[ComprehensionJudge, cst.BaseComp, cst.CompFor], Decision | None], ...] = (
    ComprehensionJudge.few_steps,
    ComprehensionJudge.per_step_list,
    ComprehensionJudge.array_rows,
    ComprehensionJudge.axis_range,
    ComprehensionJudge.indexed_reads,
    ComprehensionJudge.stacked_rows,
)


def own_comprehensions(parsed: ParsedModule) -> dict[cst.CSTNode, list[cst.BaseComp]]:
    """Each function's own comprehensions that may step over arrays (`candidate`), in document
    order: one pass over the module's nodes, kept with the text (a walk of every traced
    function's body cost more than the judging)."""
    kept = parsed.kept("own comprehensions")
    if "found" not in kept:
        found: dict[cst.CSTNode, list[cst.BaseComp]] = {}
        for node in parsed.nodes:
            if type(node) in COMPREHENSION_TYPES and candidate(parsed, node):  # type: ignore[arg-type]
                owner = next((a for a in parsed.ancestors(node) if type(a) in SCOPES), None)
                if type(owner) is cst.FunctionDef:
                    found.setdefault(owner, []).append(node)  # type: ignore[arg-type]
        kept["found"] = found
    return kept["found"]


def judge_comprehensions(
    parsed: ParsedModule,
    traced: TracedFunction,
    constants: dict[str, int],
    min_trip_count: int,
    is_module_class: Callable[[cst.BaseExpression], bool],
    inside_reported: Callable[[cst.CSTNode], bool],
    reported_loop: Callable[[cst.For], bool] = lambda loop: False,
) -> tuple[list[ComprehensionReport], list[tuple[cst.BaseComp, str, str]]]:
    """The function's own comprehensions that unroll array work (outermost first; one inside
    a reported comprehension or a reported loop is not reported again), and every decision."""
    comps = own_comprehensions(parsed).get(traced.node, [])
    if not comps:
        return [], []
    judge = ComprehensionJudge(parsed, traced, constants, min_trip_count, is_module_class, reported_loop)
    reports: list[ComprehensionReport] = []
    decisions: list[tuple[cst.BaseComp, str, str]] = []
    taken: set[int] = set()
    for comp in comps:
        if inside_reported(comp) or any(id(a) in taken for a in parsed.ancestors(comp)):
            continue
        rule, evidence = judge.decide(comp)  # type: ignore[arg-type]
        decisions.append((comp, rule, evidence))  # type: ignore[arg-type]
        if rule == "reported":
            reports.append(ComprehensionReport(comp, traced, evidence))  # type: ignore[arg-type]
            taken.add(id(comp))
    return reports, decisions

