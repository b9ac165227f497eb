"""`slice_width.width_varies`: the width of a slice at a few values of the loop index."""

from __future__ import annotations

import libcst as cst
import pytest

from jaxloopfix.analysis.slice_width import width_varies


def _varies(window: str, computed: dict[str, str] | None = None) -> bool | None:
    node = cst.parse_expression(f"x[{window}]")
    assert isinstance(node, cst.Subscript)
    element = node.slice[0].slice
    assert isinstance(element, cst.Slice)
    values = {name: cst.parse_expression(text) for name, text in (computed or {}).items()}
    return width_varies(element.lower, element.upper, "i", values, lambda n: cst.Module([]).code_for_node(n))


@pytest.mark.parametrize("window", ["i * i:i * i + 2 * i + 1", "i + 1:", ":n - i", "2 * i:3 * i", "start:start + i",
                                    "i * (i + 1) // 2:(i + 1) * (i + 2) // 2"])
def test_widths_that_grow_with_the_index(window: str) -> None:
    assert _varies(window, {"start": "i * k"}) is True


@pytest.mark.parametrize("window", ["i:i + k", "i * k:(i + 1) * k", "start:start + mb", "x.shape[0] - i - k:x.shape[0] - i",
                                    "-i - 2:-i", "a:b"])
def test_windows_of_one_width(window: str) -> None:
    assert _varies(window, {"start": "i * mb"}) is False


@pytest.mark.parametrize("window", [":sizes[i]", "i:f(i)", "i:i ** k"])
def test_bounds_read_through_values_not_evaluated_are_not_known(window: str) -> None:
    assert _varies(window) is None
