import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2.0
