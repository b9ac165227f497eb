"""Random jitted loop programs for differential testing (Hypothesis strategies).

`loop_programs()` writes programs in the shapes the rewriter supports: 1-3
carries updated in order (later updates read earlier ones), 0-3 accumulators
finished by `jnp.stack`/`jnp.array` (with axis, or reversed), `.at[t].set`
buffers, axis 0 or 1, forward/offset/strided/reversed/descending ranges,
direct iteration, `enumerate`, `zip` (strict or not), index arithmetic
(`xs[t - 1]`) and the index used as a value. `refused_programs()` writes
programs that must never get a fix: `break`, side effects, carries that grow,
early `return`, outer mutation.

Every program defines `f(xs, ys, w)`; `inputs(length, axis)` builds arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

FEATURES = 3

# Headers: (template, needs axis 0, binds t, binds x_t, binds y_t)
HEADERS: dict[str, tuple[str, bool, bool, bool, bool]] = {
    "range": ("for t in range({T}):", False, True, False, False),
    "range_len": ("for t in range(len(xs)):", True, True, False, False),
    "range_start": ("for t in range({start}, {T}):", False, True, False, False),
    "range_step": ("for t in range(0, {T}, 2):", False, True, False, False),
    "reversed": ("for t in reversed(range({T})):", False, True, False, False),
    "reversed_start": ("for t in reversed(range({start}, {T})):", False, True, False, False),
    "descending": ("for t in range({T} - 1, -1, -1):", False, True, False, False),
    "iterate": ("for x_t in xs:", True, False, True, False),
    "enumerate": ("for t, x_t in enumerate(xs):", True, True, True, False),
    "enumerate_start": ("for t, x_t in enumerate(xs, start=1):", True, True, True, False),
    "zip_strict": ("for x_t, y_t in zip(xs, ys, strict=True):", True, False, True, True),
    "zip": ("for x_t, y_t in zip(xs, ys):", True, False, True, True),
    "enumerate_zip": ("for t, (x_t, y_t) in enumerate(zip(xs, ys, strict=True)):", True, True, True, True),
}


@dataclass(frozen=True)
class Program:
    source: str
    axis: int
    header: str
    evidence: str  # how `xs` is known to be an array: "annotation", "asarray" or "none"


def _read(axis: int, seq: str, index: str) -> str:
    return f"{seq}[{index}]" if axis == 0 else f"{seq}[:, {index}]"


@st.composite
def loop_programs(draw: st.DrawFn) -> Program:
    header = draw(st.sampled_from(sorted(HEADERS)))
    template, axis0_only, binds_t, binds_x, binds_y = HEADERS[header]
    axis = 0 if axis0_only else draw(st.sampled_from([0, 1]))
    length = "len(xs)" if axis == 0 and draw(st.booleans()) else f"xs.shape[{axis}]"
    start = draw(st.sampled_from([1, 2]))
    lines = [template.format(T=length, start=start)]
    body: list[str] = []
    # Per-step values the body can read.
    values: list[str] = []
    if binds_x:
        values.append("x_t")
    else:
        body.append(f"x_t = {_read(axis, 'xs', 't')}")
        values.append("x_t")
    if binds_y:
        values.append("y_t")
    elif binds_t and draw(st.booleans()):
        body.append(f"y_t = {_read(axis, 'ys', 't')}")
        values.append("y_t")
    if binds_t and header not in ("enumerate_start",) and draw(st.booleans()):
        # Index arithmetic: the previous step (wraps to the last row at t = 0, as in Python).
        body.append(f"prev = {_read(axis, 'xs', 't - 1')}")
        values.append("prev")
    if binds_t and draw(st.booleans()):
        values.append("t * 0.1")  # the index as a value (an unsafe fix: int32 under scan)

    carries = [f"c{i}" for i in range(draw(st.integers(1, 3)))]
    inits = ["jnp.zeros(w.shape[0])", "jnp.ones_like(w[0])", "w[{i}] * 0.5", "jnp.tanh(w[{i}])"]
    setup = [f"{c} = {draw(st.sampled_from(inits)).format(i=i)}" for i, c in enumerate(carries)]

    def term() -> str:
        pool = carries + values
        a = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["plain", "tanh", "matmul", "sin"]))
        if kind == "tanh":
            return f"jnp.tanh({a})"
        if kind == "matmul" and a in carries:
            return f"w @ {a}"
        if kind == "sin":
            return f"jnp.sin({a})"
        return a

    for i, c in enumerate(carries):
        op = draw(st.sampled_from(["{a} * 0.5 + {b}", "jnp.tanh({a} + {b})", "{a} - 0.25 * {b}", "jnp.tanh({a}) * {b}"]))
        b = "x_t" if i == 0 else term()  # every loop reads its sequence
        body.append(f"{c} = {op.format(a=c if draw(st.booleans()) else term(), b=b)}")

    accumulators = [f"acc{i}" for i in range(draw(st.integers(0, 3)))]
    finished: list[str] = []
    for acc in accumulators:
        setup.append(f"{acc} = []")
        vector = draw(st.sampled_from(carries + [v for v in values if v != "t * 0.1"]))  # stacked rows are 1-d
        value = draw(st.sampled_from(["{a}", "{a} + {b}", "jnp.tanh({a}) * 2.0"])).format(a=vector, b=term())
        body.append(f"{acc}.append({value})")
        finisher = draw(
            st.sampled_from(
                ["jnp.stack({a})", "jnp.stack({a}, axis=1)", "jnp.stack({a}, axis=-1)", "jnp.array({a})",
                 "jnp.asarray({a})", "jnp.stack({a}[::-1])"]
            )
        )
        finished.append(finisher.format(a=acc))
    if binds_t and header not in ("enumerate_start",) and draw(st.booleans()):
        setup.append(f"buf = jnp.zeros(({length}, w.shape[0]))")
        body.append(f"buf = buf.at[t].set({term()})")
        finished.append("buf")
    returned = [c for c in carries if draw(st.booleans())] or ([] if finished else carries[:1])
    outputs = returned + finished
    # Direct iteration needs proof that `xs` is an array (a parameter could be a list of
    # layers): an annotation or `jnp.asarray`. Index loops also run on bare parameters.
    evidence = draw(st.sampled_from(["annotation", "asarray"] if binds_x else ["annotation", "asarray", "none"]))
    signature = "def f(xs: jax.Array, ys: jax.Array, w: jax.Array):" if evidence == "annotation" else "def f(xs, ys, w):"
    if evidence == "asarray":
        setup[:0] = ["xs = jnp.asarray(xs)", "ys = jnp.asarray(ys)", "w = jnp.asarray(w)"]
    source = "\n".join(
        [
            "import jax",
            "import jax.numpy as jnp",
            "",
            "",
            "@jax.jit",
            signature,
            *("    " + line for line in setup),
            *("    " + line for line in lines),
            *("        " + line for line in body),
            f"    return ({', '.join(outputs)},)",
            "",
        ]
    )
    return Program(source, axis, header, evidence)


REFUSED_BODIES = {
    "break": ["c0 = c0 * 0.5 + x_t", "if t == 2:", "    break"],
    "continue": ["if t == 1:", "    continue", "c0 = c0 * 0.5 + x_t"],
    "early_return": ["c0 = c0 * 0.5 + x_t", "if t == 3:", "    return (c0,)"],
    "print": ["c0 = c0 * 0.5 + x_t", "print(t)"],
    "outer_list": ["c0 = c0 * 0.5 + x_t", "LOG.append(t)"],
    "growing_carry": ["c0 = jnp.concatenate([c0, x_t[:1]])"],
    "attribute_store": ["c0 = c0 * 0.5 + x_t", "STATE.last = c0"],
    "subscript_store": ["c0 = c0 * 0.5 + x_t", "CACHE[t] = c0"],
    "raise": ["c0 = c0 * 0.5 + x_t", "if t > 100:", "    raise ValueError(t)"],
    "try": ["try:", "    c0 = c0 * 0.5 + x_t", "except ValueError:", "    pass"],
    "loop_var_after": ["c0 = c0 * 0.5 + x_t"],
    "last_value_carry": ["c0 = jnp.tanh(jnp.sum(x_t))"],
}


@st.composite
def refused_programs(draw: st.DrawFn) -> tuple[str, str]:
    """(kind, source) of a loop that no fix may touch."""
    kind = draw(st.sampled_from(sorted(REFUSED_BODIES)))
    axis = draw(st.sampled_from([0, 1]))
    header = draw(st.sampled_from(["for t in range(xs.shape[{axis}]):", "for t in reversed(range(xs.shape[{axis}])):"]))
    body = [f"x_t = {_read(axis, 'xs', 't')}", *REFUSED_BODIES[kind]]
    extra = draw(st.sampled_from(["", "acc.append(c0)"]))
    tail = "    return (c0, t)" if kind == "loop_var_after" else "    return (c0,)"
    lines = [
        "import jax",
        "import jax.numpy as jnp",
        "",
        "LOG = []",
        "CACHE = {}",
        "",
        "",
        "class _State:",
        "    last = None",
        "",
        "",
        "STATE = _State()",
        "",
        "",
        "@jax.jit",
        "def f(xs, ys, w):",
        "    c0 = jnp.zeros(w.shape[0])",
        "    acc = []",
        "    " + header.format(axis=axis),
        *("        " + line for line in body + ([extra] if extra else [])),
    ]
    if extra:
        lines.append("    jnp.stack(acc)")
    lines += [tail, ""]
    return kind, "\n".join(lines)


def inputs(length: int, axis: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """float64 arguments for `f(xs, ys, w)` with `length` steps along `axis`."""
    rng = np.random.default_rng(seed)
    shape = (length, FEATURES) if axis == 0 else (FEATURES, length)
    xs = rng.standard_normal(shape)
    ys = rng.standard_normal(shape)
    w = rng.standard_normal((FEATURES, FEATURES)) * 0.4
    return xs, ys, w
