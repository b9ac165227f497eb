"""Tracing across the modules checked together: a function is traced when traced code in another
checked module calls it, wraps it in a transform or hands it to `lax` control flow, through
absolute, relative and re-exported imports, transitively. Fixes made there run equal on JAX."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import jaxloopfix.engine as engine
from jaxloopfix import api
from jaxloopfix.cli import main
from jaxloopfix.config import Settings
from jaxloopfix.prefilter import Scan, _collected
from jaxloopfix.project import FRAMEWORK_ROOTS, may_define_framework_classes, module_name

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project"

LOOP = """
    outs = []
    for t in range(xs.shape[0]):
        h = jnp.tanh(h + xs[t])
        outs.append(h)
    return jnp.stack(outs)
"""


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def _found(root: Path, *paths: str) -> dict[str, list[tuple[str, str]]]:
    """{relative file: [(code, traced reason)]} for a check of `paths` (default: the whole tree)."""
    results = api.check_paths([root / p for p in paths] or [root], Settings())
    out: dict[str, list[tuple[str, str]]] = {}
    for result in results:
        assert not result.errors, result.errors
        for d in result.diagnostics:
            out.setdefault(Path(result.filename).relative_to(root).as_posix(), []).append((d.code, (d.traced_reason or "").split(" is traced: ", 1)[-1]))
    return out


def _helper(name: str = "encode", params: str = "h, xs") -> str:
    return f"import jax.numpy as jnp\n\n\ndef {name}({params}):" + textwrap.indent(textwrap.dedent(LOOP), "    ").rstrip() + "\n"


def test_module_names_follow_the_package_layout(tmp_path: Path) -> None:
    _tree(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/sub/__init__.py": "", "src/pkg/sub/m.py": "", "script.py": "",
                     "my-script.py": ""})
    found = module_name(tmp_path / "src/pkg/sub/m.py")
    assert found is not None and (found.name, found.package, found.root) == ("pkg.sub.m", "pkg.sub", tmp_path / "src")
    init = module_name(tmp_path / "src/pkg/sub/__init__.py")
    assert init is not None and (init.name, init.package) == ("pkg.sub", "pkg.sub")
    script = module_name(tmp_path / "script.py")
    assert script is not None and (script.name, script.package) == ("script", "")
    assert module_name(tmp_path / "my-script.py") is None


def test_fixture_package_reports_loops_traced_from_another_module() -> None:
    found = _found(FIXTURE)
    assert found == {
        "seqmodel/layers.py": [
            ("JLF001", "called from traced function `loss` on line 11 of seqmodel/train.py"),
            ("JLF002", "the body of `lax.scan` on line 12 of seqmodel/train.py"),
        ]
    }
    # Alone, layers.py still sees what train.py traces (the project is found from the file) ...
    assert _found(FIXTURE, "seqmodel/layers.py") == found
    # ... unless isolated.
    results = api.check_paths([FIXTURE / "seqmodel/layers.py"], Settings(), isolated=True)
    assert [d for r in results for d in r.diagnostics] == []


@pytest.mark.parametrize(
    "importer",
    [
        "from pkg.layers import encode\n",
        "from .layers import encode\n",
        "from . import layers\nencode = None\n",
        "import pkg.layers as layers\n",
        "import pkg.layers\n",
        "from pkg import encode\n",  # re-exported by pkg/__init__.py
    ],
)
def test_import_forms(tmp_path: Path, importer: str) -> None:
    call = "layers.encode(h, xs)" if "layers\n" in importer else "encode(h, xs)"
    call = "pkg.layers.encode(h, xs)" if importer == "import pkg.layers\n" else call
    _tree(tmp_path, {
        "pkg/__init__.py": "from .layers import encode\n",
        "pkg/layers.py": _helper(),
        "pkg/model.py": f"import jax\n{importer}\n\n@jax.jit\ndef forward(h, xs):\n    return {call}\n",
    })
    assert [code for code, _ in _found(tmp_path)["pkg/layers.py"]] == ["JLF001"]


def test_scripts_next_to_each_other_import_without_a_package(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "helpers.py": _helper(),
        "main.py": "import jax\nfrom helpers import encode\n\nstep = jax.jit(encode)\n",
    })
    found = _found(tmp_path)
    assert found == {"helpers.py": [("JLF001", "wrapped by `jax.jit(encode)` on line 4 of main.py")]}


@pytest.mark.parametrize(
    ("metadata", "text"),
    [
        ("setup.cfg", "[metadata]\nname = other-name\n\n[options]\npackage_dir =\n  imaging = .\n"),
        ("setup.cfg", "[metadata]\nname = imaging\n"),
        ("pyproject.toml", '[project]\nname = "imaging"\n\n[tool.setuptools.package-dir]\nimaging = "."\n'),
        ("pyproject.toml", '[project]\nname = "imaging"\n'),
        ("setup.py", 'from setuptools import setup\nsetup(name="x", package_dir={"imaging": "."})\n'),
    ],
)
def test_a_root_that_is_the_package_is_imported_by_its_declared_name(tmp_path: Path, metadata: str, text: str) -> None:
    """The repository root is the package (`__init__.py` beside the modules) and its metadata
    names it: `from imaging import maps` and `from imaging.ops import warp` resolve to the root's
    files, whatever the checkout's directory is called."""
    root = tmp_path / "0f3a-checkout"
    _tree(root, {
        metadata: text,
        "__init__.py": "",
        "maps.py": _helper(),
        "ops/__init__.py": "",
        "ops/warp.py": _helper("warp"),
        "pipeline.py": "import jax\nfrom imaging import maps\nfrom imaging.ops.warp import warp\n\n"
                       "@jax.jit\ndef run(h, xs):\n    return maps.encode(h, xs) + warp(h, xs)\n",
    })
    found = _found(root)
    assert sorted(found) == ["maps.py", "ops/warp.py"], found


@pytest.mark.parametrize(
    "text", ['tool = "x"\n', "[tool]\nsetuptools = 3\n", "[project]\nname = 5\n", "[tool.setuptools]\npackage-dir = [1]\n"]
)
def test_metadata_of_odd_shapes_names_no_package_and_never_crashes(tmp_path: Path, text: str) -> None:
    root = tmp_path / "checkout"
    _tree(root, {"pyproject.toml": text, "__init__.py": "", "maps.py": _helper(),
                 "pipeline.py": "import jax\nfrom imaging import maps\n\nrun = jax.jit(maps.encode)\n"})
    assert _found(root) == {}


