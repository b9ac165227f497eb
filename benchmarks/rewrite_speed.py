"""What does jaxloopfix's loop-to-scan rewrite buy? Compile and run time of four models, loop vs scan.

The models below are ordinary jitted Python-loop functions. The scan versions
are not written by hand: the script runs the tool itself (`apply_fixes`, with
unsafe fixes, since the arguments are unannotated) on SOURCE, so the numbers
are for exactly the code `jaxloopfix check --fix --unsafe-fixes` writes.

    python benchmarks/rewrite_speed.py [--lengths 10,100,1000] [--repeats N] [--markdown]
                                       [--tune-unroll] [--grad]

An unrolled loop's compile time grows with its trip count, so a budget
(`--max-compile-s`) skips lengths whose unrolled compile is predicted to take
longer; the first model (the RNN) always runs every length. Progress goes to
stderr, the tables to stdout.

Linear recurrences (GAE, discounted returns, a diagonal SSM) are also timed as the
tool's default fix for them, `lax.associative_scan`.

`--tune-unroll` also times the tool's rewrite written with `lax.scan(...,
unroll=k)` for k in 1, 2, 4, 8, 16 (each from `apply_fixes` with that unroll
setting) and reports the k that `verify --tune-unroll` would choose; `--unrolls`
names other factors. `--scan-only-lengths` adds trip counts too long to compile
the unrolled loop: there only the rewrites are timed, and the associative form
is compared with the scan. `--jsonl FILE` appends each row as it is measured,
so a run cut off by a time limit keeps what it finished; `--render FILE` prints
the table of such a file. `--grad`
adds a second program per model: the jitted gradient of the summed outputs
with respect to the first argument, the program training compiles.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes
from jaxloopfix.verify.measure import measure, ratios, tune_unroll

SOURCE = """\
import jax
import jax.numpy as jnp


@jax.jit
def elman_rnn(params, xs):
    h = jnp.zeros((xs.shape[1], params["W_h"].shape[0]))
    outputs = []
    for t in range(xs.shape[0]):
        h = jnp.tanh(xs[t] @ params["W_x"] + h @ params["W_h"] + params["b"])
        outputs.append(h)
    return jnp.stack(outputs)


