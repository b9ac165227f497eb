"""The rule API and the per-file context every rule reads.

A rule is a class with a code, a kebab-case name, a one-line summary and its
documentation in its docstring (ruff's four sections). It yields diagnostics
from a FileContext; the context parses the file and runs the shared analyses
once, whatever the number of rules.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from typing import ClassVar

import libcst as cst

from jaxloopfix.analysis.comprehensions import ComprehensionReport, judge_comprehensions, own_comprehensions
from jaxloopfix.analysis.cross_module import ModuleLinks
from jaxloopfix.analysis.loops import module_constants
from jaxloopfix.analysis.plan import LoopPlan
from jaxloopfix.analysis.planner import LoopPlanner
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.analysis.traced import TracedFinder, TracedFunction
from jaxloopfix.analysis.traced_values import TracedValues, own_nodes, traced_values
from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic, Fix, Location


@dataclass(frozen=True)
class _FunctionPlans:
    """One traced function's loop plans, the loops it left unreported, and the project names
    planning asked about (framework bases, declared types): kept with the text's syntax."""

    plans: list[LoopPlan]
    skipped: list[tuple[cst.For, str]]
    wanted: frozenset[str]
    declarations: frozenset[str]
    # Each loop's row of the planner's decision table and its evidence (`--explain`).
    decisions: tuple[tuple[cst.For, str, str], ...] = ()