def test_a_root_package_without_metadata_is_not_guessed(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    _tree(root, {
        "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
        "__init__.py": "",
        "maps.py": _helper(),
        "pipeline.py": "import jax\nfrom imaging import maps\n\nrun = jax.jit(maps.encode)\n",
    })
    assert _found(root) == {}


FORCES = """
import jax.numpy as jnp


def spring(x, k):
    f = jnp.zeros_like(x)
    for d in range(x.shape[0]):
        f = f + k * (x[d] - x)
    return f


def stiff(x, k):
    f = jnp.zeros_like(x)
    for d in range(x.shape[0]):
        f = f + k * k * (x[d] - x)
    return f


def nothing(x, k):
    return jnp.zeros_like(x)
"""

INTEGRATE = """
from functools import partial

import jax

from sim.forces import nothing


@partial(jax.jit, static_argnames=["force"])
def verlet(x, v, k, force=nothing):
    return x + v, v + force(x, k)


def relax(x, v, k, force=nothing, log=print, steps=10):
    log("relaxing")
    for _ in range(steps):
        x, v = verlet(x, v, k, force=force)
    return x
"""


@pytest.mark.parametrize("run", [
    "import sim.forces\nimport sim.integrate\n\n\ndef main(x, v):\n"
    "    return sim.integrate.relax(x, v, 0.1, force=sim.forces.spring, log=sim.forces.stiff)\n",
    "from functools import partial\n\nfrom sim import forces\nfrom sim.integrate import relax\n\n\ndef main(x, v):\n"
    "    return relax(x, v, 0.1, partial(forces.spring), forces.stiff)\n",
])
def test_a_function_handed_through_host_code_of_another_module_runs_traced(tmp_path: Path, run: str) -> None:
    """A host script passes `forces.spring` to `integrate.relax`, which hands its `force` to a
    jitted step that calls it: `spring` runs traced, though no traced code of `run.py` or of
    `forces.py` names it. `stiff`, passed where `relax` only calls it on the host (`log`), does
    not run traced."""
    _tree(tmp_path, {"sim/__init__.py": "", "sim/forces.py": FORCES, "sim/integrate.py": INTEGRATE, "sim/run.py": run})
    found = _found(tmp_path)
    assert list(found) == ["sim/forces.py"]
    [(code, why)] = found["sim/forces.py"]
    assert code == "JLF002" and why.startswith("passed as `force` to `relax` on line "), why
    assert why.endswith("of sim/run.py, where traced code calls it"), why


SPRING = "import jax.numpy as jnp\n\n\ndef {name}(x):\n    f = jnp.zeros_like(x)\n    for d in range(x.shape[0]):\n" \
         "        f = f + 2.0 * (x[d] - x)\n    return f\n"


def test_a_call_counts_for_the_module_its_import_resolves_to(tmp_path: Path) -> None:
    """Two experiments each have a `utils.py` with a `run(f, x)`; only the second's traces `f`.
    `exp1/main.py` passes `fn` to its own `utils.run`, which calls it on the host: not traced."""
    _tree(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "exp1/main.py": SPRING.format(name="fn") + "from utils import run\n\n\ndef main(x):\n    return run(fn, x)\n",
        "exp1/utils.py": "def run(f, x):\n    return [f(v) for v in x]\n",
        "exp2/utils.py": "import jax\n\n\ndef run(f, x):\n    return jax.jit(f)(x)\n",
    })
    assert _found(tmp_path) == {}


def test_the_passed_function_is_the_one_the_caller_names(tmp_path: Path) -> None:
    """`examples/train.py` passes its own `force`; a `train.py` at the root defines another
    `force`, passed nowhere. Only the passed one is traced."""
    _tree(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "sim/__init__.py": "",
        "sim/integrate.py": "import jax\n\n\ndef relax(x, force):\n    return jax.jit(force)(x)\n",
        "train.py": SPRING.format(name="force"),
        "examples/train.py": SPRING.format(name="force") + "from sim.integrate import relax\n\n\n"
                             "def main(x):\n    return relax(x, force)\n",
    })
    assert list(_found(tmp_path)) == ["examples/train.py"]


def test_a_parameter_shadowing_a_module_function_is_not_that_function(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "sim/__init__.py": "",
        "sim/integrate.py": INTEGRATE.replace("from sim.forces import nothing\n", "").replace("=nothing", "=None"),
        "sim/run.py": SPRING.format(name="spring") + "from sim.integrate import relax\n\n\n"
                      "def main(x, v, spring):\n    return relax(x, v, 0.1, force=spring)\n",
    })
    assert _found(tmp_path) == {}


def test_a_root_importing_another_package_is_not_named_after_it(tmp_path: Path) -> None:
    """Root modules `nn.py` and `typing.py`, and imports `from jax.nn import ...`, `from
    jax.typing import ...`: `jax` also gives `numpy` and `jit`, which the root does not have,
    so the root is not `jax` and `jax.nn.softmax` is not the root's `nn.softmax`."""
    _tree(tmp_path, {
        "__init__.py": "",
        "nn.py": SPRING.format(name="softmax"),
        "typing.py": "from jax.typing import ArrayLike\n",
        "model.py": "import jax\nimport jax.numpy as jnp\nfrom jax.nn import initializers\n\n\n"
                    "@jax.jit\ndef forward(x):\n    return jax.nn.softmax(x)\n",
    })
    assert _found(tmp_path) == {}


@pytest.mark.parametrize("marker", ["", "pyproject.toml"])
@pytest.mark.parametrize("directory", ["0f3a-checkout", "checkout"])
def test_a_root_package_is_named_by_how_its_modules_import_each_other(tmp_path: Path, marker: str, directory: str) -> None:
    """No metadata names the package, with or without a project marker (a checkout of the
    modules alone, as a corpus extracts them): modules that import two or more of the root's
    own modules as `imaging.<module>` name the root `imaging`, so jitted code in one of them
    traces the loops of the others, a nested package's included."""
    root = tmp_path / directory
    _tree(root, {
        **({marker: "[tool.ruff]\nline-length = 100\n"} if marker else {}),
        "__init__.py": "",
        "maps.py": _helper(),
        "ops/__init__.py": "",
        "ops/warp.py": _helper("warp"),
        "pipeline.py": "import jax\nfrom imaging import (maps,\n    ops)\nimport imaging.ops.warp\n\n"
                       "@jax.jit\ndef run(h, xs):\n    return maps.encode(h, xs) + imaging.ops.warp.warp(h, xs)\n",
    })
    assert sorted(_found(root)) == ["maps.py", "ops/warp.py"]


def test_two_names_importing_the_root_modules_name_no_package(tmp_path: Path) -> None:
    """`imaging` and `vision` each import two of the root's modules: which one the root is
    cannot be told, so neither is taken."""
    root = tmp_path / "checkout"
    _tree(root, {
        "__init__.py": "",
        "maps.py": _helper(),
        "warp.py": _helper("warp"),
        "a.py": "from vision import maps, warp\n",
        "pipeline.py": "import jax\nfrom imaging import maps, warp\n\nrun = jax.jit(maps.encode)\n",
    })
    assert _found(root) == {}


@pytest.mark.parametrize("marker", [True, False])
def test_namespace_packages_without_init_files(tmp_path: Path, marker: bool) -> None:
    """`from src.models.layers import encode` where neither `src/` nor `src/models/` has an
    `__init__.py` (PEP 420 namespace packages), with or without a project root marker."""
    _tree(tmp_path, {
        **({"pyproject.toml": ""} if marker else {}),
        "src/models/layers.py": _helper(),
        "scripts/train.py": "import jax\nfrom src.models.layers import encode\n\nstep = jax.jit(encode)\n",
        "other/layers.py": _helper(),  # same file name, not imported: stays untraced
    })
    found = _found(tmp_path)
    assert list(found) == ["src/models/layers.py"]
    ((code, reason),) = found["src/models/layers.py"]
    assert code == "JLF001" and reason.startswith("wrapped by `jax.jit(encode)` on line 4 of") and reason.endswith("train.py")


def test_tracing_follows_chains_of_modules(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import jax\nfrom pkg.b import middle\n\n@jax.jit\ndef top(h, xs):\n    return middle(h, xs)\n",
        "pkg/b.py": "from pkg.c import encode\n\ndef middle(h, xs):\n    return encode(h, xs) * 2\n",
        "pkg/c.py": _helper(),
    })
    found = _found(tmp_path)
    assert list(found) == ["pkg/c.py"]
    assert found["pkg/c.py"][0][1].startswith("called from traced function `middle` on line 4 of")


