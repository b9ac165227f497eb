"""Run the original and the rewritten function on JAX and compare them.

`verify` is the only part of jaxloopfix that executes user code, and it does
so in a subprocess (`worker.py`) so an import failure, an exception or a hang
in user code never takes the tool down. The parent side (`runner.py`) never
imports jax.
"""
