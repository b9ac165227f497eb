"""`verify` on the inputs users pass: through the module's entry points, without jit for code
that only the fix makes traceable, with a batch axis unlike the other dimensions, and with the
x64 family required or advisory by the project's own configuration.

Each test verifies a real fix in a worker on JAX and checks what the user reads.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.verify.gate import verify_file
from jaxloopfix.verify.runner import VerifyOptions, run_target
from jaxloopfix.verify.targets import collect_targets
from jaxloopfix.verify.x64_policy import ADVISORY, OFF, REQUIRED, turns_x64_on, x64_policy

pytest.importorskip("jax")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FAST = VerifyOptions(lengths=(4, 7), measure=False, timeout=240)


def _target(path: Path, function: str | None = None, settings: Settings | None = None):
    targets = collect_targets(path, path.read_text(), settings or Settings(), function=function, unsafe=True)
    assert len(targets) == 1, [t.label for t in targets]
    return targets[0]


# ---------------------------------------------------------------- through the entry points


@pytest.mark.parametrize("fixture", ["equinox_module", "flax_linen_rnn", "haiku_transform"])
def test_a_method_or_transformed_function_is_verified_through_the_function_users_call(tmp_path, fixture):
    """`Cell.__call__` reads `self`; `encoder` runs only under `hk.transform`: the module's
    `example_inputs()` names `forward`, which reaches them, so verify compares `forward`."""
    pytest.importorskip({"equinox_module": "equinox", "flax_linen_rnn": "flax", "haiku_transform": "haiku"}[fixture])
    path = tmp_path / f"{fixture}.py"
    shutil.copyfile(FIXTURES / "JLF001" / path.name, path)
    result = run_target(_target(path), FAST)
    assert result["status"] == "equivalent", result["message"]
    assert result["input_source"] == "example_inputs() through `forward`"
    assert "ran with the rewrite in place of its code" in result["message"]


def test_a_rewrite_that_differs_is_caught_through_the_caller(tmp_path):
    """The swap is real: a rewrite changed by one constant differs when run through `forward`."""
    pytest.importorskip("equinox")
    path = tmp_path / "equinox_module.py"
    shutil.copyfile(FIXTURES / "JLF001" / path.name, path)
    target = _target(path)
    target.rewritten[1] = target.rewritten[1].replace("jnp.tanh(", "1.001 * jnp.tanh(", 1)
    assert "1.001" in target.rewritten[1]
    result = run_target(target, FAST)
    assert result["status"] == "mismatch", result["message"]
    assert "through `forward`" in result["message"]


CALLER_THAT_DOES_NOT_REACH = """
    import functools

    import jax
    import jax.numpy as jnp


    class Cell:
        def __init__(self, w):
            self.w = w

        @functools.partial(jax.jit, static_argnums=0)
        def run(self, xs):
            h = jnp.zeros(self.w.shape[0])
            for t in range(xs.shape[0]):
                h = jnp.tanh(h @ self.w + xs[t])
            return h


    def unrelated(x):
        return x * 2.0


    def example_inputs():
        return [("unrelated", (jnp.ones(3),), {})]
"""


def test_an_entry_point_that_never_reaches_the_function_verifies_nothing(tmp_path):
    path = tmp_path / "cell.py"
    path.write_text(textwrap.dedent(CALLER_THAT_DOES_NOT_REACH))
    result = run_target(_target(path), FAST)
    assert result["status"] == "unverified", result
    assert "reads `self`" in result["message"]


# ---------------------------------------------------------------- without jit


@pytest.mark.parametrize(
    ("code", "fixture", "function"),
    [("JLF004", "masked_update", None), ("JLF003", "bare_jit_power", None), ("JLF004", "ternary_and_return", "relu_like")],
)
def test_a_fix_that_makes_the_function_traceable_is_compared_with_it_run_without_jit(tmp_path, code, fixture, function):
    """The original raises under `jit` (that is what the finding says); its values without jit
    are the reference the fix must reproduce, gradients included."""
    path = tmp_path / f"{fixture}.py"
    shutil.copyfile(FIXTURES / code / path.name, path)
    target = _target(path, function)
    result = run_target(target, FAST)
    assert result["status"] == "equivalent", result["message"]
    assert "under jit; compared with it run without jit" in result["message"]

    target.rewritten[1] = target.rewritten[1].replace("return ", "return 1.5 * ", 1)
    assert run_target(target, FAST)["status"] == "mismatch"


# ---------------------------------------------------------------- a batch axis of its own size


RNN_WITH_A_FIXED_STATE = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def final_state(w, xs):
        h = jnp.zeros(4)
        for t in range(xs.shape[0]):
            h = jnp.tanh(w @ h + xs[t])
        return h
"""