def test_static_arguments_of_a_remote_transform_are_static(tmp_path: Path) -> None:
    """`jax.jit(layers.run, static_argnames="n")`: `range(n)` unrolls (JLF002), `range(m)` fails (JLF003)."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/layers.py": """
            import jax.numpy as jnp


            def run(x, n, m):
                for i in range(n):
                    x = x * 2
                for i in range(m):
                    x = x + 1
                return x
        """,
        "pkg/train.py": "import jax\nfrom pkg import layers\n\nrun = jax.jit(layers.run, static_argnames=('n',))\n",
    })
    found = _found(tmp_path)["pkg/layers.py"]
    assert [code for code, _ in found] == ["JLF002", "JLF003"]
    assert found[1][1].startswith("wrapped by `jax.jit(layers.run, static_argnames=('n',))` on line 4")


def test_host_code_and_shadowing_names_are_not_followed(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/layers.py": _helper("encode") + "\n\n" + _helper("other").split("\n", 3)[3],
        "pkg/train.py": """
            import jax
            from pkg.layers import encode, other


            def host(h, xs):
                return encode(h, xs)  # not traced: nothing transforms `host`


            @jax.jit
            def forward(h, xs, layers):
                return layers.other(h, xs)  # `layers` is a parameter, not the module
        """,
    })
    assert _found(tmp_path) == {}


@pytest.mark.parametrize("prefilter", [True, False])
def test_a_method_called_on_a_parameter_declared_with_an_imported_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefilter: bool
) -> None:
    """`cell.advance(...)` in traced code with `cell: Cell` imported (through a package
    re-export) from another project module: Python runs `Cell.advance` there, or a subclass's
    override, so both are traced; a method of another class of that name is not."""
    _tree(tmp_path, {
        "sim/__init__.py": "from .cells import Cell\n",
        "sim/cells.py": """
            import jax.numpy as jnp


            class Cell:
                def advance(self, states, rates):
                    out = []
                    for k in range(states.shape[0]):
                        out.append(states[k] * rates[k])
                    return jnp.stack(out)


            class LeakyCell(Cell):
                def advance(self, states, rates):
                    total = jnp.zeros(states.shape[1:])
                    for k in range(states.shape[0]):
                        total = total * 0.5 + states[k] * rates[k]
                    return total


            class Recorder:
                def advance(self, states, rates):
                    for k in range(states.shape[0]):
                        print(states[k])
        """,
        "sim/run.py": """
            import jax
            from sim import Cell


            def build_step(cell: Cell):
                def step(states, rates):
                    return cell.advance(states, rates), None

                return jax.jit(step)
        """,
    })
    if not prefilter:
        monkeypatch.setattr(engine, "scan", lambda text, *a, **k: Scan(_collected(text), None))
    found = _found(tmp_path)
    assert list(found) == ["sim/cells.py"]
    assert [code for code, _ in found["sim/cells.py"]] == ["JLF001", "JLF002"]
    assert all(reason.startswith("called as `cell.advance` on a `Cell` (its declared type) from traced function `step`")
               for _, reason in found["sim/cells.py"])


UNION_CLASSES = """
    import jax.numpy as jnp


    class Cell:
        def advance(self, states):
            total = jnp.zeros(states.shape[1:])
            for k in range(states.shape[0]):
                total = jnp.tanh(total + states[k])
            return total


    class Leaky:
        def advance(self, states):
            total = jnp.zeros(states.shape[1:])
            for k in range(states.shape[0]):
                total = total * 0.5 + states[k]
            return total


    class Unrelated:
        def advance(self, states):
            total = jnp.zeros(states.shape[1:])
            for k in range(states.shape[0]):
                total = total - states[k]
            return total
"""


@pytest.mark.parametrize(("annotation", "expected"), [
    ("Cell | Leaky", ["Cell", "Leaky"]),
    ("Union[Cell, Leaky]", ["Cell", "Leaky"]),
    ("Optional[Cell]", ["Cell"]),
    ("Cell | None", ["Cell"]),
])
def test_a_method_called_on_a_parameter_declared_with_a_union_of_imported_classes(
    tmp_path: Path, annotation: str, expected: list[str]
) -> None:
    """`scf.eval_orbitals(...)` in traced code with `scf: MolecularSCF | PeriodicSCF`: Python
    may run the method of any member of the union, so each is traced; a class the union does
    not name is not."""
    _tree(tmp_path, {
        "sim/__init__.py": "",
        "sim/cells.py": UNION_CLASSES,
        "sim/run.py": f"""
            from typing import Optional, Union

            import jax
            from sim.cells import Cell, Leaky


            def build(cell: {annotation}):
                def step(states):
                    return cell.advance(states)

                return jax.jit(step)
        """,
    })
    found = _found(tmp_path)
    assert list(found) == ["sim/cells.py"]
    reasons = [reason for _, reason in found["sim/cells.py"]]
    assert [reason.split("on a `", 1)[1].split("`", 1)[0] for reason in reasons] == expected


def test_a_method_called_on_a_parameter_declared_with_a_union_of_module_classes(tmp_path: Path) -> None:
    """The same with the classes defined in the module that calls the method."""
    _tree(tmp_path, {"m.py": UNION_CLASSES + """

    @jax.jit
    def step(cell: "Cell | Leaky", states):
        return cell.advance(states)
"""})
    text = (tmp_path / "m.py").read_text()
    (tmp_path / "m.py").write_text("import jax\n" + text)
    found = _found(tmp_path)
    reasons = [reason for _, reason in found["m.py"]]
    assert len(reasons) == 2 and all("(its declared type)" in r for r in reasons), reasons
    assert ["`Cell`" in reasons[0], "`Leaky`" in reasons[1]] == [True, True]


def test_results_do_not_depend_on_the_prefilter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURE, tmp_path / "project")
    with_prefilter = _found(tmp_path / "project")
    monkeypatch.setattr(engine, "scan", lambda text, *a, **k: Scan(_collected(text), None))
    assert _found(tmp_path / "project") == with_prefilter


PREFILTER_CASES = {
    "objects_in_a_list": {
        "stages.py": """
            import jax
            import jax.numpy as jnp


            class Stage:
                def __call__(self, x):
                    for i in range(1, x.shape[0]):
                        x = x.at[i].set(jnp.sin(x[i - 1]))
                    return x


            @jax.jit
            def run(x):
                stages = [Stage(), Stage()]
                return stages[0](x)
        """,
    },
    "partial_of_an_untyped_method": {
        "sims.py": """
            import jax.numpy as jnp


            class Pendulum:
                def integrate(self, state, forces):
                    for t in range(forces.shape[0]):
                        state = state + 0.1 * jnp.sin(state) + forces[t]
                    return state
        """,
        "runner.py": """
            from functools import partial

            import jax


            def integrate(x):
                return x


            def make(sim, config):
                return jax.jit(partial(sim.integrate, config))
        """,
    },
    "a_factory_result_unpacked_in_a_module_without_loops": {
        "factory.py": """
            import jax.numpy as jnp


            def make_density(mus):
                def normaliser(z):
                    return jnp.sum(z)

                def density(z):
                    total = jnp.zeros_like(z)
                    for mu in mus:
                        total = total + jnp.exp(-(z - mu) ** 2)
                    return total

                return normaliser, density
        """,
        "caller.py": """
            import jax
            import jax.numpy as jnp
            from factory import make_density


            def main():
                norm, dens = make_density(jnp.arange(6.0))
                fast = jax.jit(dens)
                return fast(jnp.ones(2)), norm(jnp.ones(2))
        """,
    },
}


@pytest.mark.parametrize("case", sorted(PREFILTER_CASES))
def test_the_prefilter_keeps_what_tracing_reaches(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class called in traced code (`Stage()`) still lets the objects' `__call__` through, and a
    transform of an untyped object's method wrapped in `partial` (with a local function of the
    same name) still sends the method to the project pass: each loop is reported, as without
    the prefilter."""
    _tree(tmp_path, PREFILTER_CASES[case])
    with_prefilter = _found(tmp_path)
    assert sum(len(v) for v in with_prefilter.values()) == 1, with_prefilter
    monkeypatch.setattr(engine, "scan", lambda text, *a, **k: Scan(_collected(text), None))
    assert _found(tmp_path) == with_prefilter


