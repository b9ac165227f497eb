"""jaxloopfix: find Python loops that JAX unrolls under a trace and rewrite them to `lax.scan`."""

__version__ = "0.1.0"
