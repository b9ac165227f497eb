"""What `verify` can reach without a factory: methods, loops behind a flag, and inputs the body's uses imply.

Each test writes a small module, verifies its fix in a real worker on JAX, and checks what a user
reads: the status, the inputs used, and why a function was left unverified.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.verify.runner import VerifyOptions, run_target
from jaxloopfix.verify.targets import collect_targets

from fixture_tools import GAE_FROM_A_PYTHON_SCALAR

pytest.importorskip("jax")

FAST = VerifyOptions(lengths=(4, 7), measure=False, timeout=240)


def _verify(
    tmp_path: Path, source: str, function: str | None = None, factory: str | None = None, name: str = "subject",
    settings: Settings | None = None,
):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    targets = collect_targets(path, path.read_text(), settings or Settings(), function=function, unsafe=True, factory=factory)
    assert len(targets) == 1, [t.label for t in targets]
    return targets[0], run_target(targets[0], FAST)


METHOD_WITHOUT_SELF = """
    import jax
    import jax.numpy as jnp


    class Cell:
        def __init__(self, size):
            self.size = size

        @jax.jit
        def run(self, xs, w):
            h = jnp.zeros_like(xs[0])
            outs = []
            for t in range(xs.shape[0]):
                h = jnp.tanh(h @ w + xs[t])
                outs.append(h)
            return jnp.stack(outs)
"""


def test_a_method_that_does_not_read_self_is_verified(tmp_path):
    target, result = _verify(tmp_path, METHOD_WITHOUT_SELF.replace("@jax.jit", "@staticmethod\n        @jax.jit").replace("def run(self, ", "def run("))
    assert target.owner == "Cell" and target.method_kind == "staticmethod"
    assert result["status"] == "equivalent", result["message"]

    target, result = _verify(tmp_path, METHOD_WITHOUT_SELF.replace("@jax.jit", "@jax.jit  # noqa"), name="plain_method")
    assert target.owner == "Cell" and not target.reads_self
    # jax.jit on a method with `self` unhashable would fail; None is what the body gets and never reads.
    assert result["status"] == "equivalent", result["message"]
    assert "xs: f32[4,4]" in result["cases"][0]["inputs"]


METHOD_READING_SELF = """
    from functools import partial

    import jax
    import jax.numpy as jnp


    class Decay:
        def __init__(self, rate):
            self.rate = rate

        @partial(jax.jit, static_argnums=0)
        def __call__(self, xs):
            acc = jnp.zeros(xs.shape[1:])
            outs = []
            for t in range(xs.shape[0]):
                acc = self.rate * acc + xs[t]
                outs.append(acc)
            return jnp.stack(outs)


    def example():
        import jax
        xs = jax.random.normal(jax.random.PRNGKey(1), (6, 3))
        return (Decay(0.5), xs), {}
"""


def test_a_method_that_reads_self_needs_an_instance_from_a_factory(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target, result = _verify(tmp_path, METHOD_READING_SELF, name="decay")
    assert target.reads_self
    assert result["status"] == "unverified"
    assert "`Decay.__call__` reads `self`" in result["message"] and "--example" in result["message"]

    target, result = _verify(tmp_path, METHOD_READING_SELF, factory="decay:example", name="decay")
    assert result["status"] == "equivalent", result["message"]
    assert result["input_source"] == "factory"


def test_two_classes_with_the_same_method_name_are_told_apart(tmp_path):
    source = METHOD_WITHOUT_SELF + METHOD_WITHOUT_SELF.replace("class Cell", "class Other").replace("jnp.tanh", "jnp.sin").split("import jax.numpy as jnp", 1)[1]
    path = tmp_path / "two.py"
    path.write_text(textwrap.dedent(source))
    targets = collect_targets(path, path.read_text(), Settings(), unsafe=True)
    assert sorted(t.owner for t in targets) == ["Cell", "Other"]
    (other,) = collect_targets(path, path.read_text(), Settings(), function="Other.run", unsafe=True)
    assert "jnp.sin" in other.rewritten[1] and "jnp.tanh" not in other.rewritten[1]


BEHIND_A_FLAG = """
    import jax
    import jax.numpy as jnp
    from functools import partial


    def step(h, word, table):
        return jnp.tanh(h + table[:, word])


    @partial(jax.jit, static_argnames="unrolled")
    def encode(h0, words, table, unrolled=False):
        if unrolled:
            h = h0
            for word in words:
                h = step(h, word, table)
            return h
        return h0