@jax.jit
def lstm(params, xs, h, c):
    for t in range(xs.shape[0]):
        gates = xs[t] @ params["W"] + h @ params["U"] + params["b"]
        i, f, g, o = jnp.split(gates, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return h, c


@jax.jit
def gae(rewards, values, dones, gamma, lam):
    last_adv = jnp.zeros_like(rewards[0])
    advantages = []
    for t in reversed(range(rewards.shape[0])):
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * values[t + 1] * not_done - values[t]
        last_adv = delta + gamma * lam * not_done * last_adv
        advantages.append(last_adv)
    return jnp.stack(advantages[::-1])


@jax.jit
def returns(rewards, dones, gamma):
    g = jnp.zeros_like(rewards[0])
    out = []
    for t in reversed(range(rewards.shape[0])):
        g = rewards[t] + gamma * (1.0 - dones[t]) * g
        out.append(g)
    return jnp.stack(out[::-1])


@jax.jit
def diag_ssm(xs, deltas, log_decay, b, c):
    state = jnp.zeros((xs.shape[1], xs.shape[2], log_decay.shape[0]))
    ys = []
    for t in range(xs.shape[0]):
        decay = jnp.exp(deltas[t][..., None] * log_decay)
        state = decay * state + (deltas[t] * xs[t])[..., None] * b
        ys.append(jnp.sum(state * c, axis=-1))
    return jnp.stack(ys)


@jax.jit
def masked_rnn(params, xs, mask):
    h = jnp.zeros((xs.shape[1], params["W_h"].shape[0]))
    for t in range(xs.shape[0]):
        new_h = jnp.tanh(xs[t] @ params["W_x"] + h @ params["W_h"] + params["b"])
        h = jnp.where(mask[t], new_h, h)
    return h
"""

MODELS = ("elman_rnn", "lstm", "gae", "masked_rnn", "returns", "diag_ssm")
# Linear recurrences: the tool's default fix for them is `lax.associative_scan`.
RECURRENCES = ("gae", "returns", "diag_ssm")
SSM_STATE = 16
UNROLLS = (1, 2, 4, 8, 16)
BATCH = 8
FEATURES = 32  # input and hidden size: small, so the T=1000 unrolled compile stays tolerable on a laptop CPU
# Used to extrapolate an unrolled compile time to a longer trip count before a model has two measured lengths.
DEFAULT_GROWTH_EXPONENT = 1.3


def rewrite(unroll: int = 1, form: str = "scan") -> dict[str, Any]:
    """Exec the tool's rewrite of SOURCE into a fresh namespace: linear recurrences as
    `lax.associative_scan` when `form` is "associative", else every loop as `lax.scan(...,
    unroll=unroll)`."""
    fixed, _, applied = apply_fixes(
        SOURCE, "models.py", Settings(scan_unroll=unroll, linear_recurrences=form), unsafe=True
    )
    if form == "associative":
        assert fixed.count("associative_scan(") == len(RECURRENCES), "a recurrence did not get the associative form"
    assert applied == len(MODELS), (
        f"expected {len(MODELS)} fixes, the tool applied {applied}"
    )
    if unroll != 1 and form == "scan":
        assert f"unroll={unroll}" in fixed, (
            f"the rewrite does not carry unroll={unroll}"
        )
    namespace: dict[str, Any] = {
        "__name__": f"models_{form}_unroll{unroll}",
        "__source__": fixed,
    }
    exec(compile(fixed, f"models_{form}_unroll{unroll}.py", "exec"), namespace)
    return namespace


def build_versions() -> tuple[dict[str, Any], dict[str, Any], str]:
    """Exec SOURCE and the tool's rewrite of it into separate namespaces."""
    loop_ns: dict[str, Any] = {"__name__": "models_loop"}
    exec(compile(SOURCE, "models_loop.py", "exec"), loop_ns)
    scan_ns = rewrite()
    return loop_ns, scan_ns, scan_ns["__source__"]


def gradient(model_fn: Callable) -> Callable:
    """The jitted gradient of the model's summed outputs with respect to its first argument."""

    def loss(*args: Any) -> jax.Array:
        return sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(model_fn(*args)))

    return jax.jit(jax.grad(loss))


def program(namespace: dict[str, Any], model: str, kind: str) -> Callable:
    """The model's forward function, or its gradient."""
    fn = namespace[model]
    return fn if kind == "forward" else gradient(fn)


def make_inputs(model: str, length: int, seed: int = 0) -> tuple:
    """Random inputs for `model` with `length` time steps (batch 8, 32 features)."""
    rng = np.random.default_rng(seed)
    d, b = FEATURES, BATCH

    def normal(*shape: int, scale: float = 1.0) -> jax.Array:
        return jnp.asarray(rng.standard_normal(shape).astype(np.float32) * scale)

    if model in ("elman_rnn", "masked_rnn"):
        params = {
            "W_x": normal(d, d, scale=d**-0.5),
            "W_h": normal(d, d, scale=d**-0.5),
            "b": normal(d, scale=0.1),
        }
        xs = normal(length, b, d)
        if model == "elman_rnn":
            return (params, xs)
        lengths = rng.integers(
            1, length + 1, size=b
        )  # padded batch: sequence b is valid for t < lengths[b]
        mask = jnp.asarray(np.arange(length)[:, None, None] < lengths[None, :, None])
        return (params, xs, mask)
    if model == "lstm":
        params = {
            "W": normal(d, 4 * d, scale=d**-0.5),
            "U": normal(d, 4 * d, scale=d**-0.5),
            "b": normal(4 * d, scale=0.1),
        }
        return (params, normal(length, b, d), jnp.zeros((b, d)), jnp.zeros((b, d)))
    if model == "gae":
        rewards = normal(length, b)
        values = normal(length + 1, b)
        dones = jnp.asarray((rng.random((length, b)) < 0.05).astype(np.float32))
        return (rewards, values, dones, 0.99, 0.95)
    if model == "returns":
        dones = jnp.asarray((rng.random((length, b)) < 0.05).astype(np.float32))
        return (normal(length, b), dones, 0.99)
    if model == "diag_ssm":
        deltas = jnp.asarray(rng.uniform(0.01, 0.1, (length, b, d)).astype(np.float32))
        log_decay = -jnp.asarray(rng.uniform(0.5, 2.0, (SSM_STATE,)).astype(np.float32))
        return (normal(length, b, d), deltas, log_decay, normal(SSM_STATE, scale=0.3), normal(SSM_STATE, scale=0.3))
    raise ValueError(model)


