"""Control flow: Python if/for vs lax.cond, lax.scan and lax.while_loop.

What it teaches: a Python `if`/`for` on static values runs while tracing: one branch is kept and
loops unroll. A Python `if` on a traced value raises (`broken_traced_if`), while `lax.cond`,
`lax.scan` and `lax.while_loop` stage control flow into the program (`staged_if`, `scan_loop`).

What to look at: in `step`, only the [training branch](show::21) exists (try training=False); the
unrolled `for` repeats [tanh](show:tanh) three times; the [cond](show:cond) holds both branches,
and `fori_loop` became a [scan](show:scan) that holds one copy of the loop body.

Try: `python_loop` (n copies) vs `scan_loop` (one body); `newton_sqrt` stops on the data."""

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


def broken_traced_if(x):
    if x.sum() > 0:  # TracerBoolConversionError: the sum is not known while tracing
        return x - 1.0
    return x + 1.0


def staged_if(x):
    # both branches are traced and staged into one `cond`; the data picks one when it runs
    return lax.cond(x.sum() > 0, lambda a: a - 1.0, lambda a: a + 1.0, x)


def python_loop(x, n=4):
    for i in range(n):  # unrolled while tracing: n copies of the body
        x = jnp.sin(x) * 0.5 + i
    return x


def scan_loop(x):
    def body(carry, i):
        carry = jnp.sin(carry) * 0.5 + i
        return carry, carry.sum()

    # one copy of the body, run 4 times; the per-step sums are stacked into an f32[4]
    return lax.scan(body, x, jnp.arange(4.0))


def newton_sqrt(x):
    def not_converged(state):
        y, i = state
        return (jnp.max(jnp.abs(y * y - x)) > 1e-5) & (i < 50)

    def newton_step(state):
        y, i = state
        return 0.5 * (y + x / y), i + 1

    # how many iterations run depends on the values of x: not known while tracing
    return lax.while_loop(not_converged, newton_step, (jnp.maximum(x, 1.0), 0))


JAXSCOPE_ARGS = {
    "step": "f32[4,8], f32[8,8], training=True, n_layers=3",
    "broken_traced_if": "f32[3]",
    "staged_if": "f32[3]",
    "python_loop": "f32[3], n=4",
    "scan_loop": "f32[3]",
    "newton_sqrt": "f32[3]",
}
JAXSCOPE_MAIN = "step"

if __name__ == "__main__":
    x = jnp.array([1.0, 2.0, 9.0])
    print(staged_if(x), python_loop(x), scan_loop(x))
    print(newton_sqrt(x))  # (sqrt(x), the number of iterations it took)
