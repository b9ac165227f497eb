"""Functions a factory defines and returns run traced when the caller transforms what it got back:
`loss = make_loss(cfg)` and `p, s = make_density(mus)` (the function at the position the caller
unpacks, not its siblings), in the factory's module or another, also after the caller rebinds the
name (`p = jax.jit(jax.vmap(p))`). A method given to a library through `partial(self.ode, u=u)`
runs as the bound method. Running the checked code shows each reported loop really runs on
tracers and each clean one does not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxloopfix import api
from jaxloopfix.config import Settings

pytest.importorskip("jax")

FACTORY = '''
import jax.numpy as jnp

SEEN = {}


def make_density(mus):
    def normaliser(z):
        total = jnp.zeros_like(z)
        for mu in mus:
            SEEN["normaliser"] = type(z).__name__
            total = total + jnp.exp(-(z - mu) ** 2)
        return total

    def density(z):
        total = jnp.zeros_like(z)
        for mu in mus:
            SEEN["density"] = type(z).__name__
            total = total + jnp.exp(-(z - mu) ** 2)
        return total

    return normaliser, density


def make_loss(xs):
    def loss(w):
        total = 0.0
        for x in xs:
            SEEN["loss"] = type(w).__name__
            total = total + jnp.sum(w * x) ** 2
        return total

    return loss
'''

CALLERS = {
    "unpacked": '''
        import jax
        import jax.numpy as jnp
        from {module} import make_density

        def main():
            normaliser, density = make_density(jnp.arange(6.0))
            density = jax.jit(jax.vmap(density))
            print(normaliser(jnp.ones(2)))
            return density(jnp.ones((3, 2)))
    ''',
    "bound once": '''
        import jax
        import jax.numpy as jnp
        from {module} import make_loss

        def main():
            loss = make_loss(jnp.ones((6, 2)))
            return jax.grad(loss)(jnp.ones(2))
    ''',
}

TRACED = {"unpacked": ("density",), "bound once": ("loss",)}


def _run(root: Path, args: str = "") -> dict[str, str]:
    """What each function's loop saw when the caller ran: `{function: type of its argument}`."""
    code = f"import json, caller, factory; caller.main({args}); print(json.dumps(factory.SEEN))"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return __import__("json").loads(done.stdout.strip().splitlines()[-1])


def _reported(root: Path) -> set[str]:
    """The functions whose loops `check` reports, over the whole tree."""
    found: set[str] = set()
    for result in api.check_paths([root], Settings()):
        assert not result.errors, result.errors
        found |= {d.message.split("traced function `", 1)[1].split("`", 1)[0] for d in result.diagnostics
                  if d.code in ("JLF001", "JLF002")}
    return found


@pytest.mark.parametrize("form", sorted(CALLERS))
@pytest.mark.parametrize("where", ["another module", "same module"])
def test_the_function_a_factory_returns_runs_traced(tmp_path: Path, form: str, where: str) -> None:
    if where == "another module":
        (tmp_path / "factory.py").write_text(FACTORY.lstrip())
        (tmp_path / "caller.py").write_text(textwrap.dedent(CALLERS[form].format(module="factory")).lstrip())
    else:
        caller = textwrap.dedent(CALLERS[form]).split("\n")
        body = "\n".join(line for line in caller if not line.startswith("from {module}"))
        (tmp_path / "factory.py").write_text(FACTORY.lstrip() + "\n" + body)
        (tmp_path / "caller.py").write_text("from factory import main\n")
    seen = _run(tmp_path)
    ran_traced = {name for name, kind in seen.items() if "Tracer" in kind}
    assert ran_traced == set(TRACED[form])
    assert _reported(tmp_path) == ran_traced


def test_a_name_bound_in_branches_names_what_each_binding_returns(tmp_path: Path) -> None:
    """`loss` bound from one factory in one branch and from another in the other: the transform
    traces whichever ran, so the functions both return are traced (the siblings are not)."""
    (tmp_path / "factory.py").write_text(FACTORY.lstrip())
    (tmp_path / "caller.py").write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from factory import make_density, make_loss

        def main(fast):
            if fast:
                normaliser, loss = make_density(jnp.arange(6.0))
            else:
                loss = make_loss(jnp.ones((6, 2)))
            return jax.grad(lambda w: jnp.sum(loss(w)))(jnp.ones(2)) if fast else jax.grad(loss)(jnp.ones(2))
    ''').lstrip())
    ran = {name for args in ("True", "False") for name, kind in _run(tmp_path, args).items() if "Tracer" in kind}
    assert ran == {"density", "loss"}
    assert _reported(tmp_path) == ran


def test_a_method_given_to_a_library_through_partial_runs_bound(tmp_path: Path) -> None:
    """`lax.scan(partial(self.step, scale=s), ...)`: the library calls the bound method with the
    remaining arguments, under the caller's trace."""
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        from functools import partial
        import jax
        import jax.numpy as jnp

        SEEN = {}

        class Filter:
            def step(self, h, x, scale):
                SEEN["step"] = type(h).__name__
                for i in range(x.shape[0]):
                    h = scale * h + x[i]
                return h, h

            @partial(jax.jit, static_argnums=0)
            def run(self, h, xs):
                return jax.lax.scan(partial(self.step, scale=0.5), h, xs)
    ''').lstrip())
    code = "import json, jax.numpy as jnp, model; model.Filter().run(jnp.zeros(2), jnp.ones((3, 6, 2))); print(json.dumps(model.SEEN))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Tracer" in __import__("json").loads(done.stdout.strip().splitlines()[-1])["step"]
    assert _reported(tmp_path) == {"step"}


