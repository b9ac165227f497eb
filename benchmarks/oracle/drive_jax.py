"""A second, wider drive of the installed JAX under tracing (drive_api.py calls each public function
once, with the first argument pattern it accepts). Here:

* every jax.numpy / jax.nn / jax.scipy.special / jax.lax function with *every* argument pattern it
  accepts, and with `axis=` / `keepdims=` variants, on 1-, 2- and 3-D float, int, bool and complex
  inputs;
* indexing and `.at[]` updates of many index forms;
* lax control flow (scan, fori_loop, while_loop, cond, switch, map, associative_scan, custom_root,
  custom_linear_solve), lax.linalg, convolutions, reductions and windows, collectives under vmap;
* transformations: jvp, linearize, vjp, hessian, jacfwd, jacrev, checkpoint, custom_jvp / vjp,
  vmap with in_axes pytrees, make_jaxpr, eval_shape, pure_callback, debug.print;
* jax.scipy (optimize, integrate, interpolate, ndimage, signal, fft, sparse.linalg, spatial,
  stats distributions, cluster), jax.random with every function and several key kinds,
  jax.experimental (jet, ode, checkify, sparse).

    python benchmarks/oracle/drive_jax.py [SECONDS] [SECTION ...]

Each call is wrapped in `jit` (or traced by the transformation), guarded by an alarm; failures
are caught. Each section runs in its own child process (a crash costs one section).
"""
from __future__ import annotations

import inspect
import time

import numpy as np

from drive_common import deadline_from_argv, make_guarded, run_sections

DEADLINE = deadline_from_argv(600.0)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


N_OK = [0, 0]
guarded = make_guarded(8, DEADLINE, N_OK)


def J(f, *args, static=()):
    return guarded(lambda: jax.jit(f, static_argnums=static)(*args))


rng = np.random.default_rng(1)
v = jnp.asarray(rng.normal(size=(6,)), jnp.float32)
w = jnp.asarray(rng.normal(size=(6,)), jnp.float32)
m = jnp.asarray(rng.normal(size=(4, 4)), jnp.float32)
r = jnp.asarray(rng.normal(size=(3, 5)), jnp.float32)
b3 = jnp.asarray(rng.normal(size=(2, 3, 4)), jnp.float32)
b4 = jnp.asarray(rng.normal(size=(2, 3, 4, 5)), jnp.float32)
spd = m @ m.T + 4 * jnp.eye(4)
pos = jnp.abs(v) + 0.5
iv = jnp.arange(6, dtype=jnp.int32)
im = jnp.arange(12, dtype=jnp.int32).reshape(3, 4)
bv = v > 0
cv = v + 1j * w
cm = m + 1j * m.T
key = jax.random.PRNGKey(0)

PATTERNS = [
    (v,), (m,), (r,), (b3,), (b4,), (pos,), (iv,), (im,), (bv,), (cv,), (cm,), (spd,),
    (v, w), (m, m), (r, r), (b3, b3), (m, v[:4]), (v, 2), (m, 1), (b3, 2), (v, w, pos), (iv, iv),
    (im, im), (bv, bv), ([v, w],), ([m, m],), ([m, m], 0), ((m, m),), (key,), (key, (3, 2)),
]
KW = [dict(axis=0), dict(axis=1), dict(axis=-1), dict(axis=(0, 1)), dict(axis=None), dict(keepdims=True),
      dict(axis=1, keepdims=True)]
SKIP = {"array_repr", "array_str", "can_cast", "save", "savez", "load", "printoptions", "set_printoptions",
        "get_printoptions", "fromfile", "fromstring", "frombuffer", "fromfunction", "fromiter", "einsum_path",
        "show_config", "array_api", "iinfo", "finfo", "dtype", "isdtype"}


def call_all(fn, name, kw=True):
    for args in PATTERNS:
        if time.time() > DEADLINE:
            return
        static = tuple(i for i, a in enumerate(args) if isinstance(a, (int, tuple)) and not hasattr(a, "shape")
                       and not (isinstance(a, tuple) and a and hasattr(a[0], "shape")))
        if J(fn, *args, static=static) and kw:
            for k in KW:
                J(lambda *a, k=k: fn(*a, **k), *args, static=static)


def functions(module):
    out = []
    for attr in sorted(dir(module)):
        if attr.startswith("_") or attr in SKIP:
            continue
        fn = getattr(module, attr, None)
        if callable(fn) and not inspect.isclass(fn) and not inspect.ismodule(fn):
            out.append((attr, fn))
    return out


# ---------------------------------------------------------------- sections


def sec_numpy():
    for name, fn in functions(jnp):
        call_all(fn, name)


def sec_numpy_sub():
    for mod in (jnp.linalg, jnp.fft):
        for name, fn in functions(mod):
            call_all(fn, name)


def sec_nn():
    import jax.nn
    for name, fn in functions(jax.nn):
        call_all(fn, name)
    q = jnp.ones((2, 5, 2, 4))
    for kw in ({}, dict(is_causal=True), dict(implementation="xla"), dict(bias=jnp.zeros((2, 2, 5, 5))),
               dict(mask=jnp.ones((2, 2, 5, 5), bool)), dict(query_seq_lengths=jnp.array([3, 5]), key_value_seq_lengths=jnp.array([5, 2])),
               dict(local_window_size=(2, 1))):
        J(lambda q, kw=kw: jax.nn.dot_product_attention(q, q, q, **kw), q)
    J(lambda q: jax.nn.dot_product_attention(q, q[:, :, :1], q[:, :, :1]), q)
    for name, init in functions(jax.nn.initializers):
        for shape in ((3, 4), (3, 3, 2, 4), (5,), (2, 3, 4)):
            for args in ((), (1.0,), (0.1,)):
                try:
                    f = init(*args)
                except Exception:  # noqa: BLE001
                    continue
                if callable(f):
                    J(lambda k, f=f, shape=shape: f(k, shape, jnp.float32), key)
                    break


