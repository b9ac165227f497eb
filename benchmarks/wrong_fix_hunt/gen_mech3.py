"""Rewrite mechanics, part 3: loop direction, naming clashes, nesting, index branches.

Reversed and strided ranges, user names the rewrite also uses, nested loops and branches on the
index each need the rewrite to keep order and scope exactly.
"""
from hunt_common import P

P("mech_65_reversed_append_plain_stack", "reversed(range) with append and a plain jnp.stack: outputs in reverse time order.", '''
@jax.jit
def back(xs: Float32[Array, "T D"]):
    g = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for t in reversed(range(xs.shape[0])):
        g = xs[t] + 0.5 * g
        out.append(g)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "back"
''')

P("mech_66_descending_range_append", "range(T - 1, -1, -1) with append and jnp.stack.", '''
@jax.jit
def back(xs: Float32[Array, "T D"]):
    g = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for t in range(xs.shape[0] - 1, -1, -1):
        g = xs[t] + 0.5 * g
        out.append(g * 2.0)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "back"
''')

P("mech_67_descending_stride2", "range(T - 1, -1, -2) reading xs[t] (every other row from the end).", '''
@jax.jit
def back2(xs: Float32[Array, "T D"]):
    g = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0] - 1, -1, -2):
        g = xs[t] + 0.5 * g
    return g

CASES = [lambda: ((_arr((7, 3)),), {}), lambda: ((_arr((8, 3)),), {})]
FUNC = "back2"
''')

P("mech_68_insert_front_forward", "forward loop with out.insert(0, h): the list ends in reverse order.", '''
@jax.jit
def rev(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = h * 0.5 + x_t
        out.insert(0, h)
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "rev"
''')

P("mech_69_range_inner_window", "range(2, T - 1, 3) reading xs[t].", '''
@jax.jit
def win(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(2, xs.shape[0] - 1, 3):
        acc = acc * 0.5 + xs[t]
    return acc

CASES = [lambda: ((_arr((9, 3)),), {}), lambda: ((_arr((12, 3)),), {})]
FUNC = "win"
''')

P("mech_70_append_before_update", "appends the carry before updating it (outputs the pre-step state).", '''
@jax.jit
def pre(xs: Float32[Array, "T D"]):
    h = jnp.ones(xs.shape[1:], jnp.float32)
    hs = []
    for x_t in xs:
        hs.append(h)
        h = jnp.tanh(h + x_t)
    return jnp.stack(hs), h

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "pre"
''')

P("mech_71_fibonacci_swap", "two carries swapped with a tuple assignment (a, b = b, a + b * x).", '''
@jax.jit
def fib(xs: Float32[Array, "T D"]):
    a = jnp.zeros(xs.shape[1:], jnp.float32)
    b = jnp.ones(xs.shape[1:], jnp.float32)
    for x_t in xs:
        a, b = b, a + b * x_t
    return a, b

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "fib"
''')

P("mech_72_user_var_named_step", "a counter carry named `step` (the rewrite's usual step-function name).", '''
@jax.jit
def count(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    step = jnp.zeros((), jnp.float32)
    for x_t in xs:
        acc = acc + x_t
        step = step + 1.0
    return acc / step, step

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "count"
''')

P("mech_73_underscore_read_after", "a variable named `_` set before the loop and read after it.", '''
@jax.jit
def und(xs: Float32[Array, "T D"]):
    _ = xs.sum()
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc * 0.5 + x_t
    return acc + _

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "und"
''')

P("mech_74_two_loops_same_function", "two rewritable loops in one function, the second reading the first's outputs.", '''
@jax.jit
def two(xs: Float32[Array, "T D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    hs = []
    for x_t in xs:
        h = jnp.tanh(h + x_t)
        hs.append(h)
    H = jnp.stack(hs)
    g = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in reversed(range(H.shape[0])):
        g = H[t] + 0.9 * g
    return g

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "two"
''')

P("mech_75_nested_batch_then_time", "outer loop over B and inner loop over T, the inner carry re-initialised per outer step.", '''
@jax.jit
def per_row(xs: Float32[Array, "B T"]):
    out = []
    for b in range(xs.shape[0]):
        acc = jnp.zeros((), jnp.float32)
        for t in range(xs.shape[1]):
            acc = 0.5 * acc + xs[b, t]
        out.append(acc)
    return jnp.stack(out)

CASES = [lambda: ((_arr((3, 8)),), {})]
FUNC = "per_row"
''')

P("mech_76_layers_then_time", "Python loop over a list of weights around a time loop.", '''
@jax.jit
def stack_rnn(Ws, xs: Float32[Array, "T H"]):
    seq = xs
    for W in Ws:
        h = jnp.zeros(xs.shape[1:], jnp.float32)
        hs = []
        for t in range(seq.shape[0]):
            h = jnp.tanh(h @ W + seq[t])
            hs.append(h)
        seq = jnp.stack(hs)
    return seq

CASES = [lambda: (([_arr((3, 3)) * 0.5, _arr((3, 3), seed=1) * 0.5], _arr((9, 3), seed=2)), {})]
FUNC = "stack_rnn"
''')

