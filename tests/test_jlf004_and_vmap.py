"""JLF004 (traced conditions) and the `jax.vmap` rewrite of map-only JLF001 loops.

JLF004 reports without needing a loop, but the prefilter (jaxloopfix/prefilter.py) only lets
files with loops in traced functions through, so these tests lint with `prefilter=False`.
Regenerate the expected JLF004 outputs with `python tests/test_jlf004_and_vmap.py`.
"""

from __future__ import annotations

import sys

import pytest

from fixture_tools import FIXTURES, fixed_path, load_module, sources
from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Applicability
from jaxloopfix.engine import lint_text
from jaxloopfix.rewrite.edits import apply_edits

ONLY_JLF004 = Settings(select=frozenset({"JLF004"}))
FIXABLE = [p for p in sources("JLF004") if p.stem != "static_conditions"]


def jlf004(text: str, filename: str = "t.py"):
    return [d for d in lint_text(text, filename, ONLY_JLF004, prefilter=False) if d.code == "JLF004"]


def fix_jlf004(text: str, filename: str = "t.py", *, unsafe: bool = True) -> str:
    """Apply JLF004 fixes one at a time (no prefilter) until none applies."""
    for _ in range(20):
        for diagnostic in jlf004(text, filename):
            fix = diagnostic.fix
            if fix is not None and (unsafe or fix.applicability is Applicability.SAFE):
                text = apply_edits(text, fix.edits)
                break
        else:
            return text
    return text


# -- JLF004 reports -------------------------------------------------------------------
EXPECTED = {
    "masked_update": ["Python `if`", "`mask[t]` is traced"],
    "two_branches": ["Python `if`", "`jnp.sum(x)` is traced"],
    "ternary_and_return": ["Conditional expression", "`x.mean()` is traced", "`a.sum()` is traced"],
    "while_halve": ["Python `while`", "`jnp.max(jnp.abs(x))` is traced"],
    "loss_from_library_call": ["Python `if`", "`loss` is traced (in `loss > 1.5`)", "`loss` is traced (in `loss > 1.0`)"],
}


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.stem)
def test_traced_condition_is_reported_with_a_fix(path):
    diagnostics = jlf004(path.read_text(encoding="utf-8"), str(path))
    assert diagnostics
    text = " ".join(d.message for d in diagnostics)
    for fragment in EXPECTED[path.stem]:
        assert fragment in text, (fragment, text)
    assert all("TracerBoolConversionError" in d.message for d in diagnostics)
    assert all(d.fix is not None for d in diagnostics), [d.no_fix_reason for d in diagnostics]
    assert all(d.traced_reason for d in diagnostics)


def test_fix_safety():
    def applicabilities(name):
        path = FIXTURES / "JLF004" / f"{name}.py"
        return [d.fix.applicability for d in jlf004(path.read_text(encoding="utf-8"), str(path))]

    assert applicabilities("masked_update") == [Applicability.SAFE]
    assert applicabilities("two_branches") == [Applicability.SAFE]
    assert applicabilities("while_halve") == [Applicability.UNSAFE]
    # the ternary (jnp.where on arrays) is safe; lax.cond is unsafe
    assert sorted(applicabilities("ternary_and_return")) == [Applicability.SAFE, Applicability.UNSAFE]


def test_where_with_division_or_log_is_unsafe():
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x: jax.Array):\n"
        "    if x.sum() > 0:\n        x = jnp.log(x)\n    return x\n\n"
        "@jax.jit\ndef g(x: jax.Array, y: jax.Array):\n"
        "    if x.sum() > 0:\n        y = x / y\n    return y\n"
    )
    diagnostics = jlf004(source)
    assert len(diagnostics) == 2
    for d in diagnostics:
        assert d.fix.applicability is Applicability.UNSAFE
        assert "gradients" in d.fix.message


@pytest.mark.parametrize(
    "body",
    [
        "    if x and y:\n        x = x + 1\n",
        "    z = x or y\n",
    ],
)
def test_and_or_on_traced_values(body):
    source = "import jax\n\n@jax.jit\ndef f(x, y):\n" + body + "    return x\n"
    diagnostics = jlf004(source)
    assert len(diagnostics) == 1
    assert "`x` is traced" in diagnostics[0].message