def eager_outputs(loop_fn: Callable, args: tuple) -> Any:
    """The loop's outputs, run eagerly (jit disabled): compiling the unrolled loop a second
    time just for its output would double the most expensive part of the run."""
    with jax.disable_jit():
        return loop_fn(*args)


def trees_close(expected: Any, actual: Any) -> tuple[bool, float]:
    """Whether two output trees agree (rtol 1e-4, atol 1e-5), and their largest absolute difference."""
    ok, worst = True, 0.0
    for e, a in zip(
        jax.tree_util.tree_leaves(expected),
        jax.tree_util.tree_leaves(actual),
        strict=True,
    ):
        e, a = np.asarray(e), np.asarray(a)
        ok = ok and e.shape == a.shape and bool(np.allclose(e, a, rtol=1e-4, atol=1e-5))
        if e.shape == a.shape and e.size:
            worst = max(worst, float(np.max(np.abs(e - a))))
    return ok, worst


@dataclass
class Row:
    model: str
    length: int
    loop: dict | None  # None: the unrolled loop was not compiled at this length (`--scan-only-lengths`)
    scan: dict
    agree: bool
    max_abs_diff: float
    kind: str = "forward"
    tuned: dict | None = (
        None  # `tune_unroll`'s result: chosen k, per-k run and compile times
    )
    associative: dict | None = None  # the `lax.associative_scan` rewrite's measurement (recurrences)
    associative_agree: bool | None = None

    @property
    def ratio(self) -> dict:
        return ratios(self.loop or {}, self.scan)


@dataclass
class Budget:
    """Skips (model, T) pairs whose unrolled compile would take longer than `max_compile_s`."""

    max_compile_s: float
    growth_exponent: float = DEFAULT_GROWTH_EXPONENT
    exceeded_at: int | None = (
        None  # smallest T whose unrolled compile actually went over budget
    )
    skipped: list[str] = field(default_factory=list)

    def predict(self, history: list[tuple[int, float]], length: int) -> float | None:
        """Extrapolated unrolled compile time at `length` from the model's measured (T, compile_s)."""
        if not history:
            return None
        t_last, c_last = history[-1]
        return c_last * (length / t_last) ** self.growth_exponent

    def learn(self, history: list[tuple[int, float]]) -> None:
        """Update the growth exponent from the two longest measured lengths (clamped to [1, 3])."""
        if len(history) >= 2:
            (t1, c1), (t2, c2) = history[-2], history[-1]
            if t2 > t1 and c1 > 0 and c2 > 0:
                self.growth_exponent = min(
                    3.0, max(1.0, math.log(c2 / c1) / math.log(t2 / t1))
                )

    def should_skip(
        self,
        model: str,
        first_model: bool,
        history: list[tuple[int, float]],
        length: int,
    ) -> bool:
        if first_model:
            return False
        if self.exceeded_at is not None and length >= self.exceeded_at:
            self.skipped.append(
                f"{model} T={length}: skipped, an unrolled compile at T={self.exceeded_at} took over {self.max_compile_s:g} s"
            )
            return True
        predicted = self.predict(history, length)
        if predicted is not None and predicted > self.max_compile_s:
            self.skipped.append(
                f"{model} T={length}: skipped, unrolled compile predicted at {predicted:.0f} s > {self.max_compile_s:g} s budget"
            )
            return True
        return False


