"""A lone surrogate (as a name decoded with surrogateescape carries) in a `named_scope` and in a maker's dict key."""
import jax
import jax.numpy as jnp


def f(x):
    with jax.named_scope("blk\udcff"):
        return jnp.sin(x) * 2


def g(d):
    return jnp.sum(d["k\udcff"])


def make():
    return ({"k\udcff": jnp.ones(3)},)


JAXSCOPE_INPUTS = {"g": make}