P("mech_77_walrus_in_body", "a walrus assignment inside the step expression.", '''
@jax.jit
def wal(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        acc = acc + (v := x_t * 2.0) * v
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "wal"
''')

P("mech_78_bound_from_other_array", "range(len(ys)) with reads of a longer xs[t] and ys[t].", '''
@jax.jit
def pref(xs: Float32[Array, "T D"], ys: Float32[Array, "S D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(len(ys)):
        acc = acc + xs[t] * ys[t]
    return acc

CASES = [lambda: ((_arr((9, 3)), _arr((5, 3), seed=1)), {}), lambda: ((_arr((6, 3)), _arr((6, 3), seed=1)), {})]
FUNC = "pref"
''')

P("mech_79_stack_axis_neg", "per-step (B, D) outputs stacked on axis -1.", '''
@jax.jit
def st(xs: Float32[Array, "T B D"]):
    h = jnp.zeros(xs.shape[1:], jnp.float32)
    out = []
    for x_t in xs:
        h = 0.5 * h + x_t
        out.append(h)
    return jnp.stack(out, axis=-1)

CASES = [lambda: ((_arr((6, 2, 3)),), {})]
FUNC = "st"
''')

P("mech_80_jit_wrapped_at_call_site", "a plain function jitted at module level (FUNC names the wrapper).", '''
def _loss(xs: Float32[Array, "T D"], w: Float32[Array, "D"]):
    acc = jnp.zeros((), jnp.float32)
    for x_t in xs:
        acc = acc + jnp.dot(x_t, w) ** 2
    return acc


loss = jax.jit(_loss)

CASES = [lambda: ((_arr((6, 3)), _arr((3,), seed=1)), {})]
FUNC = "loss"
''')

P("mech_81_del_temp", "a temporary deleted with del inside the body.", '''
@jax.jit
def d(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for x_t in xs:
        tmp = x_t * 3.0
        acc = acc + tmp
        del tmp
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "d"
''')

P("mech_82_grad_of_loop", "jax.grad of a function with a loop (traced through grad, not jit).", '''
def _f(w: Float32[Array, "D"], xs: Float32[Array, "T D"]):
    h = jnp.zeros((), jnp.float32)
    for x_t in xs:
        h = jnp.tanh(h + jnp.dot(w, x_t))
    return h


grad_f = jax.jit(jax.grad(_f))

CASES = [lambda: ((_arr((3,)), _arr((6, 3), seed=1)), {})]
FUNC = "grad_f"
''')

P("mech_83_append_old_and_new", "appends both the old and the new carry each step to two lists.", '''
@jax.jit
def both(xs: Float32[Array, "T D"]):
    h = jnp.ones(xs.shape[1:], jnp.float32)
    olds, news = [], []
    for x_t in xs:
        olds.append(h)
        h = h * 0.5 + x_t
        news.append(h)
    return jnp.stack(olds), jnp.stack(news)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "both"
''')

P("mech_84_if_t_gt0_keep", "if t > 0 updates a second carry from the previous step's value.", '''
@jax.jit
def lag(xs: Float32[Array, "T D"]):
    prev = jnp.zeros(xs.shape[1:], jnp.float32)
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        if t > 0:
            acc = acc + xs[t] * prev
        prev = xs[t]
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "lag"
''')

P("mech_85_branch_guards_lookahead", "if t < T - 1 guards a read of xs[t + 1] (the last step never reads past the end).", '''
@jax.jit
def guard(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    T = xs.shape[0]
    for t in range(T):
        if t < T - 1:
            acc = acc + xs[t] * xs[t + 1]
        else:
            acc = acc + xs[t]
    return acc

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "guard"
''')

P("mech_86_branch_guards_division", "if t > 0 guards a division by t.", '''
@jax.jit
def mean_run(xs: Float32[Array, "T D"]):
    acc = jnp.zeros(xs.shape[1:], jnp.float32)
    m = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        acc = acc + xs[t]
        if t > 0:
            m = acc / t
    return m

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "mean_run"
''')

P("mech_87_branch_first_step_init", "if t == 0 sets the carry from the row, else updates it (EMA seeded by the first row).", '''
@jax.jit
def ema(xs: Float32[Array, "T D"]):
    m = jnp.zeros(xs.shape[1:], jnp.float32)
    for t in range(xs.shape[0]):
        if t == 0:
            m = xs[t]
        else:
            m = 0.9 * m + 0.1 * xs[t]
    return m

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "ema"
''')

P("mech_88_branch_lookbehind_guard", "if t >= 2 reads xs[t - 2].", '''
@jax.jit
def lag2(xs: Float32[Array, "T D"]):
    out = []
    for t in range(xs.shape[0]):
        if t >= 2:
            out.append(xs[t] - xs[t - 2])
        else:
            out.append(xs[t])
    return jnp.stack(out)

CASES = [lambda: ((_arr((6, 3)),), {})]
FUNC = "lag2"
''')
