"""Small functions whose StableHLO and optimized HLO are saved as golden texts (see make_texts.py).

The tests look lines up by the `# tag:` comments, so keep each tag on the line of its expression.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def helper(x):
    return jnp.cos(x) * 3.0  # tag: helper


def nested(x):
    a = helper(x)  # tag: nested-call-1
    b = helper(a + 1.0)  # tag: nested-call-2
    return b


def scan(x):
    def body(carry, xi):
        carry = carry * 0.5 + xi  # tag: scan-body
        return carry, carry

    total, ys = lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)  # tag: scan-call
    return total, ys


def while_loop(x):
    def cond(state):
        i, _ = state
        return i < 5  # tag: while-cond

    def body(state):
        i, v = state
        return i + 1, jnp.sqrt(v) + 1.0  # tag: while-body

    return lax.while_loop(cond, body, (0, x))[1]  # tag: while-call


def cond(p, x):
    return lax.cond(p > 0, lambda v: jnp.exp(v), lambda v: jnp.log(v), x)  # tag: cond-call


def fused(x, y):
    return jnp.sin(x) * y + 2.0  # tag: fused


@jax.jit
def inner(x):
    return jnp.exp(x) + jnp.sin(x)  # tag: inner


def mixed(x):
    t = jnp.tanh(x) * 2.0  # tag: mixed-top
    return inner(t)  # tag: mixed-call


F32_4 = jnp.ones((4,), jnp.float32)
F32_3X4 = jnp.ones((3, 4), jnp.float32)

# name -> (function, example arguments)
CASES = {
    "nested": (nested, (F32_4,)),
    "scan": (scan, (F32_3X4,)),
    "while": (while_loop, (F32_4,)),
    "cond": (cond, (jnp.float32(1.0), F32_4)),
    "fused": (fused, (F32_4, F32_4)),
    "mixed": (mixed, (F32_4,)),
}
