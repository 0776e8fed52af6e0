"""A scanned RNN's gradient, and the same with its time loop unrolled in Python (the fair oracle for
FLOPs that count trips: `lax.scan(unroll=True)`'s transpose is a loop again)."""
import jax
import jax.numpy as jnp


def rnn_loss(params, xs):
    def cell(h, x):
        h = jnp.tanh(h @ params["w"] + x @ params["u"])
        return h, h

    _, hs = jax.lax.scan(cell, jnp.zeros((4, 16)), xs)
    return jnp.sum(hs**2)


def grad_rnn(params, xs):
    return jax.grad(rnn_loss)(params, xs)


def grad_unrolled(params, xs):
    def loss(params, xs):
        h, total = jnp.zeros((4, 16)), 0.0
        for t in range(xs.shape[0]):
            h = jnp.tanh(h @ params["w"] + xs[t] @ params["u"])
            total = total + jnp.sum(h**2)
        return total

    return jax.grad(loss)(params, xs)


SPECS = "{'w': f32[16,16], 'u': f32[8,16]}, f32[12,4,8]"
JAXSCOPE_ARGS = {"grad_rnn": SPECS, "grad_unrolled": SPECS}