def run_benchmark(
    lengths: list[int],
    repeats: int,
    budgets: dict[str, Budget],
    unrolls: tuple[int, ...] = (),
    models: tuple[str, ...] = MODELS,
    scan_only_lengths: tuple[int, ...] = (),
    record: Callable[[Row], None] = lambda row: None,
) -> list[Row]:
    """One row per (program kind, model, T); `budgets` names the kinds to run ("forward", "gradient").

    `record` receives each row as soon as it is measured.
    """
    loop_ns, scan_ns, _ = build_versions()
    associative_ns = rewrite(form="associative")
    variants = {k: (scan_ns if k == 1 else rewrite(k)) for k in unrolls}
    rows: list[Row] = []
    with jax.default_matmul_precision("highest"):
        for kind, budget in budgets.items():
            for index, model in enumerate(models):
                history: list[tuple[int, float]] = []
                for length in sorted(lengths):
                    if budget.should_skip(
                        f"{model} ({kind})", index == 0, history, length
                    ):
                        print(budget.skipped[-1], file=sys.stderr)
                        continue
                    args = make_inputs(model, length)
                    started = time.perf_counter()
                    loop_fn, scan_fn = (
                        program(loop_ns, model, kind),
                        program(scan_ns, model, kind),
                    )
                    expected = eager_outputs(loop_fn, args)
                    agree, diff = trees_close(expected, scan_fn(*args))
                    scan_m = measure(scan_fn, args, {}, repeats=repeats)
                    tuned = None
                    if variants:
                        tuned = tune_unroll(
                            {k: program(ns, model, kind) for k, ns in variants.items()},
                            args,
                            repeats=repeats,
                        )
                    associative_m, associative_agree = None, None
                    if model in RECURRENCES:
                        associative_fn = program(associative_ns, model, kind)
                        associative_agree = trees_close(expected, associative_fn(*args))[0]
                        associative_m = measure(associative_fn, args, {}, repeats=repeats)
                    loop_m = measure(loop_fn, args, {}, repeats=repeats)
                    rows.append(
                        Row(model, length, loop_m, scan_m, agree, diff, kind, tuned, associative_m, associative_agree)
                    )
                    record(rows[-1])
                    history.append((length, loop_m["compile_s"]))
                    budget.learn(history)
                    if (
                        loop_m["compile_s"] > budget.max_compile_s
                        and budget.exceeded_at is None
                    ):
                        budget.exceeded_at = length
                    chosen = f"  unroll={tuned['choice']}" if tuned else ""
                    print(
                        f"{model:>10} {kind:<8} T={length:<5} loop compile {loop_m['compile_s']:.3f}s  "
                        f"scan compile {scan_m['compile_s']:.3f}s{chosen}  agree={agree}  "
                        f"({time.perf_counter() - started:.1f}s)",
                        file=sys.stderr,
                    )
                for length in sorted(scan_only_lengths):
                    rows.append(scan_only_row(scan_ns, associative_ns, variants, model, kind, length, repeats))
                    record(rows[-1])
    return rows


def scan_only_row(
    scan_ns: dict[str, Any],
    associative_ns: dict[str, Any],
    variants: dict[int, dict[str, Any]],
    model: str,
    kind: str,
    length: int,
    repeats: int,
) -> Row:
    """A length too long to compile unrolled: time the rewrites, and compare the associative form with the scan."""
    started = time.perf_counter()
    args = make_inputs(model, length)
    scan_fn = program(scan_ns, model, kind)
    scan_m = measure(scan_fn, args, {}, repeats=repeats)
    tuned = None
    if variants:
        tuned = tune_unroll({k: program(ns, model, kind) for k, ns in variants.items()}, args, repeats=repeats)
    associative_m, associative_agree = None, None
    if model in RECURRENCES:
        associative_fn = program(associative_ns, model, kind)
        associative_agree = trees_close(scan_fn(*args), associative_fn(*args))[0]
        associative_m = measure(associative_fn, args, {}, repeats=repeats)
    print(
        f"{model:>10} {kind:<8} T={length:<5} (no loop) scan compile {scan_m['compile_s']:.3f}s  "
        f"associative agrees with scan={associative_agree}  ({time.perf_counter() - started:.1f}s)",
        file=sys.stderr,
    )
    return Row(model, length, None, scan_m, True, 0.0, kind, tuned, associative_m, associative_agree)

