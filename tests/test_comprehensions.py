"""Comprehensions in traced code (`analysis/comprehensions.py`): one that steps over array
data unrolls as a `for` loop does and is reported (JLF001, no fix); one that takes Python
steps stays clean. The labels come from JAX itself: a reported function's traced program
grows with the number of rows, a clean one's does not."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text, parse
from jaxloopfix.rules.base import FileContext

jax = pytest.importorskip("jax")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "comprehensions"


def _load(name: str):
    path = FIXTURES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"comprehension_fixture_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _expected(name: str) -> dict[str, tuple[str, int, int]]:
    """Each fixture function with a docstring: (report or clean, first line, last line)."""
    tree = ast.parse((FIXTURES / f"{name}.py").read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (doc := ast.get_docstring(node)) and doc.split(":")[0] in ("report", "clean"):
            found[node.name] = (doc.split(":")[0], node.lineno, node.end_lineno)
    return found


def _diagnostics(name: str):
    path = FIXTURES / f"{name}.py"
    return lint_text(path.read_text(encoding="utf-8"), str(path), Settings())


def _equations(jaxpr) -> int:
    """Equations of a program, those of the programs nested in it (a jitted call) included."""
    count = 0
    for eqn in jaxpr.eqns:
        count += 1
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                count += _equations(inner)
    return count


def _program_size(module, function: str, steps: int) -> int:
    args = module.example_inputs(steps)[function]
    static = tuple(i for i, a in enumerate(args) if isinstance(a, int))  # a count, as `jit` marks static
    return _equations(jax.make_jaxpr(getattr(module, function), static_argnums=static)(*args).jaxpr)


@pytest.mark.parametrize("name", ["unrolled", "static"])
def test_reported_exactly_where_the_docstrings_say(name: str) -> None:
    diagnostics = [d for d in _diagnostics(name) if d.code in ("JLF001", "JLF002")]
    for function, (expected, first, last) in _expected(name).items():
        inside = [d for d in diagnostics if first <= d.location.row <= last]
        if expected == "report":
            assert len(inside) == 1, (function, [d.message for d in inside])
            assert inside[0].code == "JLF001" and inside[0].fix is None and inside[0].no_fix_reason
            assert "comprehension" in inside[0].message or "generator expression" in inside[0].message
        else:
            assert inside == [], (function, [d.message for d in inside])


@pytest.mark.parametrize("name", ["unrolled", "static"])
def test_labels_agree_with_what_jax_traces(name: str) -> None:
    """The ground truth: tracing a reported function with twice the rows gives a larger
    program (one copy of the element per row); a clean one's program keeps its size."""
    module = _load(name)
    for function, (expected, _, _) in _expected(name).items():
        if function not in module.example_inputs(4):
            continue
        small, large = _program_size(module, function, 4), _program_size(module, function, 8)
        if expected == "report":
            assert large > small, (function, small, large)
        else:
            assert large == small, (function, small, large)


def test_messages_name_what_the_steps_go_over() -> None:
    messages = {d.location.row: d.message for d in _diagnostics("unrolled")}
    rows = next(m for m in messages.values() if "`row_norms`" in m)
    assert "the rows of `hidden` (an array: `jnp.tanh(xs)`)" in rows
    axis = next(m for m in messages.values() if "`column_means`" in m)
    assert "`range(board.shape[1])` (as long as an array axis)" in axis
    table = next(m for m in messages.values() if "`shifted_table`" in m)
    assert "`range(n)`, each step computing one row of the array `jnp.array` builds" in table
    assert "`column_means` is traced" in next(d.traced_reason for d in _diagnostics("unrolled") if "`column_means`" in d.message)


def test_clean_decisions_name_their_evidence() -> None:
    text = (FIXTURES / "static.py").read_text(encoding="utf-8")
    context = FileContext(parse(text, "static.py"), Settings())
    context.comprehension_reports  # noqa: B018
    rules = {context.parsed.position(comp).start.line: rule for comp, rule, _ in context.comprehension_decisions}
    lines = text.splitlines()
    def rule_at(snippet: str) -> str:
        return rules[next(i + 1 for i, line in enumerate(lines) if snippet in line)]
    assert rule_at("for a in range(x.ndim)") == "array_axes"
    assert rule_at("x.shape[1] * i") == "python_element"
    assert rule_at("for w in params") == "no_array_steps"
    assert rule_at("for c in table") == "no_array_steps"
    assert rule_at("points[..., d] for d") == "index_tuple"
    assert rule_at("[mask for _ in") == "repeats_value"
    assert rule_at("heads[i] @ x for i") == "index_as_structure"  # stacked, but a list's items


