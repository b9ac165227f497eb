"""`jaxloopfix verify` end to end: real subprocess workers on JAX, CPU, small shapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fixture_tools import FIXTURES
from jaxloopfix.cli import main
from jaxloopfix.config import Settings
from jaxloopfix.verify.runner import VerifyOptions, run_target
from jaxloopfix.verify.targets import collect_targets

pytest.importorskip("jax")

FAST = VerifyOptions(lengths=(4, 7), measure=False, timeout=240)


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / f"{name}.py"
    shutil.copy(FIXTURES / "JLF001" / f"{name}.py", target)
    return target


def _target(path: Path, **kwargs):
    # The fixtures' fixes are unsafe (their carries are not proven to keep their type): verify them too.
    kwargs.setdefault("unsafe", True)
    (target,) = collect_targets(path, path.read_text(), Settings(), **kwargs)
    return target


def test_seed_rnn_verifies_through_the_cli(tmp_path, monkeypatch):
    path = _copy(tmp_path, "seed_rnn")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["verify", "--unsafe-fixes", "--output-format", "json", "--lengths", "4,7", f"{path.name}::run_rnn"]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["function"] == "run_rnn"
    assert report["status"] == "equivalent"
    assert report["input_source"] == "example_inputs()"  # the module's own calls
    assert [c["label"] for c in report["cases"]] == [
        "example_inputs[0]", "example_inputs[1]", "example_inputs[0], NumPy scalars", "example_inputs[0], x64 on, NumPy scalars"
    ]
    timings = report["timings"]
    for version in ("original", "rewritten"):
        assert timings[version]["compile_s"] > 0 and timings[version]["jaxpr_eqns"] > 0
    assert timings["original"]["jaxpr_eqns"] > timings["rewritten"]["jaxpr_eqns"]


def test_full_output_names_the_function_and_status(tmp_path, monkeypatch):
    path = _copy(tmp_path, "descending_range")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--unsafe-fixes", "--no-measure", "--lengths", "4,7", path.name])
    assert result.exit_code == 0, result.output
    assert f"{path.name}::discounted_returns: equivalent" in result.stdout


@pytest.mark.parametrize(
    ("fixture", "broken", "why"),
    [
        ("seed_rnn", ("lax.scan(step, h, inputs)", "lax.scan(step, h, inputs[1:])"), "off-by-one offset"),
        ("descending_range", (", reverse=True)", ")"), "wrong reverse order"),
        ("seed_rnn", ("return h, h", "return jnp.zeros_like(h), h"), "dropped carry"),
    ],
)
def test_broken_renderings_are_caught(tmp_path, fixture, broken, why):
    target = _target(_copy(tmp_path, fixture))
    old, new = broken
    assert old in target.rewritten[1], target.rewritten[1]
    target.rewritten[1] = target.rewritten[1].replace(old, new)
    result = run_target(target, FAST)
    assert result["status"] in {"mismatch", "error"}, (why, result)
    assert result["status"] == "mismatch" or "rewritten" in result["message"]


def test_factory_inputs_from_the_command_line(tmp_path, monkeypatch):
    path = _copy(tmp_path, "reversed_range")
    (tmp_path / "gae_inputs.py").write_text(
        "import jax.numpy as jnp\n\n"
        "def make():\n"
        "    r = jnp.linspace(0.0, 1.0, 6)\n"
        "    return (r, jnp.linspace(0.0, 1.0, 7), (jnp.arange(6) % 3 == 0).astype(jnp.float32)), {}\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["verify", "--unsafe-fixes", "--no-measure", "--example", "gae_inputs:make", "--output-format", "json", path.name]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["status"] == "equivalent" and report["input_source"] == "factory"


def test_user_exception_is_an_error_not_a_crash(tmp_path, monkeypatch):
    path = _copy(tmp_path, "seed_rnn")
    path.write_text("raise RuntimeError('boom at import')\n" + path.read_text())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--unsafe-fixes", "--no-measure", "--output-format", "json", path.name])
    assert result.exit_code == 2, result.output
    (report,) = json.loads(result.stdout)
    assert report["status"] == "error" and "boom at import" in report["message"]


def test_timeout_is_an_error(tmp_path):
    path = _copy(tmp_path, "seed_rnn")
    path.write_text("import time\ntime.sleep(30)\n" + path.read_text())
    result = run_target(_target(path), VerifyOptions(lengths=(4,), measure=False, timeout=3))
    assert result["status"] == "error" and "timed out" in result["message"]


def test_check_fix_verify_applies_only_verified_fixes(tmp_path, monkeypatch):
    good = _copy(tmp_path, "seed_rnn").read_text()
    # A second function whose inputs cannot be synthesized: its loop must stay untouched.
    unverifiable = (
        "\n\n@jax.jit\ndef opaque(model, xs: jax.Array):\n    h = jnp.zeros(xs.shape[1])\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        h = model.cell(h, xs[t])\n        outs.append(h)\n    return jnp.stack(outs)\n"
    )
    path = tmp_path / "seed_rnn.py"
    path.write_text(good + unverifiable)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--fix", "--verify", "--unsafe-fixes", path.name])
    text = path.read_text()
    assert "lax.scan(step, h, inputs)" in text  # run_rnn verified and fixed
    assert "for t in range(xs.shape[0]):" in text  # opaque left alone
    assert "opaque" in result.output and "left unfixed" in result.output


@pytest.mark.slow  # timed end-to-end `--tune` runs (25 worker-s): `-m slow`
def test_tune_unroll_reports_a_choice_among_the_candidates(tmp_path, monkeypatch):
    path = _copy(tmp_path, "seed_rnn")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["verify", "--unsafe-fixes", "--tune-unroll", "--lengths", "6", "--no-grad", "--output-format", "json", path.name]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    unroll = report["unroll"]
    # Plain scans by unroll, and (-k) scans with the input product `jnp.dot(x_t, W_x)` hoisted.
    assert {int(k) for k in unroll["runs"]} == {1, 2, 4, 8, 16, -1, -4, -16}
    assert unroll["choice"] in {1, 2, 4, 8, 16, -1, -4, -16}
    assert unroll["gain_vs_1"] >= 1.0 or unroll["choice"] == 1


def test_tuned_unroll_is_written_into_the_fix(tmp_path, monkeypatch):
    import jaxloopfix.verify.gate as gate

    for choice, expected in (
        (8, "lax.scan(step, h, inputs, unroll=8)"),
        (-4, "inputs_projected = jax.vmap(lambda x_t: jnp.dot(x_t, params[\"W_x\"]))(inputs)"),
    ):
        def fake_run_target(target, options, choice=choice):
            assert options.tune_unroll and set(target.rewritten) == {1, 2, 4, 8, 16, -1, -4, -16}
            assert "unroll=8" in target.rewritten[8]
            assert "jax.vmap(" in target.rewritten[-4] and "jax.vmap(" not in target.rewritten[4]
            return {"status": "equivalent", "message": "", "unroll": {"choice": choice, "gain_vs_1": 1.2}}

        monkeypatch.setattr(gate, "run_target", fake_run_target)
        path = _copy(tmp_path, "seed_rnn")
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(main, ["check", "--fix", "--verify", "--unsafe-fixes", "--tune-unroll", path.name])
        assert result.exit_code == 0, result.output
        assert expected in path.read_text()
    assert "lax.scan(step, h, inputs_projected, unroll=4)" in path.read_text()


def test_verify_checks_unsafe_fixes_without_a_flag(tmp_path, monkeypatch):
    """The seed RNN's only fix is unsafe: plain `verify` settles it, `--safe-only` leaves it out."""
    path = _copy(tmp_path, "seed_rnn")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--no-measure", "--lengths", "4,7", path.name])
    assert result.exit_code == 0, result.output
    # The module's own `example_inputs()` come before synthesized guesses.
    assert f"{path.name}::run_rnn: equivalent (example_inputs() inputs)" in result.stdout
    # Which inputs were used, with their shapes, one line per case.
    assert "inputs example_inputs[0]: params: {W_h: f32[4,4], W_x: f32[3,4]" in result.stdout
    assert "inputs: f32[5,3]" in result.stdout
    safe_only = CliRunner().invoke(main, ["verify", "--safe-only", "--no-measure", path.name])
    assert safe_only.exit_code == 0 and safe_only.stdout == ""
    assert "nothing to verify (no safe fix (`--safe-only`))" in safe_only.stderr


