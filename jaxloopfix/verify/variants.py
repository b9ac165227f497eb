"""The forms `--tune` measures for one function, by key: `lax.scan(..., unroll=k)` is k, the
associative form 0, and a scan with its input products hoisted -k.

Light on purpose: the verify worker names variants without importing the rewriting code.
"""

from __future__ import annotations

from jaxloopfix.config import HOISTED_FORM

# The key of the `lax.associative_scan` form among the scan's unroll factors.
ASSOCIATIVE_VARIANT = 0
# Keys -k: `lax.scan(..., unroll=k)` with the step's input products computed before the scan
# (`rewrite/hoist.py`); measured fastest for an RNN on an H200 (`benchmarks/results-gpu.md`).
HOISTED_VARIANTS = (-1, -4, -16)


def variant_form(key: int) -> str:
    """The fix form a key stands for (`targets.variant_settings`)."""
    if key == ASSOCIATIVE_VARIANT:
        return "associative"
    return HOISTED_FORM if key < 0 else "scan"


def variant_name(key: int) -> str:
    if key == ASSOCIATIVE_VARIANT:
        return "`lax.associative_scan`"
    if key < 0:
        return f"`lax.scan(unroll={-key})` with the input products before it"
    return f"`lax.scan(unroll={key})`"
