"""Functions with hidden inputs and side effects, for the diagnostics tests (markers: `# name`)."""

import jax
import jax.numpy as jnp
import numpy as np

SCALE = jnp.arange(4.0)
TABLE = np.ones((4, 256), dtype=np.float32)  # 4 KiB
GAIN = 0.5
HISTORY = []
COUNT = 0
LEAK = []


def reads_globals(x):
    y = x * SCALE  # scale-read
    return (y * GAIN) @ TABLE  # gain-read


def prints(x):
    print("tracing, x =", x)  # trace-print
    jax.debug.print("x = {x}", x=x)  # debug-print
    return x + 1


def mutates(x):
    global COUNT
    COUNT += 1  # rebind
    HISTORY.append(1)  # mutate
    return x * 2


def leaks(x):
    y = jnp.sin(x)
    LEAK.append(y)  # leak
    return y


def clean(x, w):
    return jnp.tanh(x @ w)


def key_reuse(key, x):
    a = jax.random.normal(key, x.shape)  # use-1
    b = jax.random.normal(key, x.shape)  # use-2
    return x + a + b


def key_split(key, x):
    k1, k2 = jax.random.split(key)
    return x + jax.random.normal(k1, x.shape) + jax.random.normal(k2, x.shape)


def make_closure():
    bias = jnp.ones(4)

    def inner(v):
        return v + bias  # closure-read

    return inner


closure = make_closure()
