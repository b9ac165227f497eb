"""Where does a nonlinear RNN's `lax.scan` lose time against the unrolled loop on a GPU?

The tool's rewrite of an Elman RNN or an LSTM (`rewrite_speed.SOURCE`) with a
tuned `unroll` ran at 0.85–0.97x the unrolled loop's forward pass on an H100.
This script times hypotheses about the rest of that gap, each as one variant
of the same model, against the loop at the same T:

- `unroll=k` for k beyond 16: is the loop overhead still the cost?
- the input projection hoisted out of the scan (`xs @ W_x + b` as one matmul over
  all steps; the step keeps only `h @ W_h`): is it the per-step slice and its
  small matmul?
- only the final state kept (no stacked outputs): is it writing the outputs?

The hand-written hoisted and final-only variants ask the questions; the `tool's`
variants are the tool's own rewrite (`apply_fixes`), including the hoisted form
`--tune` may write (`jax.vmap(lambda xs_t: xs_t @ W_x)(xs)` before the scan).

    python benchmarks/rnn_gap.py [--length 1000] [--models elman_rnn,lstm] [--grad] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

import jax
import numpy as np
import jax.numpy as jnp
from jax import lax

from jaxloopfix.config import HOISTED_FORM, Settings
from jaxloopfix.engine import apply_fixes
from jaxloopfix.verify.measure import measure

import rewrite_speed as speed

UNROLLS = (16, 32, 64)


def elman_hoisted(params: dict, xs: jax.Array, unroll: int) -> jax.Array:
    """The input projection of every step as one matmul before the scan."""
    h = jnp.zeros((xs.shape[1], params["W_h"].shape[0]))
    projected = xs @ params["W_x"] + params["b"]

    def step(h: jax.Array, projected_t: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = jnp.tanh(projected_t + h @ params["W_h"])
        return h, h

    return lax.scan(step, h, projected, unroll=unroll)[1]


def elman_final_only(params: dict, xs: jax.Array, unroll: int) -> jax.Array:
    """The tool's step, keeping only the last state: what stacking the outputs costs."""
    h = jnp.zeros((xs.shape[1], params["W_h"].shape[0]))

    def step(h: jax.Array, xs_t: jax.Array) -> tuple[jax.Array, None]:
        return jnp.tanh(xs_t @ params["W_x"] + h @ params["W_h"] + params["b"]), None

    return lax.scan(step, h, xs, unroll=unroll)[0]


def lstm_hoisted(params: dict, xs: jax.Array, h: jax.Array, c: jax.Array, unroll: int) -> tuple[jax.Array, jax.Array]:
    """The LSTM with the input half of its gates computed for every step before the scan."""
    projected = xs @ params["W"] + params["b"]

    def step(carry: tuple, projected_t: jax.Array) -> tuple[tuple, None]:
        c, h = carry
        gates = projected_t + h @ params["U"]
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (c, h), None

    (c, h), _ = lax.scan(step, (c, h), projected, unroll=unroll)
    return h, c


def hoisted_rewrite(model: str, unroll: int) -> Callable:
    """The tool's own hoisted form (what `--tune` writes when it measures it fastest)."""
    settings = Settings(scan_unroll=unroll, linear_recurrences="scan", form_overrides=((model, HOISTED_FORM),))
    fixed, _, _ = apply_fixes(speed.SOURCE, "models.py", settings, unsafe=True)
    assert "_projected" in fixed, "the tool hoisted nothing"
    namespace: dict[str, Any] = {"__name__": f"rnn_hoisted_{unroll}"}
    exec(compile(fixed, f"rnn_hoisted_{unroll}.py", "exec"), namespace)
    return namespace[model]


def variants(model: str) -> dict[str, Callable]:
    """Name -> jitted forward function; "loop" is the unrolled original."""
    loop_ns: dict[str, Any] = {"__name__": "rnn_loop"}
    exec(compile(speed.SOURCE, "rnn_loop.py", "exec"), loop_ns)
    out: dict[str, Callable] = {"loop (unrolled)": loop_ns[model]}
    for k in UNROLLS:
        out[f"tool's scan, unroll={k}"] = speed.rewrite(k)[model]
    for k in (16, 32):
        out[f"tool's scan with input products hoisted, unroll={k}"] = hoisted_rewrite(model, k)
    if model == "elman_rnn":
        for k in (16, 32):
            out[f"input projection hoisted, unroll={k}"] = jax.jit(elman_hoisted, static_argnums=2)
        out["final state only, unroll=16"] = jax.jit(elman_final_only, static_argnums=2)
    elif model == "lstm":
        for k in (16, 32):
            out[f"input projection hoisted, unroll={k}"] = jax.jit(lstm_hoisted, static_argnums=4)
    return out


