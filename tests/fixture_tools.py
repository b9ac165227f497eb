"""Shared helpers for fixture tests: discover fixture pairs, fix them, run them on JAX."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes

ROOT = Path(__file__).resolve().parent.parent

# A recurrence shaped like the RNN from the issue (the `for` loop is on row 9, column 5) whose fix
# is safe: what is added to the carry is a scalar cast to the carry's dtype, so `h` provably keeps
# the dtype and shape of `jnp.zeros(hidden_dim)`. The RNN itself (`jnp.dot(h, params["W_h"])`, shapes unknown)
# gets an unsafe fix: see README.md and fixtures/JLF001/seed_rnn.py.
SEED_SOURCE = '''\
import jax
import jax.numpy as jnp
from functools import partial

@partial(jax.jit, static_argnames=["hidden_dim"])
def run_rnn(params, inputs, hidden_dim):
    h = jnp.zeros(hidden_dim)
    outputs = []
    for i in range(inputs.shape[0]):
        x_t = inputs[i]
        h = jnp.tanh(0.5 * h + jnp.vdot(x_t, params["w"]).astype(h.dtype))
        outputs.append(h)
    return h, jnp.stack(outputs)
'''
FIXTURES = ROOT / "fixtures"


def sources(kind: str) -> list[Path]:
    """Fixture inputs of a directory (`JLF001`, `ok`, ...), without their `.fixed.py` twins."""
    return sorted(p for p in (FIXTURES / kind).glob("*.py") if not p.name.endswith(".fixed.py"))


def fixed_path(path: Path) -> Path:
    return path.with_name(path.stem + ".fixed.py")


def fix(text: str, filename: str, *, unsafe: bool = True) -> str:
    return apply_fixes(text, filename, Settings(), unsafe=unsafe)[0]


def original_and_fixed(source: str, directory: Path, name: str) -> tuple[ModuleType, ModuleType]:
    """The source and its one unsafe fix (a `lax.scan` rewrite), each written and imported, to
    run both on JAX."""
    fixed, _, count = apply_fixes(source, "m.py", Settings(), unsafe=True)
    assert count == 1 and "lax.scan" in fixed
    (directory / f"{name}_a.py").write_text(source, encoding="utf-8")
    (directory / f"{name}_b.py").write_text(fixed, encoding="utf-8")
    return load_module(directory / f"{name}_a.py", f"{name}_a"), load_module(directory / f"{name}_b.py", f"{name}_b")


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    # Regenerate the expected outputs: python tests/fixture_tools.py (review the diff before committing).
    for kind in ("JLF001", "JLF002"):
        for path in sources(kind):
            fixed_path(path).write_text(fix(path.read_text(encoding="utf-8"), str(path)), encoding="utf-8")
            print("wrote", fixed_path(path).relative_to(ROOT))


# A GAE whose carry starts as `0.0`: a scalar on vectors, a vector on `(T, batch)` arrays (where a
# scan rejects it). Indented: callers dedent it.
GAE_FROM_A_PYTHON_SCALAR = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def advantages(rewards, values):
        adv = 0.0
        out = []
        for t in reversed(range(rewards.shape[0])):
            adv = rewards[t] - values[t] + 0.9 * adv
            out.append(adv)
        return jnp.stack(out[::-1])
"""
