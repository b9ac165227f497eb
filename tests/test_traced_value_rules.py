"""JLF003 (traced trip count), JLF005 (traced slice) and JLF006 (host conversion).

Fixtures live in fixtures/JLF003, fixtures/JLF005 and fixtures/JLF006; a fixture with a
`.fixed.py` twin is fixable, the others are reported without a fix. Files without a loop are
linted with `prefilter=False` (the prefilter only passes files with loops in traced code).
Regenerate the expected outputs with `python tests/test_traced_value_rules.py` and review them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_tools import FIXTURES, fixed_path, load_module, sources  # noqa: E402
from jaxloopfix.config import Settings  # noqa: E402
from jaxloopfix.diagnostics import Applicability  # noqa: E402
from jaxloopfix.engine import lint_text  # noqa: E402
from jaxloopfix.rewrite.edits import apply_edits, overlaps  # noqa: E402
from jaxloopfix.rules import RULES_BY_CODE  # noqa: E402

CODES = ("JLF003", "JLF005", "JLF006")
ALL = [(code, p) for code in CODES for p in sources(code)]
FIXABLE = [(code, p) for code, p in ALL if fixed_path(p).exists()]


def _ids(pairs):
    return [f"{code}/{p.stem}" for code, p in pairs]


def lint(text: str, filename: str = "t.py", code: str | None = None):
    settings = Settings() if code is None else Settings(select=frozenset({code}))
    return lint_text(text, filename, settings, prefilter=False)


def fix_text(text: str, filename: str, code: str | None = None) -> str:
    """Apply every (unsafe included) fix of `code` (all rules: None) until none applies, without the prefilter.

    Fixtures are fixed with their own rule only: once JLF003 makes a trip count static, JLF001/JLF002
    may rewrite the loop into `lax.scan` in a later pass, which their own fixtures already cover."""
    for _ in range(10):
        chosen = []
        for diagnostic in lint(text, filename, code):
            if diagnostic.fix is None or overlaps(diagnostic.fix.edits, chosen):
                continue
            chosen.extend(diagnostic.fix.edits)
        if not chosen:
            return text
        text = apply_edits(text, chosen)
    return text


def test_rules_are_registered_with_docs():
    for code in CODES:
        rule = RULES_BY_CODE[code]
        doc = rule.__doc__ or ""
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert section in doc, (code, section)
        assert rule.name and rule.summary


@pytest.mark.parametrize(("code", "path"), ALL, ids=_ids(ALL))
def test_fixture_fires_with_its_code(code, path):
    diagnostics = lint(path.read_text(encoding="utf-8"), str(path))
    assert diagnostics, f"{path.name}: nothing reported"
    assert {d.code for d in diagnostics} == {code}, [(d.code, d.message) for d in diagnostics]
    for d in diagnostics:
        assert d.traced_reason and d.extra.get("function")
        assert d.location <= d.end_location
        if fixed_path(path).exists():
            assert d.fix is not None, d.no_fix_reason
            assert d.fix.applicability is Applicability.UNSAFE
        else:
            assert d.fix is None
            if code != "JLF006":
                assert d.no_fix_reason and f"(no fix: {d.no_fix_reason})" in d.message


@pytest.mark.parametrize(("code", "path"), FIXABLE, ids=_ids(FIXABLE))
def test_fix_matches_expected_and_is_idempotent(code, path):
    expected = fixed_path(path).read_text(encoding="utf-8")
    assert fix_text(path.read_text(encoding="utf-8"), str(path), code) == expected
    assert fix_text(expected, str(path), code) == expected
    assert lint(expected, str(path), code) == []
    # With every rule, the fixed file is clean apart from scan rewrites of now-static loops.
    assert {d.code for d in lint(expected, str(path))} <= {"JLF001", "JLF002"}


# -- running the fixes on JAX ---------------------------------------------------------------
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")


def _assert_same(expected, actual, what):
    assert jax.tree_util.tree_structure(expected) == jax.tree_util.tree_structure(actual), what
    for e, a in zip(jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(actual)):
        e, a = np.asarray(e), np.asarray(a)
        assert e.shape == a.shape and e.dtype == a.dtype, what
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=2e-6, err_msg=what)


def _modules(code, path):
    original = load_module(path, f"tvr_original_{code}_{path.stem}")
    rewritten = load_module(fixed_path(path), f"tvr_fixed_{code}_{path.stem}")
    return original, rewritten


JLF003_FIXABLE = [(c, p) for c, p in FIXABLE if c == "JLF003"]
JLF005_FIXABLE = [(c, p) for c, p in FIXABLE if c == "JLF005"]


@pytest.mark.parametrize(("code", "path"), JLF003_FIXABLE, ids=_ids(JLF003_FIXABLE))
def test_jlf003_fixed_matches_hand_made_static_version(code, path):
    original, rewritten = _modules(code, path)
    for name, args, kwargs in original.example_inputs():
        before = getattr(original, name)
        with pytest.raises((jax.errors.TracerIntegerConversionError, jax.errors.ConcretizationTypeError)):
            before(*args, **kwargs)
        by_hand = jax.jit(before.__wrapped__, static_argnames=original.STATIC[name])
        _assert_same(by_hand(*args, **kwargs), getattr(rewritten, name)(*args, **kwargs), f"{path.name}::{name}")


@pytest.mark.parametrize(("code", "path"), JLF005_FIXABLE, ids=_ids(JLF005_FIXABLE))
def test_jlf005_fixed_matches_eager_original(code, path):
    original, rewritten = _modules(code, path)
    for name, args, kwargs in original.example_inputs():
        before = getattr(original, name)
        with pytest.raises((IndexError, TypeError, jax.errors.ConcretizationTypeError)):
            before(*args, **kwargs)
        eager = before.__wrapped__(*args, **kwargs)  # Python slicing works outside the trace
        _assert_same(eager, getattr(rewritten, name)(*args, **kwargs), f"{path.name}::{name}")


def test_jlf006_fixtures_really_fail_or_print_tracers(capsys):
    np_mod = load_module(FIXTURES / "JLF006" / "np_asarray.py", "tvr_jlf006_np")
    with pytest.raises(jax.errors.TracerArrayConversionError):
        np_mod.normalise(jnp.ones(3))
    scalars = load_module(FIXTURES / "JLF006" / "scalar_conversions.py", "tvr_jlf006_scalars")
    with pytest.raises(jax.errors.ConcretizationTypeError):
        scalars.summary(jnp.ones(3), 2)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        scalars.loss(jnp.ones(3))
    printing = load_module(FIXTURES / "JLF006" / "print_tracer.py", "tvr_jlf006_print")
    printing.step(jnp.ones(2), 0.1)
    assert "Trace" in capsys.readouterr().out


# -- precision: what must not fire ------------------------------------------------------------
QUIET = {
    "shape_bound": """
