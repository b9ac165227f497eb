"""Loops that used to vanish without a word, one fixture each (`fixtures/recall/`).

A loop in traced code is reported unless there is positive evidence that it does not
unroll array work. Each fixture's docstring says `report: CODE -- why` (the loop must be
reported, with a fix or with its reason) or `clean: EVIDENCE -- why` (left alone, and the
recorded evidence must name what was seen).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text, parse
from jaxloopfix.rules.base import FileContext

RECALL = Path(__file__).resolve().parent.parent / "fixtures" / "recall"
CASES = sorted(RECALL.glob("*.py"))


def _expectation(path: Path) -> tuple[str, str]:
    first = path.read_text(encoding="utf-8").splitlines()[0].strip('"')
    kind, rest = first.split(":", 1)
    return kind, rest.split("--", 1)[0].strip()


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_former_silent_path(path: Path) -> None:
    kind, detail = _expectation(path)
    text = path.read_text(encoding="utf-8")
    diagnostics = lint_text(text, str(path), Settings())
    loops = [d for d in diagnostics if d.code in ("JLF001", "JLF002")]
    if kind == "report":
        assert [d.code for d in loops] == [detail], [d.message for d in diagnostics]
        diagnostic = loops[0]
        # Reported with a fix, or with the reason it has none.
        assert diagnostic.fix is not None or diagnostic.no_fix_reason, diagnostic.message
    else:
        assert kind == "clean"
        assert loops == [], [d.message for d in loops]
        context = FileContext(parse(text, str(path)), Settings())
        context.loop_plans
        evidence = [e for _, e in context.skipped]
        assert any(detail in e for e in evidence), evidence


def test_every_skip_names_its_evidence() -> None:
    """No loop in a traced function is dropped without recorded evidence."""
    for path in CASES:
        context = FileContext(parse(path.read_text(encoding="utf-8"), str(path)), Settings())
        plans = {id(p.loop) for p in context.loop_plans}
        skipped = {id(loop) for loop, _ in context.skipped}
        from jaxloopfix.analysis.traced_values import own_nodes
        import libcst as cst

        for traced in context.traced.values():
            for loop in own_nodes(traced.node, cst.For):
                assert id(loop) in plans or id(loop) in skipped, (path.name, traced.name)


def test_vmap_unmapped_arguments_are_what_the_caller_passes() -> None:
    """`jax.vmap(f, (0, None))` passes its unmapped argument through: a Python int stays an int
    (branching and slicing on it run), so JLF004/JLF005 stay quiet; under an outer `jit` it is a
    tracer and the same branch raises, so it is reported. Checked on JAX both ways."""
    import jax
    import jax.numpy as jnp

    source = (
        "import jax\n\n\n"
        "def head_sum(x, n):\n"
        "    if n != 0:\n"
        "        x = x[:n]\n"
        "    return x.sum()\n\n\n"
        "mapped = jax.vmap(head_sum, (0, None))\n"
        "compiled = jax.jit(jax.vmap(head_sum, (0, None)))\n"
    )
    rows = jnp.arange(12.0).reshape(3, 4)
    namespace: dict = {}
    exec(compile(source, "t.py", "exec"), namespace)  # noqa: S102
    assert namespace["mapped"](rows, 2).tolist() == [1.0, 9.0, 17.0]
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["compiled"](rows, 2)

    def codes(text: str) -> list[str]:
        return sorted(d.code for d in lint_text(text, "t.py", Settings()) if d.code in ("JLF004", "JLF005"))

    assert codes(source.replace("compiled = jax.jit(jax.vmap(head_sum, (0, None)))\n", "")) == []
    assert codes(source.replace("mapped = jax.vmap(head_sum, (0, None))\n", "")) == ["JLF004", "JLF005"]
    decorated = source.replace("def head_sum", "@functools.partial(jax.vmap, in_axes=(0, None))\ndef head_sum")
    decorated = "import functools\n" + decorated.split("\n\n\nmapped")[0] + "\n"
    assert codes(decorated) == []


def test_array_attributes_are_those_of_the_installed_jax() -> None:
    """`queries[k].value` is read as an object because `value` is no attribute of `jax.Array`:
    the list the rule relies on must name every public attribute the installed JAX has."""
    import jax

    from jaxloopfix.analysis.arrays import JAX_ARRAY_ATTRIBUTES

    public = {name for name in dir(jax.Array) if not name.startswith("_")}
    assert public <= JAX_ARRAY_ATTRIBUTES, sorted(public - JAX_ARRAY_ATTRIBUTES)


def test_a_count_computed_by_jax_runs_only_eagerly() -> None:
    """The evidence of `kinds_array_valued_count.py`, checked on JAX: the method runs eagerly and
    raises under `jit` (so the loop it leaves clean is never unrolled), and the same count in a
    jitted function is reported as JLF003, not as a loop to scan."""
    import importlib.util

    import jax
    import jax.numpy as jnp

    path = RECALL / "kinds_array_valued_count.py"
    spec = importlib.util.spec_from_file_location("kinds_array_valued_count", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    trajectory = module.Trajectory(jnp.arange(12.0).reshape(4, 3), jnp.array([1.0, jnp.inf, 2.0]))
    assert trajectory.segments().shape == (9,)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda t: t.segments())(trajectory)

    jitted = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef heads(x, mask):\n"
        "    n = jnp.sum(mask)\n    out = []\n    for i in range(n):\n        out.append(x[i] * 2)\n    return out\n"
    )
    codes = [d.code for d in lint_text(jitted, "heads.py", Settings())]
    assert codes == ["JLF003"], codes


def test_products_over_containers_do_not_grow_with_the_array_and_products_of_ranges_do() -> None:
    """The evidence of `kinds_product_of_containers.py` (clean) and `kinds_product_of_ranges.py`
    (reported), checked on JAX: the traced program of the first has the same size for a 3x4
    and a 30x40 image (its steps are the cell's corners), the second's grows with the pixels."""
    import importlib.util

    import jax
    import jax.numpy as jnp

    def load(name: str):  # noqa: ANN202 - a fixture module
        spec = importlib.util.spec_from_file_location(name, RECALL / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def size(func, *args) -> int:  # noqa: ANN001 - the jitted function's own program
        return len(jax.make_jaxpr(func.__wrapped__)(*args).jaxpr.eqns)

    corners = load("kinds_product_of_containers").bilinear
    point = jnp.array([0.5, 1.25])
    assert size(corners, jnp.ones((3, 4)), point) == size(corners, jnp.ones((30, 40)), point)
    pixels = load("kinds_product_of_ranges").pixel_sum
    assert size(pixels, jnp.ones((6, 8))) > 10 * size(pixels, jnp.ones((1, 2)))
