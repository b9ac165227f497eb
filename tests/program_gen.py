"""Random jitted loop programs for differential testing (Hypothesis strategies).

`loop_programs()` writes programs in the shapes the rewriter supports: 1-3
carries updated in order (later updates read earlier ones), a 0-d carry that
starts as a Python scalar (`total = 0.0`), a static branch on the index that
only assigns (`if t == 0: edge = ... else: edge = ...`), 0-3 accumulators
finished by `jnp.stack`/`jnp.array` (with axis, or reversed; returned directly or rebinding the
list's name, `acc = jnp.stack(acc)`) or used as a list (returned, indexed, summed), `.at[t].set`
buffers, axis 0 or 1, forward/offset/strided/reversed/descending ranges,
direct iteration (also `reversed(xs)`, alone or in `zip`/`enumerate`), `enumerate`, `zip` (strict or not), index arithmetic
(`xs[t - 1]`), the index used as a value and Python lists of rows read by the index
(`rows[t]`, stacked before the scan). `refused_programs()` writes
programs that must never get a fix: `break` (also in an inner loop's `else:`),
side effects of every kind (module helpers mutating globals, attribute chains,
aliases, host RNG, `next()`, properties, in-place NumPy), functions defined
before the loop that read a carry, modules built per step, carries that grow,
early `return`, outer mutation; `not_safe_program()` loops whose fix may be
unsafe but never safe (calls not proven pure, index overflow).

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
    "iterate_reversed": ("for x_t in reversed(xs):", True, False, True, False),
    "enumerate_reversed": ("for t, x_t in enumerate(reversed(xs)):", True, True, True, False),
    "zip_reversed": ("for x_t, y_t in zip(reversed(xs), ys, strict=True):", True, False, True, True),
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
    evidence: str  # how `xs` is known to be an array: "annotation", "jaxtyping", "asarray" or "none"


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
    if binds_t and draw(st.integers(0, 3)) == 0:
        # A static branch on the index that only assigns: the fix selects with `jnp.where`.
        edge = draw(st.sampled_from(["t == 0", f"t == {length} - 1", "t >= 2"]))
        other = draw(st.sampled_from(["x_t * 0.0", "x_t", _read(axis, "xs", "t - 1")]))
        body.extend([f"if {edge}:", f"    edge = {other}", "else:", "    edge = x_t * 0.5"])
        values.append("edge")

    listed: list[str] = []
    if binds_t and header not in ("enumerate_start",) and draw(st.integers(0, 3)) == 0:
        # A Python list of per-step rows read by the index (`rows[t]`): stacked before the scan.
        listed.append(draw(st.sampled_from([
            f"rows = [jnp.cos({_read(axis, 'xs', 'i')}) for i in range({length})]",
            f"*rows, = jnp.unstack(jnp.cos(xs), axis={axis})",
        ])))
        values.append("rows[t]")

    carries = [f"c{i}" for i in range(draw(st.integers(1, 3)))]
    # `jaxtyping` evidence (drawn below, decided here) annotates shapes; with carries made in the
    # default float dtype their fixes are proven safe, so the gate runs safe fixes too.
    evidence = draw(
        st.sampled_from(["annotation", "jaxtyping", "asarray"] if binds_x else ["annotation", "jaxtyping", "asarray", "none"])
    )
    if evidence == "jaxtyping":
        inits = ["jnp.zeros(w.shape[0])", "jnp.ones(w.shape[1])", "(w[{i}] * 0.5).astype(float)", "jnp.tanh(w[{i}]).astype(float)"]
    else:
        inits = ["jnp.zeros(w.shape[0])", "jnp.ones_like(w[0])", "w[{i}] * 0.5", "jnp.tanh(w[{i}])"]
    setup = listed + [f"{c} = {draw(st.sampled_from(inits)).format(i=i)}" for i, c in enumerate(carries)]

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

    # A carry that starts as a Python scalar (`total = 0.0`): `lax.scan` casts it to the step's
    # dtype, equal to the loop when every step keeps it 0-d.
    scalar_carry = draw(st.sampled_from([None, None, "0.0", "0", "1.0"]))
    if scalar_carry is not None:
        setup.append(f"total = {scalar_carry}")
        update = draw(st.sampled_from(["total * 0.9 + jnp.sum({v})", "total + jnp.mean({v}) * 0.5", "jnp.maximum(total, jnp.max({v}))"]))
        body.append(f"total = {update.format(v=term())}")
        carries_out = ["total"]
    else:
        carries_out = []

    accumulators = [f"acc{i}" for i in range(draw(st.integers(0, 3)))]
    finished: list[str] = []
    after: list[str] = []  # statements between the loop and the return
    for acc in accumulators:
        # A list may start with an item of its own (`hs = [h]`, the initial state) and may be
        # built back to front (`G.insert(0, g)`).
        first = draw(st.sampled_from([None, None, "c0", "jnp.zeros(w.shape[0])"]))
        setup.append(f"{acc} = [{first or ''}]")
        vector = draw(st.sampled_from(carries + [v for v in values if v != "t * 0.1"]))  # stacked rows are 1-d
        value = draw(st.sampled_from(["{a}", "{a} + {b}", "jnp.tanh({a}) * 2.0"])).format(a=vector, b=term())
        prepend = draw(st.integers(0, 3)) == 0
        body.append(f"{acc}.insert(0, {value})" if prepend else f"{acc}.append({value})")
        finishers = ["jnp.stack({a})", "jnp.array({a})", "jnp.asarray({a})"]
        if first is None:  # a list with items of its own is only joined along axis 0, in order
            finishers += ["jnp.stack({a}, axis=1)", "jnp.stack({a}, axis=-1)", "jnp.stack({a}[::-1])"]
        finisher = draw(st.sampled_from(finishers))
        style = draw(st.sampled_from(["returned", "rebound", "rebound_then_used", "as_list"]))
        if style == "as_list":
            # The list itself is used after the loop: returned, or indexed and summed.
            finished.append(draw(st.sampled_from(["{a}", "{a}[-1] * 2.0 + {a}[0]", "sum({a}) / len({a})"])).format(a=acc))
            continue
        if style == "returned":
            finished.append(finisher.format(a=acc))
            continue
        # The finisher rebinds the list's name (`acc = jnp.stack(acc)`), the most common form.
        if finisher == "jnp.stack({a}[::-1])" and draw(st.booleans()):
            after += [f"{acc} = {acc}[::-1]", f"{acc} = jnp.array({acc})"]
        else:
            after.append(f"{acc} = {finisher.format(a=acc)}")
        if style == "rebound_then_used":
            after.append(f"{acc} = {acc} * 2.0 + 1.0")
        finished.append(acc)
    if binds_t and header not in ("enumerate_start",) and draw(st.booleans()):
        setup.append(f"buf = jnp.zeros(({length}, w.shape[0]))")
        body.append(f"buf = buf.at[t].set({term()})")
        finished.append("buf")
    returned = [c for c in carries if draw(st.booleans())] or ([] if finished else carries[:1])
    returned += carries_out
    outputs = returned + finished
    # Direct iteration needs proof that `xs` is an array (a parameter could be a list of
    # layers): an annotation or `jnp.asarray`. Index loops also run on bare parameters.
    signature = "def f(xs: jax.Array, ys: jax.Array, w: jax.Array):" if evidence == "annotation" else "def f(xs, ys, w):"
    if evidence == "jaxtyping":
        dims = '"T F"' if axis == 0 else '"F T"'
        signature = f'def f(xs: Float[Array, {dims}], ys: Float[Array, {dims}], w: Float[Array, "F F"]):'
    if evidence == "asarray":
        setup[:0] = ["xs = jnp.asarray(xs)", "ys = jnp.asarray(ys)", "w = jnp.asarray(w)"]
    imports = ["from jaxtyping import Array, Float"] if evidence == "jaxtyping" else []
    return Program(_source(imports, signature, setup, lines, body, after, outputs), axis, header, evidence)


def _source(
    imports: list[str], signature: str, setup: list[str], header: list[str], body: list[str], after: list[str],
    outputs: list[str],
) -> str:
    """A module with one jitted function: set-up, the loop header and body, what follows, the return."""
    return "\n".join(
        [
            "import jax",
            "import jax.numpy as jnp",
            *imports,
            "",
            "",
            "@jax.jit",
            signature,
            *("    " + line for line in setup),
            *("    " + line for line in header),
            *("        " + line for line in body),
            *("    " + line for line in after),
            f"    return ({', '.join(outputs)},)",
            "",
        ]
    )


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
    # Impure calls of every kind the purity allow-list knows (tests/test_purity.py runs them).
    "helper_mutates_global": ["c0 = _log(c0 * 0.5 + x_t)"],
    "helper_declares_global": ["c0 = _tick(c0) * 0.5 + x_t"],
    "helper_through_helper": ["c0 = _outer_helper(c0 * 0.5 + x_t)"],
    "attribute_chain_call": ["c0 = c0 * 0.5 + x_t", "STATE.recorder.record(c0)"],
    "attribute_chain_update": ["c0 = c0 * 0.5 + x_t", "STATE.memory.update(c=c0)"],
    "logger_method": ["c0 = c0 * 0.5 + x_t", "logger.info('step %d', t)"],
    "alias_print": ["c0 = c0 * 0.5 + x_t", "_p(t)"],
    "alias_outer_list": ["lg = LOG", "lg.append(t)", "c0 = c0 * 0.5 + x_t"],
    "host_rng": ["c0 = c0 * random.random() + x_t"],
    "numpy_rng": ["c0 = c0 * 0.5 + x_t * np.random.normal()"],
    "next_iterator": ["c0 = c0 * next(RATES) + x_t"],
    "heap_push": ["c0 = c0 * 0.5 + x_t", "heapq.heappush(LOG, t)"],
    "operator_setitem": ["c0 = c0 * 0.5 + x_t", "operator.setitem(CACHE, t, c0)"],
    "property_side_effect": ["c0 = c0 * self.decay + x_t"],
    "inplace_numpy_aug": ["c0 = c0 * 0.5 + x_t", "host += 1"],
    "inplace_numpy_store": ["c0 = c0 * 0.5 + x_t", "HOST[0] = t"],
    "numpy_out_argument": ["c0 = c0 * 0.5 + x_t", "np.add(HOST, 1, out=HOST)"],
    # A function defined before the loop that reads a carry sees its initial value in a scan step.
    "closure_reads_carry": ["c0 = cell(x_t)"],
    "lambda_reads_carry": ["c0 = cell_fn(x_t)"],
    # `break` in an inner loop's `else:` leaves the outer loop.
    "break_inner_else": ["for k in range(2):", "    c0 = c0 * 0.5", "else:", "    break", "c0 = c0 + x_t"],
    # Modules built per step: no fix (they may be left unreported).
    "flax_dense_per_step": ["c0 = nn.Dense(3)(c0 + x_t)"],
    "user_module_per_step": ["c0 = Block()(c0 + x_t)"],
}
# Setup inside `f` before the loop, per kind.
REFUSED_SETUP = {
    "next_iterator": [],
    "inplace_numpy_aug": ["host = np.zeros(3)"],
    "closure_reads_carry": ["def cell(x):", "    return jnp.tanh(c0 * 0.5 + x)"],
    "lambda_reads_carry": ["cell_fn = lambda x: jnp.tanh(c0 * 0.5 + x)"],
}
# Kinds whose loop is a method of `_Model` (the property is read on `self`).
METHOD_KINDS = {"property_side_effect"}
PRELUDE = """\
import heapq
import logging
import operator
import random
from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

