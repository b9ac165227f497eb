"""How a helper uses one of its parameters as structure: an axis, a slice bound, a static argument.

A loop that passes its index to such a helper (`_block_det(x, i, n)` slicing `x[k + 1:n]`,
`partial(utils.shift, offset=i)` slicing `x[slice(offset, None)]`, `cumulate(x, i)` calling
`jnp.cumsum(x, axis=axis)`) computes on a different shape, or along a different axis, each
step: distinct computations the helper's author wrote per index, which a scan's traced index
could not drive. The helper is read from its own source (`ast`), whichever module
defines it, so the same evidence holds for a helper of this module and one imported from
another project module (whose source the project pass hands over as its declaration).

Cases:
- `@partial(jax.jit, static_argnums=(1,))` or `static_argnames=("k",)` on the helper: the
  parameter is static, one compilation per value;
- a slice with one bound read from the parameter (`x[k + 1:]`, `x[:n - k]`,
  `x[slice(offset, None)]`); `x[k:k + 1]` reads it in both bounds and keeps its size;
- an axis: the parameter passed as `axis=` (or `axes=`, `dim=`, ...) to a call in the helper,
  or named `axis` itself.
"""

from __future__ import annotations

import ast
import textwrap

# Parameters that take an axis: a loop passing its index there steps over axes.
AXIS_PARAMETERS = frozenset({"axis", "axes", "dim", "dims", "axis1", "axis2", "source", "destination"})
SHAPES = "each step computes on a different shape, distinct computations rather than steps along one axis"
AXES = "each step works along a different axis, a static structure, not a step along one axis"


def parse_function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The first function defined in `source` (a def's own text, decorators included)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def positional_parameters(helper: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]


def structural_use(helper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> str | None:
    """How `helper` uses `param` as structure (see the module's cases), with what that means for
    the loop's steps, else None."""
    position = next((i for i, name in enumerate(positional_parameters(helper)) if name == param), None)
    if _marked_static(helper, param, position):
        return f"which its `jit` marks static: {SHAPES}"
    for node in ast.walk(helper):
        bounds = _slice_bounds(node)
        if bounds is not None and _reads(bounds[0], param) != _reads(bounds[1], param):
            return f"which sets one bound of its slices: {SHAPES}"
    if param in AXIS_PARAMETERS:
        return f"its `{param}` parameter: {AXES}"
    for node in ast.walk(helper):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in AXIS_PARAMETERS and _reads(keyword.value, param):
                    return f"which it passes as `{keyword.arg}=` (`{_shown(node)}`): {AXES}"
    return None


def reads_window(helper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """Whether `helper` slices with both bounds computed from `param` (`start = b * size`, `end =
    start + size`, `x[:, start:end]`): a window that keeps its width and moves with the parameter,
    one block of an array per value, as a loop stepping over blocks reads it. (One bound alone
    changes the width: `structural_use`.)"""
    derived = {param}
    assignments = [n for n in ast.walk(helper) if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name)]
    grew = True
    while grew:
        grew = False
        for node in assignments:
            name = node.targets[0].id  # type: ignore[attr-defined]
            if name not in derived and any(_reads(node.value, d) for d in derived):
                derived.add(name)
                grew = True
    for node in ast.walk(helper):
        bounds = _slice_bounds(node)
        if bounds is not None and all(b is not None and any(_reads(b, d) for d in derived) for b in bounds):
            return True
    return False


def _shown(call: ast.Call) -> str:
    text = ast.unparse(call)
    return text if len(text) <= 40 else text[:37] + "..."


def _marked_static(helper: ast.FunctionDef | ast.AsyncFunctionDef, param: str, position: int | None) -> bool:
    for decorator in helper.decorator_list:
        if isinstance(decorator, ast.Call):
            names, nums = _static_keywords(decorator)
            if param in names or (position is not None and position in nums):
                return True
    return False


def _static_keywords(call: ast.Call) -> tuple[set[str], set[int]]:
    """The literal `static_argnames` and `static_argnums` of a `jit`-like call."""
    names: set[str] = set()
    nums: set[int] = set()
    for keyword in call.keywords:
        values = keyword.value.elts if isinstance(keyword.value, (ast.Tuple, ast.List)) else [keyword.value]
        constants = [v.value for v in values if isinstance(v, ast.Constant)]
        if keyword.arg == "static_argnums":
            nums |= {c for c in constants if isinstance(c, int)}
        elif keyword.arg == "static_argnames":
            names |= {c for c in constants if isinstance(c, str)}
    return names, nums


def _slice_bounds(node: ast.AST) -> tuple[ast.expr | None, ast.expr | None] | None:
    """(lower, upper) of `x[a:b]` or of the builtin `slice(b)` / `slice(a, b)`."""
    if isinstance(node, ast.Slice):
        return node.lower, node.upper
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" and node.args:
        if len(node.args) == 1:
            return None, node.args[0]
        return node.args[0], node.args[1]
    return None


def _reads(expr: ast.expr | None, param: str) -> bool:
    return expr is not None and any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(expr))


# The last part of a call that compiles its function argument under a JAX trace (`jax.jit`,
# `jit`, `eqx.filter_jit`, `jax.pmap`), as a project decorator spells it.
TRACING_CALLS = {"jit": "jax.jit", "pjit": "jax.jit", "filter_jit": "jax.jit", "pmap": "jax.pmap", "filter_pmap": "jax.pmap"}


def traces_parameter(wrapper: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, set[str], set[int]] | None:
    """A decorator of the project that compiles the function it decorates: its body calls
    `jax.jit(method, static_argnums=(0,))` (or `pmap`, `filter_jit`) on its first parameter,
    so every function decorated with it runs traced. (transform, static names, static
    positions), else None. A host compiler (`numba.jit`) is not a JAX trace."""
    params = positional_parameters(wrapper)
    if not params:
        return None
    for node in ast.walk(wrapper):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == params[0]):
            continue
        dotted = _dotted(node.func)
        if dotted is None or dotted.split(".", 1)[0] == "numba" or dotted.rsplit(".", 1)[-1] not in TRACING_CALLS:
            continue
        return TRACING_CALLS[dotted.rsplit(".", 1)[-1]], *_static_keywords(node)
    return None


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner is not None else None
    return None