RUN = """
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from seqmodel.train import loss
w = jnp.arange(16.0).reshape(4, 4) / 40
xs = jnp.sin(jnp.arange(28.0)).reshape(7, 4)
h = jnp.cos(jnp.arange(4.0))
value, grads = jax.value_and_grad(loss, argnums=(0, 1, 2))(w, xs, h)
print(json.dumps([float(value)] + [jnp.ravel(g).tolist() for g in grads]))
"""


def _run(package_root: Path) -> list:
    env = {**os.environ, "PYTHONPATH": str(package_root), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_fix_across_modules_runs_equal_on_jax(tmp_path: Path) -> None:
    original = tmp_path / "original"
    fixed = tmp_path / "fixed"
    shutil.copytree(FIXTURE, original)
    shutil.copytree(FIXTURE, fixed)
    # The loop's carry meets `xs[t]` of unknown shape: an unsafe fix.
    outcome = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(fixed)])
    assert outcome.exit_code == 0, outcome.output
    assert "lax.scan" in (fixed / "seqmodel/layers.py").read_text()
    assert (fixed / "seqmodel/train.py").read_text() == (original / "seqmodel/train.py").read_text()
    again = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(fixed)])
    assert again.exit_code == 0 and "All checks passed" in again.output
    expected, actual = _run(original), _run(fixed)
    assert actual[0] == pytest.approx(expected[0], rel=1e-10)
    for e, a in zip(expected[1:], actual[1:], strict=True):
        assert a == pytest.approx(e, rel=1e-9, abs=1e-12)


MODEL = """
import jax.numpy as jnp
from {import_from} import {base}


class Encoder({base}):
    def __call__(self, xs):
        h = jnp.zeros(4)
        hs = []
        for t in range(xs.shape[0]):
            h = jnp.tanh(h + xs[t])
            hs.append(h)
        for layer in self.layers:  # a layer loop: never reported
            h = layer(h)
        return jnp.stack(hs), h

    def setup(self):
        self.layers = [lambda h: h for _ in range(3)]
"""


@pytest.mark.parametrize(
    ("base_module", "label"),
    [
        ("import flax.linen as nn\n\n\nclass Base(nn.Module):\n    hidden: int = 4\n", "Flax module"),
        ("import equinox as eqx\n\n\nclass Base(eqx.Module):\n    hidden: int = 4\n", "Equinox module"),
        ("import haiku as hk\n\n\nclass Base(hk.Module):\n    pass\n", "Haiku module"),
    ],
)
@pytest.mark.parametrize("import_from", ["pkg", "pkg.base", ".base"])
def test_framework_base_class_from_another_module(tmp_path: Path, base_module: str, label: str, import_from: str) -> None:
    _tree(tmp_path, {
        "pkg/__init__.py": "from .base import Base\n",
        "pkg/base.py": base_module,
        "pkg/model.py": MODEL.format(import_from=import_from, base="Base"),
    })
    found = _found(tmp_path)
    assert found == {"pkg/model.py": [("JLF001", f"method `__call__` of {label} `Encoder`")]}


def test_framework_classes_chain_through_modules(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": "import flax.linen as nn\n\n\nclass Base(nn.Module):\n    pass\n",
        "pkg/mid.py": "from pkg.base import Base\n\n\nclass Mid(Base):\n    pass\n",
        "pkg/model.py": MODEL.format(import_from="pkg.mid", base="Mid"),
        "pkg/plain.py": "class Plain:\n    pass\n",
        "pkg/other.py": MODEL.format(import_from="pkg.plain", base="Plain"),
    })
    assert _found(tmp_path) == {"pkg/model.py": [("JLF001", "method `__call__` of Flax module `Encoder`")]}


def test_class_flow_is_skipped_when_no_file_can_define_a_framework_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree that never names flax, haiku or equinox (the standard library, a plain JAX
    project) has no framework classes to pass on: a class deriving from a project class is
    not worth a libcst pass. Once any file names a framework, the class flow is followed."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/plain.py": "class Plain:\n    pass\n",
        "pkg/other.py": MODEL.format(import_from="pkg.plain", base="Plain"),
    })
    parsed: list[str] = []
    real_parse = engine.parse

    def recording_parse(text: str, filename: str, reduced=None, ast_tree=None):
        parsed.append(Path(filename).name)
        return real_parse(text, filename, reduced, ast_tree)

    monkeypatch.setattr(engine, "parse", recording_parse)
    assert _found(tmp_path) == {}
    assert "other.py" not in parsed
    (tmp_path / "pkg" / "base.py").write_text("import flax.linen as nn\n")
    parsed.clear()
    assert _found(tmp_path) == {}
    assert "other.py" in parsed


@pytest.mark.parametrize(
    ("texts", "extra", "expected"),
    [
        (["import jax\n", "class A(B): pass\n"], (), False),
        (["import flaxen\n# haikus and equinoxes\n"], (), False),
        (["import jax\n", "from flax import linen as nn\n"], (), True),
        (["import haiku as hk\n"], (), True),
        (["x = equinox.Module\n"], (), True),
        (["from mylib.layers import Layer\n"], ("mylib.layers.Layer",), True),
        (["import jax\n"], ("mylib.layers.Layer",), False),
        (["import jax\n"], ("Layer",), True),  # a base class of any module
        # A jitted method's calls on `self` reach subclasses' overrides in other modules.
        (["import jax\n\n\nclass A:\n    @jax.jit\n    def f(self, x):\n        return self.g(x)\n"], (), True),
        (["import jax\n\n\n@jax.jit\ndef f(x):\n    return x\n"], (), False),
    ],
)
def test_framework_classes_are_possible_only_where_a_framework_is_named(
    texts: list[str], extra: tuple[str, ...], expected: bool
) -> None:
    assert may_define_framework_classes(texts, extra) is expected


def test_framework_roots_cover_every_known_module_base() -> None:
    from jaxloopfix.analysis.traced import MODULE_BASES

    assert {name.split(".", 1)[0] for name in MODULE_BASES} == FRAMEWORK_ROOTS


HOOK_BASE = """
from functools import partial

import jax


class Algorithm:
    @partial(jax.jit, static_argnames=("self",))
    def ask(self, key, state):
        return self._ask(key, state)

    def _ask(self, key, state):
        raise NotImplementedError
"""

HOOK_SUBCLASS = """
import jax
import jax.numpy as jnp

from {import_from} import {base}


class Rotating({base}):
    def __init__(self, m):
        self.m = m

    def _ask(self, key, state):
        d = jax.random.normal(key, state.shape)
        for i in range(self.m):
            d = d - 0.1 * jnp.dot(d, state[i]) * state[i]
        return d

    def describe(self, state):
        for i in range(self.m):
            state = state + 1.0
        return state
"""


def test_subclass_override_of_a_hook_called_by_a_jitted_base_method(tmp_path: Path) -> None:
    """`Algorithm.ask` is jitted and calls `self._ask`: a subclass's `_ask`, two modules away,
    runs under that trace. Methods the base never calls stay host code."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": HOOK_BASE,
        "pkg/mid.py": HOOK_SUBCLASS.format(import_from="pkg.base", base="Algorithm").replace("Rotating", "Mid"),
        "pkg/algo.py": HOOK_SUBCLASS.format(import_from=".mid", base="Mid"),
    })
    found = _found(tmp_path)
    reason = "method `_ask` of `{}`, a subclass of `Algorithm`, whose traced methods call it on `self`"
    assert found == {
        "pkg/mid.py": [("JLF002", reason.format("Mid"))],
        "pkg/algo.py": [("JLF002", reason.format("Rotating"))],
    }


HOST_OVERRIDE = """
import numpy as np

