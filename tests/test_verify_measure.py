"""Tests for jaxloopfix.verify.measure: the numbers `verify` reports must be real, fresh and comparable."""

from __future__ import annotations

import json
from functools import partial

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from jaxloopfix.verify import measure as measure_mod  # noqa: E402
from jaxloopfix.verify.measure import choose_unroll, count_eqns, measure, ratios, tune_unroll  # noqa: E402

KEYS = {"trace_lower_s", "compile_s", "jaxpr_eqns", "stablehlo_bytes", "run_median_s", "repeats"}


def loop_rnn(w, xs):
    h = jnp.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = jnp.tanh(xs[t] @ w + h)
    return h


def scan_rnn(w, xs, unroll=1):
    def step(h, x_t):
        return jnp.tanh(x_t @ w + h), None

    return lax.scan(step, jnp.zeros(w.shape[0]), xs, unroll=unroll)[0]


def data(length: int, d: int = 4):
    return jnp.eye(d) * 0.5, jnp.ones((length, d)) * 0.1


def test_measure_returns_every_key_positive_and_json_serialisable():
    result = measure(loop_rnn, data(8), {}, repeats=3)
    assert set(result) == KEYS
    assert all(result[k] > 0 for k in KEYS)
    assert isinstance(result["jaxpr_eqns"], int) and isinstance(result["stablehlo_bytes"], int)
    assert result["repeats"] == 3
    json.dumps(result)


def test_scan_has_fewer_eqns_than_unrolled_loop():
    args = data(50)
    loop, scan = measure(loop_rnn, args, {}, repeats=1), measure(scan_rnn, args, {}, repeats=1)
    assert scan["jaxpr_eqns"] < loop["jaxpr_eqns"]
    assert loop["jaxpr_eqns"] >= 50  # one copy of the body per step
    assert scan["stablehlo_bytes"] < loop["stablehlo_bytes"]


def test_jitted_function_keeps_its_static_args():
    @partial(jax.jit, static_argnames=["n"])
    def f(x, n):
        for _ in range(n):
            x = jnp.sin(x)
        return x

    result = measure(f, (jnp.ones(3),), {"n": 8}, repeats=2)
    assert result["jaxpr_eqns"] == 8

    g = jax.jit(lambda n, x: x * n, static_argnums=0)
    assert measure(g, (3, jnp.ones(3)), {}, repeats=2)["run_median_s"] > 0


def test_plain_function_gets_python_ints_static():
    def f(x, n, *, k, scale):
        for _ in range(n * k):  # fails under jit unless n and k are static
            x = jnp.sin(x)
        return x * scale  # a Python float stays traced

    result = measure(f, (jnp.ones(3), 3), {"k": 3, "scale": 2.0}, repeats=2)
    assert result["jaxpr_eqns"] == 9 + 2  # 9 sin, convert_element_type and mul


def test_caller_named_static_positions():
    def f(x, shape):
        return jnp.broadcast_to(x, shape)  # a shape tuple must be static

    result = measure(f, (jnp.ones(3), (2, 3)), {}, repeats=2, static_argnums=(1,))
    assert result["jaxpr_eqns"] == 1
    versions = {1: f, 2: f}
    assert tune_unroll(versions, (jnp.ones(3), (2, 3)), {}, repeats=1, static_argnums=(-1,))["choice"] in versions


def test_donated_arguments_survive_repeats():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    assert measure(f, (jnp.ones(3),), {}, repeats=3)["repeats"] == 3


def test_each_measurement_traces_and_compiles_afresh():
    args = data(30)
    first = measure(loop_rnn, args, {}, repeats=1)
    second = measure(loop_rnn, args, {}, repeats=1)
    # From a cache both would be microseconds, thousands of times faster than the first. The
    # suite runs with a persistent compilation cache (conftest.py), as users with a cache
    # directory do: the measurement must keep it out too.
    assert second["trace_lower_s"] > 0.05 * first["trace_lower_s"]
    assert second["compile_s"] > 0.05 * first["compile_s"]


def test_count_eqns_descends_into_sub_jaxprs():
    def f(x):
        y = lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * 2, lambda v: jnp.cos(v), x)
        return lax.scan(lambda c, _: (c + 1, None), y, None, length=3)[0]

    jaxpr = jax.make_jaxpr(f)(jnp.ones(2))
    top = len(jaxpr.jaxpr.eqns)
    # cond's two branches (2 + 1 eqns) and scan's body (1 eqn) are counted too.
    assert count_eqns(jaxpr) == top + 3 + 1
    assert count_eqns(jaxpr.jaxpr) == count_eqns(jaxpr)


def test_ratios_divide_original_by_rewritten():
    original = {"trace_lower_s": 2.0, "compile_s": 10.0, "run_median_s": 0.3, "jaxpr_eqns": 800, "stablehlo_bytes": 4000, "repeats": 5}
    rewritten = {"trace_lower_s": 0.5, "compile_s": 0.1, "run_median_s": 0.6, "jaxpr_eqns": 8, "stablehlo_bytes": 0, "repeats": 5}
    r = ratios(original, rewritten)
    assert r["trace_lower_s"] == pytest.approx(4.0)
    assert r["compile_s"] == pytest.approx(100.0)
    assert r["run_median_s"] == pytest.approx(0.5)  # < 1: the rewrite runs slower
    assert r["jaxpr_eqns"] == pytest.approx(100.0)
    assert r["stablehlo_bytes"] is None  # zero denominator
    assert "repeats" not in r
    json.dumps(r)


@pytest.mark.parametrize(
    ("medians", "expected"),
    [
        ({1: 100.0, 2: 99.0, 4: 98.5}, 1),  # within noise: keep the smallest
        ({1: 100.0, 2: 98.0, 4: 96.0}, 2),  # 4 beats 1 by 4% but 2 by only 2%
        ({1: 100.0, 2: 50.0, 4: 60.0}, 2),
        ({1: 100.0, 8: 96.9}, 8),  # 3.1% faster: worth it
        ({1: 100.0, 8: 97.5}, 1),  # 2.5% faster: noise
        ({4: 10.0, 16: 9.0}, 16),
    ],
)
def test_choose_unroll_noise_guard(medians, expected):
    assert choose_unroll(medians) == expected


def test_tune_unroll_with_fake_timings(monkeypatch):
    fake = {1: 100.0, 2: 98.0, 4: 80.0, 8: 79.0}
    versions = {k: partial(scan_rnn, unroll=k) for k in fake}
    by_fn = {id(fn): fake[k] for k, fn in versions.items()}

    def fake_measure(fn, args, kwargs=None, *, repeats=20, static_argnums=None):
        return {"run_median_s": by_fn[id(fn)], "compile_s": 1.0}

    monkeypatch.setattr(measure_mod, "measure", fake_measure)
    result = tune_unroll(versions, data(8), {}, repeats=1)
    assert result["choice"] == 4  # 8 is only 1.25% faster than 4
    assert set(result["runs"]) == set(fake)
    assert result["runs"][8] == {"run_median_s": 79.0, "compile_s": 1.0}
    assert result["gain_vs_1"] == pytest.approx(100.0 / 80.0)


def test_tune_unroll_real_run_picks_a_given_key():
    versions = {k: partial(scan_rnn, unroll=k) for k in (1, 2, 4)}
    result = tune_unroll(versions, data(16), {}, repeats=3)
    assert result["choice"] in versions
    assert set(result["runs"]) == set(versions)
    assert result["gain_vs_1"] >= 1.0  # a k other than 1 is chosen only when it is faster than 1
    json.dumps(result)