def test_a_rewrite_that_raises_where_the_original_runs_is_not_equivalent(tmp_path, monkeypatch):
    """A scalar carry that the loop broadcasts to a row: the annotated inputs make the scan raise."""
    pytest.importorskip("jaxtyping")
    path = tmp_path / "broadcast.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jaxtyping import Array, Float\n\n\n"
        "@jax.jit\ndef total(xs: Float[Array, 'T D']):\n    h = jnp.zeros(())\n"
        "    for t in range(xs.shape[0]):\n        h = jnp.tanh(h * 0.5 + xs[t])\n    return h\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--no-measure", "--output-format", "json", path.name])
    assert result.exit_code == 1, result.output
    (report,) = json.loads(result.stdout)
    assert report["status"] == "mismatch"
    assert report["message"].startswith("not equivalent for inputs of shape xs: f32[5,")
    assert "the rewritten function raised" in report["message"]


def test_unverified_says_why(tmp_path, monkeypatch):
    path = tmp_path / "opaque.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef opaque(model, xs: jax.Array):\n"
        "    h = jnp.zeros(xs.shape[1])\n    outs = []\n    for t in range(xs.shape[0]):\n"
        "        h = model.cell(h, xs[t])\n        outs.append(h)\n    return jnp.stack(outs)\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "--no-measure", path.name])
    assert f"{path.name}::opaque: unverified" in result.stdout, result.output
    assert "no input factory (`--example MODULE:FUNCTION`)" in result.stdout


