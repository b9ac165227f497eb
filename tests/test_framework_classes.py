"""The table of framework names that are not layers agrees with the installed packages."""

from __future__ import annotations

import inspect

import pytest

from jaxloopfix.analysis.framework_classes import NOT_LAYERS
from jaxloopfix.analysis.framework_classes_from_packages import PACKAGES, _resolve
from jaxloopfix.analysis.traced import layer_base


@pytest.mark.parametrize("package", sorted(NOT_LAYERS))
def test_table_agrees_with_the_installed_package(package: str) -> None:
    module = pytest.importorskip(package)
    base = _resolve(PACKAGES[package])
    for name in sorted(NOT_LAYERS[package]):
        obj = getattr(module, name, None)
        # Every name the table lists is still exported and still not a layer (a name a later
        # release adds is taken for a layer until the table is rebuilt).
        assert obj is not None, f"{package}.{name} is gone: rebuild the table"
        assert not (inspect.isclass(obj) and issubclass(obj, base)), f"{package}.{name} is a {PACKAGES[package]} now"


def test_layer_base_reads_the_table() -> None:
    assert layer_base("haiku.Linear") == "haiku.Module"
    assert layer_base("haiku.BatchApply") is None  # wraps a module, builds none
    assert layer_base("haiku.PRNGSequence") is None
    assert layer_base("flax.linen.Dense") == "flax.linen.Module"
    assert layer_base("flax.nnx.Rngs") is None
    assert layer_base("flax.linen.attention.MultiHeadDotProductAttention") == "flax.linen.Module"
    assert layer_base("equinox.nn.State") is None
    assert layer_base("equinox.nn.Linear") == "equinox.Module"
