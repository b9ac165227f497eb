"""How far do the loop and its `lax.associative_scan` rewrite round from the exact result?

The associative form regroups `h = a * h + b` into a tree of composed affine maps, so it
rounds differently from the loop. This script measures by how much, per dtype (float32,
float16, bfloat16) and trip count, on the recurrence fixtures (`fixtures/recurrences/forms.py`)
fixed by the tool itself: both versions are compared with the loop run in float64, and the
table gives each one's largest error relative to the largest magnitude of the result, and
their ratio (rewrite / loop; the verifier accepts a rewrite up to 4x the loop's own error).

Two growth rows use factors above 1: `growth 1.1` overflows float32 at T=1,000, where the
loop gives inf and the rewrite NaN (`inf * 0` when composing), a difference `verify`
reports as "NaN in different places".

    python benchmarks/recurrence_precision.py [--lengths 100,1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixture_tools import load_module  # noqa: E402

from jaxloopfix.config import Settings  # noqa: E402
from jaxloopfix.engine import apply_fixes  # noqa: E402

FORMS = ROOT / "fixtures" / "recurrences" / "forms.py"
DTYPES = (jnp.float32, jnp.float16, jnp.bfloat16)


def cases(original) -> dict[str, tuple[str, Callable[[int], tuple]]]:  # noqa: ANN001
    """Row label -> (fixture function, inputs for a trip count)."""
    inputs = original.INPUTS
    return {
        "GAE (reversed)": ("associative_gae", lambda T: inputs["associative_gae"](T, 4)),
        "EMA": ("associative_ema", lambda T: inputs["associative_ema"](T, 4)),
        "diagonal SSM": ("associative_ssm", lambda T: inputs["associative_ssm"](T, 4)),
        "alternating signs, abs(a) < 0.9": ("associative_subtracted", lambda T: inputs["associative_subtracted"](T, 4)),
        "growth 1.01": ("associative_factored", lambda T: (original._normal(1, (T, 4)), original._uniform(2, (T, 4), 1.0, 1.02))),
        "growth 1.1": ("associative_factored", lambda T: (original._normal(1, (T, 4)), original._uniform(2, (T, 4), 1.05, 1.15))),
    }


def _error(leaves, reference: list[np.ndarray]) -> float:
    errors = [np.abs(np.asarray(leaf, np.float64) - r) for leaf, r in zip(leaves, reference)]
    return max(float(e.max()) if np.isfinite(e).all() else float("nan") for e in errors)


def measure(lengths: list[int]) -> list[tuple[str, int, float, list[tuple[float, float]]]]:
    """(row, T, largest |result|, [(loop error, rewrite error) per dtype]) for every row: the
    reference in float64, the dtype runs with x64 off, as users run them."""
    text = FORMS.read_text(encoding="utf-8")
    fixed, _, _ = apply_fixes(text, str(FORMS), Settings(), unsafe=True)
    folder = Path(tempfile.mkdtemp())
    (folder / "forms_fixed.py").write_text(fixed, encoding="utf-8")
    original = load_module(FORMS, "precision_original")
    rewritten = load_module(folder / "forms_fixed.py", "precision_fixed")
    rows = []
    for label, (name, make) in cases(original).items():
        loop, rewrite = getattr(original, name), getattr(rewritten, name)
        for T in lengths:
            # The loop runs op by op: an unrolled compile of T=1,000 takes minutes.
            with jax.enable_x64(True), jax.disable_jit():
                exact = tuple(np.asarray(a, np.float64) for a in make(T))
                reference = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(loop(*exact))]
            scale = max(float(np.abs(r).max()) for r in reference)
            errors = []
            for dtype in DTYPES:
                args = tuple(jnp.asarray(a, dtype) for a in exact)
                with jax.disable_jit():
                    loop_error = _error(jax.tree_util.tree_leaves(loop(*args)), reference)
                errors.append((loop_error / scale, _error(jax.tree_util.tree_leaves(rewrite(*args)), reference) / scale))
            rows.append((label, T, scale, errors))
            print(f"{label} T={T}", file=sys.stderr, flush=True)
    return rows


def markdown(rows) -> str:  # noqa: ANN001
    names = [jnp.dtype(d).name for d in DTYPES]
    lines = [
        f"### Rounding of linear recurrences: loop and `lax.associative_scan` against float64 (JAX {jax.__version__}, "
        f"{jax.default_backend()})",
        "",
        "Largest error / largest |result|; the ratio is the rewrite's error over the loop's.",
        "",
        "| recurrence | T | max abs result | " + " | ".join(f"{n} loop | {n} rewrite | ratio" for n in names) + " |",
        "|---|---|---|" + "---|---|---|" * len(names),
    ]
    for label, T, scale, errors in rows:
        cells = []
        for loop, rewrite in errors:
            ratio = rewrite / loop if loop and np.isfinite(loop) and np.isfinite(rewrite) else float("nan")
            cells.append(f"{loop:.2g} | {rewrite:.2g} | {ratio:.2f}")
        lines.append(f"| {label} | {T:,} | {scale:.3g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="100,1000")
    lengths = [int(n) for n in parser.parse_args().lengths.split(",")]
    print(markdown(measure(lengths)))


if __name__ == "__main__":
    main()