def sec_special():
    import jax.scipy.special as sp
    for name, fn in functions(sp):
        call_all(fn, name, kw=False)
    J(lambda x: sp.zeta(x + 2.0, pos), pos)
    J(lambda x: sp.polygamma(jnp.array([1, 2, 3, 1, 2, 3]), x), pos)
    J(lambda x: sp.hyp1f1(0.5, 1.5, x), pos)
    J(lambda x: sp.bernoulli(8) * x, v)
    J(lambda x: sp.sph_harm_y(jnp.array([2]), jnp.array([1]), x, x, n_max=4), v)
    J(lambda x: sp.lpmn(3, 3, x / 10), v)
    J(lambda x: sp.lpmn_values(3, 3, x / 10, False), v)
    J(lambda x: sp.logsumexp(x, b=x, return_sign=True), v)
    J(lambda x: sp.gammainc(x, x), pos)
    J(lambda x: sp.betainc(x, x, x / 10), pos)
    J(lambda x: sp.expn(3, x), pos)
    J(lambda x: sp.spence(x), pos)
    J(lambda x: sp.fresnel(x), pos)
    J(lambda x: sp.kl_div(x, x + 1), pos)


def sec_lax():
    for name, fn in functions(lax):
        call_all(fn, name, kw=False)
    f = lambda c, x: (c + x, c * x)  # noqa: E731
    J(lambda x: lax.scan(f, 0.0, x), v)
    J(lambda x: lax.scan(f, 0.0, x, unroll=3), v)
    J(lambda x: lax.scan(f, 0.0, x, reverse=True, unroll=True), v)
    J(lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4), v)
    J(lambda x: lax.scan(lambda c, xs: ((c[0] + xs["a"], c[1]), xs), (0.0, x[0]), {"a": x, "b": x}), v)
    J(lambda x: lax.fori_loop(0, 5, lambda i, c: c + x[i], 0.0), v)
    J(lambda x: lax.fori_loop(0, 5, lambda i, c: c + x[i], 0.0, unroll=2), v)
    J(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + x[i], 0.0), v, 3)
    J(lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1), (0, x)), v)
    J(lambda x: lax.cond(x[0] > 0, lambda y: y + 1, lambda y: y - 1, x), v)
    J(lambda x: lax.cond(x[0] > 0, lambda y, z: y + z, lambda y, z: y - z, x, x), v)
    J(lambda x: lax.switch(2, [lambda y: y, lambda y: -y, lambda y: y * 2], x), v)
    J(lambda x, i: lax.switch(i, [lambda y: y, lambda y: -y, lambda y: y * 2], x), v, jnp.int32(1))
    J(lambda x: lax.map(jnp.sin, x), m)
    J(lambda x: lax.map(jnp.sin, x, batch_size=2), m)
    J(lambda x: lax.associative_scan(jnp.add, x), v)
    J(lambda x: lax.associative_scan(jnp.add, x, reverse=True), v)
    J(lambda x: lax.associative_scan(lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (x, x)), v)
    J(lambda x: lax.associative_scan(jnp.maximum, x, axis=1), m)
    J(lambda x: lax.reduce(x, 0.0, lax.add, (0,)), m)
    J(lambda x: lax.reduce((x, x), (0.0, 0.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,)), m)
    J(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "SAME"), m)
    J(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID"), b3)
    J(lambda x: lax.reduce_window((x, x), (0.0, 0.0), lambda a, b: (a[0] + b[0], a[1] + b[1]), (2, 2), (1, 1), "VALID"), m)
    for fn in (lax.cumsum, lax.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp):
        J(lambda x, fn=fn: fn(x, axis=1, reverse=True), m)
    J(lambda x: lax.sort((x, x), num_keys=2), m)
    J(lambda x: lax.sort_key_val(x, x, dimension=0), m)
    J(lambda x: lax.top_k(x, 2), m)
    J(lambda x: lax.approx_max_k(x, 2), m)
    J(lambda x: lax.pad(x, 0.0, [(1, 2, 1), (0, 0, 0)]), m)
    J(lambda x: lax.conv_general_dilated(x[None, None], jnp.ones((2, 1, 3, 3)), (1, 1), "SAME"), m)
    J(lambda x: lax.conv_general_dilated(x[None, None], jnp.ones((2, 1, 3, 3)), (2, 1), [(1, 1), (0, 2)], lhs_dilation=(1, 2), rhs_dilation=(2, 1)), m)
    J(lambda x: lax.conv_general_dilated(x[None], jnp.ones((3, 2, 2)), (1,), "VALID", dimension_numbers=("NHC", "HIO", "NHC")), r.T)
    J(lambda x: lax.conv_transpose(x[None, :, :, None], jnp.ones((3, 3, 1, 2)), (2, 2), "SAME"), m)
    J(lambda x: lax.conv(x[None, None], jnp.ones((2, 1, 2, 2)), (1, 1), "VALID"), m)
    J(lambda x: lax.conv_general_dilated_patches(x[None, None], (2, 2), (1, 1), "VALID"), m)
    J(lambda x: lax.conv_general_dilated_local(x[None, None], jnp.ones((1 * 4, 9, 2)), (1, 1), "SAME", (2, 2)), m[:3, :3])
    J(lambda x: lax.dot_general(x, x, (((2,), (2,)), ((0,), (0,)))), b3)
    J(lambda x: lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST), m)
    J(lambda x: lax.ragged_dot(x, jnp.ones((2, 4, 3)), jnp.array([2, 2], jnp.int32)), m)
    J(lambda x: lax.dynamic_slice(x, (1, 1), (2, 2)), m)
    J(lambda x: lax.dynamic_update_slice(x, jnp.ones((2, 2)), (1, 1)), m)
    J(lambda x: lax.gather(x, jnp.array([[0], [2]]), lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4)), m)
    J(lambda x: lax.scatter_add(x, jnp.array([[0], [2]]), jnp.ones((2, 4)), lax.ScatterDimensionNumbers((1,), (0,), (0,))), m)
    J(lambda x: lax.broadcast_in_dim(x, (3, 6, 2), (1,)), v)
    J(lambda x: lax.select_n(jnp.array([0, 1, 2, 0, 1, 2]), x, -x, 2 * x), v)
    J(lambda x: lax.split(x, (2, 4)), v)
    J(lambda x: lax.reduce_precision(x, 5, 10), v)
    J(lambda x: lax.psum(x, "i"), v) or guarded(lambda: jax.vmap(lambda x: lax.psum(x, "i"), axis_name="i")(m))
    for coll in (lambda x: lax.pmean(x, "i"), lambda x: lax.pmax(x, "i"), lambda x: lax.all_gather(x, "i"),
                 lambda x: lax.axis_index("i") + x, lambda x: lax.ppermute(x, "i", [(0, 1), (1, 0)]),
                 lambda x: lax.all_to_all(x, "i", 0, 0), lambda x: lax.psum_scatter(x, "i", tiled=True),
                 lambda x: lax.pswapaxes(x, "i", 0)):
        guarded(lambda coll=coll: jax.jit(jax.vmap(coll, axis_name="i"))(m))
    guarded(lambda: jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i")(m[:1]))
    J(lambda x: lax.custom_root(lambda y: y ** 2 - x, 1.0, lambda g, y0: lax.fori_loop(0, 10, lambda i, y: y - g(y) / (2 * y), y0), lambda g, y: y / 2.0), pos[0])
    J(lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, b: jnp.linalg.solve(a, b), symmetric=True), spd, v[:4])
    J(lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, b: jnp.linalg.solve(a, b), lambda mv, b: jnp.linalg.solve(a.T, b)), spd, v[:4])
    import jax.lax.linalg as ll
    for f in (ll.cholesky, ll.eigh, ll.qr, ll.svd, ll.lu, ll.schur, ll.hessenberg, ll.eig, ll.tridiagonal,
              lambda x: ll.triangular_solve(x, x, left_side=True, lower=True), lambda x: ll.lu_pivots_to_permutation(ll.lu(x)[1], 4),
              lambda x: ll.householder_product(*ll.geqrf(x)), lambda x: ll.tridiagonal_solve(x[0], x[1], x[2], x[:, :1]),
              lambda x: ll.qdwh(x), lambda x: ll.symmetric_product(x, x), lambda x: ll.svd(x, full_matrices=False, subset_by_index=(0, 2))):
        J(f, spd)
        J(lambda x, f=f: jax.vmap(f)(jnp.stack([x, x])), spd)


