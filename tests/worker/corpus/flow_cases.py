"""Corpus: Python control flow baked in while tracing (see tests/worker/test_pyflow.py).

Markers in trailing comments name the lines the test asserts on; keep them unique.
"""

import jax.numpy as jnp
from flow_helpers import block
from jax import lax


def branches(x, mode):
    if mode == "tanh":  # IF_MODE
        y = jnp.tanh(x)  # BODY_TANH
    elif mode == "relu":  # ELIF_MODE
        y = jnp.maximum(x, 0.0)  # BODY_RELU
    else:
        y = x * 0.5  # BODY_ELSE
    return y


def nested(x, a, b):
    if a:  # OUTER_IF
        if b:  # INNER_IF
            x = x + 1.0  # INNER_BODY
        x = x * 2.0  # OUTER_BODY
    return x


def layers(x, n_layers):
    for _ in range(n_layers):  # FOR_LAYERS
        x = jnp.tanh(x)  # FOR_LAYERS_BODY
    return x


def counter(x):
    k = 0
    while k < 4:  # WHILE_K
        x = x + k  # WHILE_BODY
        k += 1
    return x


def lambda_ifexp(x, use_sin):
    f = lambda v: jnp.sin(v) if use_sin else jnp.cos(v)  # LAMBDA_IFEXP  # noqa: E731
    return f(x)


def helpers(x):
    for i in range(3):  # HELPERS_FOR
        x = block(x, i)  # HELPERS_CALL
    return x


def staged_cond(x):
    def on_true(a):
        return a * 2.0  # COND_TRUE

    def on_false(a):
        return a - 1.0  # COND_FALSE

    return lax.cond(x.sum() > 0, on_true, on_false, x)  # COND_CALL


def bad_if(x):
    if x.sum() > 0:  # BAD_IF (a tracer in a Python if: the trace fails)
        return x
    return -x


def _steps(n):
    for i in range(n):  # GEN_LOOP
        yield i + 1


def _deeper(x, k):
    if k == 0:  # REC_BASE
        return x
    return _deeper(jnp.sin(x), k - 1)


def _refuse(x):
    raise ValueError("not this one")  # RAISES


def calls_of_every_kind(x):
    """Generators (a call per resume), recursion, an exception caught in user code, a comprehension."""
    for i in _steps(3):  # GEN_USE
        x = x * i
    x = _deeper(x, 2)
    try:
        _refuse(x)
    except ValueError:
        x = x + 1.0  # HANDLED
    ys = [jnp.cos(x) * k for k in range(2)]  # COMPREHENSION
    return x + ys[1]
