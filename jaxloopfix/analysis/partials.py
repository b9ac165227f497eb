"""The spellings of `functools.partial`: a partial application binds a function's parameters
as a call does (`partial(train_step, losses=loss_fn)`). Kept free of libcst: the project pass
reads call sites with Python's `ast` before any parse."""

from __future__ import annotations

# `jax.partial` is the legacy re-export of `functools.partial` (`@jax.partial(jax.jit, static_argnums=1)`);
# `jax.tree_util.Partial` is a subclass of it that is a pytree (`@Partial(jax.jit, static_argnames=...)`).
PARTIAL: frozenset[str] = frozenset({"functools.partial", "jax.partial", "jax.tree_util.Partial"})
# Their last names, for reading call sites before names are resolved.
PARTIAL_NAMES: frozenset[str] = frozenset(name.rsplit(".", 1)[1] for name in PARTIAL)
