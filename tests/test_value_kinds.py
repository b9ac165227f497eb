"""Value kinds, calls resolved as Python dispatches them, and `check --explain`.

The fixtures of each class (`fixtures/recall/kinds_*.py`, `dispatch_*.py`) are checked by
`test_recall.py`; here are the kinds themselves, the cross-module dispatch, and what a user
reads from `--explain`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from jaxloopfix.analysis.loops import module_constants
from jaxloopfix.analysis.source import ParsedModule
from jaxloopfix.analysis.traced import find_traced_functions
from jaxloopfix.analysis.value_kinds import ValueKinds
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text

SOURCE = textwrap.dedent(
    """
    from functools import partial
    import jax
    import jax.numpy as jnp

    SIZES = (2, 3)

    @partial(jax.jit, static_argnames=("sizes",))
    def f(x, sizes, w: jax.Array):
        n, d = x.shape
        rest = x.shape[1:]
        total = 0.0
        names = []
        offsets = []
        start = 0
        for k in sizes:
            start += k
            offsets.append(start)
        for i in range(n):
            names.append(f"row{i}")
            total = total + jnp.sum(x[i] * w)
        keys = [s * 2 for s in SIZES]
        widths = [2 * n + 1] * x.ndim
        both = offsets + [n]
        return total, names, offsets, keys, rest, widths, both
    """
)


@pytest.fixture(scope="module")
def kinds() -> ValueKinds:
    parsed = ParsedModule(SOURCE, "m.py")
    traced = next(t for f, t in find_traced_functions(parsed).items() if f.name.value == "f")
    return ValueKinds(parsed, traced, module_constants(parsed))


@pytest.mark.parametrize(
    ("name", "kind", "python"),
    [
        ("sizes", "static", True),  # a static argument
        ("n", "static", True),  # unpacked from `x.shape`
        ("rest", "shape", True),
        ("k", "static", True),  # an item of a static argument
        ("start", "static", True),  # `0`, then `+= k`
        ("offsets", "container", True),  # appended Python ints
        ("names", "container", True),  # appended strings
        ("i", "static", True),
        ("x", "traced", False),  # a non-static argument of a transformed function: an array or a pytree
        ("w", "array", False),
        ("total", "array", False),  # a Python float that becomes an array
        ("keys", "container", True),  # a comprehension over a module constant
        ("widths", "container", True),  # a list of Python ints repeated a Python number of times
        ("both", "container", True),  # two lists of Python ints concatenated
    ],
)
def test_kinds_of_names(kinds: ValueKinds, name: str, kind: str, python: bool) -> None:
    found = kinds.of_name(name)
    assert (found.name, found.python) == (kind, python), found


def test_unknown_absorbs_disagreement() -> None:
    """A name bound to a Python value on one path and to a call's result on another is not
    claimed static: a skip needs evidence for every binding."""
    text = "import jax\n\n@jax.jit\ndef g(x, h):\n    c = 0\n    if x.ndim:\n        c = h(x)\n    return c\n"
    parsed = ParsedModule(text, "g.py")
    traced = next(iter(find_traced_functions(parsed).values()))
    assert not ValueKinds(parsed, traced).of_name("c").python


def test_values_python_needs_are_python_values() -> None:
    """A helper's name compared in an `if` test (`if multi == 0:`) or made into a `range` bound
    through arithmetic (`range(1, lmax + 1)`) is a Python value whenever the helper runs under a
    trace (a tracer there raises); identity and membership tests ask nothing of the kind, and a
    name bound to an array stays an array."""
    text = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp

        def helper(lmax, budget, key, x, mode, w):
            multi = int(budget / lmax)
            h = jnp.tanh(x)
            if multi == 0 or h > 0 or key is None or mode == "auto" or w != None or any(v == 0 for v in w):
                return x
            for level in range(1, lmax + 1):
                x = x * level
            return x

        @jax.jit
        def g(x):
            return helper(3, 64, None, x, "auto", [x])
        """
    )
    parsed = ParsedModule(text, "g.py")
    traced = next(t for f, t in find_traced_functions(parsed).items() if f.name.value == "helper")
    kinds = ValueKinds(parsed, traced)
    assert kinds.of_name("multi").name == "static" and "compared in an `if` test" in kinds.of_name("multi").why
    assert kinds.of_name("lmax").name == "static" and "range" in kinds.of_name("lmax").why
    assert kinds.of_name("h").name == "array"
    assert kinds.of_name("key").name == "unknown" and kinds.of_name("budget").name == "unknown"
    # Compared with a string or `None` (a tracer answers by identity), or inside a call: no evidence.
    assert kinds.of_name("mode").name == "unknown" and kinds.of_name("w").name == "unknown"
    assert kinds.of_name("v").name != "static"