def sec_index():
    x = b3
    idx = [0, -1, slice(None), (0, 1), (slice(None), 1), (Ellipsis, 0), (None, Ellipsis), (slice(1, 3), slice(None, None, 2)),
           np.array([0, 1]), (np.array([0, 1]), slice(None), np.array([1, 3])), (Ellipsis, None, 1), (0, None, slice(None), None),
           (np.array([[0], [1]]), np.array([0, 2])), np.array([True, False]), (slice(None), np.array([True, False, True])),
           (slice(None, None, -1),), (1, Ellipsis, slice(None, 2)), ([0, 1], [1, 2]), (np.int32(1), 2)]
    for ix in idx:
        J(lambda x, ix=ix: x[ix], x)
        for op in ("set", "add", "mul", "min", "max", "get", "divide", "power"):
            J(lambda x, ix=ix, op=op: getattr(x.at[ix], op)(1.0) if op != "get" else x.at[ix].get(mode="fill", fill_value=0), x)
        J(lambda x, ix=ix: x.at[ix].set(2.0, mode="drop", indices_are_sorted=True, unique_indices=True), x)
        J(lambda x, ix=ix: x.at[ix].apply(jnp.sin), x)
    J(lambda x, i: x[i], x, jnp.int32(1))
    J(lambda x, i: x[i, :, i], x, jnp.int32(1))
    J(lambda x, i: x[:, i], x, jnp.array([0, 2]))
    J(lambda x, i: x[i[:, None], i[None, :]], m, jnp.array([0, 2]))
    J(lambda x, i: x.at[i].add(1.0, mode="clip"), x, jnp.array([0, 5]))
    J(lambda x, i: x.at[i, i].set(0.0), m, jnp.array([0, 1]))
    J(lambda x: jnp.where(x > 0, x, 0), x)
    J(lambda x: jnp.take(x, jnp.array([0, 2]), axis=2, mode="wrap"), x)
    J(lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), x)
    J(lambda x: jnp.put(x, jnp.array([0, 3]), 1.0, inplace=False), x)
    J(lambda x: jnp.place(x, x > 0, 0.0, inplace=False), x)
    J(lambda x: x[jnp.ix_(jnp.array([0, 1]), jnp.array([1, 2]))], m)
    J(lambda x: jnp.diag_indices_from(x)[0] + jnp.tril_indices_from(x)[0].sum(), m)
    J(lambda x: jnp.unravel_index(jnp.argmax(x), x.shape), x)
    J(lambda x: jnp.ravel_multi_index((jnp.array([0, 1]), jnp.array([1, 2])), (2, 3)), x)
    J(lambda x: jnp.select([x > 0, x < -1], [x, -x], 0.0), x)
    J(lambda x: jnp.piecewise(x, [x > 0, x < -1], [jnp.sin, jnp.cos, 0.0]), v)
    J(lambda x: jnp.apply_along_axis(jnp.sum, 1, x), x)
    J(lambda x: jnp.apply_over_axes(jnp.sum, x, [0, 2]), x)
    J(lambda x: jnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(x, x), b3)
    J(lambda x: jnp.vectorize(jnp.sum, excluded={1})(x, 0), b3)
    J(lambda x: jnp.einsum("ijk,ikl->ijl", x, jnp.swapaxes(x, 1, 2)), b3)
    J(lambda x: jnp.einsum("ij,jk,kl->il", x, x, x, optimize="greedy"), m)
    J(lambda x: jnp.einsum("...i,...i", x, x), b3)
    J(lambda x: jnp.einsum(x, [0, 1, 2], x, [0, 1, 2], [0]), b3)
    J(lambda x: jnp.tensordot(x, x, axes=([1, 2], [1, 2])), b3)
    J(lambda x: jnp.block([[x, x], [x, x]]), m)
    J(lambda x: jnp.histogramdd(x.reshape(-1, 3), bins=3), b3)
    J(lambda x: jnp.histogram2d(x[0], x[1], bins=3), m)
    J(lambda x: jnp.meshgrid(x, x, x, indexing="ij"), v)
    J(lambda x: jnp.polyfit(x, x ** 2, 3), v)
    J(lambda x: jnp.polyval(x[:3], x), v)
    J(lambda x: jnp.roots(x[:4], strip_zeros=False), v)
    J(lambda x: jnp.poly(x[:3]), v)
    J(lambda x: jnp.polymul(x[:3], x[:2]), v)
    J(lambda x: jnp.polydiv(x[:4], x[:2] + 3), v)
    J(lambda x: jnp.pad(x, ((1, 2), (0, 1), (2, 0)), mode="reflect"), b3)
    for mode in ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric", "wrap", "empty"):
        J(lambda x, mode=mode: jnp.pad(x, ((1, 2), (2, 1)), mode=mode), m)
    J(lambda x: jnp.pad(x, 2, mode=lambda vec, pad, axis, kw: vec), m)
    J(lambda x: jnp.unique(x, size=3, return_index=True, return_inverse=True, return_counts=True), iv)
    J(lambda x: jnp.unique(x, size=3, axis=0), im)
    J(lambda x: jnp.nonzero(x, size=3), m)
    J(lambda x: jnp.argwhere(x, size=3), m)
    J(lambda x: jnp.setdiff1d(x, x[:2], size=4), iv)
    J(lambda x: jnp.union1d(x, x[:2], size=4), iv)
    J(lambda x: jnp.intersect1d(x, x[:2], size=2, return_indices=True), iv)
    J(lambda x: jnp.isin(x, x[:2]), iv)
    J(lambda x: jnp.lexsort((x, x)), iv)
    J(lambda x: jnp.partition(x, 2, axis=1), m)
    J(lambda x: jnp.delete(x, jnp.array([0, 2]), axis=1, assume_unique_indices=True), m)
    J(lambda x: jnp.insert(x, 1, 0.0, axis=0), m)
    J(lambda x: jnp.split(x, [1, 3], axis=1), m)
    J(lambda x: jnp.array_split(x, 3, axis=1), m)
    J(lambda x: jnp.stack([x, x], axis=1), m)
    J(lambda x: jnp.concatenate([x, x, x], axis=None), m)
    J(lambda x: jnp.moveaxis(x, (0, 1), (2, 0)), b3)
    J(lambda x: jnp.interp(x, jnp.sort(x), x, period=2.0), v)
    J(lambda x: jnp.convolve(x, x[:3], mode="same"), v)
    J(lambda x: jnp.correlate(x, x[:3], mode="full"), v)
    J(lambda x: jnp.gradient(x, 2.0, axis=(0, 1)), m)
    J(lambda x: jnp.gradient(x, jnp.arange(3.0), jnp.arange(4.0), jnp.arange(5.0)), b4[0])
    J(lambda x: jnp.trapezoid(x, dx=0.5, axis=0), m)
    J(lambda x: jnp.cov(x, rowvar=False, fweights=jnp.array([1, 2, 1, 1]), aweights=jnp.ones(4)), m)
    J(lambda x: jnp.percentile(x, jnp.array([10.0, 50.0]), axis=(0, 1), method="midpoint"), b3)
    J(lambda x: jnp.nanquantile(x, 0.3, axis=1, keepdims=True), b3)
    J(lambda x: jnp.linalg.norm(x, ord="nuc", axis=(1, 2)), b3)
    J(lambda x: jnp.linalg.norm(x, ord=2, axis=(0, 1)), b3)
    J(lambda x: jnp.linalg.multi_dot([x, x, x, x]), m)
    J(lambda x: jnp.linalg.tensorsolve(jnp.eye(6).reshape(2, 3, 6), x), v)
    J(lambda x: jnp.linalg.tensorinv(jnp.eye(6).reshape(2, 3, 6), ind=2), v)
    J(lambda x: jnp.fft.fftn(x, axes=(0, 2), s=(3, 6)), b3)
    J(lambda x: jnp.fft.irfftn(jnp.fft.rfftn(x)), b3)
    J(lambda x: jnp.fft.fftshift(x, axes=(0, 1)), b3)
    J(lambda x: jnp.fromfunction(lambda i, j: i + j, (3, 3)) + x[:3, :3], m)
    J(lambda x: jnp.frompyfunc(lambda a, b: a + b, 2, 1).reduce(x, axis=0), m)
    J(lambda x: jnp.frompyfunc(lambda a, b: a * b, 2, 1).accumulate(x, axis=1), m)
    J(lambda x: jnp.add.at(x, jnp.array([0, 0, 2]), 1.0, inplace=False), v)
    J(lambda x: jnp.add.reduceat(x, jnp.array([0, 2, 4])), v)
    J(lambda x: jnp.multiply.outer(x, x), v)
    J(lambda x: jnp.packbits(x > 0, axis=1), b3)
    J(lambda x: jnp.unpackbits(x.astype(jnp.uint8), axis=0, count=3), im)
    J(lambda x: jnp.bincount(x, length=8), iv)
    J(lambda x: jnp.digitize(x, jnp.array([0.0, 0.5])), v)
    J(lambda x: jnp.searchsorted(jnp.sort(x), x, method="compare_all"), v)
    J(lambda x: jnp.searchsorted(jnp.sort(x), x, method="sort"), v)
    J(lambda x: jnp.round(x, 2), v)
    J(lambda x: jnp.nancumsum(x, axis=2), b3)
    J(lambda x: jnp.rot90(x, 3, axes=(1, 2)), b3)
    J(lambda x: jnp.roll(x, (1, 2), axis=(0, 2)), b3)
    J(lambda x, s: jnp.roll(x, s, axis=(0, 2)), b3, jnp.array([1, 2]))
    J(lambda x: jnp.tile(x, (2, 1, 3)), m)
    J(lambda x: jnp.kron(x, x), m)
    J(lambda x: jnp.vander(x, 4, increasing=True), v)
    J(lambda x: jnp.tri(4, 5, 1) * x[0, 0], m)
    J(lambda x: jnp.diagonal(x, 1, 0, 2), b3)
    J(lambda x: jnp.trace(x, 1, 1, 2), b3)
    J(lambda x: jnp.fill_diagonal(x, 0.0, inplace=False, wrap=True), m)
    J(lambda x: jnp.matrix_transpose(x) @ x, b3)
    J(lambda x: jnp.cross(x[..., :3], x[..., 1:4], axis=-1), b3)
    J(lambda x: jnp.asarray(x, copy=True, order="K"), m)
    J(lambda x: jnp.astype(x, jnp.bfloat16).astype(jnp.float32), m)
    J(lambda x: jnp.ufunc(lambda a, b: a + b, 2, 1, identity=0).reduce(x), v)


