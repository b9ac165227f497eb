"""Matrix products of a step's input with loop invariants, computed for every step before the scan.

Evidence (`benchmarks/results-gpu.md`, H200, Elman RNN forward pass, T=1,000): the tool's
`lax.scan` ran at 0.89-0.96x the unrolled loop at `unroll` 16-64; with the input projection
`xs_t @ W_x` computed for all steps before the scan it ran 1.33-1.47x *faster* than the loop:
one large matrix product instead of a small one per step, leaving only `h @ W_h` in the step.

Cases: `xs_t @ W`, `W @ xs_t`, `jnp.dot(xs_t, W)` and `xs_t @ params["W"]` move out; a product whose other side
reads the carry, a name the loop assigns, the index, or calls anything stays (a call may draw
random numbers or be costly to run twice). The hoisted product is written as
`jax.vmap(lambda xs_t: xs_t @ W)(xs)`, which is the per-step product for any rank of `W`
(`xs @ W` is not, once `W` has three axes). Batching the products changes their rounding, and GPUs
run the batched one in TF32 at the default precision: the form is written only where `--tune`
measured it faster and `verify` found it equal (see `verify/variants.HOISTED_VARIANTS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from jaxloopfix.analysis.walk import walk

# Nodes that open a scope of their own: names inside them are not the step's.
_NEW_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Nodes whose presence in the invariant operand keeps a product in the step.
_NOT_INVARIANT = (cst.Call, cst.NamedExpr, cst.Yield, cst.Await, *_NEW_SCOPES)


@dataclass
class StepProduct:
    """One product to hoist: the nodes in the step that compute it (identical text, one array)."""

    param: str  # the step input it multiplies
    text: str  # its code, e.g. `xs_t @ params["W_x"]`
    nodes: list[cst.BaseExpression]  # `a @ b` or `jnp.dot(a, b)`


# Products written as calls: `jnp.dot(x_t, W)`, `jnp.matmul(W, x_t)`.
PRODUCT_CALLS = frozenset({"jax.numpy.dot", "jax.numpy.matmul"})


def step_products(
    statements: list[cst.BaseStatement],
    inputs: set[str],
    variant: set[str],
    code: Callable[[cst.CSTNode], str],
    qualified_name: Callable[[cst.CSTNode], str | None],
) -> list[StepProduct]:
    """The hoistable products in the step's statements, in order of first appearance.

    `inputs`: the step's per-step parameters; `variant`: every name whose value changes between
    steps (the carries, names the body assigns, the index, the inputs); `qualified_name`: what a
    call's function is (`jax.numpy.dot`), None when unknown."""
    found: dict[str, StepProduct] = {}
    for statement in statements:
        for node in _outside_nested_scopes(statement):
            operands = _operands(node, qualified_name)
            if operands is None:
                continue
            param = _input_times_invariant(operands, inputs, variant)
            if param is None or not _invariant_extras(node, variant):
                continue
            text = code(node)
            found.setdefault(text, StepProduct(param, text, [])).nodes.append(node)
    return list(found.values())


def _operands(
    node: cst.CSTNode, qualified_name: Callable[[cst.CSTNode], str | None]
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two factors of `a @ b` or `jnp.dot(a, b)` / `jnp.matmul(a, b)`, else None."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
        return node.left, node.right
    if not isinstance(node, cst.Call) or not isinstance(node.func, (cst.Name, cst.Attribute)):
        return None
    positional = [arg for arg in node.args if arg.keyword is None]
    if len(positional) != 2 or any(arg.star for arg in positional):
        return None
    if qualified_name(node.func) not in PRODUCT_CALLS:
        return None
    return positional[0].value, positional[1].value


def _invariant_extras(node: cst.CSTNode, variant: set[str]) -> bool:
    """A call's keyword arguments (`precision=...`) and its function must not change between steps."""
    if not isinstance(node, cst.Call):
        return True
    return _invariant(node.func, variant) and all(_invariant(arg.value, variant) for arg in node.args if arg.keyword is not None)


def _input_times_invariant(
    operands: tuple[cst.BaseExpression, cst.BaseExpression], inputs: set[str], variant: set[str]
) -> str | None:
    """The step input of `x_t @ W` or `W @ x_t` when the other factor is loop-invariant, else None."""
    left, right = operands
    for this, other in ((left, right), (right, left)):
        if isinstance(this, cst.Name) and this.value in inputs and not this.lpar and _invariant(other, variant):
            return this.value
    return None


def _invariant(expr: cst.BaseExpression, variant: set[str]) -> bool:
    """Whether `expr` has the same value in every step: it reads no name that changes between
    steps and calls nothing."""
    nodes = list(walk(expr))
    if any(isinstance(n, _NOT_INVARIANT) for n in nodes):
        return False
    return not any(isinstance(n, cst.Name) and n.value in variant for n in nodes)


def _outside_nested_scopes(root: cst.CSTNode) -> list[cst.CSTNode]:
    """`root` and its descendants, without entering nested functions, lambdas, classes or
    comprehensions (their names are not the step's)."""
    return list(walk(root, lambda node: node is root or not isinstance(node, _NEW_SCOPES)))


class ReplaceProducts(cst.CSTTransformer):
    """Each hoisted product in the step becomes its per-step name."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def _replaced(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        name = self.names.get(id(original))
        if name is None:
            return updated
        return cst.Name(name, lpar=updated.lpar, rpar=updated.rpar)

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        return self._replaced(original, updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self._replaced(original, updated)
