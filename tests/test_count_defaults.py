"""A count's declared default decides "a few static steps" only when nothing in the module overrides it."""

from __future__ import annotations

import textwrap

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

CLASS = """
import jax
import jax.numpy as jnp


class Refine:
    def __init__(self, w, rounds: int = 2):
        self.w = w
        self.rounds = rounds

    def __call__(self, h):
        for _ in range(self.rounds):
            h = jnp.tanh(h @ self.w)
        return h
{extra}

@jax.jit
def run(w, h):
    return {call}(h)
"""


def _loops(text: str) -> list[str]:
    return [d.code for d in lint_text(textwrap.dedent(text), "m.py", Settings()) if d.code in ("JLF001", "JLF002")]


@pytest.mark.parametrize(
    ("extra", "call", "reported"),
    [
        ("", "Refine(w)", False),  # the default, 2 rounds
        ("", "Refine(w, rounds=3)", False),  # a literal below min-trip-count
        ("", "Refine(w, rounds=50)", True),  # a literal above it
        ("", "Refine(w, 50)", True),  # by position
        ("", "Refine(w, rounds=w.shape[0])", True),  # a value the module does not know
        ("\n\nclass Deep(Refine):\n    rounds = 40\n", "Deep(w)", True),  # a subclass redeclares it
        ("\n    def grow(self):\n        self.rounds += 10\n", "Refine(w)", True),  # assigned again
    ],
)
def test_default_count(extra: str, call: str, reported: bool) -> None:
    assert bool(_loops(CLASS.format(extra=extra, call=call))) is reported


def test_parameter_default_is_the_count_unless_a_call_passes_another() -> None:
    source = """
    import jax
    import jax.numpy as jnp

    def smooth(x, order=2):
        for _ in range(order):
            x = 0.5 * (x + jnp.roll(x, 1))
        return x

    @jax.jit
    def run(x):
        return smooth(x){extra}
    """
    assert _loops(source.format(extra="")) == []
    assert _loops(source.format(extra=" + smooth(x, order=4)")) == []
    assert _loops(source.format(extra=" + smooth(x, 12)")) == ["JLF002"]


def test_a_count_every_call_passes_as_a_literal_is_the_count() -> None:
    """`def smooth(x, order)` with no default: the literals the module's calls pass bound the
    count; a call passing a name, or none of them passing it, leaves it unknown (reported)."""
    source = """
    import jax
    import jax.numpy as jnp

    def smooth(x, order):
        for _ in range(order):
            x = 0.5 * (x + jnp.roll(x, 1))
        return x

    @jax.jit
    def run(x, n):
        return smooth(x, 2){extra}
    """
    assert _loops(source.format(extra="")) == []
    assert _loops(source.format(extra=" + smooth(x, order=3)")) == []
    assert _loops(source.format(extra=" + smooth(x, 12)")) == ["JLF002"]
    assert _loops(source.format(extra=" + smooth(x, n)")) == ["JLF002"]
    assert _loops(source.format(extra=" + smooth(*[x, 2])")) == ["JLF002"]
    # Called where the module's text does not show the count: through `partial`, or an alias.
    assert _loops(source.format(extra="\n\n    long = jax.jit(partial(smooth, order=200))").replace(
        "import jax\n", "import jax\n    from functools import partial\n")) == ["JLF002"]
    assert _loops(source.format(extra="\n\n    g = smooth")) == ["JLF002"]


def test_a_count_passed_through_a_transformed_alias_by_a_local_constant() -> None:
    """`grad_loss = jax.jit(jax.grad(loss), static_argnums=2)` takes `loss`'s parameters in the
    same places, so its calls pass the count too; a local name bound once to a literal (`H, M =
    3, 3`) passes that literal. A name bound twice, rebound, or a parameter stays unknown."""
    source = """
    import jax
    import jax.numpy as jnp

    def loss(w, x, horizon):
        total = 0.0
        for h in range(horizon):
            total = total + jnp.sum(jnp.tanh(x[h] @ w))
        return total

    grad_loss = jax.jit(jax.grad(loss), static_argnums=2)

    def rollout(w, x{param}):
        {bind}
        for _ in range(100):
            w = w - 0.1 * grad_loss(w, x, H)
        return w
    """
    def reported(bind: str, param: str = "") -> bool:
        return _loops(source.format(bind=bind, param=param)) == ["JLF002"]

    assert not reported("H, M = 3, 3")
    assert not reported("H = 4")
    assert reported("H = 30")
    assert reported("H = 3\n        H += 1")
    assert reported("H = x.shape[0]")
    assert reported("pass", param=", H")
    assert reported("H = 3\n        jax.tree.map(grad_loss, [w], [x], [40])")  # the alias passed on
    assert reported("H = 30\n        def note():\n            H = 2\n            return H")  # a nested scope's own `H`
    assert reported("H = 3\n        with open(__file__) as H:\n            pass")  # rebound by `with ... as`
    # JAX agrees the alias takes the wrapped function's parameters in the same places.
    namespace: dict = {}
    exec(textwrap.dedent(source.format(bind="H = 3", param="")), namespace)  # noqa: S102 - the fixed source above
    w = jnp.ones((2, 2))
    assert namespace["grad_loss"](w, jnp.ones((5, 2)), 3).shape == (2, 2)


