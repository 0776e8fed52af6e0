import jax.numpy as jnp


def helper(x):
    raise ValueError("user bug: bad value")


def f(x):
    return helper(x) + 1