LOG = []
CACHE = {}
HOST = np.zeros(3)
RATES = iter([0.5] * 1000)
COUNT = 0
logger = logging.getLogger("gen")
_p = print


class _Recorder:
    def __init__(self):
        self.seen = []

    def record(self, value):
        self.seen.append(value)


class _State:
    last = None
    recorder = _Recorder()
    memory = {}


STATE = _State()


def _log(value):
    LOG.append(value)
    return value


def _tick(value):
    global COUNT
    COUNT += 1
    return value


def _outer_helper(value):
    return _log(value) * 1.0


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        return x * 2.0


class _Model:
    @property
    def decay(self):
        LOG.append(1)
        return 0.5
"""


def refused_program(kind: str, axis: int, reverse: bool, extra: str) -> str:
    """The source of a loop of `kind` that no fix may touch."""
    header = "for t in reversed(range(xs.shape[{axis}])):" if reverse else "for t in range(xs.shape[{axis}]):"
    body = [f"x_t = {_read(axis, 'xs', 't')}", *REFUSED_BODIES[kind]]
    tail = "return (c0, t)" if kind == "loop_var_after" else "return (c0,)"
    function = [
        "c0 = jnp.zeros(w.shape[0])",
        *REFUSED_SETUP.get(kind, []),
        "acc = []",
        header.format(axis=axis),
        *("    " + line for line in body + ([extra] if extra else [])),
    ]
    if extra:
        function.append("jnp.stack(acc)")
    function.append(tail)
    if kind in METHOD_KINDS:
        lines = ["    @partial(jax.jit, static_argnums=0)", "    def f(self, xs, ys, w):"]
        lines += ["        " + line for line in function]
        return PRELUDE + "\n".join(lines) + "\n"
    lines = ["", "", "@jax.jit", "def f(xs, ys, w):", *("    " + line for line in function), ""]
    return PRELUDE + "\n".join(lines)


@st.composite
def refused_programs(draw: st.DrawFn) -> tuple[str, str]:
    """(kind, source) of a loop that no fix may touch."""
    kind = draw(st.sampled_from(sorted(REFUSED_BODIES)))
    axis = draw(st.sampled_from([0, 1]))
    reverse = draw(st.booleans())
    extra = draw(st.sampled_from(["", "acc.append(c0)"]))
    return kind, refused_program(kind, axis, reverse, extra)


# Loops whose fix may be unsafe (a call the analysis cannot prove pure) but never safe.
NOT_SAFE_BODIES = {
    "unknown_object_method": ["c0 = OBJ.apply(c0 * 0.5 + x_t)"],
    "cached_helper": ["c0 = c0 * _rate() + x_t"],
    "callable_argument": ["c0 = act(c0 * 0.5 + x_t)"],
    "host_callback": ["c0 = c0 * 0.5 + x_t", "jax.debug.print('{c}', c=c0)"],
    "index_overflow": ["c0 = c0.at[(t * 2**30) % 3].add(x_t[0])"],
    # Dtypes JAX changes where a hand-written rule kept them (issue 28's wrong safe fixes).
    "int8_sum_widens": ["s = x_t.astype(jnp.int8).sum()", "c0 = c0 + s"],
    "complex_abs_is_real": ["c0 = jnp.abs(c0 * x_t)"],
    "int_hypot_is_float": ["c0 = jnp.hypot(c0, x_t.astype(jnp.int32))"],
    "clip_bound_promotes": ["c0 = jnp.clip(c0 + x_t.astype(jnp.float16), w[0], 1.0)"],
    "index_promotes_int8": ["c0 = c0 + x_t.astype(jnp.int8) + t"],
    "python_scalar_rounds_first": ["c0 = c0 * 3.0 + x_t[0]"],
}
# The carry's start where it is not `jnp.zeros(w.shape[0])`.
NOT_SAFE_SETUP = {
    "int8_sum_widens": "c0 = jnp.zeros((), jnp.int8)",
    "complex_abs_is_real": "c0 = jnp.ones(w.shape[0], jnp.complex64)",
    "int_hypot_is_float": "c0 = jnp.zeros(w.shape[0], jnp.int32)",
    "clip_bound_promotes": "c0 = jnp.zeros(w.shape[0], jnp.float16)",
    "index_promotes_int8": "c0 = jnp.zeros(w.shape[0], jnp.int8)",
    "python_scalar_rounds_first": "c0 = 0.1",
}
NOT_SAFE_PRELUDE = """\
import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