def test_elif_and_impure_branches_are_reported_without_a_fix():
    source = (
        "import jax\n\n@jax.jit\ndef f(x):\n"
        "    if x.sum() > 0:\n        print('positive')\n        x = x * 2\n"
        "    if x.mean() > 1:\n        x = x - 1\n    elif x.mean() < -1:\n        x = x + 1\n"
        "    return x\n"
    )
    diagnostics = jlf004(source)
    assert len(diagnostics) == 3
    assert all(d.fix is None and d.no_fix_reason for d in diagnostics)


def test_no_false_positives_on_static_values():
    path = FIXTURES / "JLF004" / "static_conditions.py"
    assert jlf004(path.read_text(encoding="utf-8"), str(path)) == []


def test_untransformed_helpers_are_not_reported():
    source = "import jax\n\ndef helper(x):\n    if x.sum() > 0:\n        x = -x\n    return x\n"
    assert jlf004(source) == []


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.stem)
def test_fix_matches_expected_file(path):
    expected = fixed_path(path).read_text(encoding="utf-8")
    fixed = fix_jlf004(path.read_text(encoding="utf-8"), str(path))
    assert fixed == expected
    assert jlf004(fixed, str(path)) == []


# -- running fixes on JAX -------------------------------------------------------------
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")


def _assert_same(expected, actual, what):
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual), what
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
        e, a = np.asarray(e), np.asarray(a)
        assert e.shape == a.shape and e.dtype == a.dtype, what
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=2e-6, err_msg=what)


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.stem)
def test_original_fails_under_jit_and_fix_matches_eager_run(path):
    original = load_module(path, f"jlf004_original_{path.stem}")
    rewritten = load_module(fixed_path(path), f"jlf004_fixed_{path.stem}")
    for name, args, kwargs in original.example_inputs():
        with pytest.raises(jax.errors.JAXTypeError if hasattr(jax.errors, "JAXTypeError") else Exception):
            getattr(original, name)(*args, **kwargs)
        with jax.disable_jit():  # eager: the Python `if` sees concrete values
            expected = getattr(original, name)(*args, **kwargs)
        actual = getattr(rewritten, name)(*args, **kwargs)
        _assert_same(expected, actual, f"{path.name}::{name}")


def test_safe_where_fix_has_the_same_gradient():
    path = FIXTURES / "JLF004" / "two_branches.py"
    original = load_module(path, "jlf004_grad_original")
    rewritten = load_module(fixed_path(path), "jlf004_grad_fixed")
    for _, (x, scale), _ in original.example_inputs():
        def loss(fn):
            return lambda x, s: jnp.sum(jnp.sin(fn(x, s)))

        with jax.disable_jit():
            expected = jax.grad(loss(original.flip_if_negative.__wrapped__), argnums=(0, 1))(x, scale)
        actual = jax.grad(loss(rewritten.flip_if_negative), argnums=(0, 1))(x, scale)
        _assert_same(expected, actual, "two_branches gradient")


def test_masking_fix_then_loop_fix_compose():
    """After the jnp.where fix the masked loop is an ordinary carry loop: JLF002 rewrites it as a scan."""
    from fixture_tools import fix

    path = FIXTURES / "JLF004" / "masked_update.py"
    text = fix(fix_jlf004(path.read_text(encoding="utf-8"), str(path)), str(path))
    assert "lax.scan" in text and "jnp.where(mask[t], new_h, h)" in text
    namespace: dict = {}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102
    original = load_module(path, "jlf004_compose_original")
    for name, args, kwargs in original.example_inputs():
        with jax.disable_jit():
            expected = getattr(original, name)(*args, **kwargs)
        _assert_same(expected, namespace[name](*args, **kwargs), "masked_update composed")


# -- vmap -----------------------------------------------------------------------------
VMAP = [p for p in sources("JLF001") if p.stem.startswith("vmap_") and p.stem != "vmap_decorated"]


def test_there_are_vmap_fixtures():
    assert len(VMAP) >= 5


@pytest.mark.parametrize("path", VMAP, ids=lambda p: p.stem)
def test_map_only_loops_become_vmap(path):
    diagnostics = lint_text(path.read_text(encoding="utf-8"), str(path), Settings())
    assert [d.code for d in diagnostics] == ["JLF001"]
    assert "jax.vmap" in diagnostics[0].message and "jax.vmap" in diagnostics[0].fix.message
    fixed = fixed_path(path).read_text(encoding="utf-8")
    assert "vmap(" in fixed and "lax.scan" not in fixed and "for " not in fixed.split("def example_inputs")[0]


