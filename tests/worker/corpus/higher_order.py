"""Corpus: one function per higher-order primitive, with the clusters each must produce."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

SCALE = jnp.arange(4.0)  # a global array: baked in as a constant named SCALE


def uses_cond(x, y):
    return lax.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a - 1.0, y)


def uses_switch(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)


def uses_while(x):
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]


def uses_scan(xs):
    def body(carry, x):
        carry = carry + x
        return carry, carry * 2.0

    return lax.scan(body, jnp.zeros(xs.shape[1:]), xs)


def uses_fori_static(x):
    return lax.fori_loop(0, 5, lambda i, c: c + jnp.sin(c), x)


@jax.jit
def _inner(a):
    return jnp.exp(a) + 1.0


def uses_nested_jit(x):
    return _inner(x) * _inner(x + 1.0)


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)


def uses_custom_jvp(x):
    return softplus(x) * 2.0


@jax.custom_vjp
def clip_grad(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_grad.defvjp(_clip_fwd, _clip_bwd)


def uses_custom_vjp(x):
    return clip_grad(x) + 1.0


def uses_checkpoint(x):
    f = jax.checkpoint(lambda a: jnp.sin(jnp.sin(a)))
    return f(x) + 1.0


def uses_shard_map(x):
    mesh = jax.make_mesh((1,), ("i",))
    P = jax.sharding.PartitionSpec
    f = jax.shard_map(lambda a: a * 2.0, mesh=mesh, in_specs=P(), out_specs=P())
    return f(x)


def uses_global_constant(x):
    return x * SCALE + np.float32(3.0)


def uses_grad(x):
    return jax.grad(lambda a: jnp.sum(jnp.tanh(a) ** 2))(x)


@partial(jax.jit, static_argnames="n")
def decorated(x, n=2):
    for _ in range(n):
        x = jnp.sin(x)
    return x


def pytree_in_out(params, x):
    h = x @ params["w"] + params["b"]
    return {"out": h, "norm": jnp.linalg.norm(h)}


def uses_debug_print(x):
    jax.debug.print("x = {}", x)
    return x + 1.0


def uses_random(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (3,)) + jax.random.uniform(k2, (3,))
