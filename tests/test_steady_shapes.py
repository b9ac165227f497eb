"""`.shape` of a value the loop index selects (`containers._index_shapes`, `_steady_names`):
it is a changing size, and the loop is left alone as distinct computations, unless the value's
shape is shown to be the same at every step. The labels come from JAX: each helper returns the
values whose shape its loop reads, run eagerly, and their shapes are compared."""

from __future__ import annotations

import textwrap

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

HEAD = "import jax\nimport jax.numpy as jnp\n\n\n"
CASES = {
    # A row and a window of fixed width: the same shape every step (reported).
    "fixed_window": """
        def seen(pos, hits, agents):
            out = []
            for i in range(agents):
                window = jnp.arange(i * 2, (i + 1) * 2)
                feats = pos[i] - hits[window]
                feats = jnp.concatenate([feats, jnp.zeros((feats.shape[0], 1))], axis=-1)
                out.append(feats)
            return out
        """,
    # Uneven pieces of `jnp.array_split` (2, 2, 1, 1 rows).
    "uneven_pieces": """
        def seen(pos, hits, agents):
            out = []
            for i in range(agents):
                feats = pos[i] - jnp.array_split(hits, agents)[i]
                feats = jnp.concatenate([feats, jnp.zeros((feats.shape[0], 1))], axis=-1)
                out.append(feats)
            return out
        """,
    # A project helper's result, here a prefix that grows with the index.
    "helper_prefix": """
        def prefix(x, k):
            return x[:k]

        def seen(pos, hits, agents):
            out = []
            for i in range(agents):
                feats = prefix(hits, i + 1) * 2.0
                feats = jnp.concatenate([feats, jnp.zeros((feats.shape[0], 1))], axis=-1)
                out.append(feats)
            return out
        """,
    # A carry that grows by a row each step.
    "growing_carry": """
        def seen(pos, hits, agents):
            acc = hits[:1]
            out = []
            for i in range(agents):
                acc = jnp.concatenate([acc, hits[i][None] * 2.0])
                weights = jnp.ones((acc.shape[0], 1)) / acc.shape[0]
                out.append(acc * weights)
            return out
        """,
}


def _source(body: str) -> str:
    return HEAD + textwrap.dedent(body) + "\n\n@jax.jit\ndef run(pos, hits):\n    return seen(pos, hits, 8)\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_shape_read_from_an_index_read_is_a_changing_size_unless_it_is_steady(name: str, tmp_path) -> None:
    source = _source(CASES[name])
    (tmp_path / "m.py").write_text(source)
    module = load_module(tmp_path / "m.py", f"steady_{name}")
    pos, hits = jnp.ones((8, 2)), jnp.arange(34.0).reshape(17, 2)
    steady = len({value.shape for value in module.seen(pos, hits, 8)}) == 1  # the ground truth, from JAX
    reported = [d for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")]
    assert bool(reported) is steady, (name, steady, [d.message for d in reported])
