"""Functions reach traced code through `functools.partial` as they do through calls: a loss
bound by `partial(train_step, losses=loss_fn)` runs under the `jax.value_and_grad` that
`train_step` applies to its parameter, and `step = partial(train_step, ...)` then
`jax.jit(step)` traces `train_step`, in this module or imported from another. Each case is
also run, to show the loop really runs on tracers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxloopfix import api
from jaxloopfix.config import Settings

pytest.importorskip("jax")

LOSSES = '''
import jax
import jax.numpy as jnp

SEEN = []


def losses_fn(params, batches, weights):
    total = 0.0
    for i, batch in enumerate(batches):
        SEEN.append(isinstance(batch, jax.core.Tracer))
        total = total + weights[i] * jnp.sum(batch * params)
    return total


def step_fn(params, batches, losses):
    value, grads = jax.value_and_grad(losses)(params, batches)
    return value, params - 0.1 * grads
'''

TRAIN = '''
def main():
    losses = partial(losses_fn, weights=[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125])
    step = partial(step_fn, losses=losses)
    return jax.jit(step)
'''


def _found(root: Path) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for result in api.check_paths([root], Settings()):
        assert not result.errors, result.errors
        for d in result.diagnostics:
            out.setdefault(Path(result.filename).name, []).append((d.code, (d.traced_reason or "").split(" is traced: ", 1)[-1]))
    return out


def _runs_on_tracers(root: Path, module: str) -> None:
    script = (
        f"import jax.numpy as jnp\nimport {module} as m\nimport losses as l\n"
        "step = m.main()\nstep(jnp.ones(3), [jnp.ones(3) * k for k in range(6)])\n"
        "print(len(l.SEEN), all(l.SEEN))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["6", "True"]


def test_a_loss_bound_by_partial_in_the_same_module_is_traced(tmp_path: Path) -> None:
    source = textwrap.dedent(LOSSES) + "\nfrom functools import partial\n" + textwrap.dedent(TRAIN)
    (tmp_path / "losses.py").write_text(source)
    (tmp_path / "train.py").write_text("from losses import *\nfrom losses import partial\n")
    found = _found(tmp_path)
    assert [code for code, _ in found["losses.py"]] == ["JLF001"]  # the loop appends to `SEEN` too
    assert found["losses.py"][0][1].startswith("wrapped by `jax.value_and_grad(losses)`")
    _runs_on_tracers(tmp_path, "losses")


def test_a_loss_bound_by_partial_in_another_module_is_traced(tmp_path: Path) -> None:
    (tmp_path / "losses.py").write_text(textwrap.dedent(LOSSES))
    (tmp_path / "train.py").write_text(
        "from functools import partial\nimport jax\nfrom losses import losses_fn, step_fn\n" + textwrap.dedent(TRAIN)
    )
    found = _found(tmp_path)
    assert [code for code, _ in found["losses.py"]] == ["JLF001"]
    assert found["losses.py"][0][1].startswith("wrapped by `jax.value_and_grad(losses)`")
    _runs_on_tracers(tmp_path, "train")


@pytest.mark.parametrize("binding", ["step = step_fn", "step = partial(step_fn, scale=2.0)"])
def test_a_transform_of_a_local_alias_of_an_imported_function_traces_it(tmp_path: Path, binding: str) -> None:
    (tmp_path / "steps.py").write_text(
        "import jax.numpy as jnp\n\n\ndef step_fn(xs, scale=1.0):\n    v = jnp.zeros(xs.shape[1:])\n"
        "    for x in xs:\n        v = 0.5 * v + scale * x\n    return v\n"
    )
    (tmp_path / "train.py").write_text(
        f"from functools import partial\nimport jax\nfrom steps import step_fn\n\n\ndef main():\n    {binding}\n"
        "    return jax.jit(step)\n"
    )
    found = _found(tmp_path)
    assert [code for code, _ in found["steps.py"]] == ["JLF002"]
    assert found["steps.py"][0][1].startswith("wrapped by `jax.jit(step)` on line 8 of train.py")


def test_a_local_alias_rebound_is_not_followed(tmp_path: Path) -> None:
    """`step` bound twice may hold either function: nothing is claimed of it."""
    (tmp_path / "steps.py").write_text(
        "import jax.numpy as jnp\n\n\ndef step_fn(xs):\n    v = jnp.zeros(xs.shape[1:])\n"
        "    for x in xs:\n        v = 0.5 * v + x\n    return v\n"
    )
    (tmp_path / "train.py").write_text(
        "import jax\nfrom steps import step_fn\n\n\ndef main(other):\n    step = step_fn\n    step = other\n"
        "    return jax.jit(step)\n"
    )
    assert "steps.py" not in _found(tmp_path)


def test_a_negative_static_argnum_through_an_alias_counts_from_the_end(tmp_path: Path) -> None:
    """`ev = eval_step` then `jax.jit(ev, static_argnums=-1)`: `n` is static, so the loop over
    `range(n)` is unrolled (JLF002), not a traced bound (JLF003)."""
    (tmp_path / "steps.py").write_text(
        "import jax.numpy as jnp\n\n\ndef eval_step(state, xs, n):\n    for k in range(n):\n"
        "        state = jnp.tanh(state * k + xs)\n    return state\n"
    )
    (tmp_path / "a.py").write_text("import jax\nfrom steps import eval_step\n\n\ndef main():\n    ev = eval_step\n"
                                   "    return jax.jit(ev, static_argnums=-1)\n")
    assert [code for code, _ in _found(tmp_path)["steps.py"]] == ["JLF002"]
