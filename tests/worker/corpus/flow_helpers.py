"""Corpus helper in another module: a block whose Python flow depends on its static args."""

import jax.numpy as jnp


def block(x, i):
    if i % 2 == 0:  # HELPER_IF
        x = jnp.sin(x)  # HELPER_EVEN
    else:
        x = jnp.cos(x)  # HELPER_ODD
    for _ in range(i):  # HELPER_FOR
        x = x * 2.0  # HELPER_FOR_BODY
    return x
