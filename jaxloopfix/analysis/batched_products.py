"""Whether turning a map-only loop into `jax.vmap` changes a matrix product's precision.

Evidence (issue 28, an H200 at JAX's default matmul precision, 64x256 float32): a loop of
per-step `W @ xs[t]` runs matrix-vector products in full float32 (error 7e-6 against float64);
`jax.vmap` batches them into one matrix-matrix product, which GPUs run in TF32 (error 0.02).
The rewrite is then not the same computation on the hardware people train on, so its fix is
unsafe unless every product in the step fixes its precision (`precision="highest"`).

Cases: `@`, and the contraction functions below, in the step itself or in a module-level helper
it calls (one level down). Elementwise products and reductions batch exactly.
"""

from __future__ import annotations

import libcst as cst

from jaxloopfix.analysis.source import ParsedModule, descendants, shorten

CONTRACTIONS = frozenset({
    "jax.numpy.dot", "jax.numpy.matmul", "jax.numpy.vdot", "jax.numpy.inner", "jax.numpy.einsum",
    "jax.numpy.tensordot", "jax.numpy.convolve", "jax.numpy.correlate", "jax.numpy.linalg.multi_dot",
    "jax.lax.dot", "jax.lax.dot_general", "jax.lax.batch_matmul", "jax.lax.conv", "jax.lax.conv_general_dilated",
    "jax.lax.conv_with_general_padding", "jax.numpy.linalg.matmul",
})
FIXED_PRECISION = ("highest", "HIGHEST", "float32", "F32")


def batched_product_reason(parsed: ParsedModule, body: list[cst.BaseStatement]) -> str | None:
    """The unsafe reason for a `jax.vmap` fix of a step with a matrix product, or None."""
    found = _product_in(parsed, body, depth=1)
    if found is None:
        return None
    return (
        f"`jax.vmap` batches the per-step `{found}` into one matrix product, which GPUs run in TF32 at the "
        "default matmul precision (the loop's per-step products run in float32), so results may differ "
        "there by about 1e-2; pass `precision=\"highest\"` to the product to make it exact"
    )


def _product_in(parsed: ParsedModule, nodes: list[cst.CSTNode], depth: int) -> str | None:
    for root in nodes:
        for node in descendants(root):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
                return shorten(parsed.code(node), 40)
            if not isinstance(node, cst.Call) or not isinstance(node.func, (cst.Name, cst.Attribute)):
                continue
            qname = parsed.qualified_name(node.func) or ""
            if qname in CONTRACTIONS and not _fixed_precision(parsed, node):
                return shorten(parsed.code(node), 40)
            if depth > 0 and isinstance(node.func, cst.Name):
                helper = _module_function(parsed, node.func.value)
                if helper is not None and _product_in(parsed, [helper.body], depth - 1) is not None:
                    return shorten(parsed.code(node), 40)
    return None


def _fixed_precision(parsed: ParsedModule, call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("precision", "preferred_element_type"):
            text = parsed.code(arg.value)
            if arg.keyword.value == "precision" and any(word in text for word in FIXED_PRECISION):
                return True
    return False


def _module_function(parsed: ParsedModule, name: str) -> cst.FunctionDef | None:
    for statement in parsed.module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None
