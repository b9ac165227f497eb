"""The transform table, checked against JAX itself: an entry of `TRACING_TRANSFORMS` must hand its
function tracers when called outside any trace, and a wrapper that runs its function eagerly
(`jax.named_call`, a name scope) must not be an entry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jaxloopfix.analysis.traced import NAMING_WRAPPERS, TRACING_TRANSFORMS

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

X = jnp.arange(3.0)

# qualified name -> how a user calls a function through it, eagerly.
CALLS: dict[str, Callable[[Callable], object]] = {
    "jax.jit": lambda f: jax.jit(f)(X),
    "jax.grad": lambda f: jax.grad(f)(X),
    "jax.value_and_grad": lambda f: jax.value_and_grad(f)(X),
    "jax.vmap": lambda f: jax.vmap(f)(X),
    "jax.jacfwd": lambda f: jax.jacfwd(f)(X),
    "jax.jacrev": lambda f: jax.jacrev(f)(X),
    "jax.hessian": lambda f: jax.hessian(f)(X),
    "jax.checkpoint": lambda f: jax.checkpoint(f)(X),
    "jax.remat": lambda f: jax.remat(f)(X),
    "jax.eval_shape": lambda f: jax.eval_shape(f, X),
    "jax.make_jaxpr": lambda f: jax.make_jaxpr(f)(X),
    "jax.jvp": lambda f: jax.jvp(f, (X,), (X,)),
    "jax.vjp": lambda f: jax.vjp(f, X),
    "jax.linearize": lambda f: jax.linearize(f, X),
    "jax.named_call": lambda f: jax.named_call(f, name="scoped")(X),
}


def _sees_a_tracer(call: Callable[[Callable], object]) -> bool:
    seen: list[bool] = []

    def probe(x):
        seen.append(isinstance(x, jax.core.Tracer))
        return jnp.sum(jnp.sin(x))

    call(probe)
    return any(seen)


@pytest.mark.parametrize("qname", sorted(CALLS))
def test_an_entry_traces_its_function_and_a_non_entry_does_not(qname: str) -> None:
    traced = _sees_a_tracer(CALLS[qname])
    assert (qname in TRACING_TRANSFORMS) is traced, f"{qname}: JAX {'traces' if traced else 'does not trace'} its function"


def test_naming_wrappers_run_their_function_eagerly() -> None:
    for qname in NAMING_WRAPPERS:
        assert qname in CALLS and not _sees_a_tracer(CALLS[qname])


def test_a_named_function_is_traced_only_by_what_calls_or_wraps_it() -> None:
    from jaxloopfix.config import Settings
    from jaxloopfix.engine import lint_text

    loop = "    h = jnp.zeros(x.shape[1:])\n    for t in range(x.shape[0]):\n        h = jnp.tanh(h + x[t])\n    return h\n"
    head = "from functools import partial\nimport jax\nimport jax.numpy as jnp\n\n"
    named_only = head + '@partial(jax.named_call, name="step")\ndef step(x):\n' + loop
    wrapped = head + "def step(x):\n" + loop + '\nfast = jax.jit(jax.named_call(step, name="step"))\n'
    called = named_only + "\n@jax.jit\ndef run(x):\n    return step(x)\n"

    def reported(text: str) -> bool:
        return any(d.code == "JLF002" for d in lint_text(text, "m.py", Settings()))

    assert not reported(named_only)  # a name scope alone: the loop runs eagerly
    assert reported(wrapped)
    assert reported(called)


def test_jax_dataclasses_jit_takes_its_statics_from_annotations() -> None:
    """`jax_dataclasses.jit` traces its function with the parameters annotated `jdc.Static[...]`
    static (Python values) and the rest tracers, as JAX runs it; the linter marks the same ones
    static, so a loop over `range(n_steps)` is a static unroll (JLF002) and over an unannotated
    count a traced trip count (JLF003), which raises as JAX shows."""
    jdc = pytest.importorskip("jax_dataclasses")
    from jaxloopfix.analysis.traced import TRACING_TRANSFORMS
    from jaxloopfix.config import Settings
    from jaxloopfix.engine import lint_text, parse
    from jaxloopfix.rules.base import FileContext

    seen: dict[str, bool] = {}
    # Defined apart from this module's `from __future__ import annotations`: `jdc.jit` reads the
    # annotations as objects, as a user's module without that import gives them.
    space = {"jax": jax, "jdc": jdc, "seen": seen}
    exec(compile(  # noqa: S102 - a fixed probe
        "def probe(x, n_steps: jdc.Static[int], scale: float):\n"
        "    seen.update(x=isinstance(x, jax.core.Tracer), n_steps=isinstance(n_steps, jax.core.Tracer),\n"
        "                scale=isinstance(scale, jax.core.Tracer))\n"
        "    return x * scale\n\n"
        "def unannotated(x, n_steps: int):\n"
        "    return sum(x[t] for t in range(n_steps))\n",
        "probe.py", "exec", dont_inherit=True,
    ), space)
    jdc.jit(space["probe"])(X, 3, 2.0)
    assert seen == {"x": True, "n_steps": False, "scale": True}
    assert "jax_dataclasses.jit" in TRACING_TRANSFORMS

    text = (
        "import jax.numpy as jnp\nimport jax_dataclasses as jdc\n\n\n@jdc.jit\n"
        "def rollout(x, n_steps: jdc.Static[int], scale: float):\n"
        "    h = jnp.zeros(x.shape[1:])\n    for t in range(n_steps):\n        h = jnp.tanh(h * scale + x[t])\n"
        "    return h\n"
    )
    context = FileContext(parse(text, "m.py"), Settings())
    assert [sorted(t.static_params) for t in context.traced.values()] == [["n_steps"]]
    assert [d.code for d in lint_text(text, "m.py", Settings()) if d.code.startswith("JLF00")] == ["JLF002"]
    traced_count = text.replace("n_steps: jdc.Static[int]", "n_steps: int")
    assert [d.code for d in lint_text(traced_count, "m.py", Settings()) if d.code.startswith("JLF00")] == ["JLF003"]
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        jdc.jit(space["unannotated"])(X, 2)
