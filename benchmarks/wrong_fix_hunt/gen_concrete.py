"""Tests on values that are concrete in the loop but traced in a scan's step.

Under `jax.vmap` (or on host NumPy values) a grid built from Python numbers stays concrete, so a
Python `if` on something computed from `grid[i]` runs in the loop. In a `lax.scan` the index is
traced, and so is everything computed from it: the scan raises where the loop ran. A fix must
refuse these; the controls test only Python values and may be fixed.
"""
from hunt_common import P

P("concrete_01_vmap_searchsorted", "`idx = jnp.searchsorted(GRID, times[i])` then `if idx == 0:` under vmap: concrete in the loop.", '''
GRID = jnp.array([0.5, 1.0, 2.0, 4.0])


def short_rates(curve: Float32[Array, "T M"]):
    times = jnp.linspace(0.0, 4.0, curve.shape[0])
    rates = jnp.zeros(curve.shape[0])
    for i in range(curve.shape[0]):
        t = times[i]
        idx = jnp.searchsorted(GRID, t)
        if idx == 0:
            rates = rates.at[i].set(curve[i, 0])
        else:
            rates = rates.at[i].set(curve[i, -1] * t)
    return rates


run = jax.vmap(short_rates)
CASES = [lambda: ((_arr((2, 6, 3)),), {}), lambda: ((_arr((3, 9, 3), seed=1),), {})]
FUNC = "run"
''')

P("concrete_02_chain_of_names", "the test reads `first`, computed from `idx`, computed from `times[i]`.", '''
GRID = jnp.array([0.5, 1.0, 2.0, 4.0])


def weights(curve: Float32[Array, "T M"]):
    times = jnp.linspace(0.0, 4.0, curve.shape[0])
    out = jnp.zeros(curve.shape[0])
    for i in range(curve.shape[0]):
        idx = jnp.searchsorted(GRID, times[i])
        first = idx < 2
        if first:
            out = out.at[i].set(jnp.sum(curve[i]))
        else:
            out = out.at[i].set(jnp.max(curve[i]))
    return out


run = jax.vmap(weights)
CASES = [lambda: ((_arr((2, 6, 3)),), {}), lambda: ((_arr((2, 11, 3), seed=2),), {})]
FUNC = "run"
''')

P("concrete_03_host_table", "a NumPy table indexed by the step: `if table[i] > 0:` runs on host values in the loop.", '''
TABLE = np.array([1.0, -1.0, 2.0, 0.5, -0.5, 3.0, 1.5, -2.0])


@jax.jit
def signed(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:])
    for i in range(xs.shape[0]):
        w = TABLE[i] * 2.0
        if w > 0:
            acc = acc + xs[i]
        else:
            acc = acc - xs[i]
    return acc


CASES = [lambda: ((_arr((8, 3)),), {})]
FUNC = "signed"
''')

P("concrete_04_ok_static_flag", "control: the `if` tests a static argument, the same in every step.", '''
@partial(jax.jit, static_argnames=("flip",))
def run(xs: Float32[Array, "T D"], flip: bool):
    acc = jnp.zeros(xs.shape[1:])
    for i in range(xs.shape[0]):
        if flip:
            acc = acc * 0.5 - xs[i]
        else:
            acc = acc * 0.5 + xs[i]
    return acc


CASES = [lambda: ((_arr((6, 3)),), {"flip": True}), lambda: ((_arr((6, 3)),), {"flip": False})]
FUNC = "run"
''')

P("concrete_05_grid_from_helper", "a helper called from a vmapped lambda with a static count; the grid comes from a tuple a simulator returns.", '''
GRID = jnp.array([0.5, 1.0, 2.0, 4.0])


def simulate(curve, n_steps):
    return jnp.linspace(0.0, 4.0, n_steps), curve * 2.0


def short_rates(curve, n_steps):
    times, paths = simulate(curve, n_steps)
    rates = jnp.zeros(n_steps)
    for i in range(n_steps):
        t = times[i]
        row = paths[i]
        idx = jnp.searchsorted(GRID, t)
        if idx == 0:
            rates = rates.at[i].set(row[0])
        else:
            rates = rates.at[i].set(row[idx - 1] + t)
    return rates


def run(curves: Float32[Array, "B T M"]):
    return jax.vmap(lambda c: short_rates(c, curves.shape[1]))(curves)


CASES = [lambda: ((_arr((2, 6, 4)),), {}), lambda: ((_arr((3, 9, 4), seed=3),), {})]
FUNC = "run"
''')