def sec_transforms():
    f = lambda x: jnp.sum(jnp.sin(x) * jnp.cos(x[::-1]))  # noqa: E731
    guarded(lambda: jax.jvp(jax.jit(f), (v,), (w,)))
    guarded(lambda: jax.linearize(f, v)[1](w))
    guarded(lambda: jax.vjp(f, v)[1](1.0))
    J(jax.hessian(f), v)
    J(jax.jacfwd(lambda x: jnp.tanh(x) * x[0]), v)
    J(jax.jacrev(lambda x: jnp.tanh(x) * x[0]), v)
    J(jax.jacrev(lambda x: {"a": x, "b": [x * 2, jnp.sum(x)]}), v)
    J(jax.jacfwd(jax.jacrev(f)), v)
    J(jax.grad(jax.checkpoint(f)), v)
    for pol in ("nothing_saveable", "everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable"):
        J(jax.grad(jax.checkpoint(lambda x: jnp.sum(jnp.tanh(x @ x) @ x), policy=getattr(jax.checkpoint_policies, pol))), m)
    J(jax.grad(jax.checkpoint(lambda x, n: jnp.sum(x ** n), static_argnums=(1,))), v)
    J(jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda y: jax.ad_checkpoint.checkpoint_name(jnp.sin(y), "s") * y,
                                                  policy=jax.checkpoint_policies.save_only_these_names("s"))(x))), v)
    J(jax.grad(lambda x: jnp.sum(jax.checkpoint(lambda y: jnp.sin(y) @ y, policy=jax.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host"))(x))), m)

    @jax.custom_jvp
    def cj(x):
        return jnp.sin(x)

    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0]))

    @jax.custom_vjp
    def cv_(x, y):
        return x * y

    cv_.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1], g * res[0]))
    J(jax.grad(lambda x: jnp.sum(cj(x))), v)
    J(jax.grad(lambda x: jnp.sum(cv_(x, x))), v)
    J(jax.vmap(jax.grad(lambda x: jnp.sum(cv_(x, x)))), m)
    J(lambda x: jax.vmap(lambda a, b: a["x"] * b, in_axes=({"x": 0}, None))({"x": x}, 2.0), m)
    J(lambda x: jax.vmap(jax.vmap(lambda a: a.sum()), in_axes=1, out_axes=0)(x), b3)
    J(lambda x: jax.vmap(lambda a: a, out_axes=1)(x), m)
    J(lambda x: jax.vmap(lambda a, b: a + b, in_axes=(0, None), axis_size=4)(x, 1.0), m)
    J(lambda x: jax.vmap(lambda a: lax.cond(a[0] > 0, jnp.sin, jnp.cos, a))(x), m)
    J(lambda x: jax.vmap(lambda a: lax.while_loop(lambda c: c[0] < 3.0, lambda c: c + 1.0, a))(x), m)
    J(lambda x: jax.vmap(lambda a: lax.scan(lambda c, y: (c + y, c), 0.0, a))(x), m)
    J(lambda x: jax.vmap(lambda a: jnp.linalg.solve(a, a[0]))(x), jnp.stack([spd, spd]))
    J(lambda x: jax.vmap(lambda a: a[jnp.argmax(a)])(x), m)
    J(lambda x: jax.vmap(lambda a, i: lax.dynamic_slice(a, (i,), (2,)), (0, 0))(x, jnp.array([0, 1, 2, 0])), m)
    J(lambda x: jax.vmap(lambda a: jnp.sort(a))(x), m)
    guarded(lambda: jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) @ x))(m))
    guarded(lambda: jax.eval_shape(lambda x: jnp.linalg.svd(x), m))
    J(lambda x: jax.pure_callback(lambda a: np.sin(a), jax.ShapeDtypeStruct(x.shape, x.dtype), x), v)
    J(lambda x: jax.pure_callback(lambda a: np.sin(a), jax.ShapeDtypeStruct(x.shape[1:], x.dtype), x, vmap_method="sequential"), m)
    guarded(lambda: jax.jit(jax.vmap(lambda a: jax.pure_callback(lambda b: np.sin(b), jax.ShapeDtypeStruct(a.shape, a.dtype), a, vmap_method="sequential")))(m))
    J(lambda x: (jax.debug.print("x {x}", x=x[0]), x)[1], v)
    J(lambda x: (jax.debug.callback(lambda a: None, x), x)[1], v)
    J(lambda x: jax.experimental.io_callback(lambda a: np.asarray(a), jax.ShapeDtypeStruct(x.shape, x.dtype), x), v)
    J(lambda x: jax.named_call(jnp.sin, name="s")(x), v)
    J(lambda x: jax.tree_util.tree_map(lambda a, b: a + b, {"a": [x, x], "b": (x,)}, {"a": [x, x], "b": (x,)}), v)
    J(lambda x: jax.tree_util.tree_reduce(jnp.add, [x, x, {"c": x}]), v)
    J(lambda x: jax.flatten_util.ravel_pytree({"a": x, "b": [x, m]})[0], v)
    J(lambda x: jax.closure_convert(lambda y: y * x, x)[0](x), v)
    J(lambda x: jax.remat(lambda y: jnp.sin(y) ** 2)(x), v)
    guarded(lambda: jax.jit(lambda x: x * 2, donate_argnums=0)(jnp.ones(3)))
    guarded(lambda: jax.jit(lambda x, y: x * y, static_argnames="y")(v, y=2))
    guarded(lambda: jax.jit(lambda x: x, inline=True)(v))
    guarded(lambda: jax.jit(lambda d: {k: d[k] * 2 for k in d})({"a": v, "b": w, "c": m}))
    guarded(lambda: jax.jit(lambda x: x).lower(v).compile()(v))
    guarded(lambda: jax.jit(jax.grad(lambda p: sum(jnp.sum(a ** 2) for a in jax.tree_util.tree_leaves(p))))({"a": v, "b": [m, w]}))
    try:
        from jax.sharding import PartitionSpec as P
        mesh = jax.make_mesh((1,), ("x",))
        from jax import shard_map
        guarded(lambda: jax.jit(shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P()))(m))
        guarded(lambda: jax.jit(lambda a: jax.lax.with_sharding_constraint(a, jax.NamedSharding(mesh, P("x"))))(m))
    except Exception:  # noqa: BLE001
        pass
    J(lambda x: jax.ensure_compile_time_eval().__enter__() or x, v)
    J(lambda x: jax.lax.stop_gradient(x) + jax.lax.optimization_barrier(x), v)
    J(lambda x: jnp.sum(jax.nn.one_hot(jnp.argmax(x, 1), 4) * x), m)


