import jax.numpy as jnp

CONFIG = {"a": 1}
VALUE = CONFIG["missing_key"]


def f(x):
    return x
