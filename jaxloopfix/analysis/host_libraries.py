"""Which library calls compute on host values only, from what JAX does with a tracer.

NumPy, SciPy and `math` cannot take a tracer: `np.sin(tracer)` raises a
TracerArrayConversionError (NumPy asks the tracer for `__array__`), `math.sqrt(tracer)` a
ConcretizationTypeError. A few NumPy functions are the exception: they hand the work to the
argument's own method (`np.sum(x)` calls `x.sum()`), use only its shape, or slice it, so they
run on a tracer. `NUMPY_ON_TRACERS` lists them, found by calling every public function of
NumPy 2.4.6 on a tracer under `jax.jit` (JAX 0.10.2); `tests/test_host_libraries.py` calls
them again with the installed versions and fails when one more works on a tracer.
"""

from __future__ import annotations

NUMPY_ON_TRACERS = frozenset(
    {"all", "amax", "amin", "any", "argmax", "argmin", "argsort", "around", "bmat", "common_type", "cumprod",
     "cumsum", "diag_indices_from", "flip", "imag", "info", "iscomplexobj", "isreal", "isrealobj", "isscalar",
     "iterable", "max", "mean", "min", "ndim", "permute_dims", "printoptions", "prod", "real", "result_type",
     "round", "shape", "size", "squeeze", "std", "sum", "transpose", "tril_indices_from", "triu_indices_from",
     "unstack", "var",
     # Not found by a call with one array, but they delegate to the argument's method too.
     "reshape", "swapaxes", "take", "repeat", "nonzero", "ptp", "trace", "diagonal", "sort", "searchsorted",
     "compress", "choose", "clip", "ravel", "cumulative_sum", "cumulative_prod", "matrix_transpose", "partition",
     "argpartition", "resize", "put",
     # Not found by a call with one array either: with their axis or section arguments they
     # transpose or slice the tracer (`np.moveaxis(x, 0, -1)`, `np.split(x, 4)`).
     "moveaxis", "rollaxis", "split", "array_split", "hsplit", "vsplit", "dsplit"}
)


# SciPy modules whose public functions and classes all raise on a tracer (they convert their
# arguments with NumPy), found by calling each under `jax.jit` with a traced (3, 3) array and
# with it beside ints, a float and itself (SciPy 1.17.1, JAX 0.10.2); `SCIPY_ON_TRACERS` are the
# names that ran: exception and warning classes, `scipy.fft.set_workers`, `scipy.signal.kaiser_atten`,
# `scipy.special.legendre_p`, `scipy.interpolate.generate_knots` and `splantider`.
# `tests/test_host_libraries.py` calls them again.
SCIPY_HOST_MODULES = frozenset({"special", "spatial", "linalg", "signal", "interpolate", "ndimage", "fft", "cluster"})
SCIPY_ON_TRACERS = frozenset({"QhullError", "LinAlgError", "LinAlgWarning", "BadCoefficients", "SpecialFunctionError",
                              "SpecialFunctionWarning", "set_workers", "kaiser_atten", "generate_knots", "splantider",
                              "legendre_p"})


def computes_on_host(qualified: str) -> bool:
    """Whether a call of `qualified` (`numpy.sin`, `scipy.special.spherical_jn`, `math.exp`) can
    only compute on host values: it raises when handed a tracer."""
    root, _, rest = qualified.partition(".")
    if root == "math":
        return True
    if root == "scipy":
        module, _, name = rest.partition(".")
        return module in SCIPY_HOST_MODULES and bool(name) and name.rsplit(".", 1)[-1] not in SCIPY_ON_TRACERS
    if root == "numpy":
        name = rest.rsplit(".", 1)[-1]
        return bool(rest) and "." not in rest and name not in NUMPY_ON_TRACERS or rest.startswith(("linalg.", "fft."))
    return False