def test_module_literal_rebound_in_a_branch_is_not_static() -> None:
    """`SIZES = (2, 3)` is a static tuple, unless a compound statement (`if GPU:`) binds it too:
    then which value holds is decided when the module runs."""
    once = "import jax\n\nSIZES = (2, 3)\n\n@jax.jit\ndef g(x):\n    return x\n"
    branch = once.replace("SIZES = (2, 3)\n", "SIZES = (2, 3)\nif GPU:\n    SIZES = [jax.numpy.ones(2)]\n")
    for text, python in ((once, True), (branch, False)):
        parsed = ParsedModule(text, "g.py")
        traced = next(iter(find_traced_functions(parsed).values()))
        assert ValueKinds(parsed, traced).of_name("SIZES").python is python


def _loop_codes(text: str) -> list[str]:
    return [d.code for d in lint_text(textwrap.dedent(text), "m.py", Settings()) if d.code in ("JLF001", "JLF002")]


def test_python_values_rule_needs_every_store_static() -> None:
    """Index arithmetic into a Python list is clean; the same loop also stacking an array row is reported."""
    clean = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x):
            h, w = x.shape[1:3]
            pos = []
            for i in range(h):
                pos.append(i * w)
            return x.reshape(x.shape[0], -1)[:, jnp.array(pos)]
        """
    assert _loop_codes(clean) == []
    mixed = clean.replace("pos.append(i * w)", "pos.append(i * w)\n                x = x + x[i]")
    assert len(_loop_codes(mixed)) == 1  # reported (JLF001: it also accumulates `pos`)


def test_first_item_of_a_tree_flatten_is_the_leaves() -> None:
    """`jax.tree.flatten(t)[0]` is the list of leaves, as `leaves, treedef = jax.tree.flatten(t)`
    unpacks it: a loop over it (or a slice of it) is a loop over leaves; a loop over the rows of
    one leaf is not."""
    import jax.numpy as jnp

    leaves = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(xs):
            flat = jax.tree.flatten(xs)[0]
            total = jnp.sum(flat[0])
            for x in flat[1:]:
                total = total + jnp.sum(x)
            return total
        """
    assert _loop_codes(leaves) == []
    namespace: dict = {}
    exec(textwrap.dedent(leaves), namespace)
    tree = {"a": jnp.ones(3), "b": (jnp.ones((2, 2)), jnp.arange(4.0))}
    assert float(namespace["f"](tree)) == 3 + 4 + 6  # runs under jit over three leaves
    rows = leaves.replace("for x in flat[1:]:", "for x in jax.tree.flatten(xs)[0][0]:")
    assert len(_loop_codes(rows)) == 1  # the rows of the first leaf


