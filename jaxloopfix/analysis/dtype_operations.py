"""Which operations the carry-type proof knows, and the dtypes it reasons over.

Both the table generator (`dtype_table_from_jax.py`, run with JAX) and the proof
(`carry_types.py`, run without it) read these lists, so an operation is either in the table,
with JAX's answer for every input, or unknown to the proof.
"""

from __future__ import annotations

# Strong dtypes a JAX array can hold in each x64 mode (64-bit types exist only with x64 on).
STRONG_32 = ("bool", "i8", "i16", "i32", "u8", "u16", "u32", "bf16", "f16", "f32", "c64")
STRONG_64 = ("i64", "u64", "f64", "c128")
# Python scalars (`2`, `0.5`, `1j`): weakly typed, and some operations treat them specially
# (`x ** 2` is an integer power).
WEAK = ("wi", "wf", "wc")
# Weakly typed arrays at the default width: what JAX makes of Python scalars (`jnp.asarray(0.5)`,
# a Python float passed to a jitted function).
WEAK_ARRAYS = ("wia", "wfa", "wca")

KIND_OF = {
    "bool": "bool", "i8": "int", "i16": "int", "i32": "int", "i64": "int", "u8": "int", "u16": "int",
    "u32": "int", "u64": "int", "bf16": "float", "f16": "float", "f32": "float", "f64": "float",
    "c64": "complex", "c128": "complex", "wi": "int", "wf": "float", "wc": "complex", "wia": "int",
    "wfa": "float", "wca": "complex",
}
# Full dtype names (as written in code) and the table's keys.
KEY_OF_NAME = {
    "bool": "bool", "bool_": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bfloat16": "bf16",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
}
# The table's keys and the dtype names JAX gives them.
NAME_OF_KEY = {key: name for name, key in KEY_OF_NAME.items() if name != "bool_"}
# A 64-bit dtype asked for with x64 off is its 32-bit counterpart.
NARROW = {"i64": "i32", "u64": "u32", "f64": "f32", "c128": "c64"}


def universe(x64: bool) -> tuple[str, ...]:
    """Every dtype key a value may have in this x64 mode, strong ones first."""
    return STRONG_32 + (STRONG_64 if x64 else ()) + WEAK_ARRAYS + WEAK


def canonical(key: str, x64: bool) -> str:
    """The key JAX gives a value asked for as `key` (float64 is float32 with x64 off)."""
    return key if x64 else NARROW.get(key, key)


UNARY_OPERATORS = ("neg", "pos", "invert")
BINARY_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
                    "lshift", "rshift")
# Array methods and attributes called with no arguments.
METHODS = ("sum", "prod", "mean", "max", "min", "std", "var", "conj", "conjugate", "copy", "cumsum", "cumprod",
           "round", "any", "all", "ravel", "flatten", "squeeze", "transpose")
ATTRIBUTES = ("real", "imag", "T", "mT")
# Modules whose functions of these names the table looks up.
FUNCTION_MODULES = ("jax.numpy", "jax.nn", "jax.lax", "jax.scipy.special", "jax.numpy.linalg")
# Functions of one array (elementwise, reductions to a scalar, casts).
UNARY_FUNCTIONS = frozenset({
    "tanh", "sin", "cos", "tan", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sinh", "cosh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sigmoid", "gelu", "silu", "swish",
    "softplus", "elu", "celu", "selu", "leaky_relu", "relu6", "hard_tanh", "log_sigmoid", "soft_sign",
    "hard_sigmoid", "hard_silu", "hard_swish", "erf", "logistic", "exp2", "log2", "log10", "reciprocal",
    "floor", "ceil", "round", "rint", "trunc", "fix", "degrees", "radians", "deg2rad", "rad2deg", "nan_to_num",
    "softmax", "log_softmax", "standardize", "mish", "sparse_plus", "squareplus", "erfc", "lgamma",
    "digamma", "abs", "absolute", "negative", "positive", "sign", "square", "relu", "stop_gradient", "clip",
    "conj", "conjugate", "real", "imag", "angle", "copy", "asarray", "array", "sum", "mean", "max", "min",
    "prod", "std", "var", "norm", "logsumexp", "amax", "amin", "nansum", "nanmean", "nanmax", "nanmin",
    "average", "median", "cumsum", "cumprod", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bfloat16", "float16", "float32", "float64", "complex64", "complex128", "float_",
    "int_", "complex_", "exp10", "logit", "expit", "ndtr", "ndtri", "log_ndtr", "i0", "sinc", "signbit",
    "isnan", "isfinite", "isinf", "logical_not", "bitwise_not", "invert", "tril", "triu", "transpose",
    "ravel", "squeeze", "atleast_1d", "atleast_2d", "fabs", "cummax", "cummin", "zeros_like", "ones_like",
    "empty_like",
})
# Functions of two arrays (elementwise with broadcasting, products; `where` of its two branches,
# `clip` of a value and its lower bound). Comparisons, logical and bitwise functions (the
# operators `&`, `|`, `^`, `<<`, `>>` are in the table) and rarer special functions are left out:
# unknown to the proof, so a carry updated with them gets an unsafe fix.
BINARY_FUNCTIONS = frozenset({
    "add", "subtract", "multiply", "maximum", "minimum", "power", "fmax", "fmin", "mod", "remainder",
    "floor_divide", "arctan2", "hypot", "logaddexp", "copysign", "true_divide", "divide", "div", "max", "min",
    "dot", "matmul", "vdot", "where", "clip", "float_power", "sub", "mul", "pow", "full_like",
})

# How each function's result shape follows from its arguments' (when called with no axis).
REDUCE_TO_SCALAR = frozenset({
    "sum", "mean", "max", "min", "prod", "std", "var", "norm", "logsumexp", "amax", "amin", "nansum",
    "nanmean", "nanmax", "nanmin", "average", "median", "any", "all", "vdot",
})
RESHAPING = frozenset({
    "cumsum", "cumprod", "cummax", "cummin", "tril", "triu", "transpose", "ravel", "flatten", "squeeze",
    "atleast_1d", "atleast_2d", "inner", "outer", "kron",
})
MATRIX_PRODUCTS = frozenset({"dot", "matmul"})