def test_a_function_defined_in_each_branch_is_the_one_its_branch_transforms(tmp_path: Path) -> None:
    """`def sim(k)` in both branches of an `if`: `jax.vmap(sim)` in a branch traces the `def`
    Python ran last before it, the one in its own branch."""
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp

        SEEN = {}

        def rates(k, n):
            SEEN["rates"] = type(k).__name__
            out = jnp.zeros(n)
            for i in range(n):
                out = out.at[i].set(jnp.sin(k * i) + out[i - 1])
            return out

        def curves(k, n):
            SEEN["curves"] = type(k).__name__
            out = jnp.zeros(n)
            for i in range(n):
                out = out.at[i].set(jnp.cos(k * i) + out[i - 1])
            return out

        def simulate(keys, kind):
            if kind == "rates":
                def sim(k):
                    return rates(k, 8)
                return jax.vmap(sim)(keys)
            else:
                def sim(k):
                    return curves(k, 8)
                return sim(keys[0])
    ''').lstrip())
    code = "import json, jax.numpy as jnp, model; model.simulate(jnp.ones(3), 'rates'); model.simulate(jnp.ones(3), 'curves'); print(json.dumps(model.SEEN))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    assert {name for name, kind in seen.items() if "Tracer" in kind} == {"rates"}
    assert _reported(tmp_path) == {"rates"}


def test_a_lambda_bound_to_a_name_and_called_in_traced_code_runs_what_it_calls(tmp_path: Path) -> None:
    """`sim = lambda p: simulate(p, n_periods=8)` in a method, then `sim(p)` inside the function
    it jits: Python calls the lambda under the trace, and with it `simulate` of another module."""
    (tmp_path / "simulate.py").write_text(textwrap.dedent('''
        import jax.numpy as jnp

        SEEN = {}

        def simulate(p, n_periods):
            SEEN["simulate"] = type(p).__name__
            return jnp.stack([jnp.sin(p * t) for t in range(n_periods)])
    ''').lstrip())
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        import jax
        from simulate import simulate

        def make(n):
            sim = lambda p: simulate(p, n_periods=n)

            def solve_and_simulate(p):
                return sim(p * 2.0)

            return jax.jit(solve_and_simulate)
    ''').lstrip())
    code = "import json, jax.numpy as jnp, model, simulate; model.make(8)(jnp.ones(3)); print(json.dumps(simulate.SEEN))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Tracer" in __import__("json").loads(done.stdout.strip().splitlines()[-1])["simulate"]
    found = [d for r in api.check_paths([tmp_path], Settings()) for d in r.diagnostics if d.code == "JLF001"]
    assert len(found) == 1 and "`simulate`" in found[0].message
    assert "called in the `lambda` bound to `sim`" in (found[0].traced_reason or "")


def test_a_binding_after_the_transform_is_not_what_it_traces(tmp_path: Path) -> None:
    """`fn = make_train()`, `jax.jit(jax.vmap(fn))`, then later `fn = make_report(...)` on the
    host: the report's loop never runs under a trace and stays clean."""
    (tmp_path / "factory.py").write_text(FACTORY.lstrip() + textwrap.dedent('''

        def make_report(logs):
            def report(w):
                lines = []
                for row in logs:
                    lines.append(jnp.sum(row) * w)
                return lines
            return report
    '''))
    (tmp_path / "caller.py").write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from factory import make_loss, make_report

        def main():
            fn = make_loss(jnp.ones((6, 2)))
            fast = jax.jit(jax.grad(fn))
            fast(jnp.ones(2))
            fn = make_report(jnp.ones((6, 2)))
            return fn(2.0)
    ''').lstrip())
    assert _reported(tmp_path) == {"loss"}


def test_a_def_rebound_after_a_function_that_reads_it_is_not_resolved(tmp_path: Path) -> None:
    """`def step` (a draft), `def run(): jax.jit(step)`, `def step` again: `run` reads the name when
    it is called, after both, so neither draft nor final is taken for certain (the draft's loop
    is not reported on that evidence)."""
    (tmp_path / "nb.py").write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp

        def step(xs):
            total = 0.0
            for x in xs:
                total = total + jnp.sum(x)
            return total

        def run(xs):
            return jax.jit(step)(xs)

        def step(xs):
            return jnp.sum(xs)
    ''').lstrip())
    assert _reported(tmp_path) == set()