def test_derived_index_is_named_as_derived() -> None:
    text = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(xs):
            h = jnp.zeros(3)
            for t in range(xs.shape[0]):
                k = t + 1
                if k > 3:
                    h = h + xs[t]
            return h
        """
    diagnostics = lint_text(textwrap.dedent(text), "m.py", Settings())
    reasons = [d.no_fix_reason or "" for d in diagnostics if d.code == "JLF002"]
    assert reasons and "the loop index `t` (through `k`)" in reasons[0], reasons


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _check(root: Path, *args: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", "--no-cache", "--output-format", "json", "--exit-zero", *args],
        capture_output=True, text=True, cwd=root, check=True,
    )
    return json.loads(out.stdout)


RNN_LOSS = """
    import jax.numpy as jnp
    from pkg.base import Learner

    class RNNLearner(Learner):
        def loss_fn(self, params, batch):
            h = jnp.zeros(4)
            total = jnp.zeros(())
            for t in range(batch.shape[0]):
                h = jnp.tanh(params @ h + batch[t])
                total = total + jnp.sum(h)
            return total
    """


def test_override_of_a_transformed_method_reference_across_modules(tmp_path: Path) -> None:
    """`jax.grad(self.loss_fn)` in `base.py` traces the override in `rnn.py`, also when `rnn.py`
    is checked alone (its project supplies the tracing)."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """
            import jax

            class Learner:
                def loss_fn(self, params, batch):
                    raise NotImplementedError

                def update(self, params, batch):
                    return jax.grad(self.loss_fn)(params, batch)
            """,
        "pkg/rnn.py": RNN_LOSS,
    })
    for args in (["."], ["pkg/rnn.py"]):
        found = _check(root, *args)
        assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("rnn.py", "JLF002")], (args, found)


def test_override_through_a_generic_base_across_modules(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/env.py": """
            from typing import Generic, TypeVar
            import jax

            S = TypeVar("S")

            class Environment(Generic[S]):
                @jax.jit
                def step(self, state, actions):
                    return self.step_env(state, actions)

                def step_env(self, state, actions):
                    raise NotImplementedError
            """,
        "pkg/grid.py": """
            import jax
            import jax.numpy as jnp
            from pkg.env import Environment

            class Grid(Environment[jax.Array]):
                def step_env(self, state, actions):
                    for t in range(actions.shape[0]):
                        state = 0.9 * state + actions[t]
                    return state
            """,
    })
    found = _check(root, ".")
    assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("grid.py", "JLF002")], found


def _explain(root: Path, target: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", "--explain", target], capture_output=True, text=True, cwd=root,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_explain_names_the_trace_the_kinds_and_the_decision(tmp_path: Path) -> None:
    blocks = (Path(__file__).parent.parent / "fixtures" / "recall" / "kinds_static_argnames_tuple.py").read_text()
    root = _project(tmp_path, {"m.py": ""})
    (root / "m.py").write_text(blocks + textwrap.dedent("""
            import jax.numpy as jnp

            @jax.jit
            def rnn(w, xs):
                h = jnp.zeros(3)
                for t in range(xs.shape[0]):
                    h = jnp.tanh(w @ h + xs[t])
                return h

            def host(xs):
                for x in xs:
                    print(x)
            """))
    text = _explain(root, "m.py")
    first, rnn, host = text.split("\nm.py:")
    assert "traced: decorated with `@partial(jax.jit" in first
    assert "static arguments: `sizes`" in first
    assert "items are static (an item of `sizes`, a static argument)" in first
    assert "not reported (rule `python_items`)" in first
    assert "reported: JLF002" in rnn and "fix: " in rnn
    assert "`host` is not traced" in host
    # FILE:LINE explains only the loop holding that line.
    loop = (root / "m.py").read_text().splitlines().index("    for t in range(xs.shape[0]):") + 1
    only = _explain(root, f"m.py:{loop + 1}")
    assert only.count("\nm.py:") == 0 and only.startswith(f"m.py:{loop}:") and "rnn" in only


def test_explain_says_when_noqa_hides_a_report(tmp_path: Path) -> None:
    """A loop `check` would report but a `# noqa` hides: `--explain` says so, not "reported"."""
    root = _project(tmp_path, {"m.py": textwrap.dedent("""
        import jax
        import jax.numpy as jnp

        @jax.jit
        def rnn(w, xs):
            h = jnp.zeros(3)
            for t in range(xs.shape[0]):  # noqa: JLF002
                h = jnp.tanh(w @ h + xs[t])
            return h
        """)})
    text = _explain(root, "m.py")
    assert "suppressed: JLF002 would report it" in text and "reported: JLF002" not in text


def test_explain_unreadable_file_is_an_error(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "jaxloopfix", "check", "--explain", "missing.py"], capture_output=True, text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2 and "missing.py" in out.stderr


def test_every_loop_decision_is_a_named_rule() -> None:
    """The planner's table: each loop of a traced function is decided by a named rule or reported."""
    from jaxloopfix.analysis.planner import SKIP_RULES
    from jaxloopfix.engine import parse
    from jaxloopfix.rules.base import FileContext

    names = {rule.__name__ for rule in SKIP_RULES}
    assert len(names) == len(SKIP_RULES)
    for path in sorted((Path(__file__).parent.parent / "fixtures" / "recall").glob("kinds_*.py")):
        context = FileContext(parse(path.read_text(), str(path)), Settings())
        context.loop_plans
        decided = {rule for _, rule, _ in context.decisions}
        assert decided <= names | {"reported", "late", "index_as_structure"}, (path.name, decided)
        assert isinstance(context.decisions[0][0], cst.For)


FIELD_DEFAULT = textwrap.dedent(
    """
    from functools import partial
    import jax
    from flax import struct

    class Consts(struct.PyTreeNode):
        ENEMIES: int = struct.field(pytree_node=False, default=3)

    class Game:
        def __init__(self, consts=None):
            self.consts = consts or Consts(){passed}

        @partial(jax.jit, static_argnums=(0,))
        def draw(self, raster, pos):
            for i in range(self.consts.ENEMIES):
                raster = raster.at[pos[i, 1], pos[i, 0]].set(1.0)
            return raster
    """
)


