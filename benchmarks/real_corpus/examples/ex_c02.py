"""Inputs for RemyCiterin/jax-rl `Agent.RETRACE_LOSS` (C02): a Q-IMPALA agent over 3 actions and an
unroll of T steps for a batch of 2, shaped as the learner passes them.

`result`/`target` hold logits and Q-values for T + 1 steps (the loss reads `Vt[T]`), `tau` the
behaviour logits, actions, rewards and done flags for T steps; `adv_std` is the running advantage
scale the learner keeps in its parameters. T is 4 and 6, one done flag set mid-unroll.
"""

from __future__ import annotations


def example():
    import haiku as hk
    import jax
    import jax.numpy as jnp

    from algorithms.Q_IMPALA import Agent
    from utils.conventions import HyperParams, ModelOutput, Tau

    agent = Agent(lambda out_dim: hk.LSTM(out_dim), inDim=5, outDim=3)
    pairs = []
    for T in (4, 6):
        keys = jax.random.split(jax.random.PRNGKey(T), 8)
        batch = 2
        result = ModelOutput(logits=jax.random.normal(keys[0], (T + 1, batch, 3)), value=jax.random.normal(keys[1], (T + 1, batch, 3)))
        target = ModelOutput(logits=jax.random.normal(keys[2], (T + 1, batch, 3)), value=jax.random.normal(keys[3], (T + 1, batch, 3)))
        tau = Tau(
            done=jnp.zeros((T, batch)).at[T // 2, 1].set(1.0),
            reward=jax.random.normal(keys[4], (T, batch)),
            action=jax.random.randint(keys[5], (T, batch), 0, 3),
            obs=jax.random.normal(keys[6], (T, batch, 5)),
            data=jax.random.normal(keys[7], (T, batch, 3)),
        )
        pairs.append(((agent, result, target, tau, HyperParams()), {"adv_std": jnp.array(1.5)}))
    return pairs
