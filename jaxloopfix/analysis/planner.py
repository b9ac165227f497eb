"""Builds a LoopPlan for a `for` loop in a traced function, or decides it is not one of ours.

`plan()` returns None for loops that are not over an array axis (layers,
dict items, static sizes): those are never reported. Otherwise the plan is
reported, with a refusal reason when no fix can be proven equivalent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
from libcst.metadata import GlobalScope

from jaxloopfix.analysis.array_fields import array_fields
from jaxloopfix.analysis.arrays import ArrayFacts
from jaxloopfix.analysis.body import body_refusal
from jaxloopfix.analysis.per_step_lists import PerStepLists
from jaxloopfix.analysis.containers import BOUND_TO_CONTAINER, KEEPS_NOTHING, NAMED_STRUCTURE, NO_ARRAY_OPERATION, SELECTS_ITEMS, ContainerEvidence, _constructor, _own_descendants, string_from, array_rows_call
from jaxloopfix.analysis.cross_module import ModuleSite
from jaxloopfix.analysis.dataflow import LoopDataflow, appended_list, contains
from jaxloopfix.analysis.index_use import IndexUseChecker, selects_objects
from jaxloopfix.analysis.count_defaults import method_and_class, receiver_name
from jaxloopfix.analysis.loops import Iteration, IterationAnalyzer, TripCount, maybe_array_reason, module_literal_values
from jaxloopfix.analysis.names import Flow, assigned_names, block_flow, loads, parameters, stored_names
from jaxloopfix.analysis.plan import Accumulator, Carry, LoopPlan, Sequence
from jaxloopfix.analysis.source import ParsedModule, descendants, shorten
from jaxloopfix.analysis.step_values import host_conversion, traced_in_step
from jaxloopfix.analysis.step_values import value_names as _value_names
from jaxloopfix.analysis.traced import TracedFunction
from jaxloopfix.analysis.value_kinds import ADDS, ARRAY, COMBINATIONS, CONTAINER, SHAPE, TRACED, UNKNOWN, Kind, ValueKinds, python_annotation_kind

GROWING = frozenset(
    {"concatenate", "append", "hstack", "vstack", "column_stack", "row_stack", "dstack", "pad", "insert", "block",
     "tile", "repeat", "stack"}
)
# Calls outside `jax.numpy`'s growing names whose result, given the carry, has another shape:
# a block-diagonal or Kronecker product grows it, an outer product adds an axis, a trace drops two.
RESHAPING = frozenset({"jax.scipy.linalg.block_diag", "jax.numpy.kron", "jax.numpy.outer", "jax.numpy.trace"})


# Structured loops: `jax.lax.scan`, `fori_loop`, ... and other libraries' (`equinox.internal.while_loop`,
# `flax.linen.scan`, `hk.fori_loop`): a loop function of one of these packages.
STRUCTURED_NAMES = frozenset({"scan", "fori_loop", "while_loop", "associative_scan", "map", "checkpointed_while_loop",
                              "bounded_while_loop", "scan_with_init", "dynamic_unroll", "static_unroll"})
STRUCTURED_PACKAGES = frozenset({"jax", "equinox", "flax", "haiku", "diffrax", "optimistix", "lineax", "chex"})


def _structured(qname: str) -> bool:
    parts = qname.split(".")
    return (
        len(parts) > 1 and parts[-1] in STRUCTURED_NAMES and parts[0] in STRUCTURED_PACKAGES
        and not qname.startswith(("jax.numpy.", "jax.tree", "jax.tree_util."))
    )


@dataclass
class _Build:
    """What building one loop's plan has found so far; `refuse` keeps the first refusal."""

    loop: cst.For
    iteration: Iteration
    plan: LoopPlan
    body: list[cst.BaseStatement]
    dataflow: LoopDataflow
    element_names: list[str]
    loop_names: set[str]
    body_assigned: set[str]
    refusal: str | None = None
    reads_per_step: bool = False  # whether the body reads `x[t]` of any array, sliceable or not
    accumulator_names: set[str] = field(default_factory=set)
    flow: Flow = field(default_factory=Flow)
    live: set[str] = field(default_factory=set)
    carry_names: set[str] = field(default_factory=set)
    array_names: set[str] = field(default_factory=set)
    reshaped: str | None = None

    def refuse(self, reason: str | None) -> None:
        if self.refusal is None and reason:
            self.refusal = reason


