"""The imports a fix adds: `ImportPlan.apply` hands libcst's `AddImportsVisitor` only the
module's head, and must produce the very module the visitor makes of the whole file."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from jaxloopfix.rewrite.imports import ImportPlan

BODY = '''

def step(x):
    import numpy as np
    from jax import lax as inner_lax
    return x


class Model:
    pass
'''

HEADS = {
    "nothing": "",
    "docstring": '"""Module docstring."""\n',
    "docstring then imports": '"""Doc."""\nimport os\nfrom jax import numpy as jnp\n',
    "strict flag": "__strict__ = True\nimport jax\n",
    "future import": "from __future__ import annotations\n\nimport functools\n",
    "existing from-jax import": "from jax import grad, jit\nimport jax.numpy as jnp\n",
    "several imports on a line": "import os; import sys\nfrom jax import jit\n",
    "statement before imports": "x = 1\nimport jax\nfrom jax import lax\n",
    "comment and blank lines": "# header comment\n\n\nimport jax  # trailing\n\n# before code\n",
    "imports only": "import jax\nimport jax.numpy as jnp\n",
    "star import": "from jax.numpy import *\nimport jax\n",
    "conditional import": "try:\n    import jax\nexcept ImportError:\n    jax = None\n",
}

WANTED = [
    [("jax", "lax", None)],
    [("jax.numpy", None, "jnp")],
    [("jax", "lax", None), ("jax.numpy", None, "jnp")],
    [("jax", "lax", "jax_lax")],
]


def _whole_module(module: cst.Module, to_add) -> str:
    context = CodemodContext()
    for mod, obj, asname in to_add:
        AddImportsVisitor.add_needed_import(context, mod, obj, asname)
    return AddImportsVisitor(context).transform_module(module).code


@pytest.mark.parametrize("head", HEADS, ids=list(HEADS))
@pytest.mark.parametrize("body", ["", BODY, "y = 2\n"], ids=["head only", "with code", "code right after"])
@pytest.mark.parametrize("to_add", WANTED, ids=lambda w: "+".join(f"{m}.{o}" for m, o, _ in w))
def test_imports_added_to_the_head_match_the_whole_module(head: str, body: str, to_add) -> None:
    module = cst.parse_module(HEADS[head] + body)
    plan = ImportPlan(module, taken=set())
    plan.to_add = list(to_add)
    assert plan.apply(module).code == _whole_module(module, to_add)


def test_the_imports_are_added() -> None:
    """Not a no-op: the module gains the import a fix needs."""
    module = cst.parse_module('"""Doc."""\nimport jax\n' + BODY)
    plan = ImportPlan(module, taken=set())
    assert plan.lax() == "lax"
    code = plan.apply(module).code
    assert "from jax import lax\n" in code and code.endswith(BODY)
