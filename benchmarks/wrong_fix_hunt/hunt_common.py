"""Shared prelude and registry for the wrong-fix hunt generators.

Every program must run on its own (imports, a deterministic `_arr` input maker) and name its entry
point (FUNC) and inputs (CASES), so the harness can run original and fixed copies side by side;
keeping that prelude here keeps all programs byte-for-byte consistent.  Generator modules call P() at
import time, which only records the program; generate.py decides where to write.
"""
import textwrap

HEADER = '''\
import numpy as np
import jax
import jax.numpy as jnp
from functools import partial
from jaxtyping import (Array, Bool, Complex, Complex64, Complex128, Float, Float16, Float32, Float64, BFloat16, Int, Int8,
                       Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Shaped, Real, Integer, UInt)


def _arr(shape, dtype="float32", seed=0, lo=-3, hi=4):
    """A deterministic input array of `shape` and `dtype`."""
    r = np.random.default_rng(seed)
    dt = jnp.dtype(dtype)
    if dt == jnp.dtype(bool):
        return jnp.asarray(r.integers(0, 2, size=shape).astype(bool))
    if jnp.issubdtype(dt, jnp.integer):
        if jnp.issubdtype(dt, jnp.unsignedinteger):
            lo = max(lo, 0)
        return jnp.asarray(r.integers(lo, hi, size=shape), dtype=dt)
    if jnp.issubdtype(dt, jnp.complexfloating):
        return jnp.asarray(r.normal(size=shape) + 1j * r.normal(size=shape), dtype=dt)
    return jnp.asarray(r.normal(size=shape), dtype=dt)

'''
PROGRAMS: dict[str, str] = {}  # name -> full program text, in definition order


def P(name: str, doc: str, body: str) -> None:
    """Register program `name` (file `name`.py): docstring, HEADER, then the dedented body."""
    assert name not in PROGRAMS, name
    PROGRAMS[name] = f'"""{doc}"""\n' + HEADER + "\n" + textwrap.dedent(body).strip() + "\n"