from pkg.base import Algorithm


class HostAlgorithm(Algorithm):
    def ask(self, key, state):
        return self._ask(key, np.asarray(state))

    def _ask(self, key, state):
        d = state.copy()
        for i in range(len(state)):
            d = d - 0.1 * np.dot(d, state[i]) * state[i]
        return d


class HostLeaf(HostAlgorithm):
    def _ask(self, key, state):
        d = state.copy()
        for i in range(len(state)):
            d = d + state[i]
        return d


class Delegating(Algorithm):
    def ask(self, key, state):
        return super().ask(key, state)

    def _ask(self, key, state):
        d = state
        for i in range(state.shape[0]):
            d = d + state[i]
        return d


class Plain(Algorithm):
    pass


class ViaGrandparent(Plain):
    def ask(self, key, state):
        return Algorithm.ask(self, key, state)

    def _ask(self, key, state):
        d = state
        for i in range(state.shape[0]):
            d = d * state[i]
        return d
"""


def test_a_subclass_that_overrides_the_jitted_caller_does_not_run_the_hook_traced(tmp_path: Path) -> None:
    """Python resolves `ask` on a `HostAlgorithm` to its own, untraced `ask`: the jitted
    `Algorithm.ask` never runs on it, so neither its `_ask` nor that of its subclass `HostLeaf`
    runs under that trace. A subclass whose `ask` calls `super().ask(...)`, or an ancestor's
    `Algorithm.ask(self, ...)`, still does."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": HOOK_BASE,
        "pkg/host.py": HOST_OVERRIDE,
    })
    found = _found(tmp_path)
    reason = "method `_ask` of `{}`, a subclass of `Algorithm`, whose traced methods call it on `self`"
    assert found == {"pkg/host.py": [("JLF002", reason.format("Delegating")), ("JLF002", reason.format("ViaGrandparent"))]}


