"""Rule registry: one module per rule code."""

from __future__ import annotations

import inspect

from jaxloopfix.rules.base import FileContext, Rule
from jaxloopfix.rules.jlf001_scan_outputs import ScanWithOutputs
from jaxloopfix.rules.jlf002_scan_carry import ScanCarryOnly
from jaxloopfix.rules.jlf003_traced_trip_count import TracedTripCount
from jaxloopfix.rules.jlf004_traced_condition import TracedCondition
from jaxloopfix.rules.jlf005_traced_slice import TracedSlice
from jaxloopfix.rules.jlf006_host_conversion import HostConversion

ALL_RULES: list[type[Rule]] = [
    ScanWithOutputs,
    ScanCarryOnly,
    TracedTripCount,
    TracedCondition,
    TracedSlice,
    HostConversion,
]
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}


def rule_explanation(rule: type[Rule]) -> str:
    """The rule's explanation (its docstring; its summary when it has none), Markdown."""
    return inspect.cleandoc(rule.__doc__ or rule.summary)


def rule_documentation(rule: type[Rule]) -> str:
    """The rule's documentation as `jaxloopfix rule CODE` prints it and the editor's hover shows it (Markdown)."""
    return f"# {rule.name} ({rule.code})\n\n{rule_explanation(rule)}"


__all__ = ["ALL_RULES", "RULES_BY_CODE", "FileContext", "Rule", "rule_documentation", "rule_explanation"]
