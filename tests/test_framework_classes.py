"""The table of framework names that are not layers agrees with the installed packages."""

from __future__ import annotations

import inspect

import pytest

from jaxloopfix.analysis.framework_classes import NOT_LAYERS
from jaxloopfix.analysis.framework_classes_from_packages import PACKAGES, _modules_of, _resolve
from jaxloopfix.analysis.traced import layer_base


@pytest.mark.parametrize("package", sorted(NOT_LAYERS))
def test_table_agrees_with_the_installed_package(package: str) -> None:
    module = pytest.importorskip(package)
    base = _resolve(PACKAGES[package])
    modules = _modules_of(module)
    for name in sorted(NOT_LAYERS[package]):
        found = [getattr(m, name) for m in modules if hasattr(m, name)]
        # Every name the table lists is still bound in the package or a submodule, and is no
        # layer anywhere (a name a later release adds is taken for a layer until the table is rebuilt).
        assert found, f"{package}.{name} is gone: rebuild the table"
        assert not any(inspect.isclass(o) and issubclass(o, base) for o in found), f"{package}.{name} is a {PACKAGES[package]} now"


def test_layer_base_reads_the_table() -> None:
    assert layer_base("haiku.Linear") == "haiku.Module"
    assert layer_base("haiku.BatchApply") is None  # wraps a module, builds none
    assert layer_base("haiku.PRNGSequence") is None
    assert layer_base("flax.linen.Dense") == "flax.linen.Module"
    assert layer_base("flax.nnx.Rngs") is None
    assert layer_base("flax.linen.attention.MultiHeadDotProductAttention") == "flax.linen.Module"
    assert layer_base("equinox.nn.State") is None
    assert layer_base("equinox.nn.Linear") == "equinox.Module"
    # Classes of a package's submodules that are not layers: a data structure, an initializer.
    assert layer_base("haiku._src.data_structures.FlatMap") is None
    assert layer_base("haiku.initializers.TruncatedNormal") is None
    assert layer_base("haiku.nets.MLP") == "haiku.Module"
