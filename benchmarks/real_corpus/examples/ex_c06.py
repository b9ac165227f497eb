"""Inputs for tdmpc2-jax `TDMPC2.plan` (C06): the agent of ex_c05 with policy-prior samples on, no previous plan.

Horizons 3 and 5; a batch of 4 latents; evaluation mode (`train=False`).
"""

from __future__ import annotations


def example():
    import jax

    from ex_c05 import _agent

    pairs = []
    for horizon in (3, 5):
        z_key, key = jax.random.split(jax.random.PRNGKey(20 + horizon))
        z = jax.random.normal(z_key, (4, 16))
        pairs.append(((_agent(horizon), z, None, False), {"key": key}))
    return pairs
