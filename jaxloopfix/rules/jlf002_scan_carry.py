"""JLF002: a loop over an array axis in traced code that only carries state."""

from __future__ import annotations

from collections.abc import Iterator

from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.rules.base import FileContext, Rule
from jaxloopfix.rules.scan_report import loop_diagnostic


class ScanCarryOnly(Rule):
    """## What it does
    Finds a Python `for` loop inside a traced function that steps over an array
    axis (or runs a static number of steps on arrays) and only carries state:
    no per-step result is collected.

    ## Why is this bad?
    As with JLF001, tracing unrolls the loop into one copy of the body per
    step, so compile time and program size grow with the trip count.

    ## Example
    ```python
    @jax.jit
    def final_state(W, xs):
        h = jnp.zeros(W.shape[0])
        for t in range(xs.shape[0]):
            h = jnp.tanh(W @ h + xs[t])
        return h
    ```
    Use instead:
    ```python
    @jax.jit
    def final_state(W, xs):
        h = jnp.zeros(W.shape[0])

        def step(h, xs_t):
            h = jnp.tanh(W @ h + xs_t)
            return h, None

        h, _ = lax.scan(step, h, xs)
        return h
    ```
    A loop with nothing to slice (`for _ in range(n_iters)`) becomes
    `lax.scan(step, init, None, length=n_iters)`.

    A carry updated as `h = a * h + b` (`a`, `b` free of `h`: GAE, discounted
    returns, moving averages, diagonal SSMs) is a linear recurrence: its fix is
    `lax.associative_scan` of the steps' affine maps (of `jnp.add` for a running
    sum, `jnp.multiply` for a product), always unsafe since it regroups the
    arithmetic; `linear-recurrences = "scan"` writes a `lax.scan` instead.

    ## Fix safety
    The same proofs as JLF001 (carries start as arrays, the index is only used
    where a traced int32 behaves like a Python int, no control-flow exits, side
    effects or closures over the loop variable). Otherwise the loop is
    reported with the reason and no fix, or the fix is marked unsafe.
    """

    code = "JLF002"
    name = "carry-loop-to-scan"
    summary = "Loop over an array axis that only carries state in traced code; rewrite as `lax.scan`"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        for plan in context.loop_plans:
            if not plan.accumulates and (plan.carries or plan.refusal):
                yield loop_diagnostic(context, plan, self.code)
