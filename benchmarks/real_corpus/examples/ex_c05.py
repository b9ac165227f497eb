"""Inputs for tdmpc2-jax `TDMPC2.estimate_value` (C05): a small agent built by the package's own `create` methods.

A 16-wide latent, 2-d actions, a dense encoder over 6-d observations; horizons 3 and 5
(the loop's trip count is the agent's static `horizon`), both with continue prediction off.
"""

from __future__ import annotations


def _agent(horizon: int):
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax.training.train_state import TrainState

    from tdmpc2_jax.tdmpc2 import TDMPC2
    from tdmpc2_jax.world_model import WorldModel

    encoder_key, model_key = jax.random.split(jax.random.PRNGKey(horizon))
    encoder_module = nn.Dense(16)
    encoder = TrainState.create(
        apply_fn=encoder_module.apply,
        params=encoder_module.init(encoder_key, jnp.zeros((1, 6)))["params"],
        tx=optax.adam(1e-3),
    )
    model = WorldModel.create(
        action_dim=2, encoder=encoder, latent_dim=16, value_dropout=0.0, num_value_nets=2, num_bins=11,
        symlog_min=-10.0, symlog_max=10.0, simnorm_dim=8, predict_continues=False, symlog_obs=False,
        learning_rate=1e-3, key=model_key,
    )
    return TDMPC2.create(
        world_model=model, mpc=True, horizon=horizon, mppi_iterations=2, population_size=8,
        policy_prior_samples=4, num_elites=2, min_plan_std=0.05, max_plan_std=2.0, temperature=0.5,
        discount=0.9, batch_size=4, rho=0.5, consistency_coef=1.0, reward_coef=0.1, value_coef=0.1,
        continue_coef=1.0, entropy_coef=1e-4, tau=0.01,
    )


def example():
    import jax

    pairs = []
    for horizon in (3, 5):
        z_key, action_key, key = jax.random.split(jax.random.PRNGKey(10 + horizon), 3)
        z = jax.random.normal(z_key, (4, 16))
        actions = jax.random.uniform(action_key, (4, horizon, 2), minval=-1.0, maxval=1.0)
        pairs.append(((_agent(horizon), z, actions, key), {}))
    return pairs
