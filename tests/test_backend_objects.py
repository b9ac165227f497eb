"""A library backend that hands its transforms to JAX (`analysis/backend_objects.py`):
`K.jit(f)` with `K = tc.set_backend("jax")` traces `f` as `jax.jit(f)` does; another
backend, or no selection, traces nothing."""

from __future__ import annotations

import textwrap

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

LAYERS = """
import tensorcircuit as tc
{select}


def energy(param, n, nlayers):
    c = tc.Circuit(n)
    for i in range(nlayers):
        for j in range(n):
            c.rx(j, theta=param[i, j])
    return tc.backend.real(c.expectation_ps(z=[0]))


{wrap}
"""


def _loops(select: str, wrap: str) -> list[int]:
    text = textwrap.dedent(LAYERS.format(select=select, wrap=wrap))
    return sorted(d.location.row for d in lint_text(text, "m.py", Settings()) if d.code in ("JLF001", "JLF002"))


@pytest.mark.parametrize(
    ("select", "wrap", "traced"),
    [
        ('K = tc.set_backend("jax")', "run = K.jit(K.value_and_grad(energy), static_argnums=(1, 2))", True),
        ('K = tc.get_backend("jax")', "run = K.jit(energy, static_argnums=(1, 2))", True),
        ('tc.set_backend("jax")', "run = tc.backend.jit(tc.backend.jacfwd(energy), static_argnums=(1, 2))", True),
        ('K = tc.set_backend("tensorflow")', "run = K.jit(energy, static_argnums=(1, 2))", False),
        ("K = tc.backend", "run = K.jit(energy, static_argnums=(1, 2))", False),  # no backend selected here
        ('K = tc.set_backend("jax")', "run = K.implicit_randn([2, 3])", False),  # not a transform
        ('K = tc.get_backend("jax")', "run = tc.backend.jit(energy, static_argnums=(1, 2))", False),  # not the global one
        ('tc.set_backend("jax", set_global=False)', "run = tc.backend.jit(energy, static_argnums=(1, 2))", False),
        ('K = tc.set_backend("jax")\nK = tc.set_backend("numpy")', "run = K.jit(energy, static_argnums=(1, 2))", False),
        ('tc.set_backend("numpy")\ntc.set_backend("jax")', "run = tc.backend.jit(energy, static_argnums=(1, 2))", True),
    ],
)
def test_a_backend_selected_as_jax_traces_what_its_transforms_wrap(select: str, wrap: str, traced: bool) -> None:
    assert bool(_loops(select, wrap)) is traced


def test_a_backend_transform_decorator_keeps_its_static_arguments() -> None:
    """`@partial(K.jit, static_argnums=(1, 2))`: `n` and `nlayers` are Python ints, so the
    layer loop is a loop over a static count reading rows of the traced `param`."""
    text = textwrap.dedent(
        """
        from functools import partial

        import tensorcircuit as tc

        K = tc.set_backend("jax")


        @partial(K.jit, static_argnums=(1, 2))
        def energy(param, n, nlayers):
            c = tc.Circuit(n)
            for i in range(nlayers):
                for j in range(n):
                    c.rx(j, theta=param[i, j])
            return K.real(c.expectation_ps(z=[0]))
        """
    )
    found = [d for d in lint_text(text, "m.py", Settings()) if d.code in ("JLF001", "JLF002")]
    assert found and all("energy" in d.message for d in found)