"""


def test_a_loop_behind_a_flag_is_reached_by_flipping_the_flag(tmp_path):
    target, result = _verify(tmp_path, BEHIND_A_FLAG)
    assert result["status"] == "equivalent", result["message"]
    inputs = result["cases"][0]["inputs"]
    # `words` indexes `table` inside `step`, one call away: it is built as integers.
    assert "unrolled=True" in inputs and "words: i32[" in inputs


def test_a_loop_no_input_reaches_is_unverified_not_equal(tmp_path):
    source = BEHIND_A_FLAG.replace("if unrolled:", "if h0.shape[0] > 1000:").replace(", unrolled=False", "").replace(
        'static_argnames="unrolled"', "static_argnums=()"
    )
    target, result = _verify(tmp_path, source)
    assert result["status"] == "unverified"
    assert f"the loop at line {target.loops[0][0]} did not run" in result["message"]


SHAPES_FROM_THE_BODY = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def selective(u, delta, A, C):
        b, l, d = u.shape
        dA = jnp.exp(jnp.einsum("bld,dn->bldn", delta, A))
        dBu = jnp.einsum("bld,bld->bld", delta, u)
        x = jnp.zeros((b, d, A.shape[1]))
        ys = []
        for i in range(l):
            x = dA[:, i] * x + dBu[:, i, :, None]
            ys.append(jnp.einsum("bdn,bn->bd", x, C[:, i]))
        return jnp.stack(ys, axis=1)
"""


def test_ranks_and_the_time_axis_come_from_shape_unpacking_and_einsum(tmp_path):
    target, result = _verify(tmp_path, SHAPES_FROM_THE_BODY)
    specs = {s["name"]: s for s in target.signature}
    assert specs["u"]["min_rank"] == 3 and specs["u"]["time_axis"] == 1
    assert specs["delta"]["time_axis"] == 1 and specs["A"]["min_rank"] == 2
    assert result["status"] == "equivalent", result["message"]
    assert "u: f32[4,7,4], delta: f32[4,7,4], A: f32[4,4], C: f32[4,7,4]" in result["cases"][1]["inputs"]


HAIKU_FUNCTION = """
    import haiku as hk
    import jax
    import jax.numpy as jnp


    def embed(feats, width):
        hidden = []
        for t in range(feats.shape[0]):
            hidden.append(jnp.tanh(feats[t]) * 2.0)
        hidden = jnp.stack(hidden)
        return hk.Linear(width, name="project")(hidden)


    def forward(feats):
        return embed(feats, 3)


    model = hk.transform(forward)


    def example():
        feats = jax.random.normal(jax.random.PRNGKey(2), (5, 4))
        return [((feats, 3), {}), ((feats[:3], 3), {})]
"""


def test_a_haiku_function_runs_under_a_transform_with_shared_parameters(tmp_path, monkeypatch):
    pytest.importorskip("haiku")
    monkeypatch.syspath_prepend(str(tmp_path))
    target, result = _verify(tmp_path, HAIKU_FUNCTION, function="embed", factory="haiku_model:example", name="haiku_model")
    assert result["status"] == "equivalent", result["message"]
    assert "under hk.transform with the original's parameters" in result["message"]
    assert all(case["gradients"] is not None for case in result["cases"] if "NumPy scalars" not in case["label"])


MIXED_STATE = """
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp


    class State(NamedTuple):
        key: jax.Array
        buffer: jax.Array
        count: int


    @jax.jit
    def update(state, xs):
        buffer = state.buffer
        for t in range(xs.shape[0]):
            buffer = buffer * 0.5 + jnp.sin(xs[t])
        return state._replace(buffer=buffer, key=jax.random.split(state.key)[0])


    def example():
        state = State(jax.random.PRNGKey(0), jnp.ones(4), 3)
        return (state, jax.random.normal(jax.random.PRNGKey(1), (6, 4))), {}
"""