def unroll_of(name: str) -> int | None:
    """The unroll a hand-written variant takes as its last argument (None: the tool's, fixed in its code)."""
    return int(name.rsplit("=", 1)[1]) if name.startswith(("input projection", "final")) else None


# Agreement of float32 outputs, relative to the largest output: gradients summed over T=1,000
# steps reach 1e4, where an absolute tolerance of 1e-5 is below float32 resolution. On an H200
# the compiled unrolled loop itself differs from its own eager run by 8.4e-8 of its largest
# gradient (benchmarks/results-gpu.md), the tool's scans by 8e-8 to 1.3e-7.
AGREE_RELATIVE = 1e-5


def _relative_difference(expected: Any, actual: Any) -> tuple[float, float]:
    """The largest absolute difference over the outputs, and that relative to the largest output."""
    worst = scale = 0.0
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual), strict=True):
        e, a = np.asarray(e, dtype=np.float64), np.asarray(a, dtype=np.float64)
        if e.shape != a.shape:
            return float("inf"), float("inf")
        if e.size:
            worst, scale = max(worst, float(np.max(np.abs(e - a)))), max(scale, float(np.max(np.abs(e))))
    return worst, (worst / scale if scale else worst)


def _shown(worst: float, relative: float) -> str:
    return f"max |Δ| {worst:.1e}, {relative:.1e} of max |out|"


def _difference(expected: Any, actual: Any) -> str:
    return _shown(*_relative_difference(expected, actual))


def run(models: tuple[str, ...], length: int, repeats: int, kinds: tuple[str, ...]) -> list[dict]:
    rows = []
    with jax.default_matmul_precision("highest"):
        for kind in kinds:
            for model in models:
                args = speed.make_inputs(model, length)
                loop_m = None
                expected = None
                for name, fn in variants(model).items():
                    started = time.perf_counter()
                    k = unroll_of(name)
                    call = fn if k is None else (lambda *a, fn=fn, k=k: fn(*a, k))
                    target = call if kind == "forward" else speed.gradient(call)
                    m = measure(target if hasattr(target, "lower") else jax.jit(target), args, {}, repeats=repeats)
                    if loop_m is None:
                        loop_m, expected = m, speed.eager_outputs(target, args)
                        # The compiled loop against its own eager run: how far compilation alone
                        # moves the results (XLA reorders float32 sums), the scale for the rest.
                        agrees = f"reference (compiled: {_difference(expected, target(*args))})"
                    elif "final" in name:
                        agrees = "(other outputs)"
                    else:
                        worst, relative = _relative_difference(expected, target(*args))
                        agrees = f"{'yes' if relative <= AGREE_RELATIVE else 'NO'} ({_shown(worst, relative)})"
                    row = {
                        "model": model, "program": kind, "T": length, "variant": name,
                        "compile_s": m["compile_s"], "run_ms": m["run_median_s"] * 1e3,
                        "loop_over_variant": loop_m["run_median_s"] / m["run_median_s"], "agrees": agrees,
                    }
                    rows.append(row)
                    print(
                        f"{model} {kind} T={length} {name}: compile {m['compile_s']:.2f}s run {row['run_ms']:.3f}ms "
                        f"loop/variant {row['loop_over_variant']:.2f}x agrees={agrees} ({time.perf_counter() - started:.1f}s)",
                        file=sys.stderr,
                        flush=True,
                    )
    return rows


def render(rows: list[dict], header: list[str]) -> str:
    lines = [f"- {line}" for line in header] + [
        "",
        "| model | program | T | variant | compile s | run ms | run loop/variant | outputs agree |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['model']} | {r['program']} | {r['T']} | {r['variant']} | {r['compile_s']:.3f} | {r['run_ms']:.3f} | "
        f"{r['loop_over_variant']:.2f}× | {r['agrees']} |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--models", default="elman_rnn", help="comma-separated: elman_rnn, lstm")
    parser.add_argument("--grad", action="store_true", help="time the gradients instead of the forward passes")
    args = parser.parse_args(argv)
    models = tuple(m for m in args.models.split(",") if m)
    started = time.perf_counter()
    rows = run(models, args.length, args.repeats, ("gradient",) if args.grad else ("forward",))
    command = "python benchmarks/rnn_gap.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(render(rows, speed.header_lines(command, args.repeats, time.perf_counter() - started, "?")))
    return 0 if not any(r["agrees"].startswith("NO") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