COLUMNS = (
    "model",
    "program",
    "T",
    "compile s (loop)",
    "compile s (scan)",
    "compile loop/scan",
    "run ms (loop)",
    "run ms (scan)",
    "run loop/scan",
    "trace+lower s (loop)",
    "trace+lower s (scan)",
    "jaxpr eqns (loop)",
    "jaxpr eqns (scan)",
    "outputs agree",
)
ASSOCIATIVE_COLUMNS = (
    "compile s (associative)",
    "compile loop/associative",
    "run ms (associative)",
    "run loop/associative",
    "associative agrees",
)
TUNED_COLUMNS = (
    "chosen unroll",
    "run ms (scan, chosen unroll)",
    "run loop/scan (chosen unroll)",
    "compile s (scan, chosen unroll)",
    "run ms by unroll",
)


def _fmt_ratio(value: float | None) -> str:
    return (
        "n/a"
        if value is None
        else (f"{value:.0f}×" if value >= 100 else f"{value:.2f}×")
    )


NOT_COMPILED = "not compiled"


def _cell(measured: dict, key: str, scale: float = 1.0) -> str:
    """A measured number, or why there is none (the loop is not compiled at `--scan-only-lengths`)."""
    return f"{measured[key] * scale:.3f}" if key in measured else NOT_COMPILED


def table_cells(row: Row, tuned: bool = False) -> list[str]:
    r = row.ratio
    loop = row.loop or {}
    cells = [
        row.model,
        row.kind,
        str(row.length),
        _cell(loop, "compile_s"),
        f"{row.scan['compile_s']:.3f}",
        _fmt_ratio(r["compile_s"]),
        _cell(loop, "run_median_s", 1e3),
        f"{row.scan['run_median_s'] * 1e3:.3f}",
        _fmt_ratio(r["run_median_s"]),
        _cell(loop, "trace_lower_s"),
        f"{row.scan['trace_lower_s']:.3f}",
        str(loop.get("jaxpr_eqns", NOT_COMPILED)),
        str(row.scan["jaxpr_eqns"]),
        NOT_COMPILED if row.loop is None else ("yes" if row.agree else f"NO (max |Δ| {row.max_abs_diff:.2e})"),
    ]
    cells += associative_cells(row)
    if tuned:
        cells += tuned_cells(row)
    return cells


def associative_cells(row: Row) -> list[str]:
    """The `lax.associative_scan` rewrite against the loop (linear recurrences only)."""
    m = row.associative
    if m is None:
        return ["-"] * len(ASSOCIATIVE_COLUMNS)
    r = ratios(row.loop or {}, m)
    return [
        f"{m['compile_s']:.3f}",
        _fmt_ratio(r["compile_s"]),
        f"{m['run_median_s'] * 1e3:.3f}",
        _fmt_ratio(r["run_median_s"]),
        "yes" if row.associative_agree else "NO",
    ]


def tuned_cells(row: Row) -> list[str]:
    """The unroll sweep's cells; loop/scan here divides by the chosen k's run time."""
    if not row.tuned:
        return ["n/a"] * len(TUNED_COLUMNS)
    runs = {int(k): v for k, v in row.tuned["runs"].items()}
    chosen = runs[row.tuned["choice"]]
    return [
        str(row.tuned["choice"]),
        f"{chosen['run_median_s'] * 1e3:.3f}",
        _fmt_ratio(
            row.loop["run_median_s"] / chosen["run_median_s"]
            if row.loop and chosen["run_median_s"]
            else None
        ),
        f"{chosen['compile_s']:.3f}",
        ", ".join(f"{k}: {runs[k]['run_median_s'] * 1e3:.3f}" for k in sorted(runs)),
    ]


