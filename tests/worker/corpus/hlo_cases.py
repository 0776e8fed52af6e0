"""Functions for the HLO linking tests: nested jit, cond, while, scan, and one fusable line."""

import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def inner(x):
    return jnp.sin(x) * 2.0  # inner-line


def structured(x):
    y = inner(x) + inner(x * 3.0)  # calls
    y = lax.cond(y.sum() > 0, lambda a: a + 1.0, lambda a: a - 1.0, y)  # cond-line
    y = lax.while_loop(lambda a: a.sum() < 100.0, lambda a: a * 2.0 + 1.0, y)  # while-line

    def body(c, _):
        return jnp.tanh(c) + 0.5, c.sum()  # scan-body

    y, _ = lax.scan(body, y, None, length=3)
    return y


def fusable(x):
    return jnp.sin(x) * 2.0 + 1.0  # fused-line


JAXSCOPE_ARGS = {"structured": "f32[8]", "fusable": "f32[1024]"}
