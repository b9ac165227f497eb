"""A JAX library's own `jit` (`brainpy.math.jit`, `brainstate.compile.jit`) compiles with JAX: the
functions it wraps run traced, as under `jax.jit`, while `numba.jit` and `torch.jit` compile
for other runtimes and leave them alone. The library here is a stand-in written for the test
(a `jit` that calls `jax.jit`, outside the checked tree); running the checked code shows its
loop really runs on tracers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxloopfix import api
from jaxloopfix.config import Settings
from jaxloopfix.engine import lint_text
from jaxloopfix.prefilter import may_have_findings

pytest.importorskip("jax")

LIBRARY = '''
import jax


def jit(fun=None, static_argnums=(), static_argnames=()):
    if fun is None:
        return lambda f: jax.jit(f, static_argnums=static_argnums, static_argnames=static_argnames)
    return jax.jit(fun, static_argnums=static_argnums, static_argnames=static_argnames)
'''

USER = '''
import jax
import jax.numpy as jnp
import {spelling}

SEEN = []


@{decorator}
def leaky(xs, rate):
    v = jnp.zeros(xs.shape[1:])
    for x in xs:
        SEEN.append(isinstance(x, jax.core.Tracer))
        v = rate * v + x
    return v
'''


def _codes(source: str) -> list[str]:
    return [d.code for d in lint_text(source, "sim.py", Settings()) if d.code in ("JLF001", "JLF002")]


@pytest.mark.parametrize(
    "spelling, decorator",
    [
        ("fastlib.math as bm", "bm.jit"),
        ("fastlib", "fastlib.jit(static_argnames='rate')"),
        ("functools", "functools.partial(fastlib.jit, static_argnames='rate')"),
    ],
)
def test_a_library_jit_traces_what_it_wraps(tmp_path: Path, spelling: str, decorator: str) -> None:
    source = USER.format(spelling=spelling, decorator=decorator)
    if "partial" in decorator:
        source = source.replace("import functools", "import functools\nimport fastlib")
    assert may_have_findings(source)
    assert _codes(source) == ["JLF001"]  # the loop appends to `SEEN` too
    lib = tmp_path / "lib" / "fastlib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("from fastlib.math import jit\n")
    (lib / "math.py").write_text(textwrap.dedent(LIBRARY))
    (tmp_path / "sim.py").write_text(source)
    script = "import jax.numpy as jnp, sim\nsim.leaky(jnp.ones((6, 2)), 0.5)\nprint(len(sim.SEEN), all(sim.SEEN))\n"
    env_path = f"{tmp_path / 'lib'}:{tmp_path}"
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}).stdout.split()
    assert out == ["6", "True"]  # six steps, each on a tracer


@pytest.mark.parametrize("spelling, decorator", [("numba", "numba.jit"), ("numba", "numba.cuda.jit"), ("torch", "torch.jit.script")])
def test_jits_of_other_runtimes_leave_the_function_untraced(spelling: str, decorator: str) -> None:
    assert _codes(USER.format(spelling=spelling, decorator=decorator)) == []


def test_a_project_function_wrapped_by_a_library_jit_in_another_module_is_traced(tmp_path: Path) -> None:
    """`run = bm.jit(steps.leaky)` in `train.py` traces `leaky` in `steps.py`."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "steps.py").write_text(
        "import jax.numpy as jnp\n\n\ndef leaky(xs, rate):\n    v = jnp.zeros(xs.shape[1:])\n"
        "    for x in xs:\n        v = rate * v + x\n    return v\n"
    )
    (tmp_path / "pkg" / "train.py").write_text(
        "import jax\nimport fastlib.math as bm\nfrom pkg import steps\n\nrun = bm.jit(steps.leaky, static_argnames='rate')\n"
    )
    results = api.check_paths([tmp_path], Settings())
    found = {Path(r.filename).name: [d.code for d in r.diagnostics] for r in results if r.diagnostics}
    assert found == {"steps.py": ["JLF002"]}


def test_a_module_that_imports_only_the_library_is_checked() -> None:
    """No `import jax` in the module: the `jit` of a library built on JAX (`JAX_LIBRARIES`,
    brainpy here) makes its functions traced; an unknown library's needs JAX imported beside it."""
    assert _codes(
        "import fastlib.math as bm\n\n\n@bm.jit\ndef leaky(xs):\n    v = 0.0\n    for x in xs:\n"
        "        v = 0.5 * v + x\n    return v\n"
    ) == []
    source = (
        "import brainpy.math as bm\n\n\n@bm.jit\ndef leaky(xs):\n    v = 0.0\n    for x in xs:\n"
        "        v = 0.5 * v + x\n    return v\n"
    )
    assert may_have_findings(source)
    assert _codes(source) == ["JLF002"]


@pytest.mark.parametrize(
    "imports, decorator",
    [
        ("import thunder\nimport torch", "thunder.jit"),  # another compiler, in a module without JAX
        ("import cutlass.cute as cute", "cute.jit"),
    ],
)
def test_a_jit_with_nothing_tying_it_to_jax_leaves_the_function_untraced(imports: str, decorator: str) -> None:
    source = f"{imports}\n\n\n@{decorator}\ndef run(xs, w):\n    h = 0.0\n    for x in xs:\n        h = w * h + x\n    return h\n"
    assert _codes(source) == []


def test_a_projects_own_jit_wrapper_is_read_as_the_project_defines_it(tmp_path: Path) -> None:
    """`from mypkg._compat import jit` (numba's, or a no-op): the project's own name, not a library's."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "_compat.py").write_text(
        "try:\n    from numba import njit as jit\nexcept ImportError:\n    def jit(f):\n        return f\n"
    )
    (tmp_path / "mypkg" / "kern.py").write_text(
        "import jax.numpy as jnp\nfrom mypkg._compat import jit\n\n\n@jit\ndef run(xs):\n    h = 0.0\n"
        "    for x in xs:\n        h = 0.5 * h + x\n    return h\n"
    )
    results = api.check_paths([tmp_path], Settings())
    assert [d.code for r in results for d in r.diagnostics if d.code in ("JLF001", "JLF002", "JLF003")] == []
