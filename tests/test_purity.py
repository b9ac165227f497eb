"""Wrong fixes closed by the purity allow-list, the carry-type proof, closures defined before the
loop, `break` in an inner loop's `else:` and index arithmetic that overflows int32.

Each case is linted as a user would: is there a safe fix, is the fix unsafe and does it name the
call or the assumption, or is the loop refused with a reason. The original always runs on JAX;
where a fix is offered it is applied (`--unsafe-fixes`) and run too, and the test records what a
user would see: the same values, a scan that raises, or different values (the reason it is not
safe).
"""

from __future__ import annotations

import textwrap

import pytest

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

H = "import jax\nimport jax.numpy as jnp\n"
XS = (np.arange(24.0, dtype=np.float32).reshape(6, 4) / 10.0,)


def _case(source, expect, fragment, outcome=None, inputs=XS, function="f"):
    return (H + textwrap.dedent(source), expect, fragment, outcome, inputs, function)


CASES = {
    # -- 1. purity: an allow-list; unknown calls are unsafe and named; known effects refuse --------
    "unknown_method_of_a_module_object": _case(
        """
        class Scaler:
            def __init__(self):
                self.calls = 0

            def apply(self, x):
                self.calls += 1
                return x * 0.5

        SCALER = Scaler()

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = SCALER.apply(h) + xs[t]
            return h
        """,
        "unsafe", "cannot prove `SCALER.apply(...)` has no side effects", "equal",
    ),
    "update_whose_result_is_used_is_not_a_container_update": _case(
        # `updates, state = optimizer.update(grads, state)`: named like `dict.update`, but its
        # result is used, so it is an object's method (an optax transformation), not a mutation.
        """
        class Momentum:
            def update(self, grads, state):
                state = 0.9 * state + grads
                return -0.1 * state, state

        OPT = Momentum()

        @jax.jit
        def f(xs: jax.Array):
            params = jnp.ones(xs.shape[1:])
            state = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                updates, state = OPT.update(xs[t] * params, state)
                params = params + updates
            return params, state
        """,
        "unsafe", "cannot prove `OPT.update(...)` has no side effects", "equal",
    ),
    "update_as_a_statement_mutates": _case(
        """
        SEEN = {}

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                SEEN.update(last=t)
                h = h * 0.5 + xs[t]
            return h
        """,
        "refuse", "mutating `SEEN`", "equal",
    ),
    "helper_calling_an_unknown_function": _case(
        """
        import functools

        @functools.lru_cache(maxsize=None)
        def rate():
            return 0.5

        def step(h, x):
            return h * rate() + x

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = step(h, xs[t])
            return h
        """,
        "unsafe", "cannot prove `step(...)` has no side effects", "equal",
    ),
    "pure_module_helper_is_safe": _case(
        """
        from jaxtyping import Array, Float

        def decay(h):
            return jnp.tanh(h) * 0.5

        @jax.jit
        def f(xs: Float[Array, "T D"]):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = decay(h) + xs[t]
            return h
        """,
        "safe", None, "equal",
    ),
    "recursive_pure_helpers_are_safe": _case(
        """
        def halve(h, n):
            return h if n == 0 else halve(h * 0.5, n - 1)

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = jnp.tanh(halve(h, 2) + xs[t])
            return h
        """,
        "unsafe", "keeps its dtype and shape", "equal",  # pure (no purity reason), type not inferred
    ),
    "module_helper_mutating_a_global": _case(
        """
        SEEN = []

        def record(h):
            SEEN.append(h)
            return h

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = record(h * 0.5 + xs[t])
            return h
        """,
        "refuse", "`record(...)`, which has a side effect",
    ),
    "helper_declaring_global": _case(
        """
        COUNT = 0

        def bump(h):
            global COUNT
            COUNT += 1
            return h

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = bump(h) * 0.5 + xs[t]
            return h
        """,
        "refuse", "`global`",
    ),
    "aliased_print": _case(
        """
        p = print

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                p("step", t)
            return h
        """,
        "refuse", "an alias of `print`",
    ),
    "aliased_outer_list": _case(
        """
        LOG = []

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                lg = LOG
                lg.append(1)
                h = h * 0.5 + xs[t]
            return h
        """,
        "refuse", "`lg.append(...)`, mutating `lg` (an alias of `LOG`)",
    ),
    "logging": _case(
        """
        import logging

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                logging.info("step %d", t)
            return h
        """,
        "refuse", "`logging.info`",
    ),
    "host_random": _case(
        """
        import random

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * random.random() + xs[t]
            return h
        """,
        "refuse", "`random.random`",
    ),
    "numpy_random": _case(
        """
        import numpy as np

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t] * np.random.normal()
            return h
        """,
        "refuse", "`np.random.normal`",
    ),
    "next_of_an_outer_iterator": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            rates = iter([0.1 * k for k in range(100)])
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * next(rates) + xs[t]
            return h
        """,
        "refuse", "`next`",
    ),
    "heapq_push": _case(
        """
        import heapq

        HEAP = []

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                heapq.heappush(HEAP, t)
            return h
        """,
        "refuse", "`heapq.heappush`",
    ),
    "operator_setitem": _case(
        """
        import operator

        CACHE = {}

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                operator.setitem(CACHE, t, h)
            return h
        """,
        "refuse", "`operator.setitem`",
    ),
    "outer_dict_update": _case(
        """
        STATS = {}

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                STATS.update(last=h)
            return h
        """,
        "refuse", "mutating `STATS`",
    ),
    "in_place_numpy_update": _case(
        """
        import numpy as np

        @jax.jit
        def f(xs: jax.Array):
            host = np.zeros(3)
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                host += 1
            return h, host.sum()
        """,
        "refuse", "updates `host` in place",
    ),
    "attribute_chain_recorder": _case(
        """
        from functools import partial

        class Recorder:
            def __init__(self):
                self.seen = []

            def record(self, h):
                self.seen.append(h)

        class Model:
            def __init__(self):
                self.recorder = Recorder()

            @partial(jax.jit, static_argnums=0)
            def run(self, xs: jax.Array):
                h = jnp.zeros(xs.shape[1:])
                for t in range(xs.shape[0]):
                    h = h * 0.5 + xs[t]
                    self.recorder.record(h)
                return h

        def f(xs):
            return Model().run(xs)
        """,
        "refuse", "`self.recorder.record(...)` and discards its result",
    ),
    "attribute_chain_memory_update": _case(
        """
        from functools import partial

        class Agent:
            def __init__(self):
                self.memory = {}

            @partial(jax.jit, static_argnums=0)
            def run(self, xs: jax.Array):
                h = jnp.zeros(xs.shape[1:])
                for t in range(xs.shape[0]):
                    h = h * 0.5 + xs[t]
                    self.memory.update(h=h)
                return h

        def f(xs):
            return Agent().run(xs)
        """,
        "refuse", "`self.memory.update(...)`",
    ),
    "logger_object_add": _case(
        """
        class Logger:
            def add(self, value):
                pass

        logger = Logger()

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
                logger.add(h)
            return h
        """,
        "refuse", "`logger.add(...)`",
    ),
    "property_with_a_side_effect": _case(
        """
        from functools import partial

        class Model:
            def __init__(self):
                self.reads = 0

            @property
            def decay(self):
                self.reads += 1
                return 0.5

            @partial(jax.jit, static_argnums=0)
            def run(self, xs: jax.Array):
                h = jnp.zeros(xs.shape[1:])
                for t in range(xs.shape[0]):
                    h = h * self.decay + xs[t]
                return h

        def f(xs):
            return Model().run(xs)
        """,
        "refuse", "reading `self.decay` runs the property `decay`",
    ),
    "flax_module_built_per_step": _case(
        """
        import flax.linen as nn

        class Block(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.Dense(x.shape[-1])(x)

        class Net(nn.Module):
            @nn.compact
            def __call__(self, xs):
                h = jnp.zeros(xs.shape[1:])
                for t in range(xs.shape[0]):
                    h = Block()(h + xs[t])
                return h
        """,
        "refuse", "constructs the module `Block`", None,
    ),
    # -- 2. a function defined before the loop that reads a carry ---------------------------------
    "closure_reads_the_carry": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            W = jnp.eye(xs.shape[1]) * 0.5
            h = jnp.zeros(xs.shape[1:])

            def cell(x):
                return jnp.tanh(W @ h + x)

            for t in range(xs.shape[0]):
                h = cell(xs[t])
            return h
        """,
        "refuse", "the function `cell`, defined before the loop, reads `h`",
    ),
    "lambda_reads_the_carry": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            cell = lambda x: jnp.tanh(h * 0.5 + x)
            for t in range(xs.shape[0]):
                h = cell(xs[t])
            return h
        """,
        "refuse", "the function `cell`, defined before the loop, reads `h`",
    ),
    "closure_reads_through_another_closure": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])

            def state():
                return h

            def cell(x):
                return jnp.tanh(state() * 0.5 + x)

            for t in range(xs.shape[0]):
                h = cell(xs[t])
            return h
        """,
        "refuse", "reads `h`",
    ),
    # -- 3. break/continue in an inner loop's `else:` belong to the outer loop -----------------
    "break_in_inner_else": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                for k in range(2):
                    h = h * 0.5
                else:
                    break
                h = h + xs[t]
            return h
        """,
        "refuse", "`break`",
    ),
    "continue_in_inner_while_else": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                n = 0
                while n < 2:
                    n += 1
                else:
                    continue
                h = h + xs[t]
            return h
        """,
        "refuse", "`continue`",
    ),
    # -- 4. the vmap rewrite follows the same rules ------------------------------------------------
    "vmap_unknown_call_is_unsafe": _case(
        """
        class Scaler:
            def apply(self, x):
                return x * 2.0

        SCALER = Scaler()

        @jax.jit
        def f(xs: jax.Array):
            outs = []
            for t in range(xs.shape[0]):
                outs.append(SCALER.apply(xs[t]))
            return jnp.stack(outs)
        """,
        "unsafe", "cannot prove `SCALER.apply(...)` has no side effects", "equal",
    ),
    "vmap_print_refuses": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            outs = []
            for t in range(xs.shape[0]):
                print(t)
                outs.append(jnp.tanh(xs[t]))
            return jnp.stack(outs)
        """,
        "refuse", "`print`",
    ),
    "vmap_closure_reads_a_step_value": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            x_t = xs[0]
            scale = lambda: x_t * 2.0
            outs = []
            for t in range(xs.shape[0]):
                x_t = xs[t]
                outs.append(scale())
            return jnp.stack(outs)
        """,
        "refuse", "reads `x_t`",
    ),
    "vmap_pure_helper_is_safe": _case(
        """
        def score(x):
            return jnp.tanh(x).sum()

        @jax.jit
        def f(xs: jax.Array):
            outs = []
            for t in range(xs.shape[0]):
                outs.append(score(xs[t]))
            return jnp.stack(outs)
        """,
        "safe", None, "equal",
    ),
    # -- 5. carries must keep a proven dtype and shape ------------------------------------------
    "mixed_precision_rnn": _case(
        """
        @jax.jit
        def f(x: jax.Array, w: jax.Array):
            h = jnp.zeros(3, dtype=jnp.bfloat16)
            for t in range(x.shape[0]):
                h = jnp.tanh(h @ w + x[t])
            return h
        """,
        "unsafe", "cannot prove the carry `h` keeps its dtype and shape after one step (it starts as "
        "`jnp.zeros(3, dtype=jnp.bfloat16)`", "raises",
        inputs=(np.ones((5, 3), np.float32) * 0.1, np.eye(3, dtype=np.float32) * 0.5),
    ),
    "int_carry_from_astype": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            c = jnp.zeros(xs.shape[1:]).astype(jnp.int32)
            for t in range(xs.shape[0]):
                c = c + xs[t]
            return c
        """,
        "unsafe", "carry `c` keeps its dtype and shape", "raises",
    ),
    "int_carry_from_i4_string": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            c = jnp.zeros(xs.shape[1:], "i4")
            for t in range(xs.shape[0]):
                c = c + xs[t]
            return c
        """,
        "unsafe", "carry `c` keeps its dtype and shape", "raises",
    ),
    "int_carry_from_zeros_like_an_int_array": _case(
        """
        @jax.jit
        def f(xs: jax.Array, ids: jax.Array):
            c = jnp.zeros_like(ids)
            for t in range(xs.shape[0]):
                c = c + xs[t]
            return c
        """,
        "unsafe", "carry `c` keeps its dtype and shape", "raises",
        inputs=(XS[0], np.zeros(4, np.int32)),
    ),
    "size_one_carry_broadcasts": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(1)
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
            return h
        """,
        "unsafe", "cannot prove the carry `h` keeps its dtype and shape", "raises",
    ),
    "carry_starts_as_an_argument": _case(
        """
        @jax.jit
        def f(xs: jax.Array, h0: jax.Array):
            h = h0
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
            return h
        """,
        "unsafe", "(it starts as `h0`", "raises",
        inputs=(XS[0], np.zeros((), np.float32)),
    ),
    "weak_typed_full_in_bfloat16_loop": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.full(xs.shape[1:], 1.0039)
            outs = []
            for t in range(xs.shape[0]):
                h = h * 1.0039 + xs[t]
                outs.append(h)
            return jnp.stack(outs)
        """,
        "unsafe", "weakly typed", "differs",
        inputs=(np.full((6, 4), 0.001, np.float32).astype(jnp.bfloat16),),
    ),
    "default_float_carry_with_same_shape_updates_is_safe": _case(
        """
        from jaxtyping import Array, Float

        @jax.jit
        def f(xs: Float[Array, "T D"]):
            h = jnp.zeros(xs.shape[1:])
            outs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h * 0.5 + xs[t])
                outs.append(h)
            return jnp.stack(outs), h
        """,
        "safe", None, "equal",
    ),
    # `jax.Array` says nothing about the dtype: a complex `xs` would make the float carry complex.
    "unknown_dtype_input_is_unsafe": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t]
            return h
        """,
        "unsafe", "the dtype of `h * 0.5 + xs[t]` is not known", "raises",
        inputs=(np.ones((5, 3)) * (1 + 1j),),
    ),
    "cast_to_the_carry_dtype_is_safe": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * 0.5 + xs[t].astype(h.dtype)
            return h
        """,
        "safe", None, "equal",
    ),
    "property_of_a_module_instance": _case(
        """
        class Config:
            def __init__(self):
                self.reads = 0

            @property
            def decay(self):
                self.reads += 1
                return 0.5

        CFG = Config()

        @jax.jit
        def f(xs: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * CFG.decay + xs[t]
            return h
        """,
        "refuse", "reading `CFG.decay` runs the property `decay`",
    ),
    "outer_iterator_consumed_by_an_inner_loop": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            rates = iter([0.5, 0.25] * 50)
            h = jnp.zeros(xs.shape[1:])
            for t in range(xs.shape[0]):
                h = h * max(r for r, _ in zip(rates, range(1))) + xs[t]
            return h
        """,
        "refuse", "iterates over `rates`, an iterator made outside the loop",
    ),
    "annotated_rnn_is_safe": _case(
        """
        from jaxtyping import Array, Float

        @jax.jit
        def f(xs: Float[Array, "T D"], W: Float[Array, "D D"]):
            h = jnp.zeros(xs.shape[1])
            outs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h @ W + xs[t])
                outs.append(h)
            return jnp.stack(outs)
        """,
        "safe", None, "equal",
        inputs=(XS[0], np.eye(4, dtype=np.float32) * 0.5),
    ),
    # -- 6. index arithmetic that overflows int32 in the scan -----------------------------------
    "index_times_a_large_constant": _case(
        """
        @jax.jit
        def f(xs: jax.Array):
            buf = jnp.zeros(3)
            for t in range(xs.shape[0]):
                buf = buf.at[(t * 2**30) % 3].add(xs[t, 0])
            return buf
        """,
        "unsafe", "multiplies the loop index by 1073741824", "differs",
    ),
    "index_times_an_unknown_constant": _case(
        """
        from functools import partial

        @partial(jax.jit, static_argnames=("stride",))
        def f(xs: jax.Array, stride=2**29):
            buf = jnp.zeros(7)
            for t in range(xs.shape[0]):
                k = (t * stride) % 7
                buf = buf.at[k].add(xs[t, 0])
            return buf
        """,
        "unsafe", "multiplies the loop index by `stride`", "differs",
    ),
}


# Loops that call modules may be left unreported (their evidence is module state); never fixed.
MAY_BE_UNREPORTED = {"flax_module_built_per_step"}


def _diagnostics(source):
    return [d for d in lint_text(source, "case.py", Settings()) if d.code in ("JLF001", "JLF002")]


def _text(diagnostic):
    return (diagnostic.no_fix_reason or "") + (diagnostic.fix.message if diagnostic.fix else "")


@pytest.mark.parametrize("name", sorted(CASES))
def test_what_a_user_sees(name, tmp_path):
    source, expect, fragment, outcome, inputs, function = CASES[name]
    diagnostics = _diagnostics(source)
    if not diagnostics and name in MAY_BE_UNREPORTED:
        return
    assert len(diagnostics) == 1, [_text(d) for d in diagnostics]
    (diagnostic,) = diagnostics
    if expect == "refuse":
        assert diagnostic.fix is None and diagnostic.no_fix_reason, _text(diagnostic)
        assert fragment in diagnostic.no_fix_reason, diagnostic.no_fix_reason
        assert apply_fixes(source, "case.py", Settings(), unsafe=True)[2] == 0
    elif expect == "unsafe":
        assert diagnostic.fix is not None and diagnostic.fix.applicability.value == "unsafe", _text(diagnostic)
        assert fragment in diagnostic.fix.message, diagnostic.fix.message
        assert apply_fixes(source, "case.py", Settings())[2] == 0
    else:
        assert diagnostic.fix is not None and diagnostic.fix.applicability.value == "safe", _text(diagnostic)
    if outcome is None:
        return
    (tmp_path / "original.py").write_text(source)
    original = getattr(load_module(tmp_path / "original.py", f"purity_original_{name}"), function)
    expected = original(*inputs)
    if diagnostic.fix is None:
        return
    fixed, _, applied = apply_fixes(source, "case.py", Settings(), unsafe=True)
    assert applied == 1
    (tmp_path / "fixed.py").write_text(fixed)
    rewritten = getattr(load_module(tmp_path / "fixed.py", f"purity_fixed_{name}"), function)
    if outcome == "raises":
        # The hazard is the scan's: its carry keeps one dtype and shape. A linear recurrence's
        # default fix, the associative form, promotes as the loop does and must run equal.
        as_scan = apply_fixes(source, "case.py", Settings(linear_recurrences="scan"), unsafe=True)[0]
        (tmp_path / "scan.py").write_text(as_scan)
        scanned = getattr(load_module(tmp_path / "scan.py", f"purity_scan_{name}"), function)
        with pytest.raises(TypeError, match="carry"):
            scanned(*inputs)
        if as_scan == fixed:
            return
        outcome = "equal"
    actual = rewritten(*inputs)
    leaves = list(zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)))
    same = all(
        np.shape(e) == np.shape(a) and np.asarray(e).dtype == np.asarray(a).dtype
        and np.allclose(np.asarray(e, np.float64), np.asarray(a, np.float64), rtol=1e-6, atol=1e-6)
        for e, a in leaves
    )
    assert same == (outcome == "equal"), (expected, actual)


def test_side_effect_of_an_unsafe_fix_is_visible():
    """The unsafe fix of `unknown_method_of_a_module_object` runs `SCALER.apply` once, not per step."""
    source = CASES["unknown_method_of_a_module_object"][0]
    fixed, _, applied = apply_fixes(source, "case.py", Settings(), unsafe=True)
    assert applied == 1
    for text, calls in ((source, 6), (fixed, 1)):
        namespace: dict = {}
        exec(compile(text, "case.py", "exec"), namespace)  # noqa: S102 - test code
        namespace["f"](*XS)
        assert namespace["SCALER"].calls == calls


def test_pure_code_of_every_allowed_kind_stays_safe():
    source = H + textwrap.dedent(
        """
        import math
        import operator
        from functools import partial, reduce

        def norm(v):
            return v / (jnp.linalg.norm(v) + 1e-6)

        @jax.jit
        def f(xs: jax.Array, key: jax.Array):
            h = jnp.zeros(xs.shape[1:])
            outs = []
            for t in range(xs.shape[0]):
                x_t = xs[t]
                parts = [x_t, x_t * 2.0]
                parts.append(x_t)
                total = reduce(operator.add, parts) / len(parts)
                scale = math.sqrt(2.0) * max(1, min(3, abs(-2)))
                noise = jax.random.normal(jax.random.fold_in(key, 0), x_t.shape)
                tree = jax.tree_util.tree_map(lambda a: a * 0.5, {"a": total})
                h = jnp.tanh(h * 0.5 + tree["a"] / scale + 0.0 * noise)
                outs.append(norm(h).reshape(-1).astype(jnp.float32).sum())
            return jnp.stack(outs)
        """
    )
    (diagnostic,) = _diagnostics(source)
    assert diagnostic.fix is not None, diagnostic.no_fix_reason
    assert "side effects" not in diagnostic.fix.message, diagnostic.fix.message


def test_special_methods_of_module_objects_are_checked():
    """`TAB[0]` and `x * S` run `__getitem__`/`__rmul__`: found by the adversarial hunt, where
    a map-only loop got a safe `jax.vmap` fix that ran them once instead of once per step."""
    for special, use in (("__getitem__(self, k)", "TAB[0]"), ("__rmul__(self, k)", "2.0 * TAB")):
        source = H + textwrap.dedent(
            f"""
            from jaxtyping import Array, Float

            class Table:
                def __init__(self):
                    self.n = 0

                def {special}:
                    self.n += 1
                    return 2.0

            TAB = Table()

            @jax.jit
            def f(xs: Float[Array, "T D"]):
                outs = []
                for t in range(xs.shape[0]):
                    outs.append(jnp.tanh(xs[t]) * {use})
                return jnp.stack(outs)
            """
        )
        (diagnostic,) = _diagnostics(source)
        assert diagnostic.fix is None and "which has a side effect" in diagnostic.no_fix_reason, _text(diagnostic)
