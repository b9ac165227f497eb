"""Where verify's inputs come from: factory, annotations, or shapes synthesized from ParamSpecs."""

from __future__ import annotations

import textwrap

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxloopfix.verify import inputs  # noqa: E402
from jaxloopfix.verify.inputs import ArrayT, InputError, StaticT  # noqa: E402


class Dims:
    """A duck-typed jaxtyping annotation (jaxtyping itself may not be installed)."""

    def __init__(self, dim_str: str, dtypes=("float32", "float64")):
        self.dim_str = dim_str
        self.dtypes = list(dtypes)


def test_ranked_product_puts_jointly_likely_choices_first():
    assert list(inputs.ranked_product([2, 2], 10)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert list(inputs.ranked_product([3, 1, 2], 3)) == [(0, 0, 0), (0, 0, 1), (1, 0, 0)]
    assert list(inputs.ranked_product([2, 0], 10)) == []
    assert list(inputs.ranked_product([], 10)) == [()]


@pytest.mark.parametrize(
    "token, entry",
    [("T", "T"), ("seq_len", "T"), ("steps", "T"), ("3", 3), ("batch", inputs.D), ("#d", inputs.D),
     ("...", None), ("*batch", None), ("T-1", "T-1"), ("d+1", f"{inputs.D}+1")],
)
def test_jaxtyping_dims(token, entry):
    assert inputs._dim_entry(token) == entry


def test_annotation_templates():
    assert inputs.annotation_template(Dims("batch T d"), {}, False) == ArrayT((4, "T", 4), "float32")
    assert inputs.annotation_template(Dims("*b T", ["int32"]), {}, False) == ArrayT(("T",), "int32")
    assert inputs.annotation_template(Dims("T D"), {}, True).dtype == "float64"
    spec = {"time_axis": 1, "min_rank": 2, "rank_hints": [3]}
    assert inputs.annotation_template(jax.Array, spec, False) == ArrayT((4, "T", 4), "float32")
    assert inputs.annotation_template(float, {}, False) == StaticT(0.5)
    assert inputs.annotation_template(int, {"role": "size"}, False) == StaticT(4)
    assert inputs.annotation_template(int, {"role": "trip"}, False) == StaticT("T")
    assert inputs.annotation_template(dict, {}, False) is None


def _loop(w, xs, n):
    h = jnp.zeros(n)
    for t in range(xs.shape[0]):
        h = jnp.tanh(xs[t] @ w + h * w[0, 0])
    return h


W_SPEC = {"name": "w", "kind": "array", "rank_hints": [1, 2], "min_rank": 1}
XS_SPEC = {"name": "xs", "kind": "array", "time_axis": 0, "min_rank": 1, "rank_hints": [2]}
N_SPEC = {"name": "n", "kind": "static_int", "role": "size"}


def test_synthesis_skips_candidates_the_original_cannot_trace():
    source, cases = inputs.build_cases(_loop, {"signature": [W_SPEC, XS_SPEC, N_SPEC]}, [5, 9])
    assert source == "synthesized"
    assert [c.label for c in cases] == ["T=5", "T=9", "T=5, with a batch axis", "T=5, size-1 axes"]
    # The loop is batch-polymorphic in `xs` (each row of the result is the loop on that row's
    # sequence), so a batch of a size unlike the others goes after the time axis; `w` stays.
    w, xs, n = cases[2].args
    assert w.shape == (4, 4) and xs.shape == (5, 3, 4)
    w, xs, n = cases[1].args
    assert w.shape == (4, 4) and xs.shape == (9, 4) and n == 4 and xs.dtype == jnp.float32
    assert cases[1].static_argnums == (2,)
    again = inputs.build_cases(_loop, {"signature": [W_SPEC, XS_SPEC, N_SPEC]}, [5, 9])[1]
    assert bool((again[0].args[1] == cases[0].args[1]).all())  # fixed seed


def test_synthesis_prefers_candidates_the_rewrite_also_traces():
    def original(xs):
        return xs.sum()

    def rewrite(xs):
        return xs[:, 0].sum()  # needs rank 2

    spec = [{"name": "xs", "kind": "array", "time_axis": 0, "rank_hints": [1, 2]}]
    _, cases = inputs.build_cases(original, {"signature": spec}, [5], prefer=rewrite)
    assert cases[0].args[0].shape == (5, 4)
    _, cases = inputs.build_cases(original, {"signature": spec}, [5])
    assert cases[0].args[0].shape == (5,)


def test_dict_params_get_ranks_from_their_keys():
    def f(p, xs):
        return xs @ p["W"] + p["b"]

    spec = [
        {"name": "p", "kind": "dict", "keys": {"W": {"kind": "array", "rank_hints": [2]}, "b": {"kind": "array", "rank_hints": [1]}}},
        {"name": "xs", "kind": "array", "time_axis": 0, "rank_hints": [2]},
    ]
    _, cases = inputs.build_cases(f, {"signature": spec}, [5])
    p, xs = cases[0].args
    assert p["W"].shape == (4, 4) and p["b"].shape == (4,) and xs.shape == (5, 4)


def test_annotations_win_when_every_required_param_is_covered():
    def f(xs: Dims("T D"), scale: float, n, k=3):
        return xs * scale

    spec = [{"name": "n", "kind": "static_int", "role": "trip"}]
    source, cases = inputs.build_cases(f, {"signature": spec}, [5, 9])
    assert source == "annotations"
    assert cases[0].args[0].shape == (5, 4) and cases[0].args[1:] == (0.5, 5)
    assert cases[0].static_argnums == (2,)


def test_annotations_are_not_used_when_a_param_is_unannotated():
    def f(xs: Dims("T D"), w):
        return xs @ w

    spec = [{"name": "w", "kind": "array", "rank_hints": [2]}]
    source, _ = inputs.build_cases(f, {"signature": spec}, [5])
    assert source == "synthesized"


def test_annotations_seen_through_jit():
    @jax.jit
    def f(xs: jax.Array):
        return xs[0]

    spec = [{"name": "xs", "kind": "array", "time_axis": 0, "rank_hints": [2]}]
    source, cases = inputs.build_cases(f, {"signature": spec}, [7])
    assert source == "annotations" and cases[0].args[0].shape == (7, 4)


def test_nothing_traces_means_no_cases():
    def f(x):
        return x.no_such_method()

    assert inputs.build_cases(f, {"signature": [{"name": "x", "kind": "unknown"}]}, [5]) == (None, [])


def test_factory(tmp_path, monkeypatch):
    (tmp_path / "facts.py").write_text(
        textwrap.dedent(
            """
            import jax.numpy as jnp

            def one():
                return (jnp.ones(3), 2), {"scale": 0.5}

            def many():
                return [((jnp.ones(3),), {}), ((jnp.zeros(2),), None)]

            def bad():
                return 42

            def raises():
                raise KeyError("missing weights")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    source, cases = inputs.build_cases(None, {"factory": "facts:one"}, [5])
    assert source == "factory" and cases[0].label == "factory"
    assert cases[0].kwargs == {"scale": 0.5} and cases[0].static_argnums == (1,)
    _, cases = inputs.build_cases(None, {"factory": "facts:many"}, [5])
    assert [c.label for c in cases] == ["factory[0]", "factory[1]"] and cases[1].kwargs == {}
    with pytest.raises(InputError, match="must return"):
        inputs.build_cases(None, {"factory": "facts:bad"}, [5])
    with pytest.raises(InputError) as info:
        inputs.build_cases(None, {"factory": "facts:raises"}, [5])
    assert isinstance(info.value.__cause__, KeyError)