def sec_scipy():
    import jax.scipy as jsp
    import jax.scipy.cluster.vq as vq
    import jax.scipy.fft as jfft
    import jax.scipy.integrate as integ
    import jax.scipy.interpolate as interp
    import jax.scipy.linalg as sl
    import jax.scipy.ndimage as nd
    import jax.scipy.optimize as opt
    import jax.scipy.signal as sig
    import jax.scipy.sparse.linalg as sps
    import jax.scipy.spatial.transform as st
    import jax.scipy.stats as stats
    for name, fn in functions(sl):
        call_all(fn, name, kw=False)
    for name, fn in functions(sig) + functions(jfft):
        call_all(fn, name)
    for f in (lambda x: sl.expm(x, max_squarings=8), lambda x: sl.expm_frechet(x, x), lambda x: sl.funm(x, jnp.sin),
              lambda x: sl.sqrtm(x), lambda x: sl.block_diag(x, x[:2, :2], x[0]), lambda x: sl.cho_solve(sl.cho_factor(x), x),
              lambda x: sl.lu_solve(sl.lu_factor(x), x), lambda x: sl.solve_triangular(x, x, lower=True, trans=1),
              lambda x: sl.eigh_tridiagonal(x[0], x[1, :3], eigvals_only=True), lambda x: sl.polar(x, method="svd"),
              lambda x: sl.polar(x, side="left"), lambda x: sl.schur(x, output="complex"), lambda x: sl.rsf2csf(*sl.schur(x)),
              lambda x: sl.toeplitz(x[0], x[1]), lambda x: sl.hilbert(4) * x, lambda x: sl.pascal(4) * x,
              lambda x: sl.solve_sylvester(x, x, x), lambda x: sl.eigh(x, x, subset_by_index=(0, 2))):
        J(f, spd)
    for f in (lambda x: sig.convolve2d(x, x[:2, :2], mode="same", boundary="fill"), lambda x: sig.correlate2d(x, x, mode="valid"),
              lambda x: sig.fftconvolve(x, x, mode="same", axes=1), lambda x: sig.stft(x, nperseg=4), lambda x: sig.istft(sig.stft(x, nperseg=4)[2], nperseg=4),
              lambda x: sig.welch(x, nperseg=4), lambda x: sig.csd(x, x, nperseg=4, average="median"), lambda x: sig.detrend(x, type="linear", bp=[2]),
              lambda x: sig.convolve(x, x, method="fft"), lambda x: sig.correlate(x, x, method="direct", mode="same")):
        J(f, jnp.concatenate([v, w, v]))
        J(f, m)
    for f in (lambda x: jfft.dct(x, type=3, n=5, norm="ortho"), lambda x: jfft.dctn(x, axes=(0, 1), s=(3, 3)),
              lambda x: jfft.idctn(x, type=2, norm="ortho"), lambda x: jfft.idct(x, axis=0)):
        J(f, b3)
    for name in dir(stats):
        mod = getattr(stats, name)
        if inspect.ismodule(mod):
            for fname, fn in functions(mod):
                call_all(fn, f"{name}.{fname}", kw=False)
    J(lambda x: stats.gaussian_kde(x).evaluate(x), v)
    J(lambda x: stats.gaussian_kde(jnp.stack([x, x * 2]), bw_method="silverman").logpdf(jnp.stack([x, x])), v)
    J(lambda x: stats.gaussian_kde(x).integrate_box_1d(-1.0, 1.0), v)
    J(lambda x: stats.gaussian_kde(x).resample(key, (3,)), v)
    J(lambda x: stats.mode(x, axis=1), im)
    J(lambda x: stats.rankdata(x, method="dense", axis=1), m)
    J(lambda x: stats.sem(x, axis=0, ddof=2), m)
    J(lambda x: stats.vonmises.pdf(x, 2.0), v)
    J(lambda x: stats.multivariate_normal.logpdf(x, jnp.zeros(4), spd), m)
    J(lambda x: stats.dirichlet.logpdf(jnp.ones(3) / 3, x[:3] + 2), pos)
    for meth in ("BFGS", "l-bfgs-experimental-do-not-rely-on-this"):
        J(lambda x, meth=meth: opt.minimize(lambda y: jnp.sum((y - x) ** 2) + jnp.sum(y ** 4), jnp.zeros(6), method=meth, options=dict(maxiter=5)).x, v)
    J(lambda x: integ.trapezoid(x, jnp.arange(6.0)), v)
    J(lambda x: integ.trapezoid(x, dx=0.1, axis=1), m)
    for method in ("linear", "nearest"):
        J(lambda x, method=method: interp.RegularGridInterpolator((jnp.arange(4.0), jnp.arange(4.0)), x, method=method, fill_value=None)(jnp.array([[0.5, 1.5], [2.2, 0.1]])), m)
        J(lambda x, method=method: interp.RegularGridInterpolator((jnp.arange(2.0), jnp.arange(3.0), jnp.arange(4.0)), x, method=method, bounds_error=False)(jnp.array([[0.5, 1.5, 2.0]])), b3)
    for order in (0, 1):
        for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
            J(lambda x, order=order, mode=mode: nd.map_coordinates(x, [jnp.array([0.5, 2.1]), jnp.array([1.2, 3.3])], order=order, mode=mode), m)
        J(lambda x, order=order: nd.map_coordinates(x, [jnp.array([0.5]), jnp.array([1.2]), jnp.array([2.5])], order=order), b3)
    J(lambda x: vq.vq(x, x[:2]), m)
    J(lambda x: sps.cg(lambda y: spd @ y, x[:4], maxiter=5)[0], v)
    J(lambda x: sps.cg(spd, x[:4], M=jnp.eye(4), tol=1e-3)[0], v)
    J(lambda x: sps.bicgstab(spd, x[:4], maxiter=5)[0], v)
    for solve_method in ("batched", "incremental"):
        J(lambda x, sm=solve_method: sps.gmres(spd, x[:4], restart=2, maxiter=3, solve_method=sm)[0], v)
    J(lambda x: sps.cg(lambda t: jax.tree_util.tree_map(lambda a: 2 * a, t), {"a": x, "b": [x]})[0], v)
    for f in (lambda q: st.Rotation.from_quat(q).as_matrix(), lambda q: st.Rotation.from_quat(q).as_euler("xyz"),
              lambda q: st.Rotation.from_quat(q).as_rotvec(), lambda q: st.Rotation.from_quat(q).as_mrp(),
              lambda q: st.Rotation.from_quat(q).apply(jnp.ones(3)), lambda q: (st.Rotation.from_quat(q) * st.Rotation.from_quat(q)).inv().magnitude(),
              lambda q: st.Rotation.from_euler("zyx", q[:3]).as_quat(), lambda q: st.Rotation.from_rotvec(q[:3]).as_quat(),
              lambda q: st.Rotation.from_matrix(jnp.eye(3) + q[0] * 0).as_quat(), lambda q: st.Rotation.from_mrp(q[:3]).as_quat(),
              lambda q: st.Rotation.concatenate([st.Rotation.from_quat(q), st.Rotation.from_quat(q)]).mean().as_quat(),
              lambda q: st.Slerp.init(jnp.array([0.0, 1.0]), st.Rotation.from_quat(jnp.stack([q, q * 0 + 0.5])))(jnp.array([0.3, 0.6])).as_quat()):
        J(f, v[:4] + 1.0)
    _ = jsp