def test_gradients_cover_float_leaves_of_a_state_that_also_holds_a_key(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target, result = _verify(tmp_path, MIXED_STATE, factory="mixed_state:example", name="mixed_state")
    assert result["status"] == "equivalent", result["message"]
    (case,) = [c for c in result["cases"] if "x64 on" not in c["label"]]
    # The key and the integer are held fixed; the buffer and `xs` are differentiated.
    assert case["gradients"] is not None and case["gradients_skipped"] is None


def test_a_notebook_is_verified_from_its_imports_and_definitions(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from jaxloopfix.cli import main

    cells = [
        "%matplotlib inline\nimport jax\nimport jax.numpy as jnp\nSCALE = 0.5\n",
        # A cell a notebook runs for its side effects: loading data that is not here must not run.
        "data = jnp.load('missing-training-data.npy')\nprint(data.shape)\n",
        "@jax.jit\ndef run(xs):\n    outs = []\n    for t in range(xs.shape[0]):\n        outs.append(jnp.sin(xs[t]) * SCALE)\n    return jnp.stack(outs)\n",
        "run(data)\n",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "rnn study.ipynb").write_text(json.dumps(notebook))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--output-format", "json", "rnn study.ipynb::run"])
    (report,) = json.loads(result.stdout)
    assert report["status"] == "equivalent", report["message"]
    assert "imports, definitions and constants ran" in report["notebook"]
    assert report["function"] == "run" and report["filename"] == "rnn study.ipynb"
    # Nothing is left behind: the module verify imported lived in a temporary directory.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["rnn study.ipynb"]


def test_a_notebook_function_that_needs_a_skipped_statement_says_so(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from jaxloopfix.cli import main

    cells = [
        "import jax\nimport jax.numpy as jnp\nw = jnp.eye(3) * 0.5\n",  # a call: not a plain constant, not run
        "@jax.jit\ndef run(xs):\n    h = jnp.zeros(3)\n    for t in range(xs.shape[0]):\n        h = jnp.tanh(w @ h + xs[t])\n    return h\n",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--output-format", "json", "nb.ipynb::run"])
    (report,) = json.loads(result.stdout)
    assert report["status"] == "error" and "NameError" in report["message"] and "'w'" in report["message"]


NESTED_LOSS = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def train_step(w, xs, ys):
        def loss_fn(w):
            h = jnp.zeros_like(xs[0])
            total = 0.0
            for t in range(xs.shape[0]):
                h = jnp.tanh(w @ h + xs[t])
                total += jnp.sum((h - ys[t]) ** 2)
            return total

        loss, grads = jax.value_and_grad(loss_fn)(w)
        return loss, w - 0.1 * grads
"""


def test_a_nested_function_is_verified_through_the_function_that_defines_it(tmp_path, capsys):
    from jaxloopfix.report.verify import write_verify_full

    target, result = _verify(tmp_path, NESTED_LOSS)
    assert (target.nested, target.runs, target.qualified) == ("loss_fn", "train_step", "train_step.loss_fn")
    assert result["status"] == "equivalent", result["message"]
    assert result["run_through"] == "train_step"
    # The outer function's own inputs: `w` is a matrix (`w @ h`), `xs`/`ys` stepped over.
    assert "w: f32[" in result["cases"][0]["inputs"]
    import sys

    write_verify_full([(target.label, result)], sys.stdout)
    out = capsys.readouterr().out
    assert "subject.py::train_step.loss_fn: equivalent" in out
    assert "run through `train_step`, the function that defines it" in out


def test_a_nested_function_whose_rewrite_differs_is_a_mismatch(tmp_path):
    # `total` starts as a Python scalar and becomes a row after one step: the scan's carry check fails.
    source = NESTED_LOSS.replace("total += jnp.sum((h - ys[t]) ** 2)", "total += (h - ys[t]) ** 2").replace(
        "return total", "return jnp.sum(total)"
    )
    target, result = _verify(tmp_path, source)
    assert target.nested == "loss_fn"
    assert result["status"] == "mismatch", result


def test_synthesized_inputs_also_try_a_batch_axis(tmp_path):
    """A carry that starts as `0.0` stays a scalar on vectors and becomes a vector on `(T, batch)`
    arrays, which the scan rejects: verified on vectors alone, the fix would be called equivalent."""
    _, result = _verify(tmp_path, GAE_FROM_A_PYTHON_SCALAR, settings=Settings(linear_recurrences="scan"))
    assert result["status"] == "mismatch", result["message"]
    assert "with a batch axis" in result["message"] and "carry" in result["message"]
    # GAE is a linear recurrence: its default fix, the associative form, broadcasts the carry
    # against each step's values as the loop does, and runs equal with the batch axis too.
    _, associative = _verify(tmp_path, GAE_FROM_A_PYTHON_SCALAR)
    assert associative["status"] == "equivalent", associative["message"]
    assert any("with a batch axis" in case["label"] for case in associative["cases"])


def test_the_modules_own_examples_come_before_synthesis(tmp_path):
    """`example_inputs()` in the module names the calls its author makes: unbatched here, so the
    fix is equivalent on them and no batch axis is guessed."""
    source = GAE_FROM_A_PYTHON_SCALAR + """
    def example_inputs():
        return [("advantages", (jnp.arange(6.0), jnp.ones(6)), {})]
"""
    _, result = _verify(tmp_path, source)
    assert result["status"] == "equivalent", result["message"]
    assert [case["label"] for case in result["cases"]] == ["example_inputs[0]", "example_inputs[0], x64 on, NumPy scalars"]
