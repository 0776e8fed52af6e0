import jax.numpy as jnp


def f(x):
    if x.sum() > 0:
        return x
    return -x
