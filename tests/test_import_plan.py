"""The imports a fix adds. Beside the module's `jax` imports, they go where isort (ruff's
`I001`) puts them; elsewhere `ImportPlan.apply` hands libcst's `AddImportsVisitor` only the
module's head, and must produce the very module the visitor makes of the whole file."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from jaxloopfix.rewrite.imports import ImportPlan, sorted_import

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


# Heads without a one-import line of `jax`: the imports go where `AddImportsVisitor` puts them.
FALLBACK_HEADS = [h for h in HEADS if sorted_import(cst.parse_module(HEADS[h]), "jax", "lax", None) is None]


def test_the_fallback_heads_are_those_without_a_jax_import_line() -> None:
    assert set(FALLBACK_HEADS) == {"nothing", "docstring", "future import", "conditional import"}


@pytest.mark.parametrize("head", FALLBACK_HEADS)
@pytest.mark.parametrize("body", ["", BODY, "y = 2\n"], ids=["head only", "with code", "code right after"])
@pytest.mark.parametrize("to_add", WANTED, ids=lambda w: "+".join(f"{m}.{o}" for m, o, _ in w))
def test_imports_added_to_the_head_match_the_whole_module(head: str, body: str, to_add) -> None:
    module = cst.parse_module(HEADS[head] + body)
    plan = ImportPlan(module, taken=set())
    plan.to_add = list(to_add)
    assert plan.apply(module).code == _whole_module(module, to_add)


@pytest.mark.parametrize(
    ("head", "to_add", "expected"),
    [
        # After first-party imports, libcst would append it; isort keeps it with `jax`.
        ("import jax\nimport jax.numpy as jnp\n\nfrom mypkg import layers\n", [("jax", "lax", None)],
         "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\nfrom mypkg import layers\n"),
        # An unaliased `from jax import` line takes the name in member order.
        ("import jax\nfrom jax import random\n", [("jax", "lax", None)], "import jax\nfrom jax import lax, random\n"),
        ("from jax import Array, vmap\n", [("jax", "lax", None)], "from jax import Array, lax, vmap\n"),
        # An aliased one (`combine-as-imports` off) keeps its own line.
        ("import jax\nfrom jax import jit as J\n", [("jax", "lax", None)],
         "import jax\nfrom jax import jit as J\nfrom jax import lax\n"),
        # `import` lines come before `from` lines, by module.
        ('"""Doc."""\n\nimport os\n\nimport jax\nimport numpy as np\nfrom jax import lax\n', [("jax.numpy", None, "jnp")],
         '"""Doc."""\n\nimport os\n\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n'),
        # A new first line of the section keeps the comment above the section.
        ("import os\n\n# third party\nimport numpy as np\nfrom jax import grad as g\n", [("jax.numpy", None, "jnp")],
         "import os\n\n# third party\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import grad as g\n"),
    ],
)
def test_imports_join_the_jax_section_in_isort_order(head: str, to_add, expected: str) -> None:
    module = cst.parse_module(head + BODY)
    plan = ImportPlan(module, taken=set())
    plan.to_add = list(to_add)
    assert plan.apply(module).code == expected + BODY


def test_the_imports_are_added() -> None:
    """Not a no-op: the module gains the import a fix needs."""
    module = cst.parse_module('"""Doc."""\nimport jax\n' + BODY)
    plan = ImportPlan(module, taken=set())
    assert plan.lax() == "lax"
    code = plan.apply(module).code
    assert "from jax import lax\n" in code and code.endswith(BODY)
