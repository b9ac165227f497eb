"""Inputs for evosax `LM_MA_ES._ask` (C17): the strategy, its default parameters and an initialised state.

The state is moved past its first generations with a random memory `M`, so every step of the
memory loop changes the sample (at generation 0 the `jnp.where` keeps it unchanged).
"""

from __future__ import annotations


def example():
    import jax
    import jax.numpy as jnp

    from evosax.algorithms.distribution_based.lm_ma_es import LM_MA_ES

    pairs = []
    for population, dims in ((8, 5), (6, 3)):
        strategy = LM_MA_ES(population_size=population, solution=jnp.zeros(dims))
        params = strategy.default_params
        init_key, memory_key, ask_key = jax.random.split(jax.random.PRNGKey(dims), 3)
        state = strategy.init(init_key, jnp.zeros(dims), params)
        memory = 0.3 * jax.random.normal(memory_key, state.M.shape)
        state = state.replace(M=memory, generation_counter=3)
        pairs.append(((strategy, ask_key, state, params), {}))
    return pairs