DECLARED = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/kinds.py": """
        from typing import Set
        import jax

        class Effect:
            pass

        Effects = Set[Effect]
        Rows = jax.Array
    """,
    "pkg/graph.py": """
        from pkg import kinds
        from pkg.kinds import Rows

        Effects = kinds.Effects

        class Graph:
            _effects: Effects
            rows: Rows

            @property
            def effects(self) -> Effects:
                return self._effects
    """,
    "pkg/render.py": """
        import jax
        import jax.numpy as jnp
        from pkg.graph import Graph

        def render(graph: Graph, x):
            out = []
            for eff in graph.effects:
                out.append(jnp.sin(x) * 2)
            return out

        def rows(graph: Graph, h):
            outs = []
            for row in graph.rows:
                h = jnp.tanh(h + row)
                outs.append(h)
            return jnp.stack(outs)

        @jax.jit
        def run(x, graph):
            return render(graph, x), rows(graph, x)
    """,
}


def test_declared_types_from_other_modules_are_evidence(tmp_path: Path) -> None:
    """A class imported from another module declares `effects` as a set through two aliases in a
    third: the loop over it is left alone, in the project and in a single-file check (from the
    warm cache too). `rows`, declared through an alias of `jax.Array`, stays reported, and so does
    the set loop when the project is not consulted."""
    root = _tree(tmp_path, DECLARED)
    lines = {"render": 7, "rows": 13}
    for _ in range(2):  # cold, then from the results cache
        found = api.check_paths([root], Settings())
        rows = sorted((Path(r.filename).name, d.location.row) for r in found for d in r.diagnostics)
        assert rows == [("render.py", lines["rows"])]
        alone = api.check_paths([root / "pkg" / "render.py"], Settings())
        assert [d.location.row for r in alone for d in r.diagnostics] == [lines["rows"]]
    isolated = api.check_paths([root / "pkg" / "render.py"], Settings(), isolated=True)
    assert sorted(d.location.row for r in isolated for d in r.diagnostics) == [lines["render"], lines["rows"]]


def _linted_again_and_fresh(text: str, path: Path, steps: list[Settings]) -> list[engine.ModuleLint]:
    """Lints of one text with each settings in turn, each checked against a lint of a freshly
    parsed text (nothing kept from the others). Without the pre-filter every lint parses the
    whole text, so each takes up what the first kept."""
    from jaxloopfix.analysis import source

    again = [engine.lint_module(text, str(path), step, prefilter=False) for step in steps]
    fresh = []
    for step in steps:
        source._RECENT.clear()
        fresh.append(engine.lint_module(text, str(path), step, prefilter=False))
    assert [(lint.diagnostics, lint.links) for lint in again] == [(lint.diagnostics, lint.links) for lint in fresh]
    return again


def test_a_file_linted_again_with_more_seeds_gets_the_answer_of_a_fresh_lint() -> None:
    """The project pass lints a file again each time other modules trace more of it. The
    traced functions found before the seeds are applied are taken up again from the first
    lint of the text (`TracedFinder.find`); each lint must give what a lint of a freshly
    parsed text gives: the same diagnostics, notes naming the same callers, the same links."""
    from dataclasses import replace

    layers = FIXTURE / "seqmodel" / "layers.py"
    text = layers.read_text(encoding="utf-8")
    full = api.project_settings(layers, text, Settings())
    seeds = full.site.seeds
    assert len(seeds) >= 2
    # All the seeds first, then fewer: what is kept from the first lint must hold no seed.
    counts = [len(seeds), 1, 0, len(seeds)]
    steps = [replace(full, site=replace(full.site, seeds=seeds[:count])) for count in counts]
    again = _linted_again_and_fresh(text, layers, steps)
    assert [len(lint.diagnostics) for lint in again] == [2, 1, 0, 2]  # each seed traces one of the loops
    assert all("train.py" in (d.traced_reason or "") for d in again[0].diagnostics)


SHARED_QUESTIONS = {
    **{name: text for name, text in DECLARED.items() if name != "pkg/render.py"},
    "pkg/render.py": """
        import jax.numpy as jnp
        from pkg.graph import Graph

        def render_a(graph: Graph, x):
            for eff in graph.effects:
                x = jnp.sin(x)
            return x

        def render_b(graph: Graph, x):
            total = x
            for eff in graph.effects:
                total = total + jnp.cos(x)
            return total
    """,
    "pkg/train.py": """
        import jax
        from pkg import render

        @jax.jit
        def step(x, graph):
            return render.render_a(graph, x), render.render_b(graph, x)
    """,
}


def test_plans_taken_up_again_ask_what_a_fresh_lint_asks(tmp_path: Path) -> None:
    """Two functions traced from another module loop over the same declared attribute, so both
    ask the project for its declared type. A lint of the same text with only the second one
    seeded takes up that function's plans from the first lint, and must still ask, as a
    fresh lint does, though the first function asked first there."""
    from dataclasses import replace

    root = _tree(tmp_path, SHARED_QUESTIONS)
    render = root / "pkg" / "render.py"
    text = render.read_text(encoding="utf-8")
    full = api.project_settings(render, text, Settings())
    seeds = full.site.seeds
    assert [seed.name for seed in seeds] == ["render_a", "render_b"]
    # As in the project pass's first rounds: the declared types are not known yet, so asked for.
    site = replace(full.site, declared=())
    steps = [replace(full, site=replace(site, seeds=chosen)) for chosen in (seeds, seeds[1:], (), seeds)]
    again = _linted_again_and_fresh(text, render, steps)
    asked = [lint.links.declarations for lint in again]
    assert asked[0] and asked[1] == asked[0] and not asked[2] and asked[3] == asked[0]


def test_function_returned_by_a_property_and_called_on_self_is_traced(tmp_path: Path) -> None:
    """`self._solve(...)` where `_solve` is a base-class property that imports the solver lazily
    (a circular import broken inside the property): Python looks `_solve` up through the bases,
    runs the property and calls the function it returns, under the subclass method's trace."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/strategy.py": """
            import equinox as eqx

            class Strategy(eqx.Module):
                @property
                def _solve(self):
                    from pkg.solver import solve

                    return solve

            class Direct(Strategy):
                def run(self, h, xs):
                    return self._solve(h, xs)
        """,
        "pkg/solver.py": _helper("solve"),
        "pkg/unused.py": """
            class Holder:
                @property
                def _solve(self):
                    from pkg.other import encode

                    return encode

                def run(self, h, xs):
                    return self._solve(h, xs)
        """,
        "pkg/other.py": _helper(),
    })
    found = _found(tmp_path)
    assert list(found) == ["pkg/solver.py"]
    assert found["pkg/solver.py"][0][1].startswith("returned by property `_solve`, called as `self._solve` from traced function `run`")


@pytest.mark.parametrize(
    "build",
    [
        "h = layers.Block(features=8)(h)",  # the class through its module
        "h = Block(features=8)(h)",  # a module-level alias `Block = layers.Block`
        "h = make(features=8)(h)",  # `make = functools.partial(Block, ...)` inside `__call__`
    ],
)
def test_a_loop_building_another_modules_layers_is_not_array_work(tmp_path: Path, build: str) -> None:
    """Each step constructs a layer whose class another project module defines: a stack of
    distinct layers (a U-Net's resolution levels), not one step along an array axis. Built
    from a plain class of that module instead, the loop is reported."""
    model = """
        import functools

        import flax.linen as nn

        from pkg import layers

        Block = layers.Block


        class Net(nn.Module):
            levels: int = 6  # a default of 5 or more: not "a few static steps"

            @nn.compact
            def __call__(self, x):
                make = functools.partial(Block, use_bias=True)
                h = x
                hs = [h]
                for level in range(self.levels):
                    BUILD
                    hs.append(h)
                return hs
        """.replace("BUILD", build)
    layers = """
        import flax.linen as nn


        class Block(nn.Module):
            features: int
            use_bias: bool = False

            @nn.compact
            def __call__(self, x):
                return nn.Dense(self.features, use_bias=self.use_bias)(x)
        """
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": layers, "pkg/model.py": model})
    assert _found(tmp_path) == {}
    plain = """
        import jax.numpy as jnp


        class Block:
            def __init__(self, features, use_bias=False):
                self.features = features

            def __call__(self, x):
                return jnp.tanh(x)
        """
    _tree(tmp_path, {"pkg/layers.py": plain})
    assert "pkg/model.py" in _found(tmp_path)


POSTERIOR = """
    import jax.numpy as jnp


    class Posterior:
        def __init__(self, w):
            self.w = w

        def METHOD(self, mu, sigma):
            total = jnp.zeros(mu.shape[0])
            for i in range(mu.shape[1]):
                total = total + mu[:, i] * sigma[:, i] * self.w[i]
            return total


    class Model:
        def posterior(self, w):
            return Posterior(w)
    """

CALLER = """
    import jax
    import jax.numpy as jnp

    from gp.posterior import Model


    def test_grad():
        model = Model()
        model.cache = model.posterior(jnp.ones(3))

        @jax.jit
        def f(mu, sigma):
            return model.cache.METHOD(mu, sigma).sum()

        return f(jnp.ones((4, 3)), jnp.ones((4, 3)))
    """


@pytest.mark.parametrize(
    ("method", "other", "traced"),
    [
        ("quad_mixture", "", True),  # one project class defines it, no library class has it
        ("quad_mixture", "class Other:\n    def quad_mixture(self, a, b):\n        return a\n", False),  # two do
        ("update", "", False),  # optax's, flax's and dict's `update`: a library call may be meant
    ],
)
def test_a_method_called_on_an_untyped_object_is_found_by_its_name(tmp_path: Path, method: str, other: str, traced: bool) -> None:
    """`model.cache.quad_mixture(...)` from jitted code, `model.cache` set from a method's result:
    nothing types the object, but one project class alone defines a method of that name."""
    _tree(tmp_path, {
        "gp/__init__.py": "", "gp/posterior.py": POSTERIOR.replace("METHOD", method),
        "gp/other.py": other, "tests/test_it.py": CALLER.replace("METHOD", method),
    })
    found = _found(tmp_path).get("gp/posterior.py", [])
    assert bool(found) is traced, found
    if traced:
        assert f"one project class alone defines `{method}`;" in found[0][1]


def test_methods_called_on_the_same_object_tell_classes_with_a_method_of_that_name_apart(tmp_path: Path) -> None:
    """`factor.query(...)` with two project classes defining `query`: the object also has
    `marginalise` called on it, which only `Factor` defines, so `Factor.query` runs traced (a
    loop over the rows of its table, reported); `QuerySet.query` does not."""
    _tree(tmp_path, {
        "pgm/__init__.py": "",
        "pgm/factor.py": """
            import jax.numpy as jnp


            class Factor:
                def __init__(self, table):
                    self.table = table

                def marginalise(self, axis):
                    return Factor(self.table.sum(axis=axis))

                def query(self, weights):
                    total = jnp.zeros(())
                    for i in range(self.table.shape[0]):
                        total = total + weights[i] * self.table[i]
                    return total


            class QuerySet:
                def query(self, rows):
                    out = []
                    for row in rows:
                        out.append(row * 2)
                    return out
        """,
        "pgm/network.py": """
            import jax


            def marginal(factors, weights):
                factor = factors["ab"]
                factor = factor.marginalise(1)
                return factor.query(weights)


            mean = jax.jit(marginal)
        """,
    })
    found = _found(tmp_path)
    assert list(found) == ["pgm/factor.py"] and len(found["pgm/factor.py"]) == 1, found
    assert "or alone also `marginalise`, called on the same object" in found["pgm/factor.py"][0][1]


def test_the_library_method_table_holds_what_installed_jax_and_builtins_define() -> None:
    """The table by-name resolution consults is generated from the libraries themselves; the
    names of JAX's array type and of the builtin containers must be in it."""
    jnp = pytest.importorskip("jax.numpy")
    from jaxloopfix.analysis.library_methods import LIBRARY_METHODS

    for cls in (type(jnp.zeros(1)), dict, list, str):
        missing = {n for n in dir(cls) if not n.startswith("__")} - LIBRARY_METHODS
        assert not missing, (cls, sorted(missing)[:10])


SHIFTED_COPIES = {
    "pkg/__init__.py": "",
    "pkg/grid.py": """
        import jax.numpy as jnp

        def shift(values, offset):
            kept = values[slice(offset, None) if offset >= 0 else slice(None, offset)]
            return jnp.pad(kept, (max(-offset, 0), max(offset, 0)))

        def weigh(values, offset):
            return values * values[offset]
    """,
    "pkg/features.py": """
        import functools
        import jax
        import jax.numpy as jnp
        from pkg import grid

        @functools.partial(jax.jit, static_argnums=1)
        def shifted_copies(x, n_shift):
            copies = []
            for offset in range(n_shift):
                copies.append(jax.vmap(functools.partial(grid.shift, offset=offset))(x))
            return jnp.stack(copies)

        @jax.jit
        def weighted(x):
            out = []
            for t in range(x.shape[1]):
                out.append(jax.vmap(functools.partial(grid.weigh, offset=t))(x))
            return jnp.stack(out)
    """,
}


def test_an_index_that_sets_slice_bounds_in_a_helper_of_another_module_is_structure(tmp_path: Path) -> None:
    """`partial(grid.shift, offset=offset)`, where `grid.shift` (another module) slices with one bound
    set by `offset`: each step works on a different shape, so the loop is left unreported, with the
    helper and parameter named. `grid.weigh`, which reads `values[offset]` as an element, is
    reported. Without the project (isolated) the helper is unknown and both loops are reported."""
    root = _tree(tmp_path, SHIFTED_COPIES)
    for _ in range(2):  # cold, then from the results cache
        found = api.check_paths([root], Settings())
        assert sorted(d.location.row for r in found for d in r.diagnostics) == [16]
    isolated = api.check_paths([root / "pkg" / "features.py"], Settings(), isolated=True)
    assert sorted(d.location.row for r in isolated for d in r.diagnostics) == [9, 16]
    runner = CliRunner()
    shown = runner.invoke(main, ["check", "--explain", f"{root / 'pkg' / 'features.py'}:9", str(root)])
    assert "the index `offset` is passed to `shift` as `offset`, which sets one bound of its slices" in shown.output


NAMESPACE_PORTION = {
    "src/pkg/__init__.py": "",
    "src/pkg/envs/__init__.py": "",
    "src/pkg/base.py": """
        import jax

        class Env:
            @jax.jit
            def reset(self, key):
                return self._generate(key)

            def _generate(self, key):
                return key
    """,
    # `src/pkg/envs/grid/` has no `__init__.py`: a namespace portion of `pkg.envs`.
    "src/pkg/envs/grid/rooms.py": """
        import jax
        import jax.numpy as jnp

        from ...base import Env

        class Rooms(Env):
            def _generate(self, key):
                doors = jax.random.randint(key, (12, 2), 0, 16)
                grid = jnp.zeros((16, 16))
                for i in range(doors.shape[0]):
                    grid = grid.at[doors[i, 0], doors[i, 1]].set(1.0)
                return grid
    """,
    "src/pkg/envs/grid/helpers.py": "import jax.numpy as jnp\n\n\ndef ones(n):\n    return jnp.ones(n)\n",
    "scripts/run.py": "import helpers_local\n",
    "scripts/helpers_local.py": "X = 1\n",
}


def test_a_subclass_in_a_namespace_portion_of_a_package_overrides_the_traced_hook(tmp_path: Path) -> None:
    """`src/pkg/envs/grid/` has no `__init__.py` but sits in the package `pkg.envs`: Python
    imports `rooms.py` as `pkg.envs.grid.rooms`, so `from ...base import Env` is `pkg.base.Env`,
    and the override of the hook the jitted `Env.reset` calls on `self` runs traced. Scripts in a
    directory outside any package keep importing their siblings by bare name."""
    from jaxloopfix.project import module_name

    root = _tree(tmp_path, NAMESPACE_PORTION)
    rooms = module_name(root / "src/pkg/envs/grid/rooms.py")
    assert rooms is not None and rooms.package == "pkg.envs.grid"
    script = module_name(root / "scripts/run.py")
    assert script is not None and (script.name, script.package) == ("run", "")
    found = _found(root)
    assert list(found) == ["src/pkg/envs/grid/rooms.py"]
    [(code, reason)] = found["src/pkg/envs/grid/rooms.py"]
    assert code == "JLF001" and "a subclass of `Env`" in reason, reason


STAGED_DECORATOR = {
    "pkg/__init__.py": "",
    "pkg/compile.py": """
        import functools

        import jax


        def staged(method):
            compiled = jax.jit(method, static_argnums=(0,))

            @functools.wraps(method)
            def call(self, *args):
                return compiled(self, *args)

            return call
    """,
    "pkg/filters.py": """
        import jax.numpy as jnp

        from pkg import compile as compilation


        class Smoother:
            decay = 0.9

            @compilation.staged
            def run(self, series):
                level = jnp.zeros(series.shape[1:])
                for value in series:
                    level = self.decay * level + (1 - self.decay) * value
                return level

            def describe(self):
                for name in ("decay",):
                    print(name)
    """,
}


def test_a_decorator_of_another_module_that_jits_the_method_traces_it(tmp_path: Path) -> None:
    """`@compilation.staged`, where `pkg.compile.staged` wraps `jax.jit(method, static_argnums=(0,))`:
    the method it decorates runs traced (`self` static), though `filters.py` never names `jit`;
    the undecorated method stays untraced. Checked alone (isolated) the decorator is unknown."""
    root = _tree(tmp_path, STAGED_DECORATOR)
    found = _found(root)
    assert found == {"pkg/filters.py": [("JLF002", "decorated with `@compilation.staged`, which applies `jax.jit` to it")]}
    isolated = api.check_paths([root / "pkg" / "filters.py"], Settings(), isolated=True)
    assert [d for r in isolated for d in r.diagnostics] == []


ESTIMATOR = """
import jax.numpy as jnp


class Estimator:
    def update(self, xs, h):
        outs = []
        for t in range(xs.shape[0]):
            h = jnp.tanh(h + xs[t])
            outs.append(h)
        return jnp.stack(outs)


class Unused:
    def update(self, xs, h):
        for t in range(xs.shape[0]):
            h = jnp.tanh(h + xs[t])
        return h
"""


@pytest.mark.parametrize("made", [
    "self.est = Estimator()",
    "self.est = est.Estimator()",
    "ctor = custom or Alias; self.est = ctor()",
])
def test_a_method_called_on_an_instance_of_an_imported_class(tmp_path: Path, made: str) -> None:
    """`self.est.update(...)` in a jitted method, `self.est` made from a class another module
    defines (directly, through the module, or as the default of `custom or Alias`, an alias
    re-exported by the package's `__init__`): that class's `update` is traced, not its namesake."""
    _tree(tmp_path, {
        "pkg/__init__.py": "from pkg import est\nAlias = est.Estimator\n",
        "pkg/est.py": ESTIMATOR,
        "pkg/opt.py": f"""
            import jax
            import pkg
            from pkg import est
            from pkg.est import Estimator
            Alias = pkg.Alias


            class Optimizer:
                def __init__(self, custom=None):
                    {made}

                @jax.jit
                def step(self, xs, h):
                    return self.est.update(xs, h)
        """,
    })
    found = _found(tmp_path)
    assert [code for code, _ in found["pkg/est.py"]] == ["JLF001"]
    assert "on a `Estimator` instance" in found["pkg/est.py"][0][1] or "on a `Alias` instance" in found["pkg/est.py"][0][1]


def test_an_instance_of_a_parameter_is_not_resolved(tmp_path: Path) -> None:
    """`self.est = make()` with `make` a parameter: nothing says which class, nothing is traced."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/est.py": ESTIMATOR,
        "pkg/opt.py": """
            import jax
            from pkg.est import Estimator


            class Optimizer:
                def __init__(self, make):
                    self.est = make()

                @jax.jit
                def step(self, xs, h):
                    return self.est.apply(xs, h)
        """,
    })
    assert "pkg/est.py" not in _found(tmp_path)


def test_partial_of_a_project_decorator_that_jits(tmp_path: Path) -> None:
    """`@functools.partial(utils.staged, static_argnums=1)` where `staged` jits the method it
    decorates: the method is traced, and no parameter is taken for a tracer (the options are
    the decorator's to interpret)."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": "from pkg.utils.staging import staged\n",
        "pkg/utils/staging.py": """
            import functools
            import jax


            def staged(method, static_argnums=None):
                jitted = jax.jit(method, static_argnums=static_argnums)

                @functools.wraps(method)
                def decorated(instance, *args):
                    return jitted(instance, *args)

                return decorated
        """,
        "pkg/opt.py": """
            import functools
            import jax.numpy as jnp
            from pkg import utils


            class Optimizer:
                @functools.partial(utils.staged, static_argnums=1)
                def run(self, xs, h):
                    outs = []
                    for t in range(xs.shape[0]):
                        h = jnp.tanh(h + xs[t])
                        outs.append(h)
                    return jnp.stack(outs)

                @functools.partial(utils.staged, static_argnums=1)
                def repeat(self, n, h):
                    for _ in range(n):
                        h = jnp.tanh(h)
                    return h
        """,
    })
    found = _found(tmp_path)["pkg/opt.py"]
    assert [code for code, _ in found] == ["JLF001", "JLF002"], found
    assert all("utils.staged" in reason for _, reason in found)