@pytest.mark.parametrize("path", [p for p in sources("JLF001") if p not in VMAP], ids=lambda p: p.stem)
def test_loops_with_carries_stay_scans(path):
    """A loop with a carry is never rewritten as a map: it stays a scan, or for a linear
    recurrence becomes its parallel form (which maps only the coefficients, then scans them)."""
    text = fixed_path(path).read_text(encoding="utf-8").split("def example_inputs")[0]
    parallel = "lax.associative_scan(" in text
    assert "lax.scan(" in text or parallel, text
    assert "vmap(" not in text or parallel or path.stem == "vmap_decorated"


def test_vmap_rewrite_keeps_refusals_and_unsafe_reasons():
    refused = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(xs: jax.Array):\n    outs = []\n"
        "    for t in range(xs.shape[0]):\n        print(t)\n        outs.append(xs[t] * 2)\n    return jnp.stack(outs)\n"
    )
    (d,) = lint_text(refused, "t.py", Settings())
    assert d.fix is None and "`print`" in d.no_fix_reason
    unproven = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(xs: jax.Array, ys: jax.Array):\n    outs = []\n"
        "    for x, y in zip(xs, ys):\n        outs.append(x * y)\n    return jnp.stack(outs)\n"
    )
    (d,) = lint_text(unproven, "t.py", Settings())
    assert d.fix.applicability is Applicability.UNSAFE and "jax.vmap" in d.fix.message and "zip" in d.fix.message


def test_vmap_adds_import_jax_when_only_jnp_is_imported():
    from fixture_tools import fix

    source = (
        "import jax.numpy as jnp\nfrom jax import jit\n\n@jit\ndef f(xs: jnp.ndarray, w):\n    outs = []\n"
        "    for x in xs:\n        outs.append(jnp.dot(x, w))\n    return jnp.stack(outs)\n"
    )
    fixed = fix(source, "t.py")
    assert "import jax\n" in fixed and "jax.vmap(lambda x: jnp.dot(x, w))(xs)" in fixed
    namespace: dict = {}
    exec(compile(fixed, "t.py", "exec"), namespace)  # noqa: S102
    xs, w = jnp.arange(12.0).reshape(4, 3), jnp.ones(3)
    np.testing.assert_allclose(namespace["f"](xs, w), xs @ w)


if __name__ == "__main__":
    for p in sources("JLF004"):
        if p.stem == "static_conditions":
            continue
        fixed_path(p).write_text(fix_jlf004(p.read_text(encoding="utf-8"), str(p)), encoding="utf-8")
        print("wrote", fixed_path(p), file=sys.stderr)


FILTERED = """
import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float


@eqx.filter_jit
def solve(y, x: Float[Array, "n"], options, flag=False):
    if options.dense or flag:
        y = y * 2
    if x.sum() > 0:
        y = -y
    if jnp.max(y) > 1:
        y = y / 2
    if x > 0:
        y = y + 1
    if y.shape[0] > 2 and y[0] > 0:
        y = y - 1
    return y
"""


def test_filter_jit_keeps_python_arguments_static():
    """`eqx.filter_jit` traces array leaves only: a branch on an argument with no array evidence
    (`options.dense`, `flag`) is fine there, while values computed with JAX, an annotated array
    argument and an argument used as an array before the branch are still reported. The same
    function under `jax.jit` has every argument traced."""
    found = [d.message.split(": ", 1)[1].split(";")[0] for d in jlf004(FILTERED)]
    assert found == [
        "`x.sum()` is traced (in `x.sum() > 0`)",
        "`jnp.max(y)` is traced (in `jnp.max(y) > 1`)",
        "`x` is traced (in `x > 0`)",
        "`y[0]` is traced (in `y.shape[0] > 2 and y[0] > 0`)",
    ]
    under_jit = jlf004(FILTERED.replace("@eqx.filter_jit", "@jax.jit").replace("import equinox as eqx", "import jax"))
    assert any("`options.dense` is traced" in d.message for d in under_jit)