def test_a_batch_axis_the_loop_itself_rejects_is_not_held_against_the_fix(tmp_path):
    """With a batch axis of the feature size, `w @ h` would broadcast by coincidence and the
    loop would run where the scan cannot; a batch size unlike every other dimension makes
    the loop reject it too, so the fix is verified on what the function accepts."""
    path = tmp_path / "rnn.py"
    path.write_text(textwrap.dedent(RNN_WITH_A_FIXED_STATE))
    result = run_target(_target(path), FAST)
    assert result["status"] == "equivalent", result["message"]
    assert not any("batch" in case["label"] for case in result["cases"])


# ---------------------------------------------------------------- x64: required or advisory


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('import jax\njax.config.update("jax_enable_x64", True)\n', 2),
        ("[tool.pytest.ini_options]\nenv = [\"JAX_ENABLE_X64=1\"]\n", 2),
        ("from jax.experimental import enable_x64\nwith enable_x64():\n    pass\n", 2),
        ('jax.config.update("jax_enable_x64", args.x64)\n', 1),
        ('jax.config.update("jax_enable_x64", False)\n', None),
        ("JAX_ENABLE_X64=0\n", None),
        ("import jax\n", None),
    ],
)
def test_a_project_turns_x64_on_in_code_configuration_or_environment(text, line):
    assert turns_x64_on(text) == line


def test_the_setting_decides_before_the_search(tmp_path):
    (tmp_path / "conftest.py").write_text('import jax\njax.config.update("jax_enable_x64", True)\n')
    assert x64_policy(None, tmp_path).family == REQUIRED
    assert "conftest.py:2" in x64_policy(None, tmp_path).evidence
    assert x64_policy(False, tmp_path).family == OFF
    assert x64_policy(True, tmp_path / "nowhere").family == REQUIRED
    empty = tmp_path / "other"
    empty.mkdir()
    assert x64_policy(None, empty).family == ADVISORY


def _project(tmp_path: Path, pyproject: str, extra: dict[str, str] | None = None) -> Path:
    """`offset_range`: its rewrite raises with x64 on when `beta` is a NumPy float64."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    # The x64 hazard is the scan's (its carry keeps one dtype); the loop is a linear recurrence,
    # whose default associative form widens as the loop does.
    (tmp_path / "pyproject.toml").write_text(pyproject + 'linear-recurrences = "scan"\n')
    for name, text in (extra or {}).items():
        (tmp_path / name).write_text(text)
    path = tmp_path / "offset_range.py"
    shutil.copyfile(FIXTURES / "JLF001" / path.name, path)
    return path


def _verify_in_project(path: Path):
    from jaxloopfix.config import find_pyproject, load_settings

    settings = load_settings(find_pyproject(path.parent))
    return dict(verify_file(path, path.read_text(), settings, FAST, unsafe=True))["velocity_filter"]


def test_the_x64_family_is_advisory_where_the_project_never_turns_x64_on(tmp_path):
    result = _verify_in_project(_project(tmp_path, "[tool.jaxloopfix]\n"))
    assert result["status"] == "equivalent", result["message"]
    assert result["advisories"] and "with x64 on" in result["advisories"][0]
    assert "does not block the fix" in result["message"] and "x64 = true" in result["message"]


def test_the_x64_family_decides_where_the_project_turns_x64_on(tmp_path):
    conftest = {"conftest.py": 'import jax\njax.config.update("jax_enable_x64", True)\n'}
    result = _verify_in_project(_project(tmp_path, "[tool.jaxloopfix]\n", conftest))
    assert result["status"] == "mismatch", result["message"]
    assert "x64 on" in result["message"]


def test_the_x64_setting_turns_the_family_on_or_off(tmp_path):
    on = _verify_in_project(_project(tmp_path / "on", "[tool.jaxloopfix]\nx64 = true\n"))
    assert on["status"] == "mismatch"
    off = _verify_in_project(_project(tmp_path / "off", "[tool.jaxloopfix]\nx64 = false\n"))
    assert off["status"] == "equivalent" and not any("x64" in c["label"] for c in off["cases"])


# ---------------------------------------------------------------- NumPy scalars for numbers


INT8_TIMES_A_STATIC_INT = """
    from functools import partial

    import jax
    import jax.numpy as jnp


    @partial(jax.jit, static_argnames=("k",))
    def scaled_sum(xs, k: int):
        acc = jnp.zeros(xs.shape[1:], jnp.int8)
        for t in range(xs.shape[0]):
            acc = acc + xs[t] * k
        return acc


    def example_inputs():
        return [("scaled_sum", (jnp.ones((6, 3), jnp.int8),), {"k": 3})]
"""

FLOAT16_WITH_A_DEFAULT_RATE = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def decayed(xs, rate=0.5):
        h = jnp.zeros(xs.shape[1:], jnp.float16)
        for t in range(xs.shape[0]):
            h = h * rate + xs[t]
        return h


    def example_inputs():
        return [("decayed", (jnp.ones((6, 3), jnp.float16),), {})]
"""