def test_a_function_lifted_by_nnx_jit_in_another_module_is_traced(tmp_path: Path) -> None:
    """`nnx.jit(steps.descend)` and `nnx.jit(partial(refine, config))` in `train.py` trace
    functions of `steps.py`: their loops are reported there, and running `train.py` shows the
    loops really run on tracers."""
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/steps.py": """
            import jax
            import jax.numpy as jnp

            SEEN = []


            def descend(x, n):
                for _ in range(n):
                    SEEN.append(isinstance(x, jax.core.Tracer))
                    x = x - 0.1 * jnp.sin(x)
                return x


            def refine(config, x):
                for _ in range(config["steps"]):
                    SEEN.append(isinstance(x, jax.core.Tracer))
                    x = 0.5 * (x + 2.0 / x)
                return x
        """,
        "pkg/train.py": """
            from functools import partial

            from flax import nnx

            from pkg import steps
            from pkg.steps import refine

            descend = nnx.jit(steps.descend, static_argnames="n")
            sqrt2 = nnx.jit(partial(refine, {"steps": 6}))
        """,
    })
    found = _found(tmp_path)
    assert list(found) == ["pkg/steps.py"]
    assert [code for code, _ in found["pkg/steps.py"]] == ["JLF001", "JLF001"]  # they also append to `SEEN`
    assert [reason.split(" on line")[0] for _, reason in found["pkg/steps.py"]] == [
        "lifted by `nnx.jit`", "lifted by `nnx.jit`"]
    script = (
        "import jax.numpy as jnp\nfrom pkg import steps, train\n"
        "train.descend(jnp.ones(3), n=5)\nprint(float(train.sqrt2(jnp.array(1.0))))\n"
        "print(len(steps.SEEN), all(steps.SEEN))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert abs(float(out[0]) - 2 ** 0.5) < 1e-6
    assert out[1:] == ["11", "True"]  # 5 + 6 steps, each on a tracer


def test_a_transformed_method_of_an_untyped_object_traces_that_method_of_every_class(tmp_path: Path) -> None:
    """`jax.jit(env.advance)` with `env` from a registry: whichever class `env` is, its `step`
    runs traced, so every project class's `step` is checked as traced code (`reset`, called
    only eagerly, is not, nor is `Cart.init` for `jax.vmap(net.init)` on what `hk.transform`
    returned, whether bound to a name or to `self.net` in `__init__`); running the test file
    shows both envs' loops run on tracers."""
    _tree(tmp_path, {
        "envs/__init__.py": "",
        "envs/arm.py": """
            import jax
            import jax.numpy as jnp

            SEEN = []


            class Arm:
                def reset(self, q):
                    for j in range(6):
                        q = q + j
                    return q

                def apply(self, q):
                    for j in range(6):
                        q = jnp.sin(q) + j
                    return q

                def advance(self, q, links):
                    for j in range(1, 7):
                        SEEN.append(isinstance(q, jax.core.Tracer))
                        q = jnp.tanh(links[j] @ q)
                    return q
        """,
        "envs/cart.py": """
            import jax.numpy as jnp
            from envs.arm import SEEN
            import jax


            class Cart:
                def reset(self, q):
                    return q

                def init(self, q, links):
                    for t in range(links.shape[0]):
                        q = q + links[t, 0]
                    return q

                def advance(self, q, links):
                    for t in range(links.shape[0]):
                        SEEN.append(isinstance(q, jax.core.Tracer))
                        q = q + 0.1 * links[t, 0]
                    return q
        """,
        "envs/registry.py": "from envs.arm import Arm\nfrom envs.cart import Cart\n\n\ndef load(name):\n    return {'arm': Arm, 'cart': Cart}[name]()\n",
        "test_envs.py": """
            import haiku as hk
            import jax
            import jax.numpy as jnp

            from envs import registry


            def roll(name):
                env = registry.load(name)
                advance = jax.jit(env.advance)
                return advance(env.reset(jnp.zeros(3)), jnp.ones((7, 3, 3)) / 3)


            def forward(model, x):
                return jax.jit(model.apply)(x)  # `apply` is a library method name too: not `Arm.apply`


            def ensemble(keys, x):
                net = hk.transform(lambda x: hk.Linear(3)(x))
                return jax.vmap(net.init, in_axes=(0, None))(keys, x)  # haiku's `init`, not `Cart.init`


            class Ensemble:
                def __init__(self):
                    self.net = hk.transform(lambda x: hk.Linear(3)(x))

                def start(self, keys, x):
                    return jax.vmap(self.net.init, in_axes=(0, None))(keys, x)  # haiku's `init` too
        """,
    })
    found = _found(tmp_path)
    assert sorted(found) == ["envs/arm.py", "envs/cart.py"]
    assert [len(found[name]) for name in ("envs/arm.py", "envs/cart.py")] == [1, 1]  # `advance` only, not `reset`
    assert found["envs/arm.py"][0][1].startswith("`jax.jit(env.advance)` on line 10 of test_envs.py transforms a method")
    script = "import test_envs\nfrom envs.arm import SEEN\ntest_envs.roll('arm'); test_envs.roll('cart')\nprint(len(SEEN), all(SEEN))\n"
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["13", "True"]  # 6 + 7 steps, each on a tracer


