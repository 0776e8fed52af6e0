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


def _attention_loss(params, x):
    q = x @ params["wq"]
    k = x @ params["wk"] + params["bk"]  # a key bias: softmax is shift-invariant, its gradient is exactly 0
    v = x @ params["wv"]
    att = jax.nn.softmax(q @ k.T / 4.0, axis=-1)
    return jnp.mean((att @ v) ** 2)


def adam_zero_bias(params, x, mu, nu):
    """One Adam step (written out as optax writes it) on an attention whose key bias has an
    exactly-zero gradient: both jit and eager turn its rounding noise into an update of ~lr."""
    grads = jax.grad(_attention_loss)(params, x)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, mu, grads)
    nu = jax.tree.map(lambda n, g: 0.999 * n + 0.001 * g * g, nu, grads)
    step = jax.tree.map(lambda m, n: 1e-3 * (m / 0.1) / (jnp.sqrt(n / 0.001) + 1e-8), mu, nu)  # adam-update
    return jax.tree.map(lambda p, s: p - s, params, step), mu, nu


def _make_adam(seed):
    keys = jax.random.split(jax.random.key(seed), 5)
    params = {name: jax.random.normal(k, (16, 16)) for name, k in zip(("wq", "wk", "wv"), keys)}
    params["bk"] = jax.random.normal(keys[3], (16,))
    zeros = jax.tree.map(jnp.zeros_like, params)
    return params, jax.random.normal(keys[4], (32, 16)), zeros, zeros


def trace_time_numpy(x):
    w = np.random.normal(size=x.shape).astype(np.float32)  # numpy-random
    return jnp.tanh(x * w)  # numpy-use


class _Counter:
    def __init__(self):
        self.count = 0

    def scaled(self, x):
        self.count += 1  # counter-line
        return x * self.count  # counter-use


_counter = _Counter()


def trace_time_counter(x):
    return _counter.scaled(x) + 1.0


def mixed_outputs(x):
    """An f32 output beside a bf16 one: each keeps its own dtype's tolerance."""
    return x.astype(jnp.bfloat16) * 2, x * 3.0


JAXSCOPE_INPUTS = {"given": _make_given, "adam_zero_bias": _make_adam}
