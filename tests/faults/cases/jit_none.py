"""User code that replaces jax.jit: jaxscope's worker calls it."""
import jax
import jax.numpy as jnp

jax.jit = None


def f(x):
    return jnp.sin(x)
