"""Backend objects of libraries that hand their numerics to JAX: their transforms trace.

tensorcircuit selects a numerical backend by name and exposes JAX's transforms through
it: `K = tc.set_backend("jax")`, then `K.jit(K.value_and_grad(energy))` calls
`jax.jit(jax.value_and_grad(energy))` (`tensorcircuit/backends/jax_backend.py`: `jit`,
`grad`, `value_and_grad`, `vmap`, `jvp`, `vjp`, `vectorized_value_and_grad`; the abstract
backend builds `jacfwd`, `jacrev` and `hessian` on them). In a module that selects the JAX
backend at its top level, the backend's transforms are JAX's: `K.jit` for the name bound to
the selected backend, and `tc.backend.jit`, the library's current backend. Another backend
(`set_backend("tensorflow")`) traces nothing JAX sees.

Cases: `tests/test_backend_objects.py`.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.library_jits import MULTI_BACKEND
from jaxloopfix.analysis.source import ParsedModule

# Libraries whose backend object, once the JAX backend is selected, wraps JAX's transforms.
BACKEND_LIBRARIES: frozenset[str] = MULTI_BACKEND
# Calls that select a backend by name and return it.
SELECTORS: frozenset[str] = frozenset({"set_backend", "get_backend"})
# The backend's transforms, each with the JAX transform it calls.
BACKEND_TRANSFORMS: dict[str, str] = {
    "jit": "jax.jit",
    "grad": "jax.grad",
    "value_and_grad": "jax.value_and_grad",
    "vmap": "jax.vmap",
    "jvp": "jax.jvp",
    "vjp": "jax.vjp",
    "jacfwd": "jax.jacfwd",
    "jacrev": "jax.jacrev",
    "hessian": "jax.hessian",
    "vectorized_value_and_grad": "jax.value_and_grad",
    "vvag": "jax.value_and_grad",
}

# Qualified names that can start a trace through a backend (`prefilter` keeps modules naming one).
BACKEND_ENTRIES: frozenset[str] = frozenset(
    {f"{library}.{selector}" for library in BACKEND_LIBRARIES for selector in SELECTORS}
    | {f"{library}.backend.{name}" for library in BACKEND_LIBRARIES for name in BACKEND_TRANSFORMS}
)


def backend_transforms(parsed: ParsedModule) -> dict[str, str]:
    """Qualified names of the backend transforms this module's top level selects (`K.jit`,
    `tensorcircuit.backend.jit`), each with the JAX transform it is. Read in order: the last
    selection decides; `set_backend` selects the library's global backend (unless
    `set_global=False`), `get_backend` only returns one."""
    chosen: dict[str, bool] = {}  # `K` or `tensorcircuit.backend` -> whether it is JAX's
    for statement in parsed.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            selected = _selection(parsed, value)
            if selected is None:
                continue
            library, selector, jax = selected
            if selector == "set_backend" and not _keyword_false(value, "set_global"):  # type: ignore[arg-type]
                chosen[f"{library}.backend"] = jax
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        chosen[target.target.value] = jax
    return {
        f"{holder}.{name}": transform
        for holder, jax in chosen.items() if jax for name, transform in BACKEND_TRANSFORMS.items()
    }


def _selection(parsed: ParsedModule, value: cst.BaseExpression | None) -> tuple[str, str, bool] | None:
    """`tc.set_backend("jax")` -> ("tensorcircuit", "set_backend", True); another backend's
    name (or one not written as a string) -> False; not a selection -> None."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in SELECTORS):
        return None
    qualified = parsed.qualified_name(value.func)
    library = qualified.split(".", 1)[0] if qualified else None
    if library not in BACKEND_LIBRARIES or not value.args:
        return None
    named = value.args[0].value
    jax = isinstance(named, cst.SimpleString) and named.evaluated_value == "jax"
    return library, value.func.attr.value, jax  # type: ignore[return-value]


def _keyword_false(call: cst.Call, keyword: str) -> bool:
    return any(
        a.keyword is not None and a.keyword.value == keyword and isinstance(a.value, cst.Name) and a.value.value == "False"
        for a in call.args
    )