def _lint(source: str):
    return [d for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")]


def test_one_report_for_nested_comprehensions_and_for_a_comprehension_in_a_reported_loop() -> None:
    nested = _lint(
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    x = jnp.abs(x)\n"
        "    return jnp.array([[x[i, j] for j in range(x.shape[1])] for i in range(x.shape[0])])\n"
    )
    assert len(nested) == 1 and nested[0].location.column == 22, [d.message for d in nested]
    in_loop = _lint(
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(xs):\n    xs = jnp.abs(xs)\n    h = jnp.zeros(3)\n"
        "    for t in range(xs.shape[0]):\n        h = h + jnp.stack([r * h for r in xs[t]])\n    return h\n"
    )
    assert [d.location.row for d in in_loop] == [8], [d.message for d in in_loop]


def test_noqa_and_untraced_functions() -> None:
    source = (
        "import jax.numpy as jnp\n\ndef host(xs):\n    xs = jnp.abs(xs)\n    return [jnp.sum(r) for r in xs]\n"
    )
    assert _lint(source) == []
    jitted = "import jax\n" + source.replace("def host", "@jax.jit\ndef host")
    assert len(_lint(jitted)) == 1
    suppressed = jitted.replace("for r in xs]", "for r in xs]  # noqa: JLF001")
    assert _lint(suppressed) == []


def test_explain_shows_each_comprehension_decision(tmp_path: Path) -> None:
    from jaxloopfix.explain import explain

    target = tmp_path / "static.py"
    target.write_text((FIXTURES / "static.py").read_text(encoding="utf-8"), encoding="utf-8")
    text = explain(target, None, Settings())
    assert "list comprehension `... for w in params` in `apply_layers`" in text
    assert "not reported (rule `no_array_steps`)" in text
    assert "not judged" in text  # `range(3)`: a literal range


@pytest.mark.parametrize(
    ("body", "reported"),
    [
        # Clean: the eager fallback, a list of functions the index selects, a module per step.
        ("    if jax.config.jax_disable_jit:\n        return [jnp.sum(r) for r in x]\n    return x", False),
        ("    if not isinstance(x, jax.core.Tracer):\n        return [jnp.sum(r) for r in x]\n    return x", False),
        ("    nets = [jnp.sin, jnp.cos, jnp.tanh, jnp.exp, jnp.abs]\n    return [nets[i](x[i]) for i in range(x.shape[0])]", False),
        # Clean: a host NumPy table's length is no array axis.
        ("    table = np.ones((5, 3))\n    return [jnp.dot(table[i], x[0]) for i in range(table.shape[0])]", False),
        # Reported: an array axis in the second clause, a range with a step, rows read by `len`.
        ("    return jnp.array([x[i, j] * 2 for i in range(2) for j in range(x.shape[1])])", True),
        ("    return jnp.stack([x[i] * 2 for i in range(0, x.shape[0], 2)])", True),
        ("    return [len(r) for r in x]", True),
    ],
)
def test_the_judge_follows_what_runs_under_the_trace(body: str, reported: bool) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\nimport numpy as np\n\n@jax.jit\ndef f(x):\n"
        "    x = jnp.abs(x)\n" + body + "\n"
    )
    assert bool(_lint(source)) is reported, [d.message for d in _lint(source)]


def test_a_range_bounded_by_a_structured_loop_result_stays_unreported() -> None:
    """`range` of a `lax.while_loop` result raises under the trace (nothing is unrolled)."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    x = jnp.asarray(x)\n"
        "    n = jax.lax.while_loop(lambda i: i < 10, lambda i: i + 1, 0)\n    h = jnp.zeros(3)\n"
        "    for i in range(n):\n        h = jnp.tanh(h + x[i])\n    return h\n"
    )
    assert _lint(source) == []


def test_explain_tells_two_comprehensions_on_one_line_apart(tmp_path: Path) -> None:
    from jaxloopfix.explain import explain

    target = tmp_path / "two.py"
    target.write_text(
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n    x = jnp.abs(x)\n    y = jnp.abs(y)\n"
        "    return [jnp.sum(a) for a in x], [y[b] * 2 for b in range(y.shape[0])]\n",
        encoding="utf-8",
    )
    text = explain(target, 8, Settings())
    assert "steps over the rows of `x`" in text and "steps over `range(y.shape[0])`" in text, text
