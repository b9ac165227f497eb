"""Inputs for diffrax's latent-ODE example notebook, `LatentODE._latent` (C09): a small model built
with the notebook's own constructor, and one irregularly sampled 2-d series (T times, T values),
as `LatentODE.train` passes each series of a batch under `jax.vmap`.

`verify` imports the notebook's imports and definitions as the module `latent_ode`. T is 6 and 11.
"""

from __future__ import annotations


def example():
    import jax
    import jax.numpy as jnp

    from latent_ode import LatentODE

    model = LatentODE(data_size=2, hidden_size=8, latent_size=4, width_size=8, depth=1, key=jax.random.PRNGKey(0))
    pairs = []
    for T in (6, 11):
        t_key, y_key, key = jax.random.split(jax.random.PRNGKey(T), 3)
        ts = jnp.sort(jax.random.uniform(t_key, (T,), maxval=3.0))
        ys = jax.random.normal(y_key, (T, 2))
        pairs.append(((model, ts, ys, key), {}))
    return pairs
