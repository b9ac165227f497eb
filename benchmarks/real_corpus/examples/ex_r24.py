"""Inputs for xlstm-jax `fwbw_backward` (R24): the same function as R23."""

from ex_r23 import example  # noqa: F401
