"""Inputs for energy-transformer-jax `ImageEnergyTransformer.__call__` (R26): a small model built by its own constructor.

A 3x16x16 image in 4x4 patches (16 tokens of width 32, 2 heads), 4 of them masked; the energy
descent runs its default 12 steps and, in a second case, 5.
"""

from __future__ import annotations


def example():
    import jax
    import jax.numpy as jnp

    from architecture import ETConfig
    from image_core import FullConfig, ImageEnergyTransformer

    conf = FullConfig(image_shape=(3, 16, 16), patch_size=4, et_conf=ETConfig(D=32, Y=8, n_heads=2), n_mask=4)
    model = ImageEnergyTransformer(jax.random.PRNGKey(0), conf)
    image = jax.random.normal(jax.random.PRNGKey(1), conf.image_shape)
    mask = jnp.zeros(16, dtype=jnp.uint8).at[jnp.array([1, 5, 9, 14])].set(1)
    return [((model, image, mask), {}), ((model, image, mask), {"nsteps": 5})]
