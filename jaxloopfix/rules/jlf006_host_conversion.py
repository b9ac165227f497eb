"""JLF006: host conversions of traced values (`np.asarray(x)`, `float(x)`, `x.item()`, `print(x)`)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from jaxloopfix.analysis.source import shorten
from jaxloopfix.analysis.traced_values import own_nodes
from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.rules.base import FileContext, Rule, node_diagnostic
from jaxloopfix.rules.jlf004_traced_condition import with_derivation

NUMPY_CONVERSIONS = frozenset(
    {"numpy.asarray", "numpy.array", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.copy"}
)
SCALAR_BUILTINS = frozenset({"float", "int", "bool", "complex"})
HOST_METHODS = frozenset({"item", "tolist"})


class HostConversion(Rule):
    """## What it does
    Checks for traced values converted to host values inside a traced
    function: `np.asarray(x)` / `np.array(x)`, `float(x)`, `int(x)`,
    `bool(x)`, `x.item()`, `x.tolist()`, and `print(x)`.

    ## Why is this bad?
    While JAX traces a function its arguments are abstract tracers with no
    values. `np.asarray(x)` raises `TracerArrayConversionError`; `float(x)`,
    `int(x)`, `bool(x)`, `x.item()` and `x.tolist()` raise
    `ConcretizationTypeError`; `print(x)` runs once, at trace time, and
    prints the tracer instead of its values.

    ## Example
    ```python
    @jax.jit
    def loss(x):
        print(x)
        return float(np.asarray(x).sum())
    ```

    Use instead:
    ```python
    @jax.jit
    def loss(x):
        jax.debug.print("{x}", x=x)
        return jnp.asarray(x).sum()
    ```

    ## Fix safety
    No fix is offered: the right replacement (`jnp` instead of `np`, keeping
    the value an array, `jax.debug.print`, or making the argument static)
    depends on what the code needs the host value for.
    """

    code = "JLF006"
    needs_loop = False
    name = "host-conversion"
    summary = "Traced value converted to a host value: tracing raises or prints a tracer"

    def check(self, context: FileContext) -> Iterator[Diagnostic]:
        for traced, values in context.traced_value_functions():
            for call in own_nodes(traced.node, cst.Call):
                assert isinstance(call, cst.Call)
                found = self._message(context, values, call, traced.name)
                if found is None:
                    continue
                message, converted = found
                diagnostic = node_diagnostic(
                    context, self.code, message, call, call, traced,
                    no_fix_reason="the replacement depends on what the host value is used for",
                )
                yield with_derivation(diagnostic, values, converted)

    def _message(
        self, context: FileContext, values, call: cst.Call, name: str
    ) -> tuple[str, cst.BaseExpression] | None:
        """The message for a host conversion of a traced value, and the value converted."""
        parsed = context.parsed
        code = lambda node: shorten(parsed.code(node))  # noqa: E731
        args = [a for a in call.args if a.keyword is None and not a.star]
        func = call.func
        qnames = parsed.qualified_names(func) if isinstance(func, (cst.Name, cst.Attribute)) else set()
        if qnames & NUMPY_CONVERSIONS and args and values.is_traced(args[0].value):
            return (
                f"`{code(call)}` converts traced value `{code(args[0].value)}` to a NumPy array in traced "
                f"function `{name}`: tracing raises `TracerArrayConversionError`; use `jnp` instead of `np`"
            ), args[0].value
        if isinstance(func, cst.Name) and (f"builtins.{func.value}" in qnames or not qnames):
            if func.value in SCALAR_BUILTINS and len(args) == 1 and len(call.args) == 1 and values.is_traced(args[0].value):
                return (
                    f"`{code(call)}` converts traced value `{code(args[0].value)}` to a Python "
                    f"`{func.value}` in traced function `{name}`: tracing raises `ConcretizationTypeError`; "
                    f"keep the value an array (e.g. `.astype(...)`), or make the argument it comes from static"
                ), args[0].value
            if func.value == "print":
                printed = [a.value for a in call.args if a.keyword is None and values.is_traced(a.value)]
                if printed:
                    what = ", ".join(f"`{code(v)}`" for v in printed)
                    return (
                        f"`print` of traced value{'s' if len(printed) > 1 else ''} {what} in traced function "
                        f"`{name}` runs once at trace time and prints a tracer, not values; use "
                        f"`jax.debug.print` instead"
                    ), printed[0]
        if isinstance(func, cst.Attribute) and func.attr.value in HOST_METHODS and not call.args:
            if values.is_traced(func.value):
                return (
                    f"`{code(call)}` converts traced value `{code(func.value)}` to a Python value in traced "
                    f"function `{name}`: tracing raises `ConcretizationTypeError`; keep the value an array"
                ), func.value
        return None

