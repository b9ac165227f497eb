"""The verify worker, driven as the parent drives it: one JSON job on stdin, one JSON result on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("jax")

RNN = '''
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=["hidden_dim"])
def run_rnn(params, inputs, hidden_dim):
    h = jnp.zeros(hidden_dim)
    outputs = []
    for i in range(inputs.shape[0]):
        x_t = inputs[i]
        h = jnp.tanh(jnp.dot(x_t, params["W_x"]) + jnp.dot(h, params["W_h"]) + params["b"])
        outputs.append(h)
    return h, jnp.stack(outputs)


def make_inputs():
    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(1), 4)
    params = {
        "W_x": jax.random.normal(k1, (3, 4)) * 0.5,
        "W_h": jax.random.normal(k2, (4, 4)) * 0.5,
        "b": jax.random.normal(k3, (4,)),
    }
    return [((params, jax.random.normal(k4, (6, 3)), 4), {}), ((params, jnp.ones((2, 3)),), {"hidden_dim": 4})]
'''


def rnn_rewrite(step_body: str, scanned: str = "inputs") -> str:
    """The README's scan rewrite of run_rnn, with `step_body` as the step function's body."""
    body = textwrap.indent(textwrap.dedent(step_body).strip(), " " * 8)
    return (
        "from jax import lax\n\n"
        '@partial(jax.jit, static_argnames=["hidden_dim"])\n'
        "def run_rnn(params, inputs, hidden_dim):\n"
        "    h = jnp.zeros(hidden_dim)\n"
        "    def step(h, x_t):\n"
        f"{body}\n"
        f"    h, outputs = lax.scan(step, h, {scanned})\n"
        "    return h, outputs\n"
    )


GOOD_STEP = """
h = jnp.tanh(jnp.dot(x_t, params["W_x"]) + jnp.dot(h, params["W_h"]) + params["b"])
return h, h
"""
GOOD = rnn_rewrite(GOOD_STEP)
OFF_BY_ONE = rnn_rewrite(GOOD_STEP, scanned="inputs[1:]")
DROPPED_CARRY = rnn_rewrite("""
h_new = jnp.tanh(jnp.dot(x_t, params["W_x"]) + jnp.dot(h, params["W_h"]) + params["b"])
return h, h_new
""")
RAISES = rnn_rewrite("""
raise ValueError("boom in the rewrite")
""")

RNN_SIGNATURE = [
    {
        "name": "params",
        "kind": "dict",
        "keys": {
            "W_x": {"name": "W_x", "kind": "array", "rank_hints": [2], "min_rank": 1},
            "W_h": {"name": "W_h", "kind": "array", "rank_hints": [2], "min_rank": 1},
            "b": {"name": "b", "kind": "array", "rank_hints": [1], "min_rank": 1},
        },
    },
    {"name": "inputs", "kind": "array", "time_axis": 0, "min_rank": 1, "rank_hints": [2]},
    {"name": "hidden_dim", "kind": "static_int", "role": "size"},
]


def run_worker(tmp_path: Path, module_source: str, rewritten: str | dict, **job) -> dict:
    """Write the module, run the worker on it, and return the parsed result (stdout must be exactly one JSON)."""
    pkg = tmp_path / "user"
    pkg.mkdir(exist_ok=True)
    (pkg / "model.py").write_text(textwrap.dedent(module_source))
    full = {
        "module_path": str(pkg / "model.py"),
        "module_name": "model",
        "sys_path": [str(pkg)],
        "function": "run_rnn",
        "rewritten": rewritten if isinstance(rewritten, dict) else {"1": rewritten},
        "inputs": {"factory": None, "signature": RNN_SIGNATURE},
        "lengths": [5, 9],
        "grad": True,
        "x64": False,
        "measure": False,
        "tune_unroll": False,
        "platform": "cpu",
    }
    full.update(job)
    proc = subprocess.run(
        [sys.executable, "-m", "jaxloopfix.verify.worker"],
        input=json.dumps(full),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_factory_inputs_equivalent_with_gradients(tmp_path):
    result = run_worker(tmp_path, RNN, GOOD, inputs={"factory": "model:make_inputs", "signature": []})
    assert result["status"] == "equivalent", result["message"]
    assert result["input_source"] == "factory"
    # The factory's cases, then the first with NumPy scalars for its numbers (`hidden_dim=4` as
    # `np.int64(4)`), and again with x64 on (families of their own, outputs only).
    assert [c["label"] for c in result["cases"]] == [
        "factory[0]", "factory[1]", "factory[0], NumPy scalars", "factory[0], x64 on, NumPy scalars"
    ]
    assert all(c["outputs"]["equal"] and c["gradients"]["equal"] for c in result["cases"][:2])
    assert result["max_rel"] < 1e-4


def test_synthesized_inputs_with_a_dict_param(tmp_path):
    """Equal on the synthesized sequences; the loop also runs each sequence of a `(T, batch, D)`
    stack (its state broadcasts to `(batch, H)`), where the scan's `zeros(hidden_dim)` carry
    cannot follow: synthesized inputs alone do not clear the fix."""
    result = run_worker(tmp_path, RNN, GOOD)
    assert result["status"] == "mismatch", result["message"]
    assert result["input_source"] == "synthesized"
    assert "inputs: f32[5,3,4]" in result["message"] and "with a batch axis" in result["message"]
    labels = [c["label"] for c in result["cases"]]
    assert labels == ["T=5", "T=9"]
    assert all(c["outputs"]["equal"] and c["gradients"]["equal"] for c in result["cases"])



ANNOTATED = '''
from __future__ import annotations

import jax
import jax.numpy as jnp


class Dims:
    """Stands in for jaxtyping's Float[Array, "..."], which exposes dim_str and dtypes."""

    def __init__(self, dim_str):
        self.dim_str = dim_str
        self.dtypes = ["bfloat16", "float32", "float64"]


