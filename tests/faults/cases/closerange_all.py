"""User code that closes every descriptor above 2, the worker's channel included."""
import os

import jax.numpy as jnp

os.closerange(3, 1 << 20)


def f(x):
    return jnp.sin(x)
