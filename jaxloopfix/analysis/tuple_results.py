"""JAX functions that return a tuple (or list) of arrays, not one array.

`for part in jnp.linalg.eigh(m)` steps over two items (the eigenvalues, then the eigenvectors),
not over rows: a scan over "its rows" would stack arrays of different shapes. Every entry is
checked against the installed JAX by `tests/test_tuple_results.py`, which calls each function
and requires a tuple or list (and an array where the keyword in `ARRAY_WHEN` is given).
"""

from __future__ import annotations

import libcst as cst

_LINALG = ("eigh", "eig", "slogdet", "lstsq", "svd", "qr")
_SCIPY_LINALG = ("lu", "lu_factor", "qr", "svd", "eigh", "schur", "polar", "cho_factor")
_NUMPY = (
    "frexp", "modf", "divmod", "histogram", "histogram2d", "histogramdd", "nonzero", "unravel_index",
    "tril_indices", "triu_indices", "diag_indices", "tril_indices_from", "triu_indices_from", "diag_indices_from",
    "meshgrid", "broadcast_arrays", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "ix_",
)
TUPLE_RESULTS: frozenset[str] = frozenset(
    {f"jax.numpy.linalg.{n}" for n in _LINALG}
    | {f"jax.scipy.linalg.{n}" for n in _SCIPY_LINALG}
    | {f"jax.numpy.{n}" for n in _NUMPY}
    | {"jax.lax.top_k", "jax.lax.sort_key_val", "jax.lax.split", "jax.lax.linalg.eigh", "jax.lax.linalg.qr", "jax.lax.linalg.svd",
       "jax.lax.linalg.lu"}
)
# The argument (keyword, and position when passed positionally) with which the function returns
# one array instead (`svd(m, compute_uv=False)`, `svd(m, False, False)`; None: keyword-only), and that value.
ARRAY_WHEN: dict[str, tuple[str, int | None, str]] = {
    "jax.numpy.linalg.svd": ("compute_uv", 2, "False"),
    "jax.scipy.linalg.svd": ("compute_uv", 2, "False"),
    "jax.lax.linalg.svd": ("compute_uv", None, "False"),  # keyword-only
    "jax.numpy.linalg.qr": ("mode", 1, "'r'"),
    "jax.scipy.linalg.eigh": ("eigvals_only", 3, "True"),
}


# How many arrays the fixed-length ones return (the rest depend on the arguments: `split`'s
# sections, `meshgrid`'s inputs, `nonzero`'s dimensions, `jax.scipy.linalg.qr`'s mode: one item for
# `mode="r"`).
TUPLE_LENGTHS: dict[str, int] = {
    **{f"jax.numpy.linalg.{n}": 2 for n in ("eigh", "eig", "slogdet", "qr")},
    "jax.numpy.linalg.svd": 3, "jax.numpy.linalg.lstsq": 4,
    **{f"jax.scipy.linalg.{n}": 2 for n in ("lu_factor", "eigh", "schur", "polar", "cho_factor")},
    "jax.scipy.linalg.lu": 3, "jax.scipy.linalg.svd": 3,
    **{f"jax.numpy.{n}": 2 for n in ("frexp", "modf", "divmod", "histogram", "tril_indices", "triu_indices",
                                     "tril_indices_from", "triu_indices_from")},
    "jax.numpy.histogram2d": 3,
    "jax.lax.top_k": 2, "jax.lax.linalg.eigh": 2, "jax.lax.linalg.qr": 2, "jax.lax.linalg.svd": 3, "jax.lax.linalg.lu": 3,
}


def returns_tuple(qname: str | None, call: cst.Call) -> bool | None:
    """True: the call returns a tuple or list of arrays; False: not one of these functions;
    None: one of them, but a keyword that may make it return one array is not a literal."""
    if qname not in TUPLE_RESULTS:
        return False
    condition = ARRAY_WHEN.get(qname)
    if condition is None:
        return True
    keyword, position, value = condition
    if any(arg.star for arg in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    given = [a for a in call.args if a.keyword is not None and a.keyword.value == keyword]
    if position is not None and len(positional) > position:
        given.append(positional[position])
    for arg in given:
        if isinstance(arg.value, (cst.Name, cst.SimpleString)):
            return arg.value.value.replace('"', "'") != value
        return None
    return True


def tuple_length(qname: str | None, call: cst.Call) -> int | None:
    """How many arrays the call returns, when it returns a tuple of a fixed length."""
    if returns_tuple(qname, call) is not True or qname not in TUPLE_LENGTHS:
        return None
    return TUPLE_LENGTHS[qname]
