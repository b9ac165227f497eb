"""JAX's own modules import its transforms from private modules (`from jax._src import api`,
then `@api.jit`). The tool matches transforms by their public names, so a private spelling is
read as the public name it is the same object as. `tests/test_value_kinds.py` checks every
entry against the installed JAX: each private name read as public is the public object."""

from __future__ import annotations

_TRANSFORMS = frozenset({
    "jit", "vmap", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vjp", "jvp", "linearize",
    "eval_shape", "named_call",
})
_LOOPS = frozenset({"scan", "fori_loop", "while_loop", "map", "associative_scan"})

# Private module -> (its public module, the names read as public there): transforms and
# structured loops, each checked to be the same object in both modules. Other private names,
# such as helpers (and `jax._src.api.map`, Python's own `map`), keep their private spelling.
PRIVATE_MODULES: dict[str, tuple[str, frozenset[str]]] = {
    "jax._src.api": ("jax", _TRANSFORMS),
    "jax._src.lax.control_flow": ("jax.lax", _LOOPS),
    "jax._src.lax.control_flow.loops": ("jax.lax", _LOOPS),
}


def public_name(name: str) -> str | None:
    """The public spelling of a private qualified `name` (`jax._src.api.jit` -> `jax.jit`), else None."""
    module, dot, attribute = name.rpartition(".")
    public, attributes = PRIVATE_MODULES.get(module, ("", frozenset())) if dot else ("", frozenset())
    return f"{public}.{attribute}" if attribute in attributes else None


def as_public(names: frozenset[str]) -> frozenset[str]:
    """`names` with each private one spelled as its public name."""
    if not any(name.startswith("jax._src.") for name in names):
        return names
    return frozenset(public_name(name) or name for name in names)


def with_public(names: frozenset[str]) -> frozenset[str]:
    """`names` and the public spelling of each private one (a superset, for screening)."""
    extra = {public for name in names if (public := public_name(name)) is not None}
    return names | extra if extra else names