import jax, jax.numpy as jnp
@jax.jit
def f(x):
    for i in range(x.shape[0] - 1):
        x = x.at[i].set(x[i + 1])
    return x[1:x.shape[0]], float(x.ndim), len(x), int(x.shape[0])
""",
    "static_and_constants": """
from functools import partial
import jax, jax.numpy as jnp, numpy as np
N = 3
@partial(jax.jit, static_argnums=(1,))
def f(x, n):
    m = n + N
    for _ in range(m):
        x = x * 2
    print("n =", n, np.asarray([n, N]))
    return x[n:n + N], float(n), int(m)
""",
    "helper_and_nested": """
import jax, jax.numpy as jnp
def helper(x, n):
    return x[n:n + 2], float(n)
@jax.jit
def f(x):
    def body(c, t):
        return c, t
    return helper(x, 1), jax.lax.scan(body, 0.0, x)
""",
    "not_traced": """
import numpy as np
def f(x, n):
    for _ in range(n):
        print(float(np.asarray(x)[n:n + 1]))
""",
    "dict_keys_static": """
import jax
@jax.jit
def f(params):
    total = 0.0
    for name, w in params.items():
        if name.startswith("W"):
            total = total + float(len(name))
    for key in params.keys():
        print(key)
    return total
""",
    "comprehension_shadow": """
import jax
@jax.jit
def f(x, i):
    return [float(i) for i in range(3)], x
""",
    # Fields declared static are aux data of the pytree `self`: Python values under jit.
    "pytree_static_fields": """
import dataclasses
import equinox as eqx
import jax, jax.numpy as jnp
from flax import struct
class Planner(struct.PyTreeNode):
    weights: jax.Array
    horizon: int = struct.field(pytree_node=False)
    @jax.jit
    def rollout(self, state):
        for _ in range(self.horizon):
            state = jnp.tanh(self.weights @ state)
        return state[: self.horizon], int(self.horizon)
