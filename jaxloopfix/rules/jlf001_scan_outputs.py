"""JLF001: a loop over an array axis in traced code that accumulates per-step outputs."""

from __future__ import annotations

from collections.abc import Iterator

from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.rules.base import FileContext, Rule
from jaxloopfix.rules.scan_report import comprehension_diagnostic, loop_diagnostic


class ScanWithOutputs(Rule):
    """## What it does
    Finds a Python `for` loop inside a traced function (under `jax.jit`, `jax.grad`,
    `jax.vmap`, ...) that steps over an array axis, carries state from one step to
    the next and collects a per-step result (`outputs.append(h)` finished by
    `jnp.stack(outputs)`, or a buffer written with `buf.at[t].set(...)`).

    ## Why is this bad?
    Tracing runs the Python loop: T steps become T copies of the body in the
    compiled program. Compile time grows with T: an Elman RNN with T=1000 took
    47 s to compile forward and 87 s for its gradient on an H100, against 0.2 s
    and 0.4 s as a `lax.scan`. Run time depends on the backend: on that GPU the
    gradient with `lax.scan(..., unroll=16)` ran 5% faster than the unrolled loop,
    a plain scan 3x slower; `jaxloopfix verify --tune` measures it.

    ## Example
    ```python
    @partial(jax.jit, static_argnames=["hidden_dim"])
    def run_rnn(params, inputs, hidden_dim):
        h = jnp.zeros(hidden_dim)
        outputs = []
        for i in range(inputs.shape[0]):
            x_t = inputs[i]
            h = jnp.tanh(x_t @ params["W_x"] + h @ params["W_h"] + params["b"])
            outputs.append(h)
        return h, jnp.stack(outputs)
    ```
    Use instead:
    ```python
    @partial(jax.jit, static_argnames=["hidden_dim"])
    def run_rnn(params, inputs, hidden_dim):
        h = jnp.zeros(hidden_dim)

        def step(h, x_t):
            h = jnp.tanh(x_t @ params["W_x"] + h @ params["W_h"] + params["b"])
            return h, h

        h, outputs = lax.scan(step, h, inputs)
        return h, outputs
    ```
    The carried names become the scan's carry (a tuple for several), the
    per-step slices `x[t]` / `x[:, t]` become `xs` (`jnp.moveaxis` for another
    axis, slicing for offsets and steps), the index becomes `jnp.arange(...)` in
    `xs` when the body uses it, descending loops use `reverse=True`, and the
    `jnp.stack(...)` (with its `axis`) becomes the scan's stacked output in the
    order the list held. A loop that carries nothing (every step independent, only
    `outs.append(f(x_t))`) becomes `outs = jax.vmap(lambda x_t: f(x_t))(xs)` (or a
    nested `def step(x_t)` for longer bodies), with `in_axes`/`out_axes` for other
    axes, under the same safety rules.

    A comprehension or generator expression that steps over array data (the
    rows of an array, a `range` as long as an array axis) unrolls the same way:
    `jnp.stack([f(r) for r in xs])` puts one copy of `f` per row into the
    program. It is reported without a fix; `jax.vmap(f)(xs)` is the rewrite.

    A carry updated as `h = a * h + b` (`a`, `b` free of `h`: GAE, discounted
    returns, moving averages, diagonal SSMs) is a linear recurrence: its fix is
    `lax.associative_scan` of the steps' affine maps (of `jnp.add` for a running
    sum, `jnp.multiply` for a product), always unsafe since it regroups the
    arithmetic; `linear-recurrences = "scan"` writes a `lax.scan` instead.

    ## Fix safety
    The fix is safe when the analysis proves: every carry starts as an array
    (not a Python scalar, which would change type on the first step); the index
    is only used in arithmetic, array indexing and jnp calls (it becomes a
    traced int32); appended values are single arrays; the list is only read by
    its finisher; the range bounds cannot be negative; and the body has no
    `break`/`continue`/`return`/`yield`, `try`/`with`, side effects (print, I/O,
    mutation of outer objects or attributes) or closures over the loop
    variable. Loops that fail a check are reported with the reason and no fix.
    The fix is unsafe (applied only with `--unsafe-fixes`) when a carry's
    initial value or an appended value cannot be proven to be an array, the
    index is passed to a function the tool cannot see, or `zip` is used without
    `strict=True` (`zip` stops at the shortest sequence; `lax.scan` needs equal
    lengths). One difference is inherent: an empty loop makes `jnp.stack([])`
    raise, while the scan returns an empty array. Numerics match the loop up to
    floating-point reassociation (~1e-6 relative at highest matmul precision).
    """

    code = "JLF001"
    name = "loop-to-scan"
    summary = "Loop over an array axis with per-step outputs in traced code; rewrite as `lax.scan`"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        for plan in context.loop_plans:
            if plan.accumulates:
                yield loop_diagnostic(context, plan, self.code)
        for report in context.comprehension_reports:
            yield comprehension_diagnostic(context, report, self.code)
