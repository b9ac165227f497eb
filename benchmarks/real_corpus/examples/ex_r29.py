"""Inputs for AlphaFold `template_embedding_1d` (R29): template features with the shapes its docstring gives.

Three and five templates over 6 residues (37 atoms each, with coordinates); verify runs the
Haiku function under `hk.transform`, both versions with the original's parameters.
"""

from __future__ import annotations


def example():
    import jax
    import ml_collections

    pairs = []
    for templates in (3, 5):
        keys = jax.random.split(jax.random.PRNGKey(templates), 3)
        batch = {
            "template_aatype": jax.random.randint(keys[0], (templates, 6), 0, 21),
            "template_all_atom_positions": 3.0 * jax.random.normal(keys[1], (templates, 6, 37, 3)),
            "template_all_atom_mask": jax.random.bernoulli(keys[2], 0.8, (templates, 6, 37)).astype("float32"),
        }
        config = ml_collections.ConfigDict({"bfloat16": False})
        pairs.append(((batch, 8, config), {}))
    return pairs
