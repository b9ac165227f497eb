"""`jaxloopfix record -- COMMAND` keeps what the user's own runs pass to functions with fixable
loops, and `verify` replays it before anything it could guess.

The end-to-end test is the wrong fix `verify` once approved: a GAE whose carry starts as `0.0`,
equal on vectors (the module's own examples) and raising on the `(T, batch)` arrays its tests
pass. Recording the tests makes verify run those.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxloopfix.verify.recorder import describe, replayable

from fixture_tools import GAE_FROM_A_PYTHON_SCALAR

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

GAE = GAE_FROM_A_PYTHON_SCALAR + """
    def example_inputs():
        return [("advantages", (jnp.arange(6.0), jnp.ones(6)), {})]
"""

TESTS = """
    import jax.numpy as jnp

    from gae import advantages


    def test_batched_rollout():
        rewards = jnp.ones((7, 3))
        assert advantages(rewards, rewards * 0.5).shape == (7, 3)
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxloopfix", *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.slow  # records a whole pytest run and verifies from it: about half a minute
def test_a_recorded_test_run_is_what_verify_replays_first(tmp_path):
    # Written as a scan, the GAE breaks on the batched arrays the tests pass (its associative
    # default form does not): the recording is what shows it.
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nlinear-recurrences = "scan"\n')
    (tmp_path / "gae.py").write_text(textwrap.dedent(GAE))
    (tmp_path / "test_gae.py").write_text(textwrap.dedent(TESTS))

    before = _run(["verify", "--no-measure", "--output-format", "json", "gae.py"], tmp_path)
    (report,) = json.loads(before.stdout)
    assert report["status"] == "equivalent" and report["input_source"] == "example_inputs()", before.stdout

    recorded = _run(["record", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_gae.py"], tmp_path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "advantages: 1 call" in recorded.stderr
    stored = json.loads((tmp_path / ".jaxloopfix_cache" / "recorded-v1.json").read_text())
    (name,) = stored
    assert name.endswith("gae.py::advantages")
    (call,) = stored[name]
    assert call["args"]["rewards"] == {"shape": [7, 3], "dtype": "float32"}  # a tracer: shape and dtype, no values

    after = _run(["verify", "--no-measure", "--output-format", "json", "gae.py"], tmp_path)
    assert after.returncode == 1, after.stdout + after.stderr
    (report,) = json.loads(after.stdout)
    assert report["status"] == "mismatch" and report["input_source"] == "recorded"
    assert "rewards: f32[7,3]" in report["message"] and "recorded[0]" in report["message"]


def test_the_command_fails_as_it_would_and_records_what_ran(tmp_path):
    (tmp_path / "gae.py").write_text(textwrap.dedent(GAE))
    (tmp_path / "boom.py").write_text("import sys\nsys.exit(3)\n")
    result = _run(["record", "--", sys.executable, "boom.py"], tmp_path)
    assert result.returncode == 3
    assert "no call" in result.stderr


def test_arguments_are_described_as_the_body_receives_them():
    seen = {}

    def body(xs, gain, n, rate, params, label):
        seen.update({k: describe(v) for k, v in locals().items()})
        return xs * gain

    jax.jit(body, static_argnums=(2, 5))(jnp.ones((5, 2)), 0.5, 3, np.float32(0.25), {"w": jnp.ones(2)}, "a")
    assert seen["xs"] == {"shape": [5, 2], "dtype": "float32"}
    assert seen["gain"] == {"shape": [], "dtype": "float32", "weak": True}  # a Python float, traced
    assert seen["n"] == {"py": "int", "value": 3} and seen["label"] == {"py": "str", "value": "a"}
    assert seen["rate"] == {"shape": [], "dtype": "float32"}  # a NumPy scalar traced: strongly typed
    assert seen["params"] == {"dict": {"w": {"shape": [2], "dtype": "float32"}}}
    assert describe(np.float64(0.5)) == {"shape": [], "dtype": "float64", "numpy_scalar": 0.5}
    assert not replayable(describe(object()))


def test_replay_builds_values_of_the_recorded_kinds():
    from jaxloopfix.verify.inputs import from_recorded

    entry = {
        "positional": ["xs", "gain", "n"],
        "args": {
            "xs": {"shape": [5, 2], "dtype": "int8"},
            "gain": {"shape": [], "dtype": "float32", "weak": True},
            "n": {"py": "int", "value": 3},
            "rate": {"shape": [], "dtype": "float64", "numpy_scalar": 0.25},
        },
    }
    (case,) = from_recorded([entry])
    xs, gain, n = case.args
    assert xs.shape == (5, 2) and xs.dtype == jnp.int8
    assert isinstance(gain, float) and n == 3 and case.static_argnums == (2,)
    assert type(case.kwargs["rate"]) is np.float64 and case.kwargs["rate"] == 0.25
    assert case.label == "recorded[0]"
