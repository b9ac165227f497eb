"""Inputs for evojax `_tell_core` (R30): the solver's own hyperparameters, coefficients and state after one `ask`.

The state gets the eigen decomposition that `tell` computes before calling `_tell_core`.
Population sizes 8 and 12 over 5 parameters.
"""

from __future__ import annotations


def example():
    import jax

    from evojax.algo.cma_jax import CMA_ES_JAX

    pairs = []
    for pop_size in (8, 12):
        solver = CMA_ES_JAX(param_size=5, pop_size=pop_size, seed=pop_size)
        solutions = solver.ask()
        B, D = solver._eigen_decomposition()
        state = solver.state._replace(B=B, D=D)
        fitness = jax.random.normal(jax.random.PRNGKey(pop_size), (pop_size,))
        pairs.append(((solver.hyper_parameters, solver.coefficients, state, fitness, solutions), {}))
    return pairs
