"""Test-wide settings: JAX on CPU at full matmul precision, so scan and loop can be compared tightly."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")
