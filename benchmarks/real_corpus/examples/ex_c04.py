"""Inputs for tdmpc2-jax `TDMPC2.update` (C04): the loop is in `world_model_loss_fn`, a loss nested in
`update`, so verify runs `update` with the agent of ex_c05 and a replay batch shaped as
`train.py` samples it (time-major: horizon steps of a batch of 4, 6-d observations, 2-d actions).

Horizons 3 and 5; one batch has a terminated and a truncated step, so `finished` changes mid-rollout.
"""

from __future__ import annotations


def example():
    import jax
    import jax.numpy as jnp

    from ex_c05 import _agent

    pairs = []
    for horizon in (3, 5):
        keys = jax.random.split(jax.random.PRNGKey(40 + horizon), 5)
        batch = 4
        observations = jax.random.normal(keys[0], (horizon, batch, 6))
        next_observations = jax.random.normal(keys[1], (horizon, batch, 6))
        actions = jax.random.uniform(keys[2], (horizon, batch, 2), minval=-1.0, maxval=1.0)
        rewards = jax.random.normal(keys[3], (horizon, batch))
        terminated = jnp.zeros((horizon, batch)).at[1, 0].set(1.0)
        truncated = jnp.zeros((horizon, batch)).at[horizon - 1, 2].set(1.0)
        args = (_agent(horizon), observations, actions, rewards, next_observations, terminated, truncated)
        pairs.append((args, {"key": keys[4]}))
    return pairs