class Smoother(eqx.Module):
    decay: jax.Array
    passes: int = eqx.field(static=True)
    width: int = dataclasses.field(metadata={"static": True})
    @jax.jit
    def __call__(self, x):
        for _ in range(self.passes):
            x = self.decay * x + (1 - self.decay) * jnp.roll(x, 1)
        return x[: self.width]
""",
}


def test_pytree_fields_without_a_static_declaration_stay_traced():
    source = QUIET["pytree_static_fields"].replace(" = struct.field(pytree_node=False)", "").replace(
        " = eqx.field(static=True)", ""
    )
    codes = sorted(d.code for d in lint(source) if d.code in CODES)
    assert codes == ["JLF003", "JLF003", "JLF005", "JLF006"], codes


@pytest.mark.parametrize("name", sorted(QUIET))
def test_static_values_do_not_fire(name):
    assert [(d.code, d.message) for d in lint(QUIET[name]) if d.code in CODES] == []


LOUD = {
    "derived_local": ("""
import jax, jax.numpy as jnp
@jax.jit
def f(x, n):
    m = jnp.minimum(n, 4) + 1
    for _ in range(m):
        x = x + 1
    return x
""", "JLF003"),
    "sliced_after_arith": ("""
import jax, jax.numpy as jnp
@jax.jit
def f(x, i):
    j = i * 2
    return x[j:]
""", "JLF005"),
    "tuple_unpack": ("""
import jax, numpy as np
@jax.jit
def f(pair):
    a, b = pair
    return np.array(a)
""", "JLF006"),
}


@pytest.mark.parametrize("name", sorted(LOUD))
def test_traced_values_fire(name):
    text, code = LOUD[name]
    assert [d.code for d in lint(text) if d.code in CODES] == [code]


def test_jlf003_message_names_the_argument_and_fix_extends_static_argnames():
    text = '''import jax
from functools import partial
@partial(jax.jit, static_argnames="k")
def f(x, k, n):
    for _ in range(k + n):
        x = x + 1
    return x
'''
    [d] = lint(text, code="JLF003")
    assert "non-static argument `n`" in d.message
    assert 'static_argnames=("k", "n")' in fix_text(text, "t.py", "JLF003")


if __name__ == "__main__":
    for code in CODES:
        for path in sources(code):
            text = path.read_text(encoding="utf-8")
            fixed = fix_text(text, str(path), code)
            if fixed != text:
                fixed_path(path).write_text(fixed, encoding="utf-8")


JDC_STATIC = '''
import jax
import jax.numpy as jnp
import jax_dataclasses as jdc


@jdc.pytree_dataclass
class Window:
    data: jax.Array
    width: jdc.Static[int]


@jdc.pytree_dataclass
class Buffer:
    storage: jax.Array
    width: jdc.Static[int]

    @jdc.jit
    def head(self, other: Window, count: jdc.Static[int]):
        for _ in range(count):
            self = Buffer(jnp.tanh(self.storage), self.width)
        return self.storage[: self.width] + other.data[: other.width], self.storage[:count]
'''


def test_jax_dataclasses_static_annotations_are_python_values():
    """`width: jdc.Static[int]` is left out of the pytree, so `self.width` and `other.width` (of a
    parameter declared a class of the module) are Python ints under `jdc.jit`, and so is a parameter
    annotated `jdc.Static[int]`: JAX runs the method, and the linter reports no traced slice or
    trip count (the loop over `count` is a static unroll of array work, JLF002)."""
    pytest.importorskip("jax_dataclasses")
    space: dict = {}
    # Compiled without this module's `from __future__ import annotations`: `jdc` reads the
    # annotations as objects, as a user's module without that import gives them.
    exec(compile(JDC_STATIC, "jdc_static.py", "exec", dont_inherit=True), space)  # noqa: S102 - the fixed source above
    buffer = space["Buffer"](jnp.arange(6.0), 4)
    first, second = buffer.head(space["Window"](jnp.ones(5), 4), 2)
    assert first.shape == (4,) and second.shape == (2,)
    codes = sorted(d.code for d in lint(JDC_STATIC) if d.code.startswith("JLF00"))
    assert codes == ["JLF002"], codes
    loud = JDC_STATIC.replace("width: jdc.Static[int]", "width: int")
    assert sorted(d.code for d in lint(loud) if d.code == "JLF005") == ["JLF005", "JLF005"]
