"""Python control flow vs staged control flow.

What it teaches: a Python `if` on a static argument is decided while tracing, so only one
branch is in the program; a Python `for` loop is unrolled. `lax.cond` and `lax.fori_loop`
instead stage the control flow into the program: both branches of a cond are traced, and the
loop body is traced once.

What to look at: in `step`, only the `training` branch's equations exist (try training=False);
the unrolled `for` repeats its `tanh` three times; the `cond` cluster holds both branches and the
`while`/`scan` cluster holds one copy of the loop body.
"""

import jax.numpy as jnp
from jax import lax


def step(x, w, training=True, n_layers=3):
    for _ in range(n_layers):  # unrolled while tracing: n_layers copies
        x = jnp.tanh(x @ w)
    if training:  # static: decided at trace time
        x = x * 0.9
    # traced: both branches are staged into the program
    x = lax.cond(x.sum() > 0, lambda a: a - 1.0, lambda a: a + 1.0, x)
    return lax.fori_loop(0, 4, lambda i, a: a * 0.5 + i, x)


JAXSCOPE_ARGS = {"step": "f32[4,8], f32[8,8], training=True, n_layers=3"}