def test_check_fix_verify_applies_verified_unsafe_fixes_without_the_flag(tmp_path, monkeypatch):
    """`--fix --verify` settles unsafe fixes by running them: the seed RNN's (unsafe, equal on its
    `example_inputs()`) is applied; a GAE whose carry starts as `0.0` gets the associative form,
    equal on vectors and on `(T, batch)` arrays. Written as a scan (equal on vectors, raising on
    `(T, batch)` arrays) it is left, with what verify said."""
    rnn = _copy(tmp_path, "seed_rnn")
    gae = tmp_path / "gae.py"
    gae.write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef advantages(rewards, values):\n    adv = 0.0\n"
        "    out = []\n    for t in reversed(range(rewards.shape[0])):\n        adv = rewards[t] - values[t] + 0.9 * adv\n"
        "        out.append(adv)\n    return jnp.stack(out[::-1])\n"
    )
    before = gae.read_text()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--verify", rnn.name, gae.name])
    assert "lax.scan(step, h, inputs)" in rnn.read_text(), result.output
    assert "lax.associative_scan(" in gae.read_text(), result.output
    gae.write_text(before)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxloopfix]\nlinear-recurrences = "scan"\n')
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--verify", gae.name])
    assert gae.read_text() == before
    assert "advantages" in result.output and "with a batch axis" in result.output


EMA = '''import jax
import jax.numpy as jnp


@jax.jit
def smooth(xs: jax.Array):
    h = jnp.zeros_like(xs[0])
    outs = []
    for t in range(xs.shape[0]):
        h = 0.9 * h + 0.1 * xs[t]
        outs.append(h)
    return jnp.stack(outs)
'''


@pytest.mark.slow  # timed end-to-end `--tune` runs (25 worker-s): `-m slow`
def test_tune_measures_the_associative_form_of_a_linear_recurrence(tmp_path, monkeypatch):
    """For `h = a * h + b`, `--tune` also measures `lax.associative_scan`, checked equal to
    the loop on the same inputs before it may be chosen, and says what it chose and why."""
    path = tmp_path / "ema.py"
    path.write_text(EMA)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["verify", "--unsafe-fixes", "--tune", "--lengths", "6", "--no-grad", "--output-format", "json", path.name]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["status"] == "equivalent"
    unroll = report["unroll"]
    assert {int(k) for k in unroll["runs"]} == {0, 1, 2, 4, 8, 16}
    assert unroll["associative"] == "equivalent on every case" and "excluded" not in unroll
    text = CliRunner().invoke(main, ["verify", "--unsafe-fixes", "--tune", "--lengths", "6", "--no-grad", path.name])
    assert "tuned: wrote `lax." in text.stdout and "`lax.associative_scan`" in text.stdout


def test_tuned_form_is_written_into_the_fix(tmp_path, monkeypatch):
    """The form `--tune` measured fastest is the one written: the associative form, or a
    plain scan (with its unroll) where the scan won on this backend."""
    import jaxloopfix.verify.gate as gate

    for choice, expected in ((0, "lax.associative_scan("), (4, "unroll=4)")):
        def fake_run_target(target, options, choice=choice):
            assert set(target.rewritten) == {0, 1, 2, 4, 8, 16}
            assert "associative_scan" in target.rewritten[0] and "associative_scan" not in target.rewritten[1]
            runs = {k: {"run_median_s": 1e-3, "compile_s": 0.1} for k in target.rewritten}
            return {"status": "equivalent", "message": "", "unroll": {"choice": choice, "runs": runs}}

        monkeypatch.setattr(gate, "run_target", fake_run_target)
        path = tmp_path / "ema.py"
        path.write_text(EMA)
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(main, ["check", "--fix", "--verify", "--unsafe-fixes", "--tune", path.name])
        assert result.exit_code == 0, result.output
        assert expected in path.read_text()
        assert "wrote `lax." in result.output


def test_timings_run_on_the_largest_inputs(tmp_path, monkeypatch):
    """The fastest form depends on the trip count, so verify times the longest sequence it built,
    not the last (small) edge case."""
    (tmp_path / "smooth.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef smooth(xs: jax.Array):\n"
        "    total = jnp.zeros_like(xs[0])\n    for t in range(xs.shape[0]):\n"
        "        total = jnp.tanh(total) + xs[t]\n    return total\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["verify", "--unsafe-fixes", "--no-grad", "--output-format", "json", "--lengths", "4,23", "smooth.py"]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)
    assert report["cases"][-1]["label"] != "T=23"  # edge cases come after it
    assert report["timings"]["case"] == "T=23"