def test_a_class_constructed_in_traced_code_elsewhere_runs_its_init_traced(tmp_path: Path) -> None:
    """`kernels.Carma(...)` inside a jitted loss of a test file: the Equinox module's own
    `__init__` and the helper it calls run on tracers, so the helper's loop is reported (a
    method the class never runs under a trace, and a class nobody constructs there, are not)."""
    _tree(tmp_path, {
        "kernels/__init__.py": "",
        "kernels/carma.py": """
            import equinox as eqx
            import jax
            import jax.numpy as jnp

            SEEN = []


            def acvf(roots, weights):
                total = jnp.zeros_like(roots)
                for k in range(weights.shape[0]):
                    SEEN.append(isinstance(roots, jax.core.Tracer))
                    total = total + weights[k] * roots**k
                return total


            class Carma(eqx.Module):
                values: jax.Array

                def __init__(self, roots, weights):
                    self.values = acvf(roots, weights)


            class Unused:
                def __init__(self, roots, weights):
                    for k in range(weights.shape[0]):
                        roots = roots + weights[k]
                    self.roots = roots
        """,
        "tests/test_carma.py": """
            import jax
            import jax.numpy as jnp

            from kernels import carma


            @jax.jit
            def loss(roots, weights):
                return carma.Carma(roots, weights).values.sum()
        """,
    })
    found = _found(tmp_path)
    assert list(found) == ["kernels/carma.py"]
    assert [code for code, _ in found["kernels/carma.py"]] == ["JLF001"]  # it also appends to `SEEN`
    assert found["kernels/carma.py"][0][1].startswith("called from traced function `__init__`")
    script = (
        "import sys, jax.numpy as jnp\nsys.path.insert(0, 'tests')\nimport test_carma\nfrom kernels.carma import SEEN\n"
        "test_carma.loss(jnp.ones(3) / 2, jnp.ones(5))\nprint(len(SEEN), all(SEEN))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["5", "True"]
