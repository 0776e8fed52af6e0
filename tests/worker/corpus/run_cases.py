"""Functions for the run-vs-eager tests (markers: `# name` find their lines)."""

import jax
import jax.numpy as jnp
import numpy as np


def add(x, y):
    return x + y


def int_ops(a, b):
    return {"sum": a + b, "prod": a * b, "max": jnp.maximum(a, b) // 3}


def fma(x, y, z):
    return x * y + z  # fma-line


def log_exp(x):
    return jnp.log(jnp.exp(x))  # jit simplifies this to x


def log_neg(x):
    y = x * 2.0
    z = jnp.log(y)  # nan-line
    return jnp.sin(z) + 1.0


def zero_div(x):
    return (x - x) / (x - x)  # zero-div


@jax.jit
def _inner(x):
    return jnp.sqrt(x - 10.0)  # inner-sqrt


def nested_nan(x):
    y = jnp.abs(x)
    return _inner(y) * 2.0


def pytree_out(x, params):
    h = x @ params["w"] + params["b"]
    return {"h": h, "stats": (h.mean(), h.max())}


def returns_none(x):
    return None, x * 2, 3.0


def scaled(x, n):
    return x * n


def with_key(key, x):
    return x + jax.random.normal(key, x.shape)


def fails_at_run(x):
    def boom(v):
        raise ValueError("boom at run time")

    jax.debug.callback(boom, x)
    return x + 1


def bool_and_uint(m, u):
    return jnp.where(m, u, 0)


def given(x, n):
    return x * n


def _make_given(seed):
    return (np.arange(4, dtype=np.float32) + seed, 3)



def hangs(x):
    return jax.lax.while_loop(lambda c: c[0] >= 0, lambda c: c + 1, x)


JAXSCOPE_INPUTS = {"given": _make_given}
