"""Inputs for jax-policy-gradient `compute_policy_loss` (C03), as `train.py` passes them.

`sample_episode` in `env.py` collects `states` as a Python list of observation arrays and
`actions` as a list of Python ints; the returns are one array. The policy is a linear map
over 4-d observations to 2 logits. Episodes of 5 and 9 steps.
"""

from __future__ import annotations


def example():
    import jax
    import jax.numpy as jnp

    def policy_forward(params, state):
        return params["w"] @ state + params["b"]

    pairs = []
    for steps in (5, 9):
        keys = jax.random.split(jax.random.PRNGKey(steps), 4)
        params = {"w": jax.random.normal(keys[0], (2, 4)), "b": jnp.zeros(2)}
        states = [jax.random.normal(k, (4,)) for k in jax.random.split(keys[1], steps)]
        actions = [int(a) for a in jax.random.randint(keys[2], (steps,), 0, 2)]
        returns = jax.random.normal(keys[3], (steps,))
        pairs.append(((params, policy_forward, states, actions, returns), {}))
    return pairs