def test_constant_field_default_is_the_trip_count_unless_passed() -> None:
    """`ENEMIES: int = struct.field(default=3)` makes `range(self.consts.ENEMIES)` three steps;
    a call that passes `ENEMIES=` makes the count unknown again, and the loop is reported."""
    assert module_constants(ParsedModule(FIELD_DEFAULT.format(passed=""), "g.py"))[".ENEMIES"] == 3
    assert lint_text(FIELD_DEFAULT.format(passed=""), "g.py", Settings()) == []
    passed = FIELD_DEFAULT.format(passed="\n\n    def big(self):\n        return Consts(ENEMIES=64)")
    assert ".ENEMIES" not in module_constants(ParsedModule(passed, "g.py"))
    assert [d.code for d in lint_text(passed, "g.py", Settings())] == ["JLF001"]


DECLARED = textwrap.dedent(
    """
    import jax
    import jax.numpy as jnp

    class Base:
        def place(self, x):
            return x

    class Arena(Base):
        pass

    class Walled(Arena):
        def place(self, x):
            out = jnp.zeros_like(x)
            for t in range(x.shape[0]):
                out = out.at[t].set(x[t] * 2.0 + out[t - 1])
            return out

    @jax.jit
    def step(x, env: "Arena"):
        return env.place(x)
    """
)


def test_declared_receiver_reaches_base_and_overrides() -> None:
    """`env.place(x)` on a parameter declared `Arena` runs `Base.place` (found through the bases)
    or a subclass's override: both are traced, and the override's loop is reported."""
    parsed = ParsedModule(DECLARED, "d.py")
    traced = find_traced_functions(parsed)
    owners = sorted(
        parsed.parent(parsed.parent(f)).name.value for f in traced if f.name.value == "place"
    )
    assert owners == ["Base", "Walled"]
    reason = next(t.reason for f, t in traced.items() if f.name.value == "place")
    assert "its declared type" in reason and "env.place" in reason
    diagnostics = lint_text(DECLARED, "d.py", Settings())
    assert [(d.code, d.location.row) for d in diagnostics] == [("JLF001", 15)], [d.message for d in diagnostics]


def test_enumerate_and_zip_targets_keep_their_own_kinds() -> None:
    """`for j, (a, b) in enumerate(zip(xs, sizes))`: the counter is a Python int and each zipped
    position has its iterable's item kind, not the join of all positions."""
    text = textwrap.dedent(
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("sizes",))
        def f(xs, sizes):
            out = []
            for j, (row, size) in enumerate(zip(xs, sizes)):
                out.append(row[:size] * j)
            return out
        """
    )
    parsed = ParsedModule(text, "m.py")
    traced = next(iter(find_traced_functions(parsed).values()))
    found = ValueKinds(parsed, traced)
    assert found.of_name("j").python
    assert found.of_name("size").python
    assert not found.of_name("row").python


def test_private_jax_spellings_are_the_public_objects() -> None:
    """Ground truth from JAX: each private module the tool reads as public holds, under every
    transform name the tool knows, the very object of the public module."""
    import importlib

    from jaxloopfix.analysis.public_names import PRIVATE_MODULES, public_name

    checked = 0
    for private, (public, attributes) in PRIVATE_MODULES.items():
        module = importlib.import_module(private)
        public_module = importlib.import_module(public)
        for attribute in sorted(attributes):
            if hasattr(module, attribute):
                assert public_name(f"{private}.{attribute}") == f"{public}.{attribute}"
                assert getattr(module, attribute) is getattr(public_module, attribute), (private, attribute)
                checked += 1
    assert checked >= 10
    assert public_name("jax._src.api.DontWant") is None  # a private helper keeps its spelling
    assert public_name("jax._src.api.map") is None  # Python's `map`, imported there


CHOSEN_COUNT = """
import jax
import jax.numpy as jnp
from functools import partial


@partial(jax.jit, static_argnums=(1, 2))
def smooth(u, h, wide):
    table = {{3: 1, 5: 2}}
    n = {count}
    for _ in range(n):
        u = u + 0.1 * (jnp.roll(u, 1) - u)
    return u
