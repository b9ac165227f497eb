"""A Python `if` in a loop body may test a value that is concrete in the loop (a grid built by
`jnp.linspace` from Python numbers stays concrete under `jax.vmap`) but is traced in a `lax.scan`
step, where everything computed from the index, the scanned slices or the carry is a tracer.
Such a loop is reported without a fix: the scan would raise. Running the original under the
trace shows it works there, and running the scan a fix would write shows it raises."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxloopfix.analysis.step_values import traced_in_step
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

SOURCE = '''
import jax
import jax.numpy as jnp

GRID = jnp.array([0.5, 1.0, 2.0, 4.0])


def short_rates(curves, n_steps):
    times = jnp.linspace(0.0, 4.0, n_steps + 1)
    rates = jnp.zeros(n_steps + 1)
    for i in range(n_steps + 1):
        t = times[i]
        curve = curves[i]
        {select}
    return rates


def run(curves):
    return jax.vmap(lambda c: short_rates(c, 9))(curves)
'''

SELECTS = {
    "derived from the index": '''idx = jnp.searchsorted(GRID, t)
        if idx == 0:
            rates = rates.at[i].set(curve[0])
        else:
            rates = rates.at[i].set(curve[idx - 1] + (t - GRID[idx - 1]))''',
    "through a chain of names": '''idx = jnp.searchsorted(GRID, t)
        first = idx == 0
        if first:
            rates = rates.at[i].set(curve[0])
        else:
            rates = rates.at[i].set(curve[-1] * t)''',
}


def _diagnostics(source: str) -> list:
    return [d for d in lint_text(source, "rates.py", Settings()) if d.code in ("JLF001", "JLF002")]


@pytest.mark.parametrize("case", sorted(SELECTS))
def test_an_if_on_a_value_the_step_would_trace_withholds_the_fix(case: str) -> None:
    source = textwrap.dedent(SOURCE).format(select=SELECTS[case].replace("\n", "\n"))
    namespace: dict = {}
    exec(compile(source, "rates.py", "exec"), namespace)  # noqa: S102 - the fixture's own code
    out = namespace["run"](jnp.ones((2, 10, 4)))  # the loop runs under `vmap`: its test is concrete
    assert out.shape == (2, 10)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        # What a scan over the index would do: the same test on a traced `t`.
        def step(rates, i):
            t = jnp.linspace(0.0, 4.0, 10)[i]
            if jnp.searchsorted(namespace["GRID"], t) == 0:
                return rates, t
            return rates, t
        jax.lax.scan(step, 0.0, jnp.arange(10))
    found = _diagnostics(source)
    assert [d.code for d in found] == ["JLF001"]
    assert found[0].fix is None
    assert "would raise" in found[0].no_fix_reason


def test_traced_in_step_follows_assignments_but_not_shapes() -> None:
    loop = cst.parse_statement(textwrap.dedent('''
        for i in range(n):
            t = grid[i]
            idx = jnp.searchsorted(table, t)
            flag = idx == 0
            width = t.shape[0]
            count = len(t)
            label = names[k]
    '''))
    traced = traced_in_step(loop.body, {"i"})
    assert traced == {"i", "t", "idx", "flag"}


CONVERSIONS = {
    "chained comparison": "s = jnp.where(0.2 < t < 0.8, 2.0, 1.0)",
    "not": "s = jnp.where(not (t > 0.5), 2.0, 1.0)",
    "float": "s = float(t) * 2.0",
    "int of a search": "s = times[int(jnp.searchsorted(times, t))]",
    "item": "s = t.item() * 2.0",
    "max": "s = max(t, 0.5)",
    "assert": "assert t >= 0.0\n        s = t",
    "range of a step value": "s = 1.0\n        for _ in range(int(t * 3)):\n            s = s * 2.0",
    "a list the step fills": "vals = []\n        vals.append(t)\n        s = 2.0 if vals[-1] > 0.5 else 1.0",
    "index in a chained comparison": "s = jnp.where(2 < i < 5, 1.0, 0.0)",
}

CONVERTING = '''
import jax
import jax.numpy as jnp


def rates(x, n):
    times = jnp.linspace(0.0, 1.0, n)
    out = jnp.zeros(n)
    for i in range(n):
        t = times[i]
        {line}
        out = out.at[i].set(x * s)
    return out


def run(xs):
    return jax.vmap(lambda x: rates(x, 12))(xs)
'''


@pytest.mark.parametrize("case", sorted(CONVERSIONS))
def test_a_python_value_made_of_a_step_value_withholds_every_fix(case: str) -> None:
    """The loop runs each conversion on concrete values (under `vmap`, `times` stays concrete);
    a scan's step would trace `t` and raise, so no fix is offered, safe or unsafe."""
    source = textwrap.dedent(CONVERTING).format(line=CONVERSIONS[case])
    namespace: dict = {}
    exec(compile(source, "rates.py", "exec"), namespace)  # noqa: S102 - the fixture's own code
    assert namespace["run"](jnp.ones(3)).shape == (3, 12)
    found = _diagnostics(source)
    assert [d.code for d in found] in (["JLF001"], ["JLF002"])
    assert found[0].fix is None, found[0].fix
    assert "would raise" in found[0].no_fix_reason


def test_an_if_nested_in_a_branch_made_a_select_withholds_the_fix() -> None:
    """`if i == 0:` becomes a `jnp.where` in the step; a conditional expression inside it on a
    step value would then run on a tracer."""
    source = textwrap.dedent(CONVERTING).format(line="s = 1.0\n        if i == 0:\n            s = 2.0 if t > 0.5 else 1.0")
    (found,) = _diagnostics(source)
    assert found.fix is None and "inside a branch made a `jnp.where`" in found.no_fix_reason
