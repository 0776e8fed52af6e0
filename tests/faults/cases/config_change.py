import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.arange(3) + x.astype(jnp.int32)
