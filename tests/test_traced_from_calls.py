"""Values returned by calls that received traced arguments are traced (issue 31).

`loss = optax.softmax_cross_entropy(logits, labels).mean()` then `if loss > 10.0:` inside a jitted
function raises `TracerBoolConversionError`; `float(loss)` after `jax.value_and_grad` raises
`ConcretizationTypeError`. JLF004 and JLF006 report them, with the chain of calls in the note
(`traced_reason`). Calls that return Python values, functions or Python containers stay clean.

Every case is also run on JAX: what is reported raises under `jit`, what is not runs.
"""

from __future__ import annotations

import textwrap

import pytest
from fixture_tools import FIXTURES, load_module

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("optax")

TRACED_RULES = frozenset({"JLF003", "JLF004", "JLF005", "JLF006"})


def lint(text: str):
    settings = Settings(select=TRACED_RULES)
    return lint_text(text, "t.py", settings, prefilter=False)


def marked_line(text: str) -> int:
    """The row of the line marked `# expect`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if "# expect" in line)


def run(text: str, call: str):
    namespace: dict = {}
    exec(compile(text, "t.py", "exec"), namespace)  # noqa: S102
    return eval(call, namespace)


HEADER = "import functools\nimport jax\nimport jax.numpy as jnp\nimport optax\n"
ARGS = "(jnp.ones((3, 4)), jnp.ones((2, 3)), jnp.eye(4)[:2])"  # params, features, one-hot labels

# name: (source, rule, fragments of the note)
LOUD = {
    "optax_loss_if": (
        """
        @jax.jit
        def f(params, features, labels):
            logits = features @ params
            loss = optax.softmax_cross_entropy(logits, labels).mean()
            if loss > 10.0:  # expect
                params = params * 0.5
            return params
        """,
        "JLF004",
        ["`loss` is traced: returned by `optax.softmax_cross_entropy(logits, labels)`, which received the traced `logits`"],
    ),
    "float_after_value_and_grad": (
        """
        def loss_fn(params, batch):
            features, labels = batch
            return optax.softmax_cross_entropy(features @ params, labels).mean()

        @jax.jit
        def f(params, features, labels):
            loss, grads = jax.value_and_grad(loss_fn)(params, (features, labels))
            logged = float(loss)  # expect
            return params - 0.1 * grads, logged
        """,
        "JLF006",
        ["`loss` is traced: returned by `jax.value_and_grad(loss_fn)(params, (features, labels))`, which received the traced `params`"],
    ),
    "project_helper": (
        """
        def penalty(w, scale):
            return scale * optax.l2_loss(w).sum()

        @jax.jit
        def f(params, features, labels):
            reg = penalty(params, 0.1)
            if reg > 1.0:  # expect
                params = params / reg
            return params
        """,
        "JLF004",
        ["`reg` is traced: returned by `penalty(params, 0.1)`, which received the traced `params`"],
    ),
    "method_mean_on_a_call": (
        """
        @jax.jit
        def f(params, features, labels):
            if optax.l2_loss(features @ params, labels).mean() > 1.0:  # expect
                params = -params
            return params
        """,
        "JLF004",
        ["returned by `optax.l2_loss(features @ params, labels)`, which received the traced `features @ params`"],
    ),
    "method_item_on_a_call": (
        """
        @jax.jit
        def f(params, features, labels):
            norm = optax.safe_norm(params, 0.0)
            return params, norm.item()  # expect
        """,
        "JLF006",
        ["`norm` is traced: returned by `optax.safe_norm(params, 0.0)`, which received the traced `params`"],
    ),
    "tuple_unpacking_from_a_helper": (
        """
        def forward(params, features):
            hidden = jnp.tanh(features @ params)
            return hidden, optax.l2_loss(hidden).sum()

        @jax.jit
        def f(params, features, labels):
            hidden, energy = forward(params, features)
            if energy > 5.0:  # expect
                hidden = hidden * 0.5
            return hidden
        """,
        "JLF004",
        ["`energy` is traced: returned by `forward(params, features)`, which received the traced `params`"],
    ),
    "grad_of_a_function": (
        """
        def loss_fn(params, features):
            return jnp.sum(jnp.sin(features @ params))

        @jax.jit
        def f(params, features, labels):
            grads = jax.grad(loss_fn)(params, features)
            if grads[0, 0] > 0:  # expect
                params = params - grads
            return params
        """,
        "JLF004",
        ["`grads` is traced: returned by `jax.grad(loss_fn)(params, features)`, which received the traced `params`"],
    ),
    "vmap_of_a_function": (
        """
        @jax.jit
        def f(params, features, labels):
            rows = jax.vmap(jnp.linalg.norm)(features)
            print(rows)  # expect
            return params
        """,
        "JLF006",
        ["`rows` is traced: returned by `jax.vmap(jnp.linalg.norm)(features)`, which received the traced `features`"],
    ),
    "while_on_a_library_result": (
        """
        @jax.jit
        def f(params, features, labels):
            while optax.safe_norm(params, 0.0) > 1.0:  # expect
                params = params * 0.5
            return params
        """,
        "JLF004",
        ["`optax.safe_norm(params, 0.0)` is traced: it received the traced `params`"],
    ),
}


@pytest.mark.parametrize("name", sorted(LOUD))
def test_values_returned_by_calls_are_traced(name):
    body, code, fragments = LOUD[name]
    text = HEADER + textwrap.dedent(body)
    found = [(d.code, d.location.row) for d in lint(text)]
    assert found == [(code, marked_line(text))], found
    (diagnostic,) = lint(text)
    note = diagnostic.traced_reason or ""
    assert note.startswith("`f` is traced: decorated with `@jax.jit`"), note
    for fragment in fragments:
        assert fragment in note, (fragment, note)


@pytest.mark.parametrize("name", sorted(LOUD))
def test_reported_cases_really_fail_under_jit(name, capsys):
    body, _, _ = LOUD[name]
    text = HEADER + textwrap.dedent(body)
    if name == "vmap_of_a_function":
        run(text, f"f{ARGS}")
        assert "Tracer" in capsys.readouterr().out  # print shows a tracer, not values
        return
    with pytest.raises(jax.errors.ConcretizationTypeError):  # TracerBoolConversionError is one
        run(text, f"f{ARGS}")


# Calls that return Python values, functions or Python containers, whatever they are given.
QUIET = {
    "python_values_of_traced_arguments": """
        @jax.jit
        def f(params, features, labels):
            if len(features) > 1 and features.shape[0] > 1 and features.ndim == 2 and features.dtype == jnp.float32:
                params = params + 1
            if isinstance(features, jax.Array) or type(features) is int or hasattr(features, "shape"):
                params = params + 1
            if jnp.shape(features)[0] > 1 and jnp.ndim(features) == 2 and callable(features) is False and id(features):
                params = params + 1
            return params
        """,
    "string_formatting": """
        @jax.jit
        def f(params, features, labels):
            text = "{}".format(features)
            label = "loss %s" % features
            joined = ", ".join([str(features.shape)])
            if text and label and joined and f"{features}":
                params = params + 1
            return params
        """,
    "tree_structure_and_eval_shape": """
        def loss_fn(params, features):
            return jnp.sum(features @ params)

        @jax.jit
        def f(params, features, labels):
            if jax.tree_util.tree_structure(params) == jax.tree_util.tree_structure(features):
                params = params + 1
            if jax.eval_shape(loss_fn, params, features).shape == ():
                params = params + 1
            shapes = jax.tree_util.tree_map(lambda x: x.shape, (params, features))
            if shapes[0][0] == 3:
                params = params + 1
            return params
        """,
    "tree_leaves_and_flatten": """
        @jax.jit
        def f(params, features, labels):
            leaves = jax.tree_util.tree_leaves({"w": params, "x": features})
            if leaves:
                params = params + 1
            flat, treedef = jax.tree_util.tree_flatten((params, features))
            if flat and treedef.num_leaves == 2:
                params = params + 1
            return params
        """,
    "containers": """
        @jax.jit
        def f(params, features, labels):
            d = dict(w=params)
            pair = (params, features)
            items = list(pair)
            more = {"x": features}
            if d and pair and items and more and not [features]:
                params = params + 1
            return params
        """,
    "functions_not_values": """
        def loss_fn(params, features):
            return jnp.sum(features @ params)

        @jax.jit
        def f(params, features, labels):
            compiled = jax.jit(loss_fn)
            grad_fn = jax.grad(loss_fn)
            bound = functools.partial(loss_fn, params)
            if compiled and grad_fn and bound:
                params = params + 1
            return params
        """,
    "static_arguments_only": """
        def warmup(steps, total):
            return min(steps, total) / total

        @functools.partial(jax.jit, static_argnames=("steps",))
        def f(params, features, labels, steps=3):
            optimizer = optax.adam(1e-3)
            if warmup(steps, features.shape[0]) > 0.5 and optimizer and max(steps, features.shape[0]) > 1:
                params = params * 2
            return params
        """,
    "identity_tests": """
        @jax.jit
        def f(params, features, labels):
            loss = optax.l2_loss(features @ params).mean()
            if loss is None or labels is not None:
                params = params + 1
            return params
        """,
    "helpers_returning_python_values": """
        def batch_size(features):
            return features.shape[0]

        def split(params, features):
            return params * 2, len(features)

        def log(value):
            print("logged")

        @jax.jit
        def f(params, features, labels):
            if batch_size(features) > 1:
                params = params + 1
            doubled, n = split(params, features)
            if n > 1:
                params = params + doubled
            result = log(params)
            if result is None:
                params = params + 1
            return params
        """,
}


@pytest.mark.parametrize("name", sorted(QUIET))
def test_python_values_functions_and_containers_stay_clean(name):
    text = HEADER + textwrap.dedent(QUIET[name])
    assert [(d.code, d.location.row, d.message) for d in lint(text)] == []


@pytest.mark.parametrize("name", sorted(QUIET))
def test_clean_cases_really_run_under_jit(name):
    text = HEADER + textwrap.dedent(QUIET[name])
    run(text, f"f{ARGS}")


def test_fixtures_raise_under_jit():
    conditions = load_module(FIXTURES / "JLF004" / "loss_from_library_call.py", "calls_jlf004_loss")
    for name, args, kwargs in conditions.example_inputs():
        with pytest.raises(jax.errors.TracerBoolConversionError):
            getattr(conditions, name)(*args, **kwargs)
    conversions = load_module(FIXTURES / "JLF006" / "conversions_of_call_results.py", "calls_jlf006_loss")
    for name, args, kwargs in conversions.example_inputs():
        with pytest.raises(jax.errors.ConcretizationTypeError):
            getattr(conversions, name)(*args, **kwargs)


def test_fixture_notes_name_the_calls():
    path = FIXTURES / "JLF006" / "conversions_of_call_results.py"
    notes = [d.traced_reason for d in lint(path.read_text(encoding="utf-8"))]
    assert len(notes) == 2
    assert "returned by `jax.value_and_grad(loss_fn)(params)`, which received the traced `params`" in notes[0]
    assert "`grad_norm` is traced: returned by `optax.safe_norm(grads, 0.0)`" in notes[1]


def test_a_numba_kernel_called_from_jitted_code_is_not_traced() -> None:
    """`@numba.njit` compiles a function for the host: called from traced code (on NumPy
    values, at trace time) it never runs under a JAX trace, so its loops are not reported,
    and neither are those of what only it calls. The jitted caller's own loop still is."""
    text = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp
        import numba
        import numpy as np


        def scale(mat, i):
            return mat[i, i] * 2.0


        @numba.njit(cache=True)
        def diagonal(mat, out):
            for i in range(mat.shape[0]):
                out[i] = scale(mat, i)


        def host_table(n):
            out = np.empty(n)
            diagonal(np.eye(n), out)
            return out


        @jax.jit
        def apply(xs):
            h = jnp.asarray(host_table(4))
            for t in range(xs.shape[0]):  # expect
                h = jnp.tanh(h + xs[t])
            return h
        """
    )
    found = lint_text(text, "t.py", Settings(), prefilter=False)
    assert [(d.code, d.location.row) for d in found] == [("JLF002", marked_line(text))]
