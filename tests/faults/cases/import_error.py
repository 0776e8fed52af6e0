import jax.numpy as jnp
import a_module_that_does_not_exist_anywhere


def f(x):
    return x