@pytest.mark.parametrize(("source", "shown"), [(INT8_TIMES_A_STATIC_INT, "k=i64[]"), (FLOAT16_WITH_A_DEFAULT_RATE, "rate")])
def test_numbers_passed_as_numpy_scalars_are_a_family_of_their_own(tmp_path, source, shown):
    """`np.int64(3)` and `np.float64(0.5)` are strongly typed: the loop's int8/float16 carry widens
    after one step and the scan's cannot. The module's examples pass Python numbers (or leave
    the default), on which both agree; verify also passes NumPy scalars, x64 off."""
    path = tmp_path / "narrow.py"
    path.write_text(textwrap.dedent(source))
    target = _target(path, settings=Settings(linear_recurrences="scan"))
    result = run_target(target, FAST)
    assert result["status"] == "mismatch", result["message"]
    assert "(example_inputs[0], NumPy scalars)" in result["message"] and shown in result["message"]
    assert result["cases"][0]["outputs"]["equal"]  # equal on the module's own example
    # The loop is a linear recurrence: its default fix, the associative form, widens as the loop does.
    associative = run_target(_target(path), FAST)
    assert associative["status"] == "equivalent", associative["message"]


# ---------------------------------------------------------------- axes of size one


RAVELED_CARRY = """
    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    @jax.jit
    def flattened(xs: Float[Array, "T B D"]):
        acc = jnp.zeros(xs.shape[1:])
        for x_t in xs:
            acc = jnp.squeeze(acc + x_t)
        return acc
"""


def test_check_fix_verify_says_what_an_advisory_family_found(tmp_path):
    from jaxloopfix.config import find_pyproject, load_settings
    from jaxloopfix.verify.gate import gate_fixes

    path = _project(tmp_path, "[tool.jaxloopfix]\n")
    gate = gate_fixes(path, path.read_text(), load_settings(find_pyproject(tmp_path)), FAST)
    (note,) = [n for n in gate.notes if "velocity_filter" in n.message]
    assert "fixed (verified equal); with x64 on" in note.message and "does not block the fix" in note.message


STATE_FROM_FIXED_SIZES = """
    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    @jax.jit
    def last_state(W: Float[Array, "H H"], xs: Float[Array, "T ... H"]):
        h = jnp.zeros(W.shape[0])
        for x_t in xs:
            h = jnp.tanh(h @ W + x_t)
        return h
"""


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        # With a `(T, 1, 1)` input the loop squeezes its carry to a scalar after one step (and
        # keeps running, broadcasting it back); the scan cannot. Dimensions of size 4 never show it.
        (RAVELED_CARRY, "xs: f32[4,1,1] (T=4, size-1 axes)"),
        # `"T ... H"` says callers may pass `(T, B, H)`: the loop's state becomes `(B, H)` there,
        # the scan's `zeros(H)` carry cannot.
        (STATE_FROM_FIXED_SIZES, "xs: f32[4,3,4] (T=4, with a batch axis)"),
    ],
)
def test_annotated_inputs_are_widened_to_the_shapes_the_annotation_allows(tmp_path, source, shown):
    pytest.importorskip("jaxtyping")
    path = tmp_path / "annotated.py"
    path.write_text(textwrap.dedent(source))
    result = run_target(_target(path), FAST)
    assert result["status"] == "mismatch", result["message"]
    assert shown in result["message"]


LAYERS_THEN_TIME = """
    import jax
    import jax.numpy as jnp


    @jax.jit
    def stacked(Ws, xs):
        seq = xs
        for W in Ws:
            h = jnp.zeros(xs.shape[1:], xs.dtype)
            outs = []
            for x_t in seq:
                h = jnp.tanh(x_t + h @ W)
                outs.append(h)
            seq = jnp.stack(outs)
        return seq
"""


def test_arrays_a_for_iterates_are_also_tried_as_lists(tmp_path):
    """The fix scans over `Ws`, which a list of matrices (as layer weights often come) breaks:
    guessed inputs do not clear it; the module's own examples, all arrays, do."""
    path = tmp_path / "layers.py"
    path.write_text(textwrap.dedent(LAYERS_THEN_TIME))
    result = run_target(_target(path, "stacked"), FAST)
    assert result["status"] == "mismatch", result["message"]
    assert "Ws: [f32[" in result["message"] and "iterated arrays as lists" in result["message"]
    assert "give the inputs it is called with" in result["message"]

    path.write_text(textwrap.dedent(LAYERS_THEN_TIME) + textwrap.dedent("""
        def example_inputs():
            return [("stacked", (jnp.ones((2, 3, 3)) * 0.1, jnp.ones((5, 3))), {})]
    """))
    assert run_target(_target(path, "stacked"), FAST)["status"] == "equivalent"
