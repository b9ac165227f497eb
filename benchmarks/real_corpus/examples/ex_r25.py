"""Inputs for xlstm-jax `recurrent_sequence_fw` (R25): queries, keys and values shaped (B, NH, S, DH), gates (B, NH, S).

The shapes its docstring gives, for sequence lengths 5 and 9, with the Python loop (`use_scan=False`,
the default) and the default step function.
"""

from __future__ import annotations


def example():
    import jax

    pairs = []
    for length in (5, 9):
        keys = jax.random.split(jax.random.PRNGKey(length), 5)
        q, k, v = (jax.random.normal(key, (2, 3, length, 4)) for key in keys[:3])
        i, f = (jax.random.normal(key, (2, 3, length)) for key in keys[3:])
        pairs.append(((q, k, v, i, f), {}))
    return pairs