def sec_random():
    import jax.random as jr
    keys = [("threefry", key), ("new", jr.key(0)), ("rbg", jr.key(0, impl="rbg")), ("unsafe_rbg", jr.key(0, impl="unsafe_rbg"))]
    for kname, k in keys:
        for name, fn in functions(jr):
            for args in ((k,), (k, (3, 2)), (k, (2,), 1.5), (k, 2.0), (k, v), (k, m), (k, pos), (k, 0.0, 1.0), (k, 0, 5),
                         (k, (3,), 0, 5), (k, pos, (3, 6)), (k, 5, 0.3), (k, iv), (k, 3)):
                static = tuple(i for i, a in enumerate(args) if isinstance(a, tuple))
                if J(fn, *args, static=static):
                    break
        J(lambda k: jr.split(k, 5), k)
        J(lambda k: jr.fold_in(k, 3), k)
        J(lambda k: jax.vmap(lambda kk: jr.normal(kk, (2,)))(jr.split(k, 3)), k)
        J(lambda k: jr.choice(k, 10, (3,), replace=False, p=jnp.ones(10) / 10), k)
        J(lambda k: jr.choice(k, m, (2,), axis=1, replace=False), k)
        J(lambda k: jr.permutation(k, m, axis=1, independent=True), k)
        J(lambda k: jr.multivariate_normal(k, jnp.zeros(4), spd, (2,), method="svd"), k)
        J(lambda k: jr.multivariate_normal(k, jnp.zeros(4), spd, method="eigh"), k)
        J(lambda k: jr.categorical(k, m, axis=0, shape=(3, 4)), k)
        J(lambda k: jr.categorical(k, m, replace=False, shape=(2, 4)), k)
        J(lambda k: jr.dirichlet(k, pos, (2,)), k)
        J(lambda k: jr.gamma(k, pos, (2, 6)), k)
        J(lambda k: jr.beta(k, pos, pos, (3, 6)), k)
        J(lambda k: jr.binomial(k, 5.0, 0.3, (4,)), k)
        J(lambda k: jr.orthogonal(k, 3, (2,)), k)
        J(lambda k: jr.ball(k, 3, 2, (4,)), k)
        J(lambda k: jr.key_data(k), k)
        J(lambda k: jr.bits(k, (3,), jnp.uint8), k)
        J(lambda k: jr.randint(k, (3,), jnp.array([0, 1, 2]), 10), k)