class FileContext:
    def __init__(self, parsed: ParsedModule, settings: Settings) -> None:
        self.parsed = parsed
        self.settings = settings

    @cached_property
    def finder(self) -> TracedFinder:
        settings = self.settings
        finder = TracedFinder(self.parsed, settings.extra_traced_decorators, settings.extra_traced_base_classes, settings.site)
        finder.find()
        return finder

    @property
    def traced(self) -> dict[cst.FunctionDef, TracedFunction]:
        return self.finder.traced

    @property
    def links(self) -> ModuleLinks:
        """What traced code here reaches in other project modules (with a `ModuleSite` only)."""
        return self.finder.links

    def traced_value_functions(self) -> Iterator[tuple[TracedFunction, TracedValues]]:
        """Functions a transform applies to directly, with their traced values (rules on values)."""
        for traced in self.traced.values():
            if traced.transformed:
                values = traced_values(self.parsed, traced)
                if values.names:
                    yield traced, values

    @cached_property
    def loop_plans(self) -> list[LoopPlan]:
        """Plans for every candidate loop directly inside a traced function.

        A function's plans depend on the text, the settings but the seeds, what the finder
        learnt of classes, and of the function's tracing only on its static parameters, whether
        a transform applies to it and its framework: the project pass lints a file again each
        time other modules trace more of it, and the plans of functions traced before are
        taken up again, with the project names they asked about (`_FunctionPlans`)."""
        plans: list[LoopPlan] = []
        kept = self.parsed.kept("loop plans")
        state = (self.finder.state_key(), self.settings.min_trip_count)
        if kept.get("state") != state:
            kept.clear()
            kept["state"] = state
        links = self.finder.links
        for traced in self.traced.values():
            loops = own_nodes(traced.node, cst.For)
            if not loops:
                continue  # a planner's analyses of the function are for its loops only
            key = (traced.node, frozenset(traced.static_params), traced.transformed, traced.module, traced.passed_through)
            found = kept.get(key)
            if found is None:
                found = kept[key] = self._plan(traced, loops, self.constants)
            plans.extend(replace(plan, function=traced) for plan in found.plans)
            self.skipped.extend(found.skipped)
            self.decisions.extend(found.decisions)
            links.wanted.update(found.wanted)
            links.declarations.update(found.declarations)
        if os.environ.get("JAXLOOPFIX_EXPLAIN"):
            self._explain()
        return plans

    def _plan(self, traced: TracedFunction, loops: list[cst.CSTNode], constants: dict[str, int]) -> _FunctionPlans:
        links = self.finder.links
        # Every name planning asks about, even one asked before: a later lint may take these
        # plans up without the functions that asked first.
        wanted, declarations = links.wanted, links.declarations
        links.wanted, links.declarations = set(), set()
        try:
            planner = LoopPlanner(
                self.parsed, traced, constants, self.settings.min_trip_count, self.finder.is_module_class,
                self.settings.site, links.declarations.add,
            )
            plans = [plan for plan in map(planner.plan, loops) if plan is not None]  # type: ignore[arg-type]
            found = _FunctionPlans(
                plans, list(planner.skipped), frozenset(links.wanted), frozenset(links.declarations),
                tuple((loop, rule, evidence) for loop, (rule, evidence) in planner.decisions.items()),
            )
        finally:
            wanted.update(links.wanted)
            declarations.update(links.declarations)
            links.wanted, links.declarations = wanted, declarations
        return found

    @cached_property
    def constants(self) -> dict[str, int]:
        """The module's int constants (`module_constants`), read once per file by loop plans and
        comprehensions alike, and only when a traced function holds one of them."""
        return module_constants(self.parsed)

    @cached_property
    def comprehension_reports(self) -> list[ComprehensionReport]:
        """Comprehensions in traced functions that step over array data (`comprehensions.py`);
        one inside a reported loop is left to the loop's diagnostic."""
        reported = {id(plan.loop) for plan in self.loop_plans}
        unrolled = {id(loop) for loop, rule, _ in self.decisions if rule == "reported"}
        parsed = self.parsed

        def inside_reported(node: cst.CSTNode) -> bool:
            return bool(reported) and any(id(a) in reported for a in parsed.ancestors(node))

        found: list[ComprehensionReport] = []
        owners = own_comprehensions(parsed)
        for func, traced in self.traced.items():
            if func not in owners:
                continue
            reports, decisions = judge_comprehensions(
                parsed, traced, self.constants, self.settings.min_trip_count, self.finder.is_module_class, inside_reported,
                lambda loop: id(loop) in unrolled,
            )
            found.extend(reports)
            self.comprehension_decisions.extend(decisions)
        return found

    @cached_property
    def comprehension_decisions(self) -> list[tuple[cst.BaseComp, str, str]]:
        """Every comprehension judged, with the row that decided and its evidence (`--explain`)."""
        return []

    @cached_property
    def decisions(self) -> list[tuple[cst.For, str, str]]:
        """Every planned loop with the rule that decided it and its evidence (filled by `loop_plans`)."""
        return []

    @cached_property
    def skipped(self) -> list[tuple[cst.For, str]]:
        """Loops in traced code left unreported, each with the positive evidence that it does
        not unroll array work (filled by `loop_plans`)."""
        return []

    def _explain(self) -> None:
        """`JAXLOOPFIX_EXPLAIN=1`: print which functions are traced and why each loop in them was
        left unreported, to stderr (a debugging aid for real-code reviews)."""
        out = sys.stderr
        for traced in self.traced.values():
            line = self.parsed.position(traced.node).start.line
            print(f"{self.parsed.filename}:{line}: traced `{traced.name}`: {traced.reason}", file=out)
        for loop, evidence in self.skipped:
            line = self.parsed.position(loop).start.line
            print(f"{self.parsed.filename}:{line}: loop not reported: {evidence}", file=out)


def node_diagnostic(
    context: FileContext,
    code: str,
    message: str,
    start: cst.CSTNode,
    end: cst.CSTNode,
    traced: TracedFunction,
    *,
    fix: Fix | None = None,
    no_fix_reason: str | None = None,
) -> Diagnostic:
    """A diagnostic spanning from `start` to the end of `end`, saying why its function is traced."""
    parsed = context.parsed
    first = parsed.position(start).start
    last = parsed.position(end).end
    return Diagnostic(
        code=code,
        message=message,
        filename=parsed.filename,
        location=Location(first.line, first.column + 1),
        end_location=Location(last.line, last.column + 1),
        fix=fix,
        no_fix_reason=no_fix_reason,
        traced_reason=f"`{traced.name}` is traced: {traced.reason}",
        extra={"function": traced.name},
    )


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # False for rules that report code without `for` loops: the pre-filter must let more through.
    needs_loop: ClassVar[bool] = True

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        raise NotImplementedError