@jax.jit
def run_rnn(xs: Dims("T D"), w: Dims("D D"), h0: Dims("D"), scale: float):
    h = h0
    out = []
    for t in range(xs.shape[0]):
        h = jnp.tanh(xs[t] + h @ w) * jnp.asarray(scale, h.dtype)
        out.append(h)
    return jnp.stack(out)
'''

ANNOTATED_GOOD = '''
from jax import lax

@jax.jit
def run_rnn(xs: Dims("T D"), w: Dims("D D"), h0: Dims("D"), scale: float):
    def step(h, x_t):
        h = jnp.tanh(x_t + h @ w) * jnp.asarray(scale, h.dtype)
        return h, h
    _, out = lax.scan(step, h0, xs)
    return out
'''


def test_annotation_inputs(tmp_path):
    result = run_worker(tmp_path, ANNOTATED, ANNOTATED_GOOD, inputs={"factory": None, "signature": []})
    assert result["status"] == "equivalent", result["message"]
    assert result["input_source"] == "annotations"
    assert result["cases"][1]["label"] == "T=9"
    assert result["cases"][0]["gradients"]["equal"]


def test_off_by_one_rewrite_is_a_mismatch(tmp_path):
    result = run_worker(tmp_path, RNN, OFF_BY_ONE, lengths=[5], grad=False)
    assert result["status"] == "mismatch"
    assert result["message"].startswith("T=5 outputs: ")
    assert "expected" in result["message"] and result["max_abs"] > 1e-3


def test_dropped_carry_update_is_a_mismatch(tmp_path):
    result = run_worker(tmp_path, RNN, DROPPED_CARRY, lengths=[5], grad=False)
    assert result["status"] == "mismatch"
    assert result["message"].startswith("T=5 outputs: ")
    assert "expected" in result["message"] and "got" in result["message"]
    assert result["where"].startswith("T=5 outputs ")
    assert result["max_abs"] > 1e-3


def test_rewrite_that_raises_is_not_equivalent_naming_the_rewrite(tmp_path):
    result = run_worker(tmp_path, RNN, RAISES, inputs={"factory": "model:make_inputs", "signature": []})
    # The original runs on these inputs and the rewrite does not: not equivalent, with the shapes.
    assert result["status"] == "mismatch"
    assert result["message"].startswith("not equivalent for inputs of shape params: {")
    assert "rewritten function raised" in result["message"]
    assert "ValueError: boom in the rewrite" in result["message"]
    assert "<rewritten run_rnn unroll=1>:" in result["message"]


def test_module_that_raises_on_import_is_an_error(tmp_path):
    result = run_worker(tmp_path, "x = 1\nraise RuntimeError('no GPU here')\n", GOOD)
    assert result["status"] == "error"
    assert "importing model raised RuntimeError: no GPU here" in result["message"]
    assert "model.py:2" in result["message"]


PRINTING = RNN.replace("    h = jnp.zeros(hidden_dim)\n", "    print('tracing', hidden_dim)\n    h = jnp.zeros(hidden_dim)\n", 1)


def test_user_prints_do_not_corrupt_the_result(tmp_path):
    source = "import os\nprint('hello from import')\nos.write(1, b'raw fd write\\n')\n" + PRINTING
    result = run_worker(  # run_worker parses stdout as a single JSON
        tmp_path, source, GOOD, measure=True, lengths=[5], grad=False, inputs={"factory": "model:make_inputs", "signature": []}
    )
    assert result["status"] == "equivalent", result["message"]
    assert isinstance(result["timings"], dict)


NO_INPUTS = '''
import jax

@jax.jit
def run_rnn(x):
    return x.not_an_array_method()
'''


def test_no_inputs_found_is_unverified(tmp_path):
    rewritten = "@jax.jit\ndef run_rnn(x):\n    return x.not_an_array_method()\n"
    signature = [{"name": "x", "kind": "unknown"}]
    result = run_worker(tmp_path, NO_INPUTS, rewritten, inputs={"factory": None, "signature": signature})
    assert result["status"] == "unverified"
    assert result["message"].startswith("no inputs found: no input factory (`--example MODULE:FUNCTION`)")