class _Obj:
    def apply(self, value):
        return value


OBJ = _Obj()


@functools.lru_cache(maxsize=None)
def _rate():
    return 0.5
"""


def not_safe_program(kind: str, axis: int) -> str:
    dims = '"T F"' if axis == 0 else '"F T"'
    body = [f"x_t = {_read(axis, 'xs', 't')}", *NOT_SAFE_BODIES[kind]]
    lines = [
        "",
        "",
        "@jax.jit",
        f'def f(xs: Float[Array, {dims}], ys: Float[Array, {dims}], w: Float[Array, "F F"], act=jnp.tanh):',
        "    " + NOT_SAFE_SETUP.get(kind, "c0 = jnp.zeros(w.shape[0])"),
        f"    for t in range(xs.shape[{axis}]):",
        *("        " + line for line in body),
        "    return (c0,)",
        "",
    ]
    return NOT_SAFE_PRELUDE + "\n".join(lines)


def inputs(length: int, axis: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """float64 arguments for `f(xs, ys, w)` with `length` steps along `axis`."""
    rng = np.random.default_rng(seed)
    shape = (length, FEATURES) if axis == 0 else (FEATURES, length)
    xs = rng.standard_normal(shape)
    ys = rng.standard_normal(shape)
    w = rng.standard_normal((FEATURES, FEATURES)) * 0.4
    return xs, ys, w


# Linear recurrences `h = a * h + b` (`a`, `b` free of `h`), for the associative rewrite.
LINEAR_HEADERS = ("range", "reversed", "descending", "range_start", "iterate", "iterate_reversed", "enumerate",
                  "zip", "zip_reversed", "enumerate_zip")
LINEAR_SCALES = ("0.9", "0.5 * jnp.tanh(y_t)", "jax.nn.sigmoid(x_t)", "(1.0 - m_t) * 0.95", "w[0] * 0.1",
                 "jnp.exp(-jnp.abs(y_t))", "1.05")
LINEAR_SHIFTS = ("x_t", "jnp.sin(y_t) * 0.3", "w[1] * x_t", "x_t - y_t", "jnp.sum(x_t) * 0.1")
LINEAR_FORMS = ("{a} * h + {b}", "{b} + {a} * h", "h * {a} + {b}", "{a} * (h + {b})", "{b} - {a} * h",
                "h + {b}", "h * {a}", "({b} + h * {a}) / 2.0", "jnp.maximum(h, {b})", "jnp.minimum({b}, h)")
LINEAR_AUGMENTED = ("h += {b}", "h *= {a}", "h -= {b}")


@st.composite
def linear_recurrence_programs(draw: st.DrawFn) -> Program:
    """One carry `h` updated as an affine map of itself (or a running maximum or minimum) per
    step, in the arrangements people write, with per-step work before the update and outputs
    after it."""
    header = draw(st.sampled_from(LINEAR_HEADERS))
    template, _, binds_t, binds_x, binds_y = HEADERS[header]
    lines = [template.format(T="xs.shape[0]", start=draw(st.sampled_from([1, 2])))]
    body: list[str] = []
    if not binds_x:
        body.append("x_t = xs[t]")
    if not binds_y:
        body.append("y_t = ys[t]" if binds_t else "y_t = jnp.cos(x_t)")
    scale, shift = draw(st.sampled_from(LINEAR_SCALES)), draw(st.sampled_from(LINEAR_SHIFTS))
    if "m_t" in scale:
        body.append("m_t = (x_t > 0.5).astype(x_t.dtype)")  # a mask factor, as `(1 - done)`
    if draw(st.booleans()):
        body.append(f"coef = {scale}")  # computed before the update, read by it
        scale = "coef"
    if draw(st.integers(0, 3)) == 0:
        body.append(draw(st.sampled_from(LINEAR_AUGMENTED)).format(a=scale, b=shift))
    else:
        body.append("h = " + draw(st.sampled_from(LINEAR_FORMS)).format(a=scale, b=shift))
    setup = [f"h = {draw(st.sampled_from(['jnp.zeros(w.shape[0])', 'w[0] * 0.5', 'jnp.ones_like(w[0])']))}"]
    outputs: list[str] = []
    after: list[str] = []
    kind = draw(st.sampled_from(["append", "append_function", "buffer", "final"]))
    if kind == "buffer" and binds_t and header != "enumerate_zip":
        setup.append("buf = jnp.zeros((xs.shape[0], w.shape[0]))")
        body.append("buf = buf.at[t].set(h)")
        outputs.append("buf")
    elif kind in ("append", "append_function"):
        setup.append("outs = []")
        body.append("outs.append(h)" if kind == "append" else "outs.append(jnp.tanh(h) * 2.0 + x_t)")
        after.append(f"outs = {draw(st.sampled_from(['jnp.stack(outs)', 'jnp.stack(outs[::-1])']))}")
        outputs.append("outs")
    if kind == "final" or not outputs or draw(st.booleans()):
        outputs.append("h")
    source = _source([], "def f(xs: jax.Array, ys: jax.Array, w: jax.Array):", setup, lines, body, after, outputs)
    return Program(source, 0, header, "annotation")