"""


@pytest.mark.parametrize(
    ("count", "codes"),
    [
        ("table.get(h, 3)", []),  # one of 1, 2, 3
        ("table[h] - 1", []),  # at most 1
        ("4 if wide else 2", []),
        ("2 * table.get(h, 3) + 1", ["JLF002"]),  # at most 7: not a few steps
        ("10 - table[h]", ["JLF002"]),  # a chosen value subtracted: no bound
        ("{1: 2, 2: -1}[h]", ["JLF002"]),  # a negative choice: not a count
        ("{**table, 7: 3}[h]", ["JLF002"]),  # entries not all seen
    ],
)
def test_a_count_chosen_from_literals_is_bounded_by_the_largest(count: str, codes: list[str]) -> None:
    """A count looked up in a literal table or chosen by `if`/`else` between literals is at most
    its largest choice: below min-trip-count the loop is a small static unroll; arithmetic keeps
    the bound only where it can (adding, multiplying, subtracting a literal)."""
    found = [d.code for d in lint_text(CHOSEN_COUNT.format(count=count), "c.py", Settings()) if d.code.startswith("JLF00")]
    assert [c for c in found if c in ("JLF001", "JLF002")] == codes, found


def _transform(name: str):
    """The installed object `name` names (skipped: a spelling of an earlier JAX release)."""
    import importlib

    module, attr = name.rsplit(".", 1)
    try:
        return getattr(importlib.import_module(module), attr)
    except (AttributeError, ImportError) as error:
        pytest.skip(f"`{name}` is not in the installed release: {error}")


@pytest.mark.parametrize("name", sorted(__import__("jaxloopfix.analysis.value_kinds", fromlist=["x"]).ARRAY_RESULT_TRANSFORMS))
def test_what_a_transformed_function_returns_is_arrays(name: str) -> None:
    """Each transform the kinds take to return arrays does, under `jit`, with an auxiliary output
    where it takes one: every leaf of the result is a `jax.Array`."""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    transform = _transform(name)
    x = jnp.arange(3.0)
    if name.startswith("flax.nnx."):
        model = nnx.Linear(3, 1, rngs=nnx.Rngs(0))
        wrapped = transform(lambda m, x: (jnp.sum(m(x)), {"n": jnp.sum(x)}), has_aux=True)
        result = nnx.jit(wrapped)(model, x)
    elif name.endswith("grad"):
        wrapped = transform(lambda x: (jnp.sum(x**2), {"n": jnp.max(x)}), has_aux=True)
        result = jax.jit(lambda x: wrapped(x))(x)
    elif name == "jax.pmap":
        result = transform(lambda x: (x * 2, {"n": x}))(x[None])
    else:
        wrapped = transform(lambda x: (jnp.sum(x**2), {"n": jnp.max(x)}))
        result = jax.jit(lambda x: wrapped(x))(x)
    leaves = jax.tree.leaves(result)
    assert leaves and all(isinstance(leaf, jax.Array) for leaf in leaves), (name, result)


def test_filter_jit_passes_python_values_through() -> None:
    """Why `eqx.filter_jit` is not in `ARRAY_RESULT_TRANSFORMS`: a non-array output comes back as it is."""
    import equinox as eqx
    import jax.numpy as jnp

    assert eqx.filter_jit(lambda x: (x, "label"))(jnp.ones(2))[1] == "label"


def test_gradient_steps_under_a_transform_step_over_arrays() -> None:
    """`loss, grads = nnx.value_and_grad(f)(model)` per step of a loop in `nnx.jit`: the loop
    computes the gradients, arrays, so filling the optimizer with them is array work, not
    bookkeeping over Python values (reported, with no fix: the update mutates the optimizer)."""
    text = """
        from functools import partial

        from flax import nnx


        def loss_of(model, x, y):
            return ((model(x) - y) ** 2).mean()


        @partial(nnx.jit, static_argnames=["steps"])
        def fit(model, optimizer, x, y, steps):
            loss = 0.0
            for _ in range(steps):
                loss, grads = nnx.value_and_grad(loss_of)(model, x, y)
                optimizer.update(model, grads)
            return loss
        """
    assert _loop_codes(text) == ["JLF002"]
    # The same gradients returned by a helper of the module: its kinds say what it returns.
    helper = text.replace(
        "def loss_of(model, x, y):",
        "def gradient(model, x, y):\n            return nnx.value_and_grad(loss_of)(model, x, y)\n\n\n        def loss_of(model, x, y):",
    ).replace("loss, grads = nnx.value_and_grad(loss_of)(model, x, y)", "loss, grads = gradient(model, x, y)")
    assert "def gradient" in helper and "= gradient(model" in helper
    assert _loop_codes(helper) == ["JLF002"]
    # A helper returning Python values says nothing of arrays: the loop is bookkeeping.
    names = helper.replace("return nnx.value_and_grad(loss_of)(model, x, y)", 'return "loss", "grads"')
    assert _loop_codes(names) == []


def test_gradients_of_a_dict_are_a_dict() -> None:
    """`jax.grad(loss)(params)` is shaped like `params`: a loop over a dict of gradients by name
    builds a dict of parameters (clean), as a loop over the dict `params` itself would."""
    text = """
        import jax
        import jax.numpy as jnp


        def loss(params, x):
            return jnp.sum(jnp.tanh(x @ params["w"])) + jnp.sum(params["b"])


        @jax.jit
        def sgd(params, x):
            grads = jax.grad(loss)(params, x)
            new_params = {}
            for name in grads:
                new_params[name] = params[name] - 0.01 * grads[name]
            return new_params
        """
    assert _loop_codes(text) == []


@pytest.mark.parametrize(
    "annotation", ["Sequence[int]", "Optional[Sequence[int]]", "list[jax.Array]", "tuple[int, int] | None", "List[float]"]
)
def test_a_declared_sequence_argument_stays_a_python_container(annotation: str) -> None:
    """A transform traces a list's leaves, never the list: the argument is a Python container
    (checked on JAX: under `jax.jit` a list argument arrives as a list)."""
    import jax
    import jax.numpy as jnp

    seen = []
    jax.jit(lambda xs: seen.append(type(xs)) or xs[0])([jnp.ones(2), jnp.ones(3)])
    assert seen == [list]
    text = (
        "from typing import List, Optional, Sequence\nimport jax\n\n"
        f"@jax.jit\ndef g(x, sizes: {annotation}, n: int):\n    return x\n"
    )
    parsed = ParsedModule(text, "g.py")
    traced = next(iter(find_traced_functions(parsed).values()))
    kinds = ValueKinds(parsed, traced)
    assert kinds.of_name("sizes").name == "container", kinds.of_name("sizes")
    assert kinds.of_name("n").name == "unknown"  # a traced function's `int` is a tracer unless static


def test_an_iterable_array_annotation_is_not_a_container() -> None:
    text = "from typing import Iterable\nimport jax\n\n@jax.jit\ndef g(xs: Iterable[float]):\n    return xs\n"
    parsed = ParsedModule(text, "g.py")
    traced = next(iter(find_traced_functions(parsed).values()))
    assert ValueKinds(parsed, traced).of_name("xs").name != "container"


def test_dimension_sizes_from_a_shape_or_a_declaration_are_one_step_per_dimension() -> None:
    """`sizes` bound to `grid.shape` or to a declared `Sequence[int]`: a loop per dimension, clean;
    the same loop over an undeclared argument may step over array rows and is reported."""
    loop = """
        from typing import Optional, Sequence
        import jax
        import jax.numpy as jnp

        @jax.jit
        def inside(grid, points, shape{annotation} = None):
            sizes = grid.shape
            if shape is not None:
                sizes = shape
            ok = jnp.ones(points.shape[1:], dtype=bool)
            for axis, size in enumerate(sizes):
                ok = ok & (points[axis] <= size - 1)
            return ok
        """
    assert _loop_codes(loop.format(annotation=": Optional[Sequence[int]]")) == []
    assert _loop_codes(loop.format(annotation="")) == ["JLF002"]


def test_text_combined_with_anything_is_text() -> None:
    """`name + "_" + f(d)` and `"%s" % d` are text whatever `f(d)` is: JAX raises on an array
    added to text, so no array comes of it. A number added to an unknown value stays unknown."""
    import jax.numpy as jnp

    with pytest.raises(TypeError):
        jnp.ones(2) + "_"
    with pytest.raises(TypeError):
        "_" + jnp.ones(2)
    text = (
        "import jax\n\n@jax.jit\ndef g(x, dims, f):\n    name = 'w'\n    total = 0\n"
        "    for d in dims:\n        name = name + '_' + f(d)\n        name += '%s' % d\n        total = total + f(d)\n"
        "    return x\n"
    )
    parsed = ParsedModule(text, "g.py")
    traced = next(iter(find_traced_functions(parsed).values()))
    kinds = ValueKinds(parsed, traced)
    assert (kinds.of_name("name").name, kinds.of_name("name").text) == ("static", True)
    assert kinds.of_name("total").name == "unknown"


def test_filter_jit_keeps_a_parameter_declared_int_static() -> None:
    """`eqx.filter_jit` traces array leaves only: `nrings: int` is the Python int passed, so
    `range(2, nrings)` runs (no JLF003) and unrolls (reported); an undeclared one stays traced."""
    eqx = pytest.importorskip("equinox")
    jnp = pytest.importorskip("jax.numpy")
    source = textwrap.dedent(
        """
        import equinox as eqx
        import jax.numpy as jnp

        @eqx.filter_jit
        def rings(nrings: int, r):
            out = []
            for i in range(2, nrings):
                out.append(jnp.sin(r * i))
            return jnp.stack(out)
        """
    )
    namespace: dict = {}
    exec(compile(source, "rings.py", "exec"), namespace)
    assert namespace["rings"](6, jnp.ones(2)).shape == (4, 2)  # runs: the bound is a Python int
    assert eqx is not None
    codes = [d.code for d in lint_text(source, "rings.py", Settings())]
    assert codes == ["JLF001"], codes
    undeclared = source.replace("nrings: int", "nrings")
    assert [d.code for d in lint_text(undeclared, "rings.py", Settings())] == ["JLF003"]


def test_an_item_asked_its_python_type_is_a_python_value() -> None:
    """`isinstance(d, int)` on each item: no row of an array is an int, so the items are Python
    values (clean); asked `isinstance(d, jax.Array)` the test decides nothing (still reported)."""
    source = textwrap.dedent(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(xs):
            total = 0.0
            for x in xs:
                if isinstance(x, {types}):
                    total = total + jnp.sum(x)
                total = total * 0.9 + jnp.mean(x)
            return total
        """
    )
    assert [d.code for d in lint_text(source.format(types="(int, float)"), "m.py", Settings())] == []
    assert [d.code for d in lint_text(source.format(types="jax.Array"), "m.py", Settings())] == ["JLF002"]