def columns(rows: list[Row]) -> tuple[str, ...]:
    return COLUMNS + ASSOCIATIVE_COLUMNS + (TUNED_COLUMNS if any(r.tuned for r in rows) else ())


def _load_average() -> str:
    try:
        return "{:.2f}".format(os.getloadavg()[0])
    except OSError:  # not available on this platform
        return "?"


def header_lines(
    command: str, repeats: int, elapsed_s: float, load_at_start: str
) -> list[str]:
    """Where and how the numbers were taken."""
    device = jax.devices()[0]
    return [
        f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"device: {device.device_kind} ({device.platform}, {len(jax.devices())} device(s); "
        f"host {platform.machine()}, {os.cpu_count()} CPU cores)",
        f"JAX {jax.__version__}, jaxlib {_jaxlib_version()}, Python {platform.python_version()}",
        f"command: `{command}`",
        f"batch {BATCH}, {FEATURES} features, float32, matmul precision highest; run time = median of {repeats} runs "
        f"after one warm-up; compile/trace from cleared caches",
        f"benchmark wall time {elapsed_s:.0f} s; 1-min load average {load_at_start} at start, {_load_average()} at end "
        "(other processes on the machine inflate the timings)",
    ]


def _jaxlib_version() -> str:
    try:
        import jaxlib

        return jaxlib.__version__
    except Exception:  # noqa: BLE001 - only for the header
        return "?"


def render_text(rows: list[Row], header: list[str], skipped: list[str]) -> str:
    names = columns(rows)
    cells = [list(names)] + [table_cells(r, len(names) > len(COLUMNS) + len(ASSOCIATIVE_COLUMNS)) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(names))]
    lines = list(header) + [""]
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.rjust(w) if i > 0 else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += [""] + skipped
    return "\n".join(lines)


def render_markdown(rows: list[Row], header: list[str], skipped: list[str]) -> str:
    device = next((line.split(": ", 1)[1].split(" (")[0] for line in header if line.startswith("device: ")), "?")
    lines = [f"### jaxloopfix rewrite speed: {device}", ""]
    lines += [f"- {line}" for line in header]
    names = columns(rows)
    tuned = len(names) > len(COLUMNS) + len(ASSOCIATIVE_COLUMNS)
    lines += [
        "",
        "| " + " | ".join(names) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] * (len(names) - 3)) + "|",
    ]
    lines += ["| " + " | ".join(table_cells(r, tuned)) + " |" for r in rows]
    if skipped:
        lines += [""] + [f"- {s}" for s in skipped]
    lines += [
        "",
        "Ratios are loop / scan: above 1× the `lax.scan` rewrite compiles or runs faster. "
        "The scan versions are the tool's own output (`apply_fixes(..., unsafe=True)`) on the loop source, "
        "with `linear-recurrences = \"scan\"`; the associative columns are its default fix for the linear "
        "recurrences (GAE, discounted returns, the diagonal SSM): `lax.associative_scan`. "
        "Where the loop is \"not compiled\" (T too long to unroll), the associative form is compared with the scan.",
    ]
    if tuned:
        lines.append(
            "The chosen unroll is the smallest k that no other k beats by 3% or more in run time "
            "(`verify --tune-unroll`'s rule); its loop/scan ratio divides the loop's run time by that variant's."
        )
    return "\n".join(lines)