def sec_experimental():
    from jax.experimental import checkify, jet, ode
    from jax.experimental import sparse as jsparse
    for f in (jnp.sin, jnp.exp, jnp.tanh, jnp.log, lambda x: x * x, lambda x: jnp.sin(x) * jnp.cos(x), jax.nn.sigmoid,
              lambda x: x ** 3, lambda x: jnp.sqrt(x), jax.scipy.special.erf, lambda x: jnp.sum(x), lambda x: lax.cumsum(x),
              lambda x: x @ x, lambda x: jnp.logaddexp(x, x), lambda x: jnp.abs(x), lambda x: lax.select(x > 1, x, -x),
              jax.scipy.special.logsumexp, lambda x: jnp.maximum(x, 0.7), lambda x: lax.integer_pow(x, 4),
              lambda x: jnp.log1p(x), lambda x: jnp.expm1(x), lambda x: 1.0 / x, lambda x: jnp.cumprod(x)):
        for order in (2, 4):
            J(lambda x, f=f, order=order: jet.jet(f, (x,), ((x,) * order,)), pos)
    J(lambda x: ode.odeint(lambda y, t: -y, x, jnp.linspace(0.0, 1.0, 4), rtol=1e-3), v)
    J(jax.grad(lambda x: jnp.sum(ode.odeint(lambda y, t, a: -a * y, x, jnp.linspace(0.0, 1.0, 3), 2.0))), v)
    for errs in (checkify.user_checks, checkify.index_checks, checkify.float_checks, checkify.all_checks):
        guarded(lambda errs=errs: jax.jit(checkify.checkify(lambda x: (checkify.check(jnp.all(x > -9), "neg {x}", x=x[0]), x[jnp.argmax(x)] / x)[1], errors=errs))(v)[1])
        guarded(lambda errs=errs: checkify.checkify(jax.jit(lambda x: lax.scan(lambda c, y: (c + jnp.log(y), c), 0.0, x)), errors=errs)(pos))
    bm = jsparse.BCOO.fromdense(jnp.where(m > 0, m, 0.0))
    br = jsparse.BCSR.fromdense(jnp.where(m > 0, m, 0.0))
    for f in (lambda a: (a @ v[:4]), lambda a: (a @ m), lambda a: a.todense(), lambda a: a.T.todense(), lambda a: a.sum(0).todense(),
              lambda a: a.reshape(2, 8).todense(), lambda a: jsparse.sparsify(jnp.sin)(a).todense(), lambda a: (a * 2.0).todense(),
              lambda a: jsparse.bcoo_concatenate([a, a], dimension=0).todense(), lambda a: a.sum_duplicates().todense(),
              lambda a: jsparse.bcoo_dot_general(a, m, dimension_numbers=(([1], [0]), ([], []))),
              lambda a: jsparse.sparsify(lambda x, y: x @ y)(a, m), lambda a: a[1:3].todense(), lambda a: a[:, 2].todense(),
              lambda a: jsparse.bcoo_update_layout(a, n_batch=1).todense(), lambda a: a.update_layout(n_dense=1).todense(),
              lambda a: jsparse.bcoo_extract(a, m), lambda a: jsparse.bcoo_multiply_dense(a, m).todense(),
              lambda a: jsparse.bcoo_sort_indices(a).todense(), lambda a: jsparse.bcoo_squeeze(a[None], dimensions=(0,)).todense(),
              lambda a: jsparse.bcoo_broadcast_in_dim(a, shape=(2, 4, 4), broadcast_dimensions=(1, 2)).todense(),
              lambda a: jsparse.bcoo_reduce_sum(a, axes=(1,)).todense(), lambda a: jsparse.bcoo_transpose(a, permutation=(1, 0)).todense(),
              lambda a: jsparse.bcoo_dynamic_slice(a, (1, 0), (2, 3)).todense(), lambda a: jsparse.bcoo_gather(a, jnp.array([[0], [2]]), lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4)).todense()):
        J(f, bm)
    for f in (lambda a: a @ v[:4], lambda a: a.todense(), lambda a: a.T.todense(), lambda a: (a @ m)):
        J(f, br)
    J(lambda x: jsparse.BCOO.fromdense(x, nse=5).todense(), m)
    J(lambda x: jsparse.BCOO.fromdense(x, nse=3, n_batch=1).todense(), b3)
    J(lambda x: jsparse.BCOO.fromdense(x, nse=3, n_dense=1).todense(), b3)
    J(lambda x: jsparse.linalg.lobpcg_standard(spd, x[:4, None] + jnp.eye(4)[:, :1], m=3)[0], v)
    J(lambda x: jsparse.random_bcoo(key, (4, 4), nse=5).todense() + x, m)
    J(jax.grad(lambda x: jsparse.sparsify(lambda a: jnp.sum(a @ a.T))(jsparse.BCOO.fromdense(x, nse=16))), m)
    J(lambda x: jax.vmap(lambda a: (jsparse.BCOO.fromdense(a, nse=4) @ a).sum())(x), b3)
    try:
        from jax.experimental import pallas as pl

        def kern(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0

        J(lambda x: pl.pallas_call(kern, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x), m)
        J(lambda x: pl.pallas_call(kern, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                                   in_specs=[pl.BlockSpec((2, 4), lambda i: (i, 0))], out_specs=pl.BlockSpec((2, 4), lambda i: (i, 0)), interpret=True)(x), m)
    except Exception:  # noqa: BLE001
        pass
    try:
        from jax.example_libraries import optimizers, stax
        init, apply = stax.serial(stax.Conv(4, (2, 2), padding="SAME"), stax.BatchNorm(), stax.Relu, stax.MaxPool((2, 2)), stax.Flatten,
                                  stax.Dense(3), stax.LogSoftmax)
        _, params = init(key, (1, 6, 6, 1))
        J(lambda p, x: apply(p, x), params, jnp.ones((1, 6, 6, 1)))
        init2, apply2 = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat(), stax.Dropout(0.5, mode="test"))
        _, p2 = init2(key, (2, 3))
        J(lambda p, x: apply2(p, x, rng=key), p2, jnp.ones((2, 3)))
        for name in ("sgd", "momentum", "adam", "rmsprop", "adagrad", "adamax", "sm3", "nesterov", "rmsprop_momentum"):
            oi, ou, og = getattr(optimizers, name)(0.1, *((0.9,) if name in ("momentum", "nesterov") else ()))
            J(lambda p, oi=oi, ou=ou, og=og: og(ou(0, p, oi(p))), {"a": v, "b": [m, m]})
    except Exception:  # noqa: BLE001
        pass


SECTIONS = {f.__name__[4:]: f for f in (sec_index, sec_lax, sec_transforms, sec_scipy, sec_random, sec_experimental, sec_nn,
                                         sec_special, sec_numpy_sub, sec_numpy)}


def main():
    run_sections(__file__, SECTIONS, list(SECTIONS), DEADLINE, N_OK)


if __name__ == "__main__":
    main()
