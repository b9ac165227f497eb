"""Differential testing: random jitted loop programs are fixed (unsafe fixes included) and both
versions run on JAX in float64; every offered fix must give the same outputs and gradients.
Programs that must be refused never get a fix.

`JAXLOOPFIX_DIFF_EXAMPLES` sets the number of programs (CI: 36, in three shards; the documented long run
uses `benchmarks/differential.py`); `JAXLOOPFIX_DIFF_REPORT` names a JSON file that
receives the counts. Without it the examples are derandomized: the suite is a gate and
draws the same programs every run; long runs explore with `--hypothesis-seed`.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, seed, settings

from fixture_tools import load_module
from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text
from program_gen import (
    NOT_SAFE_BODIES,
    REFUSED_BODIES,
    Program,
    inputs,
    linear_recurrence_programs,
    loop_programs,
    not_safe_program,
    refused_program,
    refused_programs,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

EXAMPLES = int(os.environ.get("JAXLOOPFIX_DIFF_EXAMPLES", "36"))
# Linear recurrences (`benchmarks/differential.py --linear` runs 1,000).
LINEAR_EXAMPLES = int(os.environ.get("JAXLOOPFIX_LINEAR_EXAMPLES", "12"))
DERANDOMIZE = "JAXLOOPFIX_DIFF_EXAMPLES" not in os.environ
# The programs are drawn in shards that pytest-xdist runs side by side; derandomized, shard k
# draws from seed k, so the gate draws the same programs every run.
SHARDS = 3
COUNTS: Counter[str] = Counter()
MODULES = Path(tempfile.mkdtemp(prefix="jaxloopfix-diff-"))


def _report() -> None:
    target = os.environ.get("JAXLOOPFIX_DIFF_REPORT")
    if target and COUNTS:
        Path(target).write_text(json.dumps(dict(sorted(COUNTS.items())), indent=2))


atexit.register(_report)


def _load(source: str, name: str):
    path = MODULES / f"{name}.py"
    path.write_text(source)
    return load_module(path, name)


def _outputs_and_grads(module, args):
    outputs = module.f(*args)

    def scalar(xs, w):
        leaves = jax.tree_util.tree_leaves(module.f(xs, args[1], w))
        return sum(jnp.sum(jnp.sin(leaf)) for leaf in leaves)

    return outputs, jax.jit(jax.grad(scalar, argnums=(0, 1)))(args[0], args[2])


def _assert_same(expected, actual, label: str) -> None:
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    assert e_tree == a_tree, f"{label}: structure {e_tree} != {a_tree}"
    for e, a in zip(e_leaves, a_leaves, strict=True):
        assert e.shape == a.shape and e.dtype == a.dtype, f"{label}: {e.shape}/{e.dtype} != {a.shape}/{a.dtype}"
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-9, atol=1e-12, err_msg=label)


def _sharded(body, examples: int, shard: int, **strategies):  # noqa: ANN001, ANN202
    """`body` as a Hypothesis test over `strategies`, drawing shard `shard`'s share of `examples`.
    Long runs (one `--hypothesis-seed`, the same for every shard) draw them all in shard 0."""
    if not DERANDOMIZE:
        if shard:
            pytest.skip("a long run draws every program in shard 0")
        return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
            given(**strategies)(body))
    test = settings(max_examples=-(-examples // SHARDS), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])(given(**strategies)(body))
    return seed(shard)(test)


# The last shard is a sweep remainder (`-m slow`), like the other long sweeps.
@pytest.mark.parametrize("shard", [s if s < SHARDS - 1 else pytest.param(s, marks=pytest.mark.slow) for s in range(SHARDS)])
def test_every_offered_fix_runs_equal(shard: int) -> None:
    _sharded(_offered_fix_runs_equal, EXAMPLES, shard, program=loop_programs())()


def _offered_fix_runs_equal(program: Program) -> None:
    note(program.source)
    COUNTS["programs"] += 1
    diagnostics = lint_text(program.source, "gen.py", Settings())
    if not diagnostics:
        COUNTS[f"not reported (evidence: {program.evidence})"] += 1
        if program.evidence == "annotation":
            pytest.fail("a loop over an annotated array argument was not reported")
        return
    fixed, remaining, applied = apply_fixes(program.source, "gen.py", Settings(), unsafe=True)
    if fixed == program.source:
        COUNTS["reported without a fix"] += 1
        return
    note(fixed)
    assert not [d for d in remaining if d.code in ("JLF001", "JLF002") and d.fix is not None]
    assert apply_fixes(fixed, "gen.py", Settings(), unsafe=True)[0] == fixed  # idempotent
    COUNTS["fixed"] += 1
    COUNTS["fixed (safe only)" if all(d.fix.applicability.value == "safe" for d in diagnostics if d.fix) else "fixed (unsafe)"] += 1
    name = f"gen_{COUNTS['programs']}"
    try:
        _run_both(program, fixed, name)
    finally:
        # Thousands of programs in one process: drop their modules and compiled code.
        for suffix in ("_a", "_b"):
            sys.modules.pop(name + suffix, None)
        jax.clear_caches()


def _run_both(program: Program, fixed: str, name: str) -> None:
    original, rewritten = _load(program.source, name + "_a"), _load(fixed, name + "_b")
    with jax.enable_x64(True):
        for length, grads in ((5, True), (8, False)):
            args = tuple(jnp.asarray(a) for a in inputs(length, program.axis, seed=length))
            run = _outputs_and_grads if grads else (lambda module, a: module.f(*a))
            try:
                expected = run(original, args)
            except Exception:  # noqa: BLE001 - the generator wrote a program JAX rejects
                COUNTS["original does not run"] += 1
                return
            _assert_same(expected, run(rewritten, args), f"T={length}")
    COUNTS["fixed and equal"] += 1


def _assert_never_fixed(source: str) -> None:
    fixed, _, applied = apply_fixes(source, "gen.py", Settings(), unsafe=True)
    assert applied == 0 and fixed == source
    loops = [d for d in lint_text(source, "gen.py", Settings()) if d.code in ("JLF001", "JLF002")]
    assert all(d.fix is None and d.no_fix_reason for d in loops), [d.fix.message for d in loops if d.fix]


@settings(max_examples=max(30, EXAMPLES // 4), deadline=None, derandomize=DERANDOMIZE)
@given(case=refused_programs())
def test_refused_shapes_never_get_a_fix(case: tuple[str, str]) -> None:
    kind, source = case
    note(source)
    COUNTS[f"refused program: {kind}"] += 1
    _assert_never_fixed(source)


@pytest.mark.parametrize("kind", sorted(REFUSED_BODIES))
def test_every_refused_kind_never_gets_a_fix(kind: str) -> None:
    """Every kind once (the Hypothesis gate above draws only some of them), both axes."""
    for axis, reverse, extra in ((0, False, ""), (1, True, "acc.append(c0)")):
        _assert_never_fixed(refused_program(kind, axis, reverse, extra))


@pytest.mark.parametrize("kind", sorted(NOT_SAFE_BODIES))
def test_unprovable_kinds_never_get_a_safe_fix(kind: str) -> None:
    for axis in (0, 1):
        source = not_safe_program(kind, axis)
        loops = [d for d in lint_text(source, "gen.py", Settings()) if d.code in ("JLF001", "JLF002")]
        assert loops, "the loop must be reported"
        assert all(d.fix is None or d.fix.applicability.value == "unsafe" for d in loops)
        assert apply_fixes(source, "gen.py", Settings())[2] == 0


@pytest.mark.parametrize("shard", range(SHARDS))
def test_linear_recurrences_become_associative_scans_that_run_equal(shard: int) -> None:
    """Every generated linear recurrence gets the `lax.associative_scan` fix, and the fix runs
    equal to the loop in float64 (values and gradients): within 64 ulps per step of the
    largest magnitude, since the tree regroups the arithmetic."""
    _sharded(_linear_recurrence_runs_equal, LINEAR_EXAMPLES, shard, program=linear_recurrence_programs())()


def _linear_recurrence_runs_equal(program: Program) -> None:
    note(program.source)
    COUNTS["linear programs"] += 1
    fixed = apply_fixes(program.source, "gen.py", Settings(), unsafe=True)[0]
    note(fixed)
    assert "lax.associative_scan(" in fixed, "a linear recurrence did not get the associative form"
    assert apply_fixes(fixed, "gen.py", Settings(), unsafe=True)[0] == fixed  # idempotent
    name = f"linear_{COUNTS['linear programs']}"
    original, rewritten = _load(program.source, name + "_a"), _load(fixed, name + "_b")
    try:
        with jax.enable_x64(True):
            for length, grads in ((5, True), (9, False)):
                args = tuple(jnp.asarray(a) for a in inputs(length, 0, seed=length))
                run = _outputs_and_grads if grads else (lambda module, a: module.f(*a))
                expected, actual = run(original, args), run(rewritten, args)
                e_leaves, a_leaves = jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)
                for e, a in zip(e_leaves, a_leaves, strict=True):
                    assert e.shape == a.shape and e.dtype == a.dtype
                    scale = float(np.max(np.abs(np.asarray(e)), initial=1.0))
                    tolerance = 64 * np.finfo(np.float64).eps * length * scale
                    np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=0, atol=tolerance, err_msg=f"T={length}")
        COUNTS["linear programs equal"] += 1
    finally:
        for suffix in ("_a", "_b"):
            sys.modules.pop(name + suffix, None)
        jax.clear_caches()
