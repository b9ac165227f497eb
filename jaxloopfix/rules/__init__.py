"""Rule registry: one module per rule code."""

from __future__ import annotations

from jaxloopfix.rules.base import FileContext, Rule
from jaxloopfix.rules.jlf001_scan_outputs import ScanWithOutputs
from jaxloopfix.rules.jlf002_scan_carry import ScanCarryOnly

ALL_RULES: list[type[Rule]] = [ScanWithOutputs, ScanCarryOnly]
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "FileContext", "Rule"]
