"""Inputs for xlstm-jax `fwbw_backward` (R23, R24): the context comes from the file's own forward pass.

Chunked (chunk_size 4), so both loops run: the chunk-state recurrence and the reversed gradient one.
Two sequence lengths give 4 and 6 chunks.
"""

from __future__ import annotations

from dataclasses import asdict


def example():
    import jax

    from xlstm_jax.models.xlstm_parallel.blocks.mlstm.backend.fwbw import fwbw_forward, mLSTMBackendFwbwConfig

    config = asdict(mLSTMBackendFwbwConfig(chunk_size=4))
    pairs = []
    for length in (16, 24):
        keys = jax.random.split(jax.random.PRNGKey(length), 6)
        q, k, v = (jax.random.normal(key, (2, length, 8)) for key in keys[:3])
        i, f = (jax.random.normal(key, (2, length)) for key in keys[3:5])
        h, context = fwbw_forward(q, k, v, i, f, config)
        dh = jax.random.normal(keys[5], h.shape)
        pairs.append(((context, dh, config), {}))
    return pairs