def test_a_range_from_a_non_negative_start_to_a_small_stop_is_a_few_steps() -> None:
    """`range(i + 1, 3)` inside `range(3)`: at most 3 steps whatever `i` is; a stop of 30, or a
    start that may be negative, gives no such bound."""
    source = """
    import jax
    import jax.numpy as jnp

    @jax.jit
    def pairs(k, x, lo):
        acc = jnp.zeros(x.shape)
        for i in range({outer}):
            for j in range({start}, {stop}):
                acc = acc - jnp.sin(k[i] * k[j] * x) ** 2
        return acc
    """
    assert _loops(source.format(outer=3, start="i + 1", stop=3)) == []
    assert _loops(source.format(outer="2, 3", start="2 * i", stop=3)) == []
    assert _loops(source.format(outer=3, start="i + 1", stop=30)) == ["JLF002"]
    assert _loops(source.format(outer=3, start="i - 40", stop=3)) == ["JLF002"]
    assert _loops(source.format(outer="-1, 3", start="i", stop=3)) == ["JLF002"]
    rebound = source.replace("        for j in", "        i -= 40\n        for j in")
    assert _loops(rebound.format(outer=3, start="i", stop=3)) == ["JLF002"]  # `i` is no longer the range's value


def test_a_config_objects_default_is_not_the_count() -> None:
    """`range(self.hparams.num_epochs)` with `num_epochs: int = 1` on a config class: a config
    exists to be set per experiment, so its default is no evidence of a few steps."""
    source = """
    import jax
    import jax.numpy as jnp
    from dataclasses import dataclass

    @dataclass
    class Hparams:
        num_epochs: int = 1

    class Learner:
        def __init__(self, hparams: Hparams):
            self.hparams = hparams

        def update(self, w, x):
            for _ in range(self.hparams.num_epochs):
                w = w - 0.1 * jnp.tanh(x @ w)
            return w

    @jax.jit
    def run(w, x):
        return Learner(Hparams()).update(w, x)
    """
    assert _loops(source) == ["JLF002"]


THREADED = """
import flax.linen as nn
import jax
import jax.numpy as jnp


class Mixer(nn.Module):
    streams: int = 3

    def __call__(self, xs):
        h = xs[0]
        for _ in range(self.streams):
            h = jnp.tanh(h @ xs)
        return h


{parent}
@jax.jit
def run(params, xs):
    return {build}.apply(params, xs)
"""


@pytest.mark.parametrize(
    ("build", "reported"),
    [
        ("Mixer()", False),  # the field's default, 3 streams
        ("Mixer(streams=4)", False),  # a literal below min-trip-count
        ("Mixer(64)", True),  # 64 streams by position: the first field of the generated constructor
        ("Mixer(streams=64)", True),
        ("Block()", True),  # handed `self.streams` by a module built elsewhere: not known here
    ],
)
def test_a_field_default_holds_unless_a_construction_passes_another(build: str, reported: bool) -> None:
    """A class-body field's default is the count unless a construction in the module passes
    another, by keyword or by its position among the fields (`Mixer(64)`); a value handed down
    from a parent module's field (`Mixer(streams=self.streams)`) is set where the parent is built."""
    parent = PARENT if build.startswith("Block") else ""
    assert bool(_loops(THREADED.format(parent=parent, build=build))) is reported


PARENT = """
class Block(nn.Module):
    streams: int = 3

    def setup(self):
        self.mixer = Mixer(streams=self.streams)

    def __call__(self, xs):
        return self.mixer(xs)

"""
