"""JAX libraries' own `jit`s, named without a table of them.

Libraries built on JAX re-export its compiler under their own name (`brainpy.math.jit`,
`brainstate.compile.jit`, `trax.fastmath.jit`), often with the same `static_argnums` and
`static_argnames`: a function they wrap runs traced, as under `jax.jit`. A `jit` of an
imported package (not the project's own) is taken as one when something ties it to JAX: the
module imports JAX as well, or the package is one of `JAX_LIBRARIES`. Never when the package
compiles for another runtime (`numba.jit`, `torch.jit`), is JAX itself (whose transforms
`traced.TRACING_TRANSFORMS` names exactly) or selects its backend at run time (tensorcircuit's
`backend.jit`, which `backend_objects` decides). Other compilers named `jit` (thunder, CuTe,
codon) live in modules that do not import JAX. Kept free of libcst: the prefilter asks it
before any parse.

Cases: `tests/test_library_jit.py`.
"""

from __future__ import annotations

# What JAX libraries call their wrappers of `jax.jit`.
LIBRARY_JIT_NAMES = frozenset({"jit", "pjit", "filter_jit"})
# Packages whose decorators compile a function for the host (`numba.njit`): never traced.
HOST_COMPILERS = frozenset({"numba"})
# Packages whose `jit` compiles for something else than JAX.
OTHER_COMPILERS = HOST_COMPILERS | frozenset(
    {"torch", "tensorflow", "cupy", "cupyx", "taichi", "mlx", "triton", "warp", "pytensor", "theano", "autograd",
     "tvm", "mindspore", "paddle", "oneflow", "jittor", "pythran", "llvmlite", "numbast", "dace"}
)
# Libraries whose backend object is JAX's only once JAX is selected (`backend_objects`).
MULTI_BACKEND = frozenset({"tensorcircuit"})
# Libraries built on JAX whose `jit` is JAX's even in a module that does not import JAX itself.
JAX_LIBRARIES = frozenset({"brainpy", "brainstate", "trax", "netket", "jax_md", "objax", "equinox", "flax"})


def library_jit(qname: str | None, known: frozenset[str] = frozenset()) -> bool:
    """`brainpy.math.jit`: the `jit` of an imported package, not one of `known` (the lifted
    transforms of module frameworks, `flax.nnx.jit`), not JAX's nor another runtime's."""
    if not qname or "." not in qname or "<locals>" in qname or qname in known:
        return False
    root, last = qname.split(".", 1)[0], qname.rsplit(".", 1)[1]
    return last in LIBRARY_JIT_NAMES and root not in OTHER_COMPILERS | MULTI_BACKEND and root not in ("jax", "builtins", "")