def _kinds_of(source: str, function: str) -> ValueKinds:
    parsed = ParsedModule(textwrap.dedent(source), "m.py")
    traced = next(t for f, t in find_traced_functions(parsed).items() if f.name.value == function)
    return ValueKinds(parsed, traced, module_constants(parsed))


def test_pytree_annotations_are_not_arrays() -> None:
    kinds = _kinds_of(
        """
        import chex
        import jax
        from jaxtyping import PyTree

        def helper(tree: chex.ArrayTree, leaves: PyTree, device: chex.ArrayDeviceTree, x: chex.Array):
            return tree, leaves, device, x

        @jax.jit
        def f(a):
            return helper(a, a, a, a)
        """,
        "helper",
    )
    assert {kinds.of_name(n).name for n in ("tree", "leaves", "device")} == {"unknown"}
    assert kinds.of_name("x").name == "array"


@pytest.mark.parametrize("imported", [
    "from pkg.env import MultiAgentEnv",
    # Imported for the annotation only, with a runtime placeholder.
    "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.env import MultiAgentEnv\nelse:\n    MultiAgentEnv = None",
])
def test_declared_abstract_base_reaches_overrides_in_other_modules(tmp_path: Path, imported: str) -> None:
    """`env.step(...)` on a parameter declared `MultiAgentEnv` (an abstract base in one module)
    inside a scan body runs the override of a subclass in another module, and what it calls."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/env/__init__.py": "from .base import MultiAgentEnv\nfrom .grid import Grid\n",
        "pkg/env/base.py": """
            from abc import ABC, abstractmethod

            class MultiAgentEnv(ABC):
                @abstractmethod
                def step(self, state, action):
                    pass
            """,
        "pkg/env/grid.py": """
            import jax.numpy as jnp
            from .base import MultiAgentEnv

            class Grid(MultiAgentEnv):
                num_agents = 8

                def step(self, state, action):
                    return self.edges(state + action)

                def edges(self, state):
                    out = []
                    for i in range(self.num_agents):
                        out.append(jnp.tanh(state[i]))
                    return jnp.stack(out)
            """,
        "pkg/train.py": "import jax\n" + imported + "\n\n" + textwrap.dedent("""
            def rollout(env: MultiAgentEnv, states):
                def body(state, action):
                    nxt = env.step(state, action)
                    return nxt, nxt
                return jax.lax.scan(body, states[0], states)

            def train(env, states):
                return jax.jit(lambda s: rollout(env, s))(states)
            """),
    })
    found = _check(root, ".")
    assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("grid.py", "JLF001")], found


def test_a_scan_body_nested_in_a_method_calls_overrides_in_other_modules(tmp_path: Path) -> None:
    """`def body(...): self.step(...)` handed to `lax.scan` inside a base's method: a subclass
    in another module overrides `step`, which runs traced."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """
            from abc import ABC, abstractmethod
            import jax

            class Env(ABC):
                def rollout(self, state, actions):
                    def body(s, a):
                        s = self.step(s, a)
                        return s, s
                    return jax.jit(lambda s, a: jax.lax.scan(body, s, a))(state, actions)

                @abstractmethod
                def step(self, state, action):
                    pass
            """,
        "pkg/walk.py": """
            import jax.numpy as jnp
            from pkg.base import Env

            class Walk(Env):
                def step(self, state, action):
                    for k in range(action.shape[0]):
                        state = jnp.tanh(state + action[k])
                    return state
            """,
    })
    found = _check(root, ".")
    assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("walk.py", "JLF002")], found


def test_a_transform_of_what_an_imported_factory_returns(tmp_path: Path) -> None:
    """`jax.jit(make_step(n))` with `make_step` imported from another module: the function the
    factory defines and returns runs traced; calling the factory without a transform traces nothing."""
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sim.py": """
            import jax
            import jax.numpy as jnp

            def make_step(num_steps):
                def step_n(x, key):
                    for _ in range(num_steps):
                        key, sub = jax.random.split(key)
                        x = x + 0.1 * jax.random.normal(sub, x.shape)
                    return x, key
                return step_n
            """,
        "pkg/run.py": """
            import jax
            from pkg.sim import make_step

            def run(x, key):
                return jax.jit(make_step(10))(x, key)
            """,
    })
    found = _check(root, ".")
    assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("sim.py", "JLF002")], found
    (root / "pkg" / "run.py").write_text("from pkg.sim import make_step\n\ndef run(x, key):\n    return make_step(10)(x, key)\n")
    assert _check(root, ".") == []


def test_a_function_held_by_an_attribute_is_traced_where_it_is_called(tmp_path: Path) -> None:
    """`self.act = decode` in `setup` (imported from another module), then `self.act(...)` in a
    traced method: Python calls `decode` under the trace (og-marl's autoregressive decoder). Checked
    on JAX: the loop in `decode` sees tracers. A `self.act = make()` (a call's result) names no
    function the analysis can see and stays unresolved."""
    import jax.numpy as jnp

    decode = """
        import jax.numpy as jnp

        SEEN = []

        def decode(x, n):
            out = jnp.zeros_like(x)
            for i in range(n):
                SEEN.append(type(x).__name__)
                out = out.at[i].set(jnp.tanh(x[i] + out[i - 1]))
            return out
        """
    model = """
        import jax
        from pkg.steps import decode

        class Net:
            def __init__(self):
                self.act = {value}

            def __call__(self, x):
                return self.act(x, x.shape[0])

        def make():
            return decode

        @jax.jit
        def run(x):
            return Net()(x)
        """
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/steps.py": decode, "pkg/model.py": model.format(value="decode")})
    for args in (["."], ["pkg/steps.py"]):
        found = _check(root, *args)
        assert [(Path(d["filename"]).name, d["code"]) for d in found] == [("steps.py", "JLF001")], (args, found)
    (root / "pkg/model.py").write_text(textwrap.dedent(model.format(value="make()")))
    assert _check(root, ".") == []

    sys.path.insert(0, str(root))
    try:
        import importlib

        steps = importlib.import_module("pkg.steps")
        (root / "pkg/model.py").write_text(textwrap.dedent(model.format(value="decode")))
        net = importlib.import_module("pkg.model")
        net.run(jnp.ones(4))
        assert steps.SEEN and all("Tracer" in name for name in steps.SEEN), steps.SEEN
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]


def test_a_numpy_array_combined_with_a_python_number_stays_on_the_host() -> None:
    """`table = table.astype("int64") - 1` after a loop filling the NumPy `table`: still a NumPy
    array, so the loop builds host values (before, the rebinding read as unknown and the loop
    was reported)."""
    source = (
        "import jax\nimport numpy as np\n\n\ndef table_of(n):\n    table = np.zeros((n, 3 ** n))\n"
        "    for i in range(n):\n        table[i, :] = np.tile(np.ones((1, 3 ** i)), (1, 3 ** (n - i)))\n"
        "    table = table.astype('int64') - 1\n    return table\n\n\n"
        "@jax.jit\ndef f(x):\n    return x * table_of(x.shape[0])[0, 0]\n"
    )
    assert [d.code for d in lint_text(source, "m.py", Settings()) if d.code in ("JLF001", "JLF002")] == []
    parsed = ParsedModule(source, "m.py")
    traced = next(t for f, t in find_traced_functions(parsed).items() if f.name.value == "table_of")
    table = ValueKinds(parsed, traced, module_constants(parsed)).of_name("table")
    assert table.name == "static" and table.host