def append_json(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def jsonl_recorder(path: Path, header: list[str]) -> Callable[[Row], None]:
    """Write the run's header now and each row as it comes: a run stopped by a time limit keeps its rows."""
    append_json(path, {"header": header, "skipped": []})
    return lambda row: append_json(path, {"row": asdict(row)})


def read_jsonl(path: Path) -> tuple[list[Row], list[str], list[str]]:
    """Rows, the last header written (the final one has the wall time) and the skipped lengths of a --jsonl file."""
    rows, header, skipped = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "row" in record:
            rows.append(Row(**record["row"]))
        else:
            header, skipped = record["header"], record["skipped"]
    return rows, header, skipped


def parse_lengths(text: str) -> list[int]:
    lengths = [int(part) for part in text.split(",") if part.strip()]
    if not lengths or any(n < 1 for n in lengths):
        raise argparse.ArgumentTypeError(
            "lengths must be positive integers, e.g. 10,100,1000"
        )
    return lengths


def parse_models(text: str) -> tuple[str, ...]:
    models = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [m for m in models if m not in MODELS]
    if not models or unknown:
        raise argparse.ArgumentTypeError(f"models must be among {','.join(MODELS)}")
    return models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lengths",
        type=parse_lengths,
        default=[10, 100, 1000],
        help="trip counts T (default 10,100,1000)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=20,
        help="timed runs per version (median reported)",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print a Markdown table ready for the README",
    )
    parser.add_argument(
        "--max-compile-s",
        type=float,
        default=120.0,
        help="skip a length for the models after the first when its unrolled compile would exceed this",
    )
    parser.add_argument(
        "--tune-unroll",
        action="store_true",
        help="also time the rewrite with lax.scan unroll=1,2,4,8,16 and pick one",
    )
    parser.add_argument(
        "--unrolls",
        type=parse_lengths,
        default=None,
        help="time the rewrite with lax.scan at these unroll factors and pick one (--tune-unroll: 1,2,4,8,16)",
    )
    parser.add_argument(
        "--scan-only-lengths",
        type=parse_lengths,
        default=[],
        help="trip counts too long to compile unrolled: time only the rewrites",
    )
    parser.add_argument("--jsonl", type=Path, help="append each row to this file as it is measured")
    parser.add_argument("--render", type=Path, help="print the table of a --jsonl file instead of measuring")
    parser.add_argument(
        "--grad", action="store_true", help="also compile and run each model's gradient"
    )
    parser.add_argument(
        "--models",
        type=parse_models,
        default=MODELS,
        help=f"comma-separated subset of {','.join(MODELS)}",
    )
    parser.add_argument(
        "--no-forward",
        action="store_true",
        help="with --grad: measure only the gradients",
    )
    args = parser.parse_args(argv)
    command = shlex.join(
        [
            "python",
            "benchmarks/rewrite_speed.py",
            *(sys.argv[1:] if argv is None else argv),
        ]
    )
    render = render_markdown if args.markdown else render_text
    if args.render is not None:
        rows, header, skipped = read_jsonl(args.render)
        print(render(rows, header, skipped))
        return 0
    started, load_at_start = time.perf_counter(), _load_average()
    unrolls = tuple(args.unrolls) if args.unrolls else (UNROLLS if args.tune_unroll else ())
    record = (lambda row: None) if args.jsonl is None else jsonl_recorder(args.jsonl, header_lines(command, args.repeats, 0.0, load_at_start))
    kinds = ([] if args.no_forward and args.grad else ["forward"]) + (
        ["gradient"] if args.grad else []
    )
    budgets = {kind: Budget(args.max_compile_s) for kind in kinds}
    rows = run_benchmark(
        args.lengths,
        args.repeats,
        budgets,
        unrolls,
        args.models,
        tuple(args.scan_only_lengths),
        record,
    )
    header = header_lines(
        command, args.repeats, time.perf_counter() - started, load_at_start
    )
    if args.jsonl is not None:
        append_json(args.jsonl, {"header": header, "skipped": [line for b in budgets.values() for line in b.skipped]})
    print(
        render(
            rows,
            header,
            [line for budget in budgets.values() for line in budget.skipped],
        )
    )
    return 0 if all(r.agree and r.associative_agree is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