class LoopPlanner:
    def __init__(
        self,
        parsed: ParsedModule,
        traced: TracedFunction,
        constants: dict[str, int],
        min_trip_count: int,
        is_module_class: Callable[[cst.BaseExpression], bool] | None = None,
        site: ModuleSite | None = None,
        ask: Callable[[str], None] = lambda qualified: None,
    ) -> None:
        self.parsed = parsed
        self.traced = traced
        # Every traced function's arguments and locals may hold arrays: indexed by the loop they
        # are reported, and a fix that slices them is unsafe until they are proven arrays.
        possible = {p.name.value for p in parameters(traced.node, stars=False)} - traced.static_params - {"self", "cls"}
        possible |= assigned_names(list(traced.node.body.body)) if isinstance(traced.node.body, cst.IndentedBlock) else set()
        self.facts = ArrayFacts(parsed, traced.node, possible, array_fields(parsed, traced.node))
        self.iterations = IterationAnalyzer(parsed, traced, self.facts, constants)
        self.evidence = ContainerEvidence(
            parsed, traced.node, self.facts, self.iterations._local_values, is_module_class or (lambda expr: False),
            site, ask, lambda expr: self.kinds.of(expr).python, traced.module,
            lambda expr: self.kinds.of(expr).name in (ARRAY, TRACED),
        )
        self.min_trip_count = min_trip_count
        self.constants = constants
        # Every loop planned: the rule that left it unreported and its evidence, or ("reported", "").
        self.decisions: dict[cst.For, tuple[str, str]] = {}
        self.is_module_class = is_module_class or (lambda expr: False)

    @property
    def skipped(self) -> list[tuple[cst.For, str]]:
        """Loops left unreported, each with the evidence that it does not unroll array work."""
        return [(loop, evidence) for loop, (rule, evidence) in self.decisions.items() if rule != "reported"]

    def plan(self, loop: cst.For) -> LoopPlan | None:
        """The loop's plan, or None with the positive evidence recorded in `decisions`: a loop in
        traced code is reported unless something shows it does not unroll array work.

        The decision reads as a table (`SKIP_RULES`): each row is a small method named after
        what it recognises, returning the evidence in words or None; the first row with
        evidence leaves the loop unreported. A loop no row matches is reported, and the fix's
        plan is built in named steps (the first refusal any step finds is the one shown); two
        late rows can still leave it unreported once the plan shows what the body does."""
        iteration = self.iterations.iteration(loop)
        for rule in SKIP_RULES:
            evidence = rule(self, loop, iteration)
            if evidence is not None:
                return self._skip(loop, evidence, rule.__name__)
        self.decisions[loop] = ("reported", "")
        iteration = iteration or self.iterations.unrecognised(loop)
        build = self._start(loop, iteration)
        if isinstance(build, LoopPlan):  # refused from its header alone
            skipped = not self._reads_known_array(loop) and self._python_level(loop, iteration, build)
            return None if skipped else build
        self._per_step_reads(build)
        self._accumulators(build)
        self._carries(build)
        if not self._index_uses(build):
            return None  # the index selects Python structure (`index_as_structure`)
        return self._finish(build)

    # -- building the fix's plan, in order --------------------------------------------------
    def _start(self, loop: cst.For, iteration: Iteration) -> _Build | LoopPlan:
        """The plan's frame, refused early when the header or layout rules a fix out."""
        plan = LoopPlan(
            loop=loop,
            function=self.traced,
            kind=iteration.kind,
            iterates=iteration.description,
            index=iteration.index,
            index_start=iteration.index_start,
            bounds=iteration.bounds,
            unsafe_reasons=list(iteration.unsafe_reasons),
        )
        early = iteration.refusal
        if early is None and self._index_grid(loop.iter):
            early = (
                f"it steps over the index tuples `{shorten(self.parsed.code(loop.iter), 30)}` makes on the host, "
                "which `lax.scan` cannot take as `xs`; scan over `jnp.indices(shape).reshape(len(shape), -1).T` instead"
            )
        if early is None:
            early = self._list_of_rows_refusal(loop, iteration)
        if early is None and (held := self.filled_per_step(loop.iter, loop)) is not None:
            # A scan (or vmap) would take the list as a pytree of separate arrays, not as rows.
            stack = "`jnp.stack(...)`" if "one array" in held else "`jax.tree.map(lambda *leaves: jnp.stack(leaves), *items)`"
            early = f"it iterates {held}: stack it first ({stack}) or keep the first loop's outputs as arrays"
        if early is None and not isinstance(loop.body, cst.IndentedBlock):
            early = "the loop body is on the `for` line; put it on its own lines to get a fix"
        if early is None and any(isinstance(n, cst.NamedExpr) for n in descendants(loop.iter)):
            early = "the loop header has an assignment expression (`:=`)"
        if early is not None:
            plan.refusal = early
            plan.bounds = None
            appended = next((name for s in descendants(loop.body) if (name := _append_target(s))), None)
            if appended is not None:  # reported as JLF001, naming the list the loop appends to
                plan.accumulators.append(_placeholder_accumulator(appended, loop))
            return plan
        element_names = [name for name, _ in iteration.elements]
        body = list(loop.body.body)
        return _Build(
            loop=loop, iteration=iteration, plan=plan, body=body,
            dataflow=LoopDataflow(self.parsed, self.traced, loop, self.facts),
            element_names=element_names,
            loop_names=set(element_names) | ({iteration.index} if iteration.index else set()),
            body_assigned=assigned_names(body),
        )

    def _numbers_refusal(self, loop: cst.For, iteration: Iteration) -> str | None:
        """`for c in coeffs` with `coeffs = [1.0, -0.5, ...]`: a scan would take the list as a
        pytree of scalars, one leaf per item, and find no axis to step over; `coeffs[i]` would
        index a Python list with a traced int."""
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                    and self._numeric_display(node.value) is not None:
                code = node.value.value
                return (
                    f"`{shorten(self.parsed.code(node), 30)}` indexes `{code}`, a Python list of numbers, which a "
                    f"traced index cannot index (and `lax.scan` cannot step over); use `jnp.asarray({code})` instead"
                )
        for _, source in iteration.elements:
            if self._numeric_display(source) is not None:
                code = shorten(self.parsed.code(source), 30)
                return (
                    f"it steps over `{code}`, a Python list of numbers: `lax.scan` would take it as a pytree of "
                    f"scalars; step over `jnp.asarray({code})` instead"
                )
        return None

    def _list_of_rows_refusal(self, loop: cst.For, iteration: Iteration) -> str | None:
        """A loop over a Python list of an array's rows (`rows = list(x)`, `jnp.split(x, n)`), a
        slice of one (`list(x)[1:]`, `rows[::-1]`), or one that indexes such a list per step
        (`rows[t]`), steps along the array; but `lax.scan` would take the list as a pytree (one
        leaf per item) and slice every item instead: no fix, even an unsafe one."""
        candidates: list[cst.BaseExpression] = [source for _, source in iteration.elements]
        candidates += [n for n in (loop.iter, *descendants(loop.iter)) if isinstance(n, (cst.Name, cst.Call))]
        # Read by the index (`rows[t]`): a list built by a comprehension or a display is stacked
        # before the scan (`plan.stacked_lists`, see `_python_list_binding`); one built by a call
        # (`list(x)`, `jnp.unstack(x)`) is not.
        candidates += [
            n.value for n in _own_descendants(loop.body)
            if isinstance(n, cst.Subscript) and not self._built_as_list(n.value)
        ]
        seen: set[int] = set()
        for candidate in candidates:
            while isinstance(candidate, cst.Subscript):
                candidate = candidate.value  # `list(x)[1:]`, `rows[::-1]`: a list still
            if id(candidate) in seen:
                continue
            seen.add(id(candidate))
            rows = self.evidence.list_of_rows(candidate)
            if rows is not None:
                return (
                    f"it steps over a Python list of an array's rows or pieces (`{shorten(rows, 40)}`); `lax.scan` takes a "
                    "list as a pytree and would slice each item, so scan over the array itself (`xs=x`)"
                )
        return None

    def _built_as_list(self, expr: cst.BaseExpression) -> bool:
        """A name every binding of which is a list display or comprehension."""
        values = self.iterations._local_values.get(expr.value, []) if isinstance(expr, cst.Name) else []
        return bool(values) and all(isinstance(v, (cst.List, cst.ListComp)) for v in values)

    def _per_step_reads(self, b: _Build) -> None:
        """Per-step reads `x[t]` of loop-invariant arrays, and the elements iterated directly."""
        plan, iteration = b.plan, b.iteration
        if iteration.index is not None and iteration.kind == "range":
            # Slicing `x[a:b]` equals reading `x[t]` per step only when the range ends at x's own
            # length: JAX clamps out-of-range reads, so other sequences keep dynamic reads `x[t]`.
            read = self._sequences(b.loop, iteration.index, b.body_assigned)
            b.reads_per_step = bool(read)
            plan.sequences = [s for s in read if self._sliceable(plan, s)]
            for sequence in plan.sequences:
                if not sequence.proven:
                    plan.unsafe_reasons.append(_maybe_array_reason(self.parsed.code(sequence.array)))
                concrete = self._concrete_source(sequence.array)
                if concrete:
                    plan.unsafe_reasons.append(concrete)
        for name, array in iteration.elements:
            plan.sequences.append(Sequence(array=array, axis=0, param=name, whole=True, reversed=name in iteration.reversed_elements))

    def _accumulators(self, b: _Build) -> None:
        """Lists that live outside the loop and get appended to; then what the body does that
        no scan step can (side effects, module calls, Python control flow on traced values)."""
        plan = b.plan
        appends: dict[str, list[cst.SimpleStatementLine]] = {}
        for statement in _all_statements(b.body):
            name = appended_list(statement)
            if name is not None and name not in b.body_assigned:
                appends.setdefault(name, []).append(statement)  # type: ignore[arg-type]
            elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) > 1:
                for small in statement.body:
                    target = _append_target(small)
                    if target is not None and target not in b.body_assigned:
                        appends.setdefault(target, []).append(statement)
                        b.refuse(f"`{target}.append(...)` shares a line with other statements; put it on its own line to get a fix")
        b.accumulator_names = set(appends)
        constructed = _constructed_names(b.body)
        for name, statements in appends.items():
            built = next((c for st in statements for c in _appended_objects(st, constructed)), None)
            if built is not None:
                b.refuse(
                    f"`{name}` collects `{shorten(self.parsed.code(built.func), 30)}(...)` objects: a scan stacks their "
                    "fields into one object, and the per-step objects are not split back out of it"
                )
        iteration = b.iteration
        b.flow = block_flow(b.body, defined=set(b.loop_names))
        b.refuse(
            body_refusal(
                self.parsed, b.loop, b.loop_names, b.accumulator_names, unsafe=plan.unsafe_reasons, index=iteration.index,
                function=self.traced.node, is_module_class=self.is_module_class, facts=self.facts,
                static=self.traced.static_params,
            )
            or self._module_call(b.loop)
            or self._traced_condition(b.loop, self._read_per_step(b), plan, carried=b.flow.read_first & b.flow.assigned)
        )
        b.live = b.dataflow.live_after()
        for name in sorted(b.loop_names & b.live):
            b.refuse(f"the loop variable `{name}` is used after the loop")

        for name in sorted(b.accumulator_names, key=lambda n: self._first_position(appends[n][0])):
            if any(appended_list(a) != name for a in appends[name]):
                plan.accumulators.append(_placeholder_accumulator(name, appends[name][0]))
                continue
            result = b.dataflow.accumulator(name, appends[name])
            if isinstance(result, str):
                b.refuse(result)
                plan.accumulators.append(_placeholder_accumulator(name, appends[name][0]))
                continue
            plan.accumulators.append(result)
            if result.initial and not result.kept_as_list:
                plan.unsafe_reasons.append(
                    f"`{name}` starts with items of its own (`{shorten(self.parsed.code(result.init.body[0].value), 30)}`): "  # type: ignore[attr-defined]
                    "the fix assumes they have the dtype and shape of each step's value, as `jnp.concatenate` "
                    "joins them with the scan's outputs"
                )
            if isinstance(result.value, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
                b.refuse(
                    f"`{name}` collects Python containers; `jnp.stack` of them differs from `lax.scan`'s "
                    "stacked outputs"
                )

    def _carries(self, b: _Build) -> None:
        """Names assigned in the loop and read before assignment or after it: the scan's carry,
        each with what is proven about its initial value, its shape and its dtype."""
        plan, flow, body = b.plan, b.flow, b.body
        b.carry_names = (flow.assigned & (flow.read_first | b.live)) - b.loop_names - b.accumulator_names
        b.array_names = set(self.facts.names) | set(b.element_names) | {s.param for s in plan.sequences}
        for name in sorted(b.carry_names, key=lambda n: (self._first_assignment(body, n), n)):
            kind, value = b.dataflow.init_of(name)
            if kind == "undefined":
                b.refuse(
                    f"`{name}` is assigned in the loop and read before assignment or after the loop, "
                    "but has no value before the loop"
                )
            elif kind == "scalar":
                scalar = self._python_scalar_carry(name, value, body, plan, b.element_names)
                if scalar is not None and scalar[0] == "refuse":
                    b.refuse(scalar[1])
                elif scalar is not None:
                    plan.unsafe_reasons.append(scalar[1])
            elif kind == "static":
                b.refuse(f"the carry `{name}` starts from a static argument; a scan would trace it")
            elif kind == "unknown":
                plan.unsafe_reasons.append(
                    f"cannot prove the initial value of `{name}` is an array with the shape and dtype the loop carries"
                )
            if kind not in ("undefined", "scalar", "static") and name not in flow.read_first:
                # Carried only for its last value: no step reads it, so nothing ties the value it
                # starts with to the one each step assigns (`c = jnp.zeros(n)`, then `c = t * 0.1`).
                shown = f"`{self.parsed.code(value)}`" if value is not None else "its value before the loop"
                b.refuse(
                    f"`{name}` is overwritten every step without reading its previous value, so its initial "
                    f"value {shown} need not have the shape and dtype of the value each step assigns, as a "
                    "`lax.scan` carry must; the loop keeps only its last value"
                )
            stability = self._carry_stability(name, value, body, plan, b.element_names) if kind != "scalar" else None
            if stability is not None:
                if stability[0] == "refuse":
                    b.refuse(stability[1])
                else:
                    plan.unsafe_reasons.append(stability[1])
            growth = self._growth(body, name)
            if growth is None and not isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
                growth = self._self_indexed(body, name)
            if growth and isinstance(value, cst.List) and _extended_by_lists(body, name):
                # `losses = []`, then `losses += [loss]` each step: a Python list of per-step
                # values, as `losses.append(loss)` builds; the steps themselves keep their shapes.
                b.refuse(
                    f"`{name}` collects per-step values with `{growth}`; written `{name}.append(...)` the fix "
                    "would return them as the scan's stacked outputs"
                )
            elif growth:
                b.refuse(f"the carry `{name}` changes shape every step (`{growth}`); `lax.scan` needs a fixed carry shape")
                if _fixed_window(body, name, b.body_assigned | b.loop_names) is None:
                    b.reshaped = b.reshaped or f"the carry `{name}` changes shape every step (`{growth}`)"
            plan.carries.append(Carry(name, "array" if kind == "array" else "unknown", buffer=self._is_buffer(body, name)))
            if kind == "array":
                b.array_names.add(name)

    def _index_uses(self, b: _Build) -> bool:
        """How the index is used outside per-step reads; False when it selects Python structure
        (the loop is then left unreported, `index_as_structure`)."""
        plan, iteration = b.plan, b.iteration
        for name in b.element_names:
            b.refuse(selects_objects(self.parsed, b.body, name))
        if iteration.index is None:
            return True
        checker = IndexUseChecker(self.parsed, self.facts, b.body, b.array_names, self.kinds)
        skip = [r for s in plan.sequences for r in s.reads]
        use = checker.check(iteration.index, skip, plan.selects)
        if use.container:
            self._skip(b.loop, use.container, "index_as_structure")
            return False
        for name in sorted(use.maybe_arrays):
            listed = _python_list_binding(self.traced.node, name, self.parsed)
            if listed is not None:
                how, uniform = listed
                text = _text_items(self.traced.node, name)
                if text is not None:
                    b.refuse(
                        f"`{name}` is a Python list of text (`{text}`): a traced index cannot select from it, "
                        "and `jnp.stack` cannot make it an array"
                    )
                    continue
                if name not in b.live and _only_indexed_by(self.parsed, b.body, name, iteration.index):
                    # Stacked before the scan; the index then reads the same item as an array.
                    plan.stacked_lists.append(name)
                    if not uniform:
                        plan.unsafe_reasons.append(
                            f"`{name}` is a Python list ({how}); the fix stacks it before the scan "
                            f"(`{name} = jnp.stack({name})`), which assumes its items are arrays of one "
                            "shape and dtype"
                        )
                    continue
                b.refuse(
                    f"`{name}` is a Python list ({how}): the scan's traced index cannot index it; "
                    f"`jnp.stack({name})` before the loop makes it an array"
                )
            reason = _maybe_array_reason(name)
            if reason not in plan.unsafe_reasons:
                plan.unsafe_reasons.append(reason)
        plan.index_used = use.used
        b.refuse(use.refusal)
        plan.unsafe_reasons.extend(use.unsafe_reasons)
        return True

    def _read_per_step(self, b: _Build) -> set[str]:
        """What the step reads per step: the element names, the scanned sequences, the index."""
        index = b.iteration.index
        return set(b.element_names) | {self.parsed.code(s.array) for s in b.plan.sequences} | ({index} if index else set())

    def _finish(self, b: _Build) -> LoopPlan | None:
        """Reads bound, values and bounds checked; then the two late rows, which need the plan:
        a refused loop that provably touches no array but does Python-level work, and a carry
        that changes shape over a count that is not a sequence length."""
        plan, iteration, loop = b.plan, b.iteration, b.loop
        # Last of the step's refusals (those that name the cause more closely come first): a
        # test on anything the step computes from the index, the slices or the carry.
        traced = traced_in_step(loop.body, self._read_per_step(b) | (b.flow.read_first & b.flow.assigned))
        b.refuse(self._traced_condition(loop, traced, selected=tuple(plan.selects)))
        b.refuse(host_conversion(loop.body, traced, frozenset(id(s) for s in plan.selects)))
        if not self._has_array_evidence(iteration.elements, plan, loop):
            plan.unsafe_reasons.append(
                "nothing the loop reads is proven to be an array, so it may step over Python values; "
                "the fix assumes the values it scans over and carries are arrays"
            )
        self._bind_reads(plan, b.body, b.flow, b.live, b.carry_names)
        self._check_values(plan, b.array_names)
        self._check_bounds(plan)
        plan.refusal = b.refusal or _keeps_no_value(plan) or self._numbers_refusal(loop, iteration)
        trip = iteration.trip
        if b.refusal is not None and self._python_level(loop, iteration, plan):
            return None
        if b.reshaped and trip.kind != "shape" and not b.reads_per_step and not iteration.elements:
            # Over a count that is not a sequence length, each step computes on a different shape
            # (`jnp.diff`'s n-th difference, growing block matrices): a deliberate unroll of
            # distinct computations, not one step along an array axis.
            return self._skip(loop, f"{b.reshaped} over a count that is not a sequence length: distinct computations, not steps along an axis")
        return plan


    def _reads_known_array(self, loop: cst.For) -> bool:
        """Whether the body reads a value known to be an array or a tracer (`pairs[idx]` with
        `pairs = jnp.einsum(...)`): a plan refused from its header has no reads, carries or
        index of its own to show it."""
        for node in _own_descendants(loop.body):
            if isinstance(node, (cst.Name, cst.Subscript, cst.Attribute)) and self.kinds.of(node).name in (ARRAY, TRACED):
                return True
        return False

    def _python_level(self, loop: cst.For, iteration: Iteration, plan: LoopPlan) -> bool:
        """A refused loop (from its header, as a `range` with a step that is not a literal, or
        from its body) that does Python-level work (`yield`, `return`, `raise`, stores into
        outer objects) and reads nothing known to be an array: checks, searches or bookkeeping
        over Python values, such as a generator of chunk bounds. True: left unreported."""
        if iteration.trip.kind == "shape" or self._proven_array_work(iteration, plan, loop):
            return False
        python_level = self.evidence.python_level(loop)
        if python_level is None:
            return False
        self._skip(
            loop,
            f"{python_level} and nothing the loop reads is known to be an array: checks, searches or "
            "bookkeeping over Python values",
        )
        return True

    # -- the rows of SKIP_RULES, in order ----------------------------------------------------
    def traced_trip_count(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """`for i in range(n)` with `n` a tracer raises under the trace: JLF003 reports it."""
        if iteration is not None and iteration.trip.kind == "traced":
            return "its trip count is a traced value, which raises under a trace (JLF003 reports it)"
        bound = _array_valued_bound(self.parsed, loop.iter, self.kinds)
        if bound is not None:
            # `n = min(jnp.sum(valid) + 1, cap)`: an array computed in the body of the function.
            # `range` of it raises under a trace (`TracerIntegerConversionError`), and run eagerly
            # the loop is host code: in neither case is it unrolled into a compiled program.
            return (
                f"its trip count `{shorten(self.parsed.code(bound), 40)}` is an array value "
                f"({self.kinds.of(bound).why or 'computed by JAX'}): under a trace `range` of it raises, "
                "so the loop is not unrolled (it runs only eagerly)"
            )
        return None

    def array_axes(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """`for axis in range(x.ndim)`: a few static steps over the axes, not along one."""
        if iteration is not None and iteration.trip.kind == "ndim":
            return "it steps over the axes of an array (`range(x.ndim)`), a few static steps"
        return None

    def untraced_branch(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """The eager fallback under `if config.disable_jit.value:`, a function that renders text,
        or a loop that shows a progress bar."""
        return self._jit_disabled_branch(loop) or self._renders_text() or self._progress_bar(loop)

    def _progress_bar(self, loop: cst.For) -> str | None:
        """`for _ in tqdm(range(n_tokens)):` in a function traced only by being reached (a call,
        a module's method): a progress bar reports steps as they run, one at a time, so the loop
        runs on the host, each step calling compiled code (sampling, generation, evaluation).
        Under a transform applied to the function itself the bar would tick at trace time only,
        and the loop is judged as any other."""
        if self.traced.transformed:
            return None
        it = _unwrapped(loop.iter, ("enumerate", "zip", "reversed"))
        if isinstance(it, cst.Name):
            # `pbar = tqdm(range(n)) if verbose else range(n)`: the same loop as
            # `tqdm(range(n), disable=not verbose)`, a bar shown or not by a flag.
            values = self.iterations._local_values.get(it.value, [])
            if len(values) == 1 and isinstance(values[0], cst.IfExp):
                it = next((branch for branch in (values[0].body, values[0].orelse) if self._is_progress_bar(branch)), it)
        if not self._is_progress_bar(it):
            return None
        assert isinstance(it, cst.Call)
        return (
            f"it steps through a progress bar (`{shorten(self.parsed.code(it.func), 30)}`), which shows steps as they "
            "run: a host loop, each step calling compiled code (no transform applies to the function itself)"
        )

    def _is_progress_bar(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
            return False
        qname = self.parsed.qualified_name(expr.func) or ""
        return qname.split(".", 1)[0] in PROGRESS_MODULES or qname in PROGRESS_FUNCTIONS

    def python_container(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """Layers, parameters, dict entries, pytree leaves, literals (`ContainerEvidence.iterable`),
        and tuples unpacked per item (`for w, b in params`)."""
        if self._numeric_steps(loop) >= self.min_trip_count:
            return None  # `for c in [1.0, -0.5, ...]`: steps of array work with a known count, judged by the count
        evidence = self.evidence.iterable(loop.iter)
        if evidence is not None and BOUND_TO_CONTAINER in evidence and self._counter_reads_rows(loop) is not None:
            return None  # `for k, (slot, _) in enumerate(slots): out[slot] = rows[k]`: a local list of Python values
        if evidence is not None and BOUND_TO_CONTAINER in evidence and self.filled_per_step(loop.iter, loop) is not None:
            return None  # `for z in exp_z` after an unrolled loop appended one array per step to `exp_z`
        if evidence is None and iteration is None and isinstance(loop.target, (cst.Tuple, cst.List)):
            if _is_range(self.parsed, loop.iter) or self._index_grid(loop.iter):
                return None  # `for i, j in itertools.product(range(h), range(w))`, `np.ndindex(x.shape)`: ints, which may index rows
            if self._counter_reads_rows(loop) is not None:
                return None  # `for i, (x, y) in enumerate(batches): ... keys[i]`: it steps over array rows too
            evidence = (
                f"each item is unpacked into `{self.parsed.code(loop.target)}`: a sequence of tuples "
                "(such as per-layer parameters), not slices of one array"
            )
        if evidence is None:
            evidence = self._container_kind(loop)
        return evidence

    def filled_per_step(self, iterable: cst.BaseExpression, node: cst.CSTNode) -> str | None:
        """`per_step_lists` for this function, with the loops decided so far."""
        return self._per_step_lists.filled(iterable, node)

    @cached_property
    def _per_step_lists(self) -> PerStepLists:
        return PerStepLists(self.parsed, self.traced.node, lambda: self.kinds, lambda f: self.decisions.get(f, ("",))[0] == "reported")

    def _numeric_steps(self, loop: cst.For) -> int:
        """How many steps a loop takes over a literal list or tuple of numbers (a polynomial's or a
        series' coefficients), iterated itself (`for c in coeffs`) or by a range as long as it
        (`reversed(range(1, len(coeffs)))`), bound in the function or at module level; else 0.
        Such items are no layers or configured objects: the count alone says how much unrolls."""
        iterable = _unwrapped(loop.iter, ("enumerate", "reversed"))
        offset = 0
        if _is_range(self.parsed, iterable) and isinstance(iterable, cst.Call):
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if len(args) not in (1, 2) or len(args) != len(iterable.args):
                return 0
            if len(args) == 2:
                if not isinstance(args[0], cst.Integer):
                    return 0
                offset = int(args[0].evaluated_value)
            stop = args[-1]
            if not (isinstance(stop, cst.Call) and self.parsed.qualified_name(stop.func) == "builtins.len" and len(stop.args) == 1):
                return 0
            iterable = stop.args[0].value
        display = self._numeric_display(iterable)
        if display is None or not self._numbers_as_operands(loop, display):
            return 0
        return max(len(display.elements) - offset, 0)

    def _numeric_display(self, expr: cst.BaseExpression) -> cst.List | cst.Tuple | None:
        """The list or tuple display of number literals that `expr` is, or that the name is bound
        to once (in the function, or else at module level), else None."""
        if isinstance(expr, cst.Name):
            values = self.iterations._local_values.get(expr.value)
            if values is None and self._module_level(expr):
                values = module_literal_values(self.parsed).get(expr.value)
            if not values or len(values) != 1 or not isinstance(values[0], cst.BaseExpression):
                return None
            expr = values[0]
        if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements and all(
            _number(e.value) for e in expr.elements if not isinstance(e, cst.StarredElement)
        ) and not any(isinstance(e, cst.StarredElement) for e in expr.elements):
            return expr
        return None

    def _module_level(self, name: cst.Name) -> bool:
        """Every binding Python would find for `name` here is at module level (not a parameter
        or a local of this function or of one it is nested in)."""
        scope = self.parsed.scope(name)
        try:
            found = list(scope[name.value]) if scope is not None else []
        except Exception:  # noqa: BLE001 - a name libcst cannot look up is just unknown
            return False
        return bool(found) and all(isinstance(a.scope, GlobalScope) for a in found)

    def _numbers_as_operands(self, loop: cst.For, display: cst.List | cst.Tuple) -> bool:
        """Each number the loop takes is an operand of arithmetic (`y * c - prev + coeffs[i]`),
        the terms of a series; not a setting a step needs as a Python value (a slice bound, a
        reshape size, a keyword argument such as a dilation), which makes every step a different
        computation. The index, when the loop steps by one, is read only to pick the number."""
        iterable = _unwrapped(loop.iter, ("enumerate", "reversed"))
        target = loop.target
        uses: list[cst.CSTNode] = []
        if _is_range(self.parsed, iterable):
            if not isinstance(target, cst.Name):
                return False
            for node in _own_descendants(loop.body):
                if isinstance(node, cst.Name) and node.value == target.value:
                    holder = self._parent_subscript(node)
                    if holder is None or self._numeric_display(holder.value) is not display:
                        if not self._arithmetic_operand(node):
                            return False
                    else:
                        uses.append(holder)
            return all(self._arithmetic_operand(use) for use in uses)
        if not isinstance(target, cst.Name):
            return False
        uses = [n for n in _own_descendants(loop.body) if isinstance(n, cst.Name) and n.value == target.value]
        return bool(uses) and all(self._arithmetic_operand(use) for use in uses)

    def _parent_subscript(self, name: cst.Name) -> cst.Subscript | None:
        """`coeffs[i]` for the `i` in it (the index alone), else None."""
        index = self.parsed.parent(name)
        element = self.parsed.parent(index) if isinstance(index, cst.Index) else None
        subscript = self.parsed.parent(element) if isinstance(element, cst.SubscriptElement) else None
        return subscript if isinstance(subscript, cst.Subscript) and len(subscript.slice) == 1 else None

    def _arithmetic_operand(self, node: cst.CSTNode) -> bool:
        parent = self.parsed.parent(node)
        return isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation))

    def _container_kind(self, loop: cst.For) -> str | None:
        """Kinds: what it iterates is a Python list or tuple whose items are not known to be
        arrays (`dims` bound to `x.shape` or to a declared `Sequence[int]`): a step per item,
        unless the counter selects array rows each step."""
        iterable = _unwrapped(loop.iter, ("enumerate", "reversed"))
        if not isinstance(iterable, cst.Name):
            return None  # `range(n)`, `zip(xs, ys)`: iterators built for the loop, left to the other rows
        kind = self.kinds.of(iterable)
        if kind.name != CONTAINER or not (kind.items().python or kind.items().name == UNKNOWN):
            return None
        if self.evidence.list_of_rows(iterable) is not None:
            return None  # `rows = [x[t] * 2 for t in range(len(x))]`: one item per row of `x`
        shown = shorten(self.parsed.code(iterable), 40)
        if self._dimension_sizes(iterable):
            # As for `enumerate(x.shape)`: the counter picks a component per dimension (`coords[dim]`).
            return (
                f"it iterates `{shown}`, the sizes of an array's dimensions ({kind.why or 'a shape'}): a step per "
                "dimension, not a step along an array axis"
            )
        if self._counter_reads_rows(loop) is not None:
            return None
        origin = f" ({kind.why})" if kind.why and shown not in kind.why else ""
        return f"it iterates `{shown}`, a Python container{origin}: a step per item, not a step along an array axis"

    def _dimension_sizes(self, expr: cst.BaseExpression) -> bool:
        """A name every binding of which is a shape (`x.shape`) or a parameter declared a sequence
        of ints (`shape: Optional[Sequence[int]]`): dimension sizes, whatever the caller passes."""
        if not isinstance(expr, cst.Name):
            return False
        declared = {
            p.name.value for p in parameters(self.traced.node) if p.annotation is not None
            and (k := python_annotation_kind(self.parsed, p.annotation.annotation)) is not None and k.name == CONTAINER
        }
        values = self.iterations._local_values.get(expr.value) or []
        return bool(values) and all(
            isinstance(v, cst.BaseExpression) and (
                self.kinds.of(v).name == SHAPE or isinstance(v, cst.Name) and v.value in declared
            ) for v in values
        )

    def _counter_reads_rows(self, loop: cst.For) -> str | None:
        """`for i, (inputs, targets) in enumerate(batches): key = keys[i + 1]`: the counter of
        `enumerate` (or a value computed from it) selects rows of an array each step, so the
        loop steps along that array's axis, unless the items are called (layers, functions)."""
        it = loop.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate"):
            return None
        target = loop.target
        first = target.elements[0].value if isinstance(target, (cst.Tuple, cst.List)) and target.elements else None
        if not isinstance(first, cst.Name):
            return None
        items = stored_names(target) - {first.value}
        for node in _own_descendants(loop.body):
            func = node.func if isinstance(node, cst.Call) else None
            while isinstance(func, cst.Attribute):
                func = func.value
            if isinstance(func, cst.Name) and func.value in items:
                return None  # `layer(x, keys[i])`: the items are layers or objects, each step a different one
        return self._index_reads_rows(loop, first.value)

    def _index_reads_rows(self, loop: cst.For, index: str) -> str | None:
        """`A_uv[idx]`, `keys[i + 1]`: the index, or a value computed from it, selects rows of an
        array (by its kind) each step; the subscript, else None."""
        derived = {index}
        nodes = _own_descendants(loop.body)
        for node in nodes:
            if isinstance(node, cst.Assign) and {n.value for n in descendants(node.value) if isinstance(n, cst.Name)} & derived \
                    and not any(string_from(node.value, name) for name in derived):
                # (text built from the index, `f"layer_{i}"`, is a key: it selects no row)
                derived |= {n for t in node.targets for n in stored_names(t.target)}
        for node in nodes:
            if not isinstance(node, cst.Subscript):
                continue
            reads = {n.value for e in node.slice for n in descendants(e.slice) if isinstance(n, cst.Name)}
            if reads & derived and self.kinds.of(node.value).name in (ARRAY, TRACED):
                return self.parsed.code(node)
        return None

    def combined_items(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """Kinds: `itertools.product(*per_axis)` over Python containers of arrays (interpolation
        corners, pairs of layers): each step takes one combination of items built before the
        loop, a static structure, not a step along an array axis. Products of `range`s are
        left to the other rows (their ints may index an array), as are products of arrays."""
        it = _unwrapped(loop.iter, ("enumerate", "reversed"))
        if not isinstance(it, cst.Call) or not isinstance(it.func, (cst.Name, cst.Attribute)) \
                or self.parsed.qualified_name(it.func) not in COMBINATIONS or _is_range(self.parsed, it):
            return None
        kind = self.kinds.of(it)
        if kind.name != CONTAINER or kind.item is None or kind.item.name != CONTAINER:
            return None
        element = kind.item.item
        if element is None or element.name not in (ARRAY, CONTAINER):
            return None
        return (
            f"it iterates `{shorten(self.parsed.code(it), 40)}`, tuples combining items of Python containers "
            f"(of {'arrays' if element.name == ARRAY else 'Python containers'}): each step is one combination, "
            "not a step along an array axis"
        )

    def python_items(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """Kinds: it iterates a Python value whose items are Python values (a static argument's
        tuple, `x.shape[1:]`, `enumerate(x.shape)`): each step is a distinct computation,
        never a step along an array axis. `range(...)` is left to the other rows: its ints
        may index an array."""
        if _is_range(self.parsed, loop.iter) or self._numeric_steps(loop) >= self.min_trip_count \
                or self._index_grid(loop.iter):
            return None
        items = self.kinds.of(loop.iter).items()
        if not items.python:
            return None
        return (
            f"it iterates `{shorten(self.parsed.code(loop.iter), 40)}`, whose items are Python values at trace time "
            f"({items.why or items.name}): each step is a distinct computation, not a step along an array axis"
        )

    def _index_grid(self, iterable: cst.BaseExpression) -> bool:
        """`np.ndindex(x.shape)`, `np.ndindex(*x.shape[1:])`, `np.ndindex(x.shape[0], x.shape[1])`:
        every index of an array, as nested `range`s over its axes are; its tuples may index it. So
        is `np.ndindex(shape)` with `shape` a name of unknown kind (an output's shape handed in).
        Sizes of Python values (`np.ndindex((3, 3))`, `np.ndindex(len(blocks), 2)`, a module's
        `KERNEL = (3, 3)`) are not."""
        if not (isinstance(iterable, cst.Call) and self.parsed.qualified_name(iterable.func) == "numpy.ndindex"):
            return False
        return bool(iterable.args) and any(
            isinstance(n, cst.Attribute) and n.attr.value == "shape"
            for a in iterable.args for n in (a.value, *descendants(a.value))
        ) or any(
            self.kinds.of(a.value).name == SHAPE and not _literal_tuple(a.value)
            or isinstance(a.value, cst.Name) and self.kinds.of(a.value).name == UNKNOWN  # `shape` of a loss, passed in
            for a in iterable.args
        )

    def items_may_be_none(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """`for i, d in enumerate(dims): if d is not None:`: an item is tested for being `None`.
        A row of an array is never `None`, so the items are Python values (optional sizes,
        gradients some of which are absent): a Python container, not steps along an axis. So
        does `if name in ext.keys():`: a traced row cannot be hashed or tested for truth. And
        `isinstance(d, int)`: a row of an array is always an array, so asking each item's type
        is asked of a Python container of mixed values (ints and arrays, modules and functions)."""
        iterable = _unwrapped(loop.iter, ("enumerate", "reversed"))
        if self.kinds.of(iterable).name == ARRAY:
            return None  # proven an array: its rows are never `None`, so the test decides nothing
        items = _item_names(loop, iteration)
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Comparison) and _none_identity(node, items):
                return (
                    f"it tests an item for `None` (`{shorten(self.parsed.code(node), 40)}`): a row of an array "
                    "is never `None`, so it iterates a Python container of optional values"
                )
            if isinstance(node, cst.Call) and _type_test_of(self.parsed, node, items):
                return (
                    f"it asks an item's type (`{shorten(self.parsed.code(node), 40)}`): a row of an array is "
                    "always an array, so it iterates a Python container of mixed values"
                )
            if isinstance(node, cst.Comparison) and _membership_of(node, items):
                return (
                    f"it tests an item for membership (`{shorten(self.parsed.code(node), 40)}`): under a trace "
                    "that needs a hashable or comparable Python value (a row of an array has no hash and no "
                    "truth value), so it iterates a Python container of keys"
                )
        return None

    def passed_containers(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """The loop iterates a parameter (alone, or zipped, enumerated, reversed) that every call of
        the function in this module passes a list or tuple literal (`match([t, 0.5 * t], [img,
        img[::2]])`): Python containers. Weaker than what the function itself shows, so tried after it."""
        iterable = _unwrapped(loop.iter, ("enumerate", "reversed"))
        names = [iterable] if isinstance(iterable, cst.Name) else []
        if isinstance(iterable, cst.Call) and self.parsed.qualified_name(iterable.func) == "builtins.zip":
            names = [a.value for a in iterable.args if isinstance(a.value, cst.Name)]
        for name in names:
            found = self.evidence.passed_at_every_call(name.value)  # type: ignore[union-attr]
            if found is not None:
                return found
        return None

    def python_body(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """What the body does (`ContainerEvidence.body`): builds modules or objects, keys dict
        entries, stores nothing, works on ragged shapes."""
        evidence = self.evidence.body(
            loop,
            iteration.index if iteration is not None else None,
            [name for name, _ in iteration.elements] if iteration is not None else sorted(stored_names(loop.target)),
            iteration.trip.kind if iteration is not None else "unknown",
        )
        if evidence is not None and evidence.startswith(SELECTS_ITEMS) and self._numeric_steps(loop) >= self.min_trip_count:
            return None  # `coeffs[i]` of a literal list of numbers: the steps of a series, with a known count
        if evidence is not None and evidence.startswith((NO_ARRAY_OPERATION, SELECTS_ITEMS, KEEPS_NOTHING, NAMED_STRUCTURE)):
            index = iteration.index if iteration is not None else None
            rows = self._index_reads_rows(loop, index) if index is not None else self._counter_reads_rows(loop)
            if rows is not None:
                return None  # `out[i] = A[idx]`, `names[i]` beside `state.cars[i, 0]`: it steps over array rows
            if evidence.startswith(KEEPS_NOTHING) and self.kinds.of(loop.iter).name in (ARRAY, TRACED):
                return None  # `for row in x: check(row)`: each step works on a row (a callback, a check)
        return evidence

    def python_values(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """Kinds: every value the body stores is a Python value (ints from index arithmetic,
        `size *= d`, strings, lists of them): it computes Python values, not array work."""
        stored = _stores(loop)
        if stored is None or not stored:
            return None
        kinds = {name: self.kinds.of_name(name) for name in stored}
        if not all(kind.python for kind in kinds.values()):
            return None
        return (
            f"every value it stores is a Python value at trace time ({_evidence(kinds)}): it computes "
            "Python values (ints, text, functions, NumPy arrays on the host), not array work"
        )

    def static_inner_loop(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """A count from the object's configuration inside a loop over a Python container."""
        if iteration is not None and iteration.trip.kind == "static":
            return self._inner_hyperparameter_loop(loop)
        return None

    def few_steps(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """A known trip count below `min-trip-count`: a small static unroll."""
        if iteration is None:
            return None  # a header it does not recognise has no known count
        trip = iteration.trip
        if trip.value is not None and trip.value < self.min_trip_count:
            if trip.default:
                return (
                    f"its trip count is {trip.value} by default ({trip.default}), below min-trip-count "
                    f"({self.min_trip_count}): a small static unroll unless a caller passes a larger count"
                )
            count: int | str | None = trip.value
            if trip.kind == "bounded":
                count = f"at most {trip.value} ({trip.bound or 'one of the literal ints it is looked up or chosen from'})"
            return f"its trip count is {count}, below min-trip-count ({self.min_trip_count}): a small static unroll"
        return None

    def module_depth(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """`for _ in range(self.cfg.levels)` in a class that builds one module per step of the same
        count (`self.blocks = [Block(...) for _ in range(self.cfg.levels)]`): the count is the
        model's depth, each step a level with its own parameters, not a step along a sequence."""
        if iteration is None or iteration.kind != "range" or iteration.bounds is None or iteration.bounds.start is not None:
            return None
        if iteration.trip.kind != "static":
            return None
        count = self.parsed.code(iteration.bounds.stop)
        found = method_and_class(self.parsed, self.traced.node)
        if found is None or not count.startswith(f"{receiver_name(found[0]) or 'self'}."):
            return None
        for node in descendants(found[1]):
            built = _modules_per_step(self.parsed, node, self.is_module_class)
            if built is not None and built[0] == count:
                return (
                    f"the class builds one module per step of the same count (`{shorten(built[1], 50)}`): "
                    f"`{count}` is the model's depth, a loop over levels, not a sequence"
                )
        return None

    def logarithmic_steps(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """`range(ceil(log2(n + 1)))`, `range(n.bit_length())`: a count logarithmic in a size, the
        rounds of a doubling or pointer-jumping scheme. It stays a few steps for any size (20 for
        a million), so the unroll is small and deliberate, not a step per row."""
        if iteration is None or iteration.bounds is None or iteration.trip.kind in ("traced", "shape"):
            return None
        stop = iteration.bounds.stop
        exprs: list[cst.BaseExpression] = [stop]
        if isinstance(stop, cst.Name):
            values = self.iterations._local_values.get(stop.value, [])
            if len(values) != 1 or not isinstance(values[0], cst.BaseExpression):
                return None
            exprs = [values[0]]
        for expr in exprs:
            for node in descendants(expr):
                if isinstance(node, cst.Call):
                    func = node.func
                    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
                    if name in LOGARITHMS:
                        return (
                            f"its trip count is logarithmic in a size (`{shorten(self.parsed.code(expr), 40)}`): the few "
                            "rounds of a doubling scheme, not a step per row"
                        )
        return None

    def structured_body(self, loop: cst.For, iteration: Iteration | None) -> str | None:
        """An outer loop (layers, stages) around a `lax.scan`, `fori_loop`, or another
        library's structured loop: already structured. Not when nothing in the body reads the
        loop's target (`for _ in range(num_epochs):`): every step repeats the same structured
        loop on the carry, so the repetition itself is unrolled."""
        found = self._runs_structured_loop(loop)
        if not found:
            return None
        targets = stored_names(loop.target)
        if not any(isinstance(n, cst.Name) and n.value in targets for n in descendants(loop.body)):
            return None
        return f"its body already runs a structured loop (`{found}`)"

    @cached_property
    def kinds(self) -> ValueKinds:
        return ValueKinds(self.parsed, self.traced, self.constants)

    def _jit_disabled_branch(self, loop: cst.For) -> str | None:
        """`if config.disable_jit.value:` / `if _DISABLE_CONTROL_FLOW_PRIM:`: the loop is the
        eager fallback of a structured loop, run only when nothing is traced."""
        return untraced_branch_of(self.parsed, self.traced.node, loop)

    def _renders_text(self) -> str | None:
        """`def to_html(jaxpr) -> str:`: a traced function cannot return text, so a function
        annotated to return `str` (or defined inside one) runs on Python values when it is
        reached by a call. A function a transform applies to directly is judged by its loops."""
        if self.traced.transformed:
            return None
        for func in (self.traced.node, *self.parsed.ancestors(self.traced.node)):
            if isinstance(func, cst.FunctionDef) and func.returns is not None:
                returns = func.returns.annotation
                if isinstance(returns, cst.Name) and returns.value in ("str", "bytes"):
                    return f"`{func.name.value}` is annotated to return `{returns.value}`: it renders text from Python values"
        return None

    def _inner_hyperparameter_loop(self, loop: cst.For) -> str | None:
        """`for base in self.bases: for i in range(self.n_digits): ...`: a count set by the object's
        configuration, nested in a loop over a Python container: static structure per item."""
        it = loop.iter
        if not (isinstance(it, cst.Call) and it.args and all(isinstance(a.value, cst.Attribute) for a in it.args)):
            return None
        if not all(self.parsed.code(a.value).startswith(("self.", "cls.")) for a in it.args):
            return None
        outer = {id(skipped) for skipped, _ in self.skipped}
        for ancestor in self.parsed.ancestors(loop):
            if ancestor is self.traced.node:
                break
            if isinstance(ancestor, cst.For) and id(ancestor) in outer:
                return (
                    f"its count `{self.parsed.code(it)}` is the object's configuration and it runs inside a loop over "
                    "a Python container: static structure per item, not steps along an array axis"
                )
        return None

    def _skip(self, loop: cst.For, evidence: str, rule: str = "late") -> None:
        """Leave a loop unreported, recording the positive evidence that it does not unroll array work."""
        self.decisions[loop] = (rule, evidence)
        return None

    # -- helpers ----------------------------------------------------------------
    def _reads(self, loop: cst.For, name: str) -> bool:
        return any(n.value == name for n in loads(loop.body))

    def _first_position(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.parsed.order(node)

    def _first_assignment(self, body: list[cst.BaseStatement], name: str) -> tuple[int, int]:
        for statement in _all_statements(body):
            if name in assigned_names([statement]):
                return self._first_position(statement)
        return (1 << 30, 0)

    def _proven_array_work(self, iteration: Iteration, plan: LoopPlan, loop: cst.For) -> bool:
        """Whether the loop provably touches an array: it iterates one, reads slices or rows of
        one, or carries or accumulates one."""
        if any(self.facts.is_array(source) for _, source in iteration.elements):
            return True
        elements = {name for name, _ in iteration.elements}
        if any(self.facts.is_array(s.array) or s.param not in elements for s in plan.sequences):
            return True  # a proven array, or per-step reads `ts[i + 1] - ts[i]` by the index
        if plan.index is not None and (self._indexes_array(loop, plan.index) or self._reads_by_index(loop, plan.index)):
            return True
        if any(c.init == "array" or c.name in self.facts.names for c in plan.carries):
            return True
        if any(a.append is not None and self.facts.is_array(a.value) for a in plan.accumulators if a.value is not None):
            return True
        return self._computes_arrays(loop)

    def _computes_arrays(self, loop: cst.For) -> bool:
        """Kinds: the body computes an array (a `jnp`/`lax` call, arithmetic with one, an array
        method, a transformed function's results) and stores it, as a name or an entry of an
        outer object."""
        for node in _own_descendants(loop.body):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                value = node.value
                kind = self.kinds.of(value) if isinstance(value, (cst.Call, cst.BinaryOperation)) else None
                if kind is not None and (kind.name in (ARRAY, TRACED) or kind.name == CONTAINER and kind.items().name in (ARRAY, TRACED)):
                    return True  # arrays, or a tuple of them (`loss, grads = jax.value_and_grad(f)(p)`)
        return False

    def _reads_by_index(self, loop: cst.For, index: str) -> bool:
        """`ts[i + 1] - ts[i]`: the index selects from a value not known to be a Python container,
        and the result enters arithmetic (a per-step read of possible array data)."""
        for node in descendants(loop.body):
            if not isinstance(node, cst.BinaryOperation):
                continue
            for side in (node.left, node.right):
                if not (isinstance(side, cst.Subscript) and isinstance(side.value, cst.Name)):
                    continue
                if any(index in {n.value for n in loads(e)} for e in side.slice):
                    if self.evidence.name(side.value.value) is None:
                        return True
        return False

    def _has_array_evidence(self, elements: list, plan: LoopPlan | list, loop: cst.For) -> bool:
        if elements:
            return True
        if not isinstance(plan, LoopPlan):
            return False
        if plan.sequences or (plan.index is not None and self._indexes_array(loop, plan.index)):
            return True
        if any(c.init == "array" or c.name in self.facts.names for c in plan.carries):
            return True
        return any(a.append is not None and self.facts.is_array(a.value) for a in plan.accumulators if a.value is not None)

    def _traced_condition(
        self, loop: cst.For, per_step: set[str], plan: LoopPlan | None = None, carried: set[str] = frozenset(),
        selected: tuple[cst.If, ...] = (),
    ) -> str | None:
        """A Python `if`/`while` on a per-step value (`if mask[t]:`) fails under any trace: the loop
        is reported, and JLF004's `jnp.where` fix comes first. A step-level `if` on the index whose
        branches only assign (`if t == T - 1: v = last` / `else: v = values[t + 1]`) becomes a
        `jnp.where` in the step instead (recorded in `plan.selects`)."""
        found: list[str] = []
        parsed = self.parsed
        selects: list[tuple[cst.If, str]] = []  # (the `if`, "reads" or "computes")
        if plan is not None and plan.index is not None and isinstance(loop.body, cst.IndentedBlock):
            body = list(loop.body.body)
            for position, statement in enumerate(body):
                if isinstance(statement, cst.If) and any(n.value in per_step for n in _value_names(statement.test)):
                    # Names the step reads before assigning: carries, whose previous value an `if` without `else` keeps.
                    kind = _index_select(statement, body[:position], plan.index, per_step, carried)
                    if kind is not None:
                        selects.append((statement, kind))
        chosen = {id(s) for s, _ in selects} | {id(s) for s in selected}  # `selected`: made `jnp.where`s already

        class Walk(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                return False

            def visit_Lambda(self, node: cst.Lambda) -> bool:
                return False

            def _test(self, test: cst.BaseExpression) -> None:
                if any(n.value in per_step for n in _value_names(test)):
                    found.append(parsed.code(test))

            def visit_If(self, node: cst.If) -> bool:
                if id(node) in chosen:
                    return False
                self._test(node.test)
                return True

            def visit_While(self, node: cst.While) -> None:
                self._test(node.test)

            def visit_IfExp(self, node: cst.IfExp) -> None:
                self._test(node.test)

        loop.body.visit(Walk())
        if not found:
            if plan is not None:
                plan.selects = [statement for statement, _ in selects]
                for statement, kind in selects:
                    if kind != "reads":
                        plan.unsafe_reasons.append(
                            f"both branches of `if {shorten(parsed.code(statement.test), 30)}:` run every step and "
                            "`jnp.where` keeps one; a branch value that is inf or nan where it is not kept "
                            "makes the gradient nan"
                        )
            return None
        # The loop runs this test on Python values; only the scan's step would trace them.
        return (
            f"the step's Python control flow on `{found[0]}` runs in the loop, but in a `lax.scan` step "
            "that value is traced and the test would raise (write it with `jnp.where` or `lax.cond` first)"
        )

    def _module_call(self, loop: cst.For) -> str | None:
        """Flax and Haiku modules keep state outside the trace: calling one inside `lax.scan`
        fails, so a loop that calls a module (`self.cell(...)`, `nn.Dense(4)(x)`) has no fix."""
        stateful_module = self.traced.module in {"Flax module", "Flax NNX module", "Haiku module"}
        parsed = self.parsed
        found: list[str] = []
        # Local names bound to module instances: `cell = nn.LSTMCell(...)`.
        stateful_classes = _stateful_module_classes(parsed)
        instances = {
            name
            for name, values in self.iterations._local_values.items()
            for value in values
            if isinstance(value, cst.Call)
            and isinstance(value.func, (cst.Name, cst.Attribute))
            and (
                (parsed.qualified_name(value.func) or "").startswith(("flax.", "haiku."))
                or (isinstance(value.func, cst.Name) and value.func.value in stateful_classes)
            )
        }

        class Walk(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                if stateful_module and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                    found.append(parsed.code(func))
                elif isinstance(func, cst.Call):
                    inner = func.func
                    qname = parsed.qualified_name(inner) if isinstance(inner, (cst.Name, cst.Attribute)) else None
                    if qname and qname.startswith(("flax.", "haiku.")):
                        found.append(parsed.code(func))
                elif isinstance(func, cst.Name) and func.value in instances:
                    found.append(func.value)
                elif isinstance(func, (cst.Name, cst.Attribute)):
                    qname = parsed.qualified_name(func) or ""
                    if qname.startswith(("haiku.", "flax.linen.")) and qname.rsplit(".", 1)[-1][:1].islower():
                        found.append(parsed.code(func))  # hk.next_rng_key(), hk.get_state(): module state

        loop.body.visit(Walk())
        if not found:
            return None
        return (
            f"the body calls `{found[0]}`, which uses Flax/Haiku module state; `lax.scan` cannot trace "
            "module calls (scan the module with `nn.scan` / `hk.scan` instead)"
        )

    def _runs_structured_loop(self, loop: cst.For) -> str | None:
        """The first structured loop the body calls (`jax.lax.scan`, `equinox.internal.while_loop`)."""
        parsed = self.parsed
        found: str | None = None

        class Walk(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                if found is None and isinstance(node.func, (cst.Name, cst.Attribute)):
                    qname = parsed.qualified_name(node.func)
                    if qname is not None and _structured(qname):
                        found = qname

        loop.body.visit(Walk())
        return found

    def _indexes_array(self, loop: cst.For, index: str) -> bool:
        """Whether anything in the body (closures included) indexes an array with the loop index."""
        facts = self.facts
        found = False

        class Walk(cst.CSTVisitor):
            def visit_Subscript(self, node: cst.Subscript) -> None:
                nonlocal found
                if facts.is_array(node.value) and any(
                    n.value == index for e in node.slice for n in loads(e)
                ):
                    found = True

        loop.body.visit(Walk())
        return found

    def _is_buffer(self, body: list[cst.BaseStatement], name: str) -> bool:
        """Every assignment to `name` in the body is `name = name.at[...].set/add(...)`."""
        seen = False
        for statement in _all_statements(body):
            if name not in assigned_names([statement]):
                continue
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                return False
            small = statement.body[0]
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
                return False
            func = small.value.func
            if not (
                isinstance(func, cst.Attribute)
                and func.attr.value in {"set", "add", "multiply", "min", "max"}
                and isinstance(func.value, cst.Subscript)
                and isinstance(func.value.value, cst.Attribute)
                and func.value.value.attr.value == "at"
                and isinstance(func.value.value.value, cst.Name)
                and func.value.value.value.value == name
            ):
                return False
            seen = True
        return seen

    def _sequences(self, loop: cst.For, index: str, body_assigned: set[str]) -> list[Sequence]:
        found: dict[tuple[str, int], Sequence] = {}
        facts = self.facts

        class Walk(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                return False

            def visit_Lambda(self, node: cst.Lambda) -> bool:
                return False

            def visit_ListComp(self, node: cst.ListComp) -> bool:
                return not _rebinds(node, index)

            def visit_SetComp(self, node: cst.SetComp) -> bool:
                return not _rebinds(node, index)

            def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
                return not _rebinds(node, index)

            def visit_DictComp(self, node: cst.DictComp) -> bool:
                return not _rebinds(node, index)

            def visit_Subscript(self, node: cst.Subscript) -> None:
                if not isinstance(node.value, cst.Name) or node.value.value in body_assigned:
                    return
                proven = facts.is_array_before(node.value, loop)
                if not proven and node.value.value not in facts.maybe_names:
                    return
                axis = _index_axis(node, index)
                if axis is None:
                    return
                key = (node.value.value, axis)
                if key not in found:
                    found[key] = Sequence(array=node.value, axis=axis, param="", proven=proven)
                found[key].reads.append(node)

        for statement in loop.body.body:  # type: ignore[union-attr]
            statement.visit(Walk())
        return list(found.values())

    def _bind_reads(self, plan: LoopPlan, body: list[cst.BaseStatement], flow, live: set[str], carries: set[str]) -> None:
        """Name each sequence's slice: reuse `x_t` from a leading `x_t = x[t]`, else a fresh name."""
        counts: dict[str, int] = {}
        for statement in _all_statements(body):
            for name in assigned_names([statement]):
                counts[name] = counts.get(name, 0) + 1
        taken = {s.param for s in plan.sequences if s.param}
        for sequence in plan.sequences:
            if sequence.param:
                continue
            for statement in body:
                if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                    continue
                small = statement.body[0]
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                    continue
                target = small.targets[0].target.value
                if (
                    any(small.value is r for r in sequence.reads)
                    and counts.get(target) == 1
                    and target not in flow.read_first
                    and target not in live
                    and target not in carries
                    and target not in taken
                ):
                    sequence.bind = statement
                    sequence.param = target
                    break
            if not sequence.param:
                sequence.param = self._fresh(f"{self.parsed.code(sequence.array)}_t", taken)
            taken.add(sequence.param)

    @cached_property
    def _visible_names(self) -> frozenset[str]:
        """Names the function's code can see or uses: its own, and the module's globals."""
        names: set[str] = set(self.parsed.module_names)

        class Walk(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                names.add(node.value)

        self.traced.node.visit(Walk())
        return frozenset(names)

    def _fresh(self, base: str, taken: set[str]) -> str:
        """A name used nowhere in the module (so a step parameter never shadows a name the body reads)."""
        used = self._visible_names | taken
        candidate, n = base, 1
        while candidate in used:
            candidate = f"{base}_{n}"
            n += 1
        return candidate

    def _sliceable(self, plan: LoopPlan, sequence: Sequence) -> bool:
        bounds = plan.bounds
        if bounds is None:
            return False
        sequence.stop_is_length = self._is_length(bounds.stop, sequence)
        start_ok = bounds.start is None or (
            (value := self.iterations.trip_count(bounds.start).value) is not None and value >= 0
        )
        sequence.whole = bounds.start is None and bounds.step == 1 and sequence.stop_is_length
        return sequence.stop_is_length and start_ok

    def _concrete_source(self, array: cst.BaseExpression) -> str | None:
        """A reason when the sequence may be a concrete (NumPy or global) array: its elements are
        Python-usable constants in the loop but traced values in a scan."""
        if not isinstance(array, cst.Name):
            return None
        name = array.value
        if name in self.iterations._params:
            return None
        values = self.iterations._local_values.get(name)
        if values is None:
            return f"`{name}` is not an argument or local array; if it is a concrete NumPy array, its elements become traced in the scan"
        for value in values:
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                qname = self.parsed.qualified_name(value.func) or ""
                if qname.startswith("numpy."):
                    return f"`{name}` is a NumPy array; its elements are constants in the loop but traced in the scan"
        return None

    def _is_length(self, stop: cst.BaseExpression, sequence: Sequence) -> bool:  # noqa: C901
        """Whether `stop` is the length of `sequence` along its axis."""
        name = self.parsed.code(sequence.array)
        candidates = {f"len({name})"} if sequence.axis == 0 else set()
        candidates |= {f"{name}.shape[{sequence.axis}]"}
        if sequence.axis == 0:
            candidates.add(f"{name}.shape[0]")
        stop_code = self.parsed.code(stop)
        if stop_code.replace(" ", "") in candidates:
            return True
        if isinstance(stop, cst.Name):
            values = self.iterations._local_values.get(stop.value, [])
            if len(values) == 1 and isinstance(values[0], cst.BaseExpression):
                return self.parsed.code(values[0]).replace(" ", "") in candidates
            if len(values) == 1 and values[0] == "shape-unpack":
                return self._shape_unpack_matches(stop.value, name, sequence.axis)
        return False

    def _shape_unpack_matches(self, var: str, array: str, axis: int) -> bool:
        """`T, D = x.shape` binds T to x.shape[0]."""
        for node in _walk_assigns(self.traced.node):
            for target in node.targets:
                t = target.target
                if isinstance(t, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Attribute):
                    if self.parsed.code(node.value.value) != array:
                        continue
                    for i, element in enumerate(t.elements):
                        if isinstance(element.value, cst.Name) and element.value.value == var:
                            return i == axis
        return False

    def _carry_stability(
        self,
        name: str,
        init: cst.BaseExpression | None,
        body: list[cst.BaseStatement],
        plan: LoopPlan,
        element_names: list[str],
    ) -> tuple[str, str] | None:
        """Cheap checks that the carry keeps its pytree type, dtype and shape across steps."""
        updates = self._assigned_values(body, name)
        if isinstance(init, (cst.Tuple, cst.List, cst.Dict)):
            for value in updates:
                if isinstance(value, (cst.Tuple, cst.List, cst.Dict)) and type(value) is not type(init):
                    kinds = {cst.Tuple: "tuple", cst.List: "list", cst.Dict: "dict"}
                    return "refuse", (
                        f"the carry `{name}` starts as a {kinds[type(init)]} but the loop assigns a "
                        f"{kinds[type(value)]}; `lax.scan` needs the same pytree structure on every step"
                    )
        # Dtypes and shapes are decided by the proof alone (its dtype rules are JAX's own table).
        return self._proven_carry_type(name, init, body, plan, element_names)

    def _proven_carry_type(
        self,
        name: str,
        init: cst.BaseExpression | None,
        body: list[cst.BaseStatement],
        plan: LoopPlan,
        element_names: list[str],
    ) -> tuple[str, str] | None:
        """("unsafe", the assumption) unless the carry provably keeps its dtype and shape after one
        step (jaxloopfix/analysis/carry_types.py)."""
        types, carries = self._loop_types(body, plan, element_names)
        reason = types.carry_reason(name, init, body, carries | {name})
        return ("unsafe", reason) if reason is not None else None

    def _python_scalar_carry(
        self,
        name: str,
        init: cst.BaseExpression | None,
        body: list[cst.BaseStatement],
        plan: LoopPlan,
        element_names: list[str],
    ) -> tuple[str, str] | None:
        """`gae = 0.0` before the loop: fine for `lax.scan` when the step makes it a 0-d array and
        keeps it one; a Python value the body uses as one (a test, a bound, a count) is refused."""
        shown = self.parsed.code(init) if init is not None else "a Python scalar"
        for node in _python_uses(body, name):
            return "refuse", (
                f"the carry `{name}` starts as the Python value `{shown}` and the body uses it as a Python value "
                f"(`{shorten(self.parsed.code(node), 40)}`); a scan would trace it"
            )
        if init is None:
            return "unsafe", f"the carry `{name}` starts as a Python scalar whose value is not visible"
        types, carries = self._loop_types(body, plan, element_names)
        return types.python_scalar_reason(name, init, body, carries | {name})

    def _loop_types(self, body: list[cst.BaseStatement], plan: LoopPlan, element_names: list[str]):  # noqa: ANN202
        """The loop's carry-type analysis (jaxloopfix/analysis/carry_types.py), built once per loop."""
        from jaxloopfix.analysis.carry_types import LoopTypes

        cache: dict[int, tuple[LoopTypes, set[str]]] = self.__dict__.setdefault("_carry_types", {})
        entry = cache.get(id(plan.loop))
        if entry is None or entry[0].loop is not plan.loop:
            loop_names = set(element_names) | ({plan.index} if plan.index else set())
            flow = block_flow(body, defined=set(loop_names))
            carries = (flow.assigned & flow.read_first) - loop_names
            types = LoopTypes(
                self.parsed, self.traced.node, self.traced.static_params, plan.loop, plan.sequences, plan.index
            )
            entry = cache[id(plan.loop)] = (types, carries)
        return entry

    def _assigned_values(self, body: list[cst.BaseStatement], name: str) -> list[cst.BaseExpression]:
        values: list[cst.BaseExpression] = []
        for statement in _all_statements(body):
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and any(name in stored_names(t.target) for t in small.targets):
                        values.append(small.value)
                    elif isinstance(small, cst.AugAssign) and name in stored_names(small.target):
                        values.append(cst.BinaryOperation(small.target, cst.Add(), small.value))
        return values

    def _growth(self, body: list[cst.BaseStatement], name: str) -> str | None:
        for statement in _all_statements(body):
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, (cst.Assign, cst.AugAssign)):
                    continue
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                if not any(isinstance(t, cst.Name) and t.value == name for t in targets):
                    continue
                value = small.value
                if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
                    qname = self.parsed.qualified_name(value.func) or ""
                    if (qname.startswith("jax.numpy.") and qname.rsplit(".", 1)[-1] in GROWING) or qname in RESHAPING:
                        if any(n.value == name for n in loads(value)):
                            return self.parsed.code(value.func)
                if isinstance(small, cst.AugAssign) and isinstance(small.value, (cst.List, cst.Tuple)):
                    return self.parsed.code(small)
                if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                    if isinstance(value.left, (cst.List, cst.Tuple)) or isinstance(value.right, (cst.List, cst.Tuple)):
                        return self.parsed.code(value)
        return None

    def _self_indexed(self, body: list[cst.BaseStatement], name: str) -> str | None:
        """`arr = op(arr[s1], arr[s2])`: an array carry indexed in its own update may shrink,
        grow or lose a dimension every step (`x[0]`, `x[1:]`, `x[idx]`)."""
        for value in self._assigned_values(body, name):
            if _indexed_update_of(value, name):
                continue
            if any(
                isinstance(n, cst.Name) and n.value == name and not (
                    isinstance(self.parsed.parent(n), cst.Subscript) and self.parsed.parent(n).value is n  # type: ignore[union-attr]
                )
                for n in loads(value)
            ):
                continue  # the whole carry is an operand (`jnp.where(m, buf.at[i].set(v), buf)`): its shape stays
            for node in descendants(value):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
                    return self.parsed.code(node)
        return None

    def _check_values(self, plan: LoopPlan, array_names: set[str]) -> None:
        for accumulator in plan.accumulators:
            value = accumulator.value
            if value is None or isinstance(value, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
                continue
            names = {n.value for n in loads(value)}
            is_array = self.facts.is_array(value) or (
                isinstance(value, cst.Name) and value.value in array_names
            ) or (isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)) and bool(names & array_names))
            if not is_array:
                differs = (
                    "a list of tuples would differ from the list of the scan's stacked outputs"
                    if accumulator.kept_as_list
                    else "`jnp.stack` of tuples would differ from the scan's stacked outputs"
                )
                plan.unsafe_reasons.append(
                    f"cannot prove `{self.parsed.code(value)}` (appended to `{accumulator.name}`) is a single array; "
                    + differs
                )

    def _check_bounds(self, plan: LoopPlan) -> None:
        bounds = plan.bounds
        if bounds is None or not any(not s.whole for s in plan.sequences if s.reads):
            return
        for label, expr in (("start", bounds.start), ("end", bounds.stop)):
            if expr is None:
                continue
            trip: TripCount = self.iterations.trip_count(expr)
            nonnegative = trip.kind in {"shape", "static"} or (trip.value is not None and trip.value >= 0)
            if not nonnegative:
                plan.unsafe_reasons.append(
                    f"cannot prove the range {label} `{self.parsed.code(expr)}` is non-negative; slicing "
                    "with a negative bound would not match the range"
                )


_maybe_array_reason = maybe_array_reason


def _append_target(node: cst.CSTNode) -> str | None:
    """`name` for an `name.append(...)` expression statement."""
    if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)):
        return None
    func = node.value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name):
        return func.value.value
    return None


def _placeholder_accumulator(name: str, append: cst.CSTNode) -> Accumulator:
    """An accumulator that cannot be rewritten; kept so the rule knows the loop accumulates."""
    return Accumulator(name=name, init=append, append=append, value=None, finisher=None)  # type: ignore[arg-type]


def _index_axis(node: cst.Subscript, index: str) -> int | None:
    """The axis `node` indexes with exactly `index`, when every other element is `:` or `...`."""
    elements = node.slice
    axis = None
    ellipsis_before = False
    for position, element in enumerate(elements):
        s = element.slice
        if isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == index and s.star is None:
            if axis is not None:
                return None
            axis = position
            if ellipsis_before:
                axis = position - len(elements)
        elif isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None:
            continue
        elif isinstance(s, cst.Index) and isinstance(s.value, cst.Ellipsis):
            if axis is None:
                if ellipsis_before:
                    return None
                ellipsis_before = True
            continue
        else:
            return None
    return axis




def _rebinds(node: cst.BaseComp, name: str) -> bool:
    """Whether a comprehension binds `name` itself (its `name` is not the loop's)."""
    for_in: cst.CompFor | None = node.for_in
    while for_in is not None:
        if name in stored_names(for_in.target):
            return True
        for_in = for_in.inner_for_in
    return False


def _all_statements(body: list[cst.BaseStatement]) -> list[cst.CSTNode]:
    """Statements of `body` and of its nested blocks (not nested functions), in order."""
    out: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            out.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            out.append(node)
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_For(self, node: cst.For) -> None:
            out.append(node)

    for statement in body:
        statement.visit(Walk())
    return out


def _walk_assigns(func: cst.FunctionDef) -> list[cst.Assign]:
    found: list[cst.Assign] = []

    class Walk(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            found.append(node)

    func.visit(Walk())
    return found


__all__ = ["LoopPlanner", "contains"]


_INDEXED_UPDATES = frozenset({"set", "add", "subtract", "multiply", "divide", "power", "min", "max", "apply"})


def _indexed_update_of(value: cst.BaseExpression, name: str) -> bool:
    """`buf.at[t + 1].set(f(buf[t]))`: an indexed update returns an array of the base's shape
    and dtype, whatever it reads from the base."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return False
    if value.func.attr.value not in _INDEXED_UPDATES or not isinstance(value.func.value, cst.Subscript):
        return False
    at = value.func.value.value
    return (
        isinstance(at, cst.Attribute)
        and at.attr.value == "at"
        and isinstance(at.value, cst.Name)
        and at.value.value == name
    )


def _python_uses(body: list[cst.BaseStatement], name: str) -> list[cst.CSTNode]:
    """Where the body needs `name` to be a Python value: `if`/`while`/ternary tests, `range(...)`
    and slice bounds."""
    found: list[cst.CSTNode] = []

    def reads(node: cst.CSTNode | None) -> bool:
        return node is not None and any(isinstance(n, cst.Name) and n.value == name for n in [node, *descendants(node)])

    for statement in body:
        for node in [statement, *descendants(statement)]:
            if isinstance(node, (cst.If, cst.While, cst.IfExp)) and reads(node.test):
                found.append(node.test)
            elif isinstance(node, cst.Slice) and (reads(node.lower) or reads(node.upper) or reads(node.step)):
                found.append(node)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" and reads(node):
                found.append(node)
    return found


def _stateful_module_classes(parsed: ParsedModule) -> set[str]:
    """Classes of this module that derive directly from a Haiku or Flax module (`class FoldIteration(hk.Module)`):
    an instance built in the function keeps module state, like `hk.Linear(...)` does."""
    names: set[str] = set()
    for statement in parsed.module.body:
        if isinstance(statement, cst.ClassDef):
            for base in statement.bases:
                value = base.value
                qname = parsed.qualified_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
                if qname and qname.startswith(("haiku.", "flax.linen.", "flax.nnx.")):
                    names.add(statement.name.value)
    return names


def _only_indexed_by(parsed: ParsedModule, body: list[cst.BaseStatement], name: str, index: str | None) -> bool:
    """Whether the loop body reads `name` only as `name[index]` and never rebinds it."""
    if index is None or name in assigned_names(body):
        return False
    for statement in body:
        for node in [statement, *descendants(statement)]:
            if not (isinstance(node, cst.Name) and node.value == name):
                continue
            parent = parsed.parent(node)
            if not (isinstance(parent, cst.Subscript) and parent.value is node and len(parent.slice) == 1):
                return False  # a bare read (passed on, iterated, `len()`) needs the list itself
            part = parent.slice[0].slice
            if not (isinstance(part, cst.Index) and isinstance(part.value, cst.Name) and part.value.value == index):
                return False
    return True


def _fixed_window(body: list[cst.BaseStatement], name: str, assigned: set[str]) -> cst.Subscript | None:
    """`out[:, -max_len:]`: a growing carry read through a window of a width the loop does not
    change. Each step then computes on one shape (autoregressive decoding over the last
    `max_len` values), a step along the axis the carry grows on, not a distinct computation."""
    for statement in body:
        for node in descendants(statement):
            if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name):
                continue
            for element in node.slice:
                window = element.slice
                if not (isinstance(window, cst.Slice) and window.upper is None and window.step is None):
                    continue
                lower = window.lower
                if isinstance(lower, cst.UnaryOperation) and isinstance(lower.operator, cst.Minus) and not any(
                    isinstance(n, cst.Name) and n.value in assigned for n in descendants(lower)
                ):
                    return node
    return None


def _text_items(func: cst.FunctionDef, name: str) -> str | None:
    """A string item of a list display bound to `name` in `func` (`names = ['car_red', ...]`)."""
    for node in descendants(func):
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.List, cst.Tuple)) and any(
            isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets
        ):
            for element in node.value.elements:
                if isinstance(element.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                    return shorten(cst.Module([]).code_for_node(element.value), 30)
    return None


def _python_list_binding(func: cst.FunctionDef, name: str, parsed: ParsedModule | None = None) -> tuple[str, bool] | None:
    """How `name` is bound to a Python list in `func`, when every binding of it is one: a starred
    unpacking target (`key, *keys = jax.random.split(key, n)`), a list display or comprehension;
    and whether its items are proven arrays of one shape and dtype (the rows of a `jax.random.split`,
    see `ARRAY_ROWS`)."""
    found: list[str | None] = []
    uniform: list[bool] = []

    class Walk(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Name) and t.value == name:
                    found.append("a list display" if isinstance(node.value, (cst.List, cst.ListComp)) else None)
                elif isinstance(t, (cst.Tuple, cst.List)):
                    for element in t.elements:
                        if isinstance(element, cst.StarredElement) and isinstance(element.value, cst.Name):
                            if element.value.value == name:
                                found.append(f"the starred target `*{name}`")
                                uniform.append(parsed is not None and bool(array_rows_call(node.value, parsed)))
                        elif name in stored_names(element.value):
                            found.append(None)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if name in stored_names(node.target):
                found.append(None)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if name in stored_names(node.target):
                found.append(None)

        def visit_For(self, node: cst.For) -> None:
            if name in stored_names(node.target):
                found.append(None)

    func.body.visit(Walk())
    if not found or any(f is None for f in found):
        return None
    return found[0], len(uniform) == len(found) and all(uniform)



def _index_select(
    node: cst.If, before: list[cst.BaseStatement], index: str, per_step: set[str], carried: set[str] = frozenset()
) -> str | None:
    """Whether `node` can become `name = jnp.where(test, a, b)`: a comparison of the index with
    values fixed for the loop, and branches that each only assign the same names once (a
    missing `else:` keeps a value assigned earlier in the step, or the carry's value from the
    step before: `if t < T - 1: z = f(z)` is `z = jnp.where(t < T - 1, f(z), z)`). "reads" when every branch value
    only reads (names, items, attributes, numbers), "computes" otherwise; None when it cannot."""
    test = node.test
    comparisons = [test] if isinstance(test, cst.Comparison) else (
        [test.left, test.right] if isinstance(test, cst.BooleanOperation) else []
    )
    if not comparisons or not all(isinstance(c, cst.Comparison) for c in comparisons):
        return None
    if {n.value for n in _value_names(test)} & per_step != {index}:
        return None
    if any(isinstance(n, cst.Call) for n in descendants(test)):
        return None
    branches = [node.body]
    if node.orelse is not None:
        if not isinstance(node.orelse, cst.Else):
            return None  # `elif`
        branches.append(node.orelse.body)
    assigned: list[dict[str, cst.BaseExpression]] = []
    for block in branches:
        values: dict[str, cst.BaseExpression] = {}
        if not isinstance(block, cst.IndentedBlock):
            return None
        for statement in block.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                return None
            small = statement.body[0]
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                return None
            name = small.targets[0].target.value
            if name in values or any(isinstance(n, cst.Name) and n.value in values for n in descendants(small.value)):
                return None  # assigned twice, or a branch reads what it assigned
            values[name] = small.value
        assigned.append(values)
    if len(assigned) == 2 and set(assigned[0]) != set(assigned[1]):
        return None
    if len(assigned) == 1:
        earlier = {
            t.target.value
            for statement in before if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body if isinstance(small, cst.Assign)
            for t in small.targets if isinstance(t.target, cst.Name)
        }
        if not set(assigned[0]) <= earlier | set(carried):
            return None
    parts = [part for values in assigned for value in values.values() for part in [value, *descendants(value)]]
    if any(
        isinstance(part, cst.Lambda)
        or (isinstance(part, cst.Slice) and any(n.value in per_step for n in _value_names(part)))
        for part in parts
    ):
        return None  # a traced slice bound raises in the step; a lambda would capture the traced index
    computes = any(
        isinstance(part, (cst.Call, cst.IfExp))
        or (isinstance(part, cst.BinaryOperation) and not isinstance(part.operator, (cst.Add, cst.Subtract)))
        for part in parts
    )
    return "computes" if computes else "reads"


# The decision table of `LoopPlanner.plan`, in order: the first row with evidence leaves a loop
# unreported. Rows named `python_*` and `structured_body` are evidence that the loop steps over
# Python values; the others that it is not one this rule reports (JLF003's traced trip counts,
# fallbacks run without a trace, a few static steps).
SKIP_RULES: tuple[Callable[[LoopPlanner, cst.For, Iteration | None], str | None], ...] = (
    LoopPlanner.traced_trip_count,
    LoopPlanner.array_axes,
    LoopPlanner.untraced_branch,
    LoopPlanner.python_container,
    LoopPlanner.python_items,
    LoopPlanner.combined_items,
    LoopPlanner.python_body,
    LoopPlanner.python_values,
    LoopPlanner.items_may_be_none,
    LoopPlanner.passed_containers,
    LoopPlanner.static_inner_loop,
    LoopPlanner.few_steps,
    LoopPlanner.module_depth,
    LoopPlanner.logarithmic_steps,
    LoopPlanner.structured_body,
)

# Progress bars: a loop stepping through one runs on the host (`_progress_bar`).
PROGRESS_MODULES = frozenset({"tqdm", "alive_progress", "progressbar", "click.progressbar", "fastprogress"})
PROGRESS_FUNCTIONS = frozenset({"rich.progress.track", "click.progressbar", "keras.utils.Progbar"})

# Calls whose result grows as the logarithm of their argument.
LOGARITHMS = frozenset({"log2", "log", "log10", "bit_length", "frexp"})


def _modules_per_step(
    parsed: ParsedModule, node: cst.CSTNode, is_module_class: Callable[[cst.BaseExpression], bool]
) -> tuple[str, str] | None:
    """(the count, the code) for `[Block(...) for _ in range(COUNT)]` or a `for _ in range(COUNT):`
    whose body appends `Block(...)`: one module built per step of COUNT."""
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)) and isinstance(node.elt, cst.Call) \
            and is_module_class(node.elt.func) and node.for_in.inner_for_in is None:
        header = node.for_in.iter
    elif isinstance(node, cst.For) and any(
            isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"
            and call.args and isinstance(call.args[0].value, cst.Call) and is_module_class(call.args[0].value.func)
            for call in descendants(node.body)):
        header = node.iter
    else:
        return None
    if isinstance(header, cst.Call) and parsed.qualified_name(header.func) == "builtins.range" and len(header.args) == 1:
        return parsed.code(header.args[0].value), " ".join(parsed.code(node if not isinstance(node, cst.For) else node.iter).split())
    return None


def untraced_branch_of(parsed: ParsedModule, func: cst.FunctionDef, node: cst.CSTNode) -> str | None:
    """Evidence that `node` (a loop, a comprehension) of `func` runs only when nothing is traced:
    it sits in the branch of `if config.disable_jit.value:` or of a runtime check such as
    `if not isinstance(x, jax.core.Tracer):` that holds only outside a trace."""
    child: cst.CSTNode = node
    for ancestor in parsed.ancestors(node):
        if ancestor is func:
            break
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            test = parsed.code(ancestor.test).lower()
            if "disable_jit" in test or "disable_control_flow" in test:
                return f"it runs only when tracing is disabled (`if {shorten(parsed.code(ancestor.test), 40)}:`)"
        if isinstance(ancestor, cst.If) and _asks_if_traced(ancestor.test) is (child is not ancestor.body):
            return (
                f"it runs only when a runtime check says nothing is traced "
                f"(the {'else ' if child is not ancestor.body else ''}branch of `if {shorten(parsed.code(ancestor.test), 40)}:`)"
            )
        child = ancestor
    return None


def _asks_if_traced(test: cst.BaseExpression) -> bool | None:
    """True for a runtime test that holds under a trace (`in_jit()`, `is_tracing()`,
    `isinstance(x, jax.core.Tracer)`), False for its negation, None for any other test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _asks_if_traced(test.expression)
        return None if inner is None else not inner
    if not isinstance(test, cst.Call):
        return None
    func = test.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name == "isinstance" and len(test.args) == 2:
        kind = test.args[1].value
        last = kind.attr.value if isinstance(kind, cst.Attribute) else kind.value if isinstance(kind, cst.Name) else ""
        return True if last == "Tracer" else None
    lowered = name.lower()
    return True if not test.args and any(word in lowered for word in ("jit", "tracing", "traced", "tracer")) else None


def _keeps_no_value(plan: LoopPlan) -> str | None:
    """`for k in range(ids.shape[0]): _ = release(ids[k])`: no carry and no per-step output, so
    the loop is kept for what its calls do. It is reported (JLF002) with this refusal: a scan
    would have nothing to carry or stack, and what it should run per step is the user's call."""
    if plan.carries or plan.accumulators:
        return None
    return (
        "each step's results are discarded (no carry, no per-step output): there is nothing for a "
        "`lax.scan` to carry or stack; if the per-step calls are needed, run them in a `lax.scan` or "
        "`lax.fori_loop` body by hand"
    )


def _item_names(loop: cst.For, iteration: Iteration | None) -> set[str]:
    """The names the loop binds to its iterable's items: the target's names less a range's
    index or `enumerate`'s counter."""
    if iteration is not None and iteration.elements:
        return {name for name, _ in iteration.elements}
    names = stored_names(loop.target)
    target = loop.target
    it = loop.iter
    if (
        isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate"
        and isinstance(target, (cst.Tuple, cst.List)) and target.elements
        and isinstance(target.elements[0].value, cst.Name)
    ):
        names = names - {target.elements[0].value.value}
    if iteration is not None and iteration.index is not None:
        names = names - {iteration.index}
    return names if iteration is None or iteration.kind != "range" else set()


# Builtin types no row of an array is: an item asked whether it is one is a Python value.
PYTHON_TYPES = frozenset({"int", "float", "bool", "complex", "str", "bytes", "tuple", "list", "dict", "set", "frozenset",
                          "type", "slice"})


def _type_test_of(parsed: ParsedModule, node: cst.Call, names: set[str]) -> bool:
    """`isinstance(d, int)`, `isinstance(d, (tuple, list))`: the builtin `isinstance` asked of one
    of `names` against Python types only (asked against `jax.Array`, it decides nothing)."""
    if not (isinstance(node.func, cst.Name) and node.func.value == "isinstance" and len(node.args) == 2
            and parsed.qualified_name(node.func) in ("builtins.isinstance", None)):
        return False
    item, types = node.args[0].value, node.args[1].value
    listed = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    return (
        isinstance(item, cst.Name) and item.value in names
        and all(isinstance(t, cst.Name) and t.value in PYTHON_TYPES for t in listed)
    )


def _membership_of(node: cst.Comparison, names: set[str]) -> bool:
    """`name in ext.keys()`, `k not in seen`: one of `names` is the left side of an `in` test."""
    return (
        isinstance(node.left, cst.Name) and node.left.value in names
        and any(isinstance(c.operator, (cst.In, cst.NotIn)) for c in node.comparisons)
    )


def _none_identity(node: cst.Comparison, names: set[str]) -> bool:
    """`d is None`, `None is not d`: an identity test of one of `names` against `None`."""
    left = node.left
    for target in node.comparisons:
        if isinstance(target.operator, (cst.Is, cst.IsNot)):
            right = target.comparator
            pair = (left, right)
            if any(isinstance(e, cst.Name) and e.value == "None" for e in pair) and any(
                isinstance(e, cst.Name) and e.value in names for e in pair
            ):
                return True
        left = target.comparator
    return False


def _unwrapped(expr: cst.BaseExpression, wrappers: tuple[str, ...]) -> cst.BaseExpression:
    """What `enumerate(...)`/`reversed(...)` (the builtins named in `wrappers`) wrap, through
    any nesting; the first argument of each."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in wrappers and expr.args:
        expr = expr.args[0].value
    return expr


def _array_valued_bound(parsed: ParsedModule, expr: cst.BaseExpression, kinds: ValueKinds) -> cst.BaseExpression | None:
    """The argument of `range(...)` (also under `enumerate`/`zip`/`reversed`) whose kind is an
    array computed by JAX (`jnp.sum(mask)`, `min(count + 1, cap)`), else None."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return None
    qname = parsed.qualified_name(expr.func)
    if qname == "builtins.range":
        return next((a.value for a in expr.args if a.keyword is None and kinds.of(a.value).name == ARRAY), None)
    if qname in ("builtins.enumerate", "builtins.zip", "builtins.reversed"):
        return next((b for a in expr.args if (b := _array_valued_bound(parsed, a.value, kinds)) is not None), None)
    return None


def _literal_tuple(expr: cst.BaseExpression) -> bool:
    """`(3, 3)`: a display of integer literals."""
    return isinstance(expr, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Integer) for e in expr.elements)


def _is_range(parsed: ParsedModule, expr: cst.BaseExpression) -> bool:
    """`range(...)`, or `enumerate`/`zip`/`reversed` of one: its ints may index arrays."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return False
    qname = parsed.qualified_name(expr.func)
    if qname == "builtins.range":
        return True
    if qname in ("builtins.enumerate", "builtins.zip", "builtins.reversed", "builtins.list", "builtins.tuple") \
            or qname in COMBINATIONS:
        return any(_is_range(parsed, a.value) for a in expr.args)
    return False


def _stores(loop: cst.For) -> set[str] | None:
    """The names the body stores into (assigned, augmented, appended to, item-stored, inner loop
    targets), or None when it stores elsewhere (attributes, items of expressions) or makes a
    call whose result it drops (which may be array work on an object)."""
    names: set[str] = set()
    for node in _own_descendants(loop.body):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, cst.For):
            targets = [node.target]
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            func = node.value.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in ADDS:
                names.add(func.value.value)
                continue
            return None
        elif isinstance(node, (cst.Return, cst.Yield, cst.Raise, cst.Global, cst.Nonlocal, cst.Del, cst.NamedExpr,
                               cst.With)):
            return None
        for target in targets:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                names.add(target.value.value)
            elif isinstance(target, (cst.Name, cst.Tuple, cst.List)) and all(
                isinstance(n, (cst.Name, cst.Tuple, cst.List, cst.Element, cst.StarredElement, cst.Comma,
                               cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
                               cst.SimpleWhitespace, cst.ParenthesizedWhitespace))
                for n in descendants(target)
            ):
                names |= stored_names(target)
            else:
                return None
    return names


def _evidence(kinds: dict[str, Kind]) -> str:
    """Python-value kinds in words: `` `pos` holds `int(i * w + j)` ``, `` `j` is an int of a range ``."""
    parts: list[str] = []
    for name in sorted(kinds)[:3]:
        kind = kinds[name]
        if kind.item is not None and kind.item.why:
            parts.append(f"`{name}` holds {kind.item.why}")
        elif kind.why:
            parts.append(f"`{name}` is {kind.why}")
    return "; ".join(parts) if parts else "literals"



def _extended_by_lists(body: list[cst.BaseStatement], name: str) -> bool:
    """Every growth of `name` in the body is `name += [y]`: a list extended by a list, as
    `name.append(y)` would."""
    found = False
    for statement in _all_statements(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                if not (isinstance(small.operator, cst.AddAssign) and isinstance(small.value, cst.List)):
                    return False
                found = True
    return found


def _number(expr: cst.BaseExpression) -> bool:
    """A number literal, signed or not (`1.5`, `-3`, `2j`)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary))


def _appended_objects(statement: cst.CSTNode, constructed: dict[str, cst.Call]) -> list[cst.Call]:
    """`out.append(Edge(...))`, or `e = Edge(...)` then `out.append(e)`: the objects of a class
    (a CapWords name) a statement appends."""
    found: list[cst.Call] = []
    for node in (statement, *descendants(statement)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "append" \
                and node.args:
            value = node.args[0].value
            if isinstance(value, cst.Name) and value.value in constructed:
                found.append(constructed[value.value])
            elif isinstance(value, cst.Call) and _constructor(value.func):
                found.append(value)
    return found


def _constructed_names(body: list[cst.BaseStatement]) -> dict[str, cst.Call]:
    """Names the loop body binds to a new object (`e = Edge(...)`)."""
    found: dict[str, cst.Call] = {}
    for statement in body:
        for node in (statement, *descendants(statement)):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and isinstance(node.value, cst.Call) and _constructor(node.value.func):
                found[node.targets[0].target.value] = node.value
    return found
