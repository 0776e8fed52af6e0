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


_tally = {"calls": 0}


class _Steps:
    def __init__(self):
        self.n = 0

    def bump(self, x):
        self.n += 1  # attr-store
        return x * self.n


_steps = _Steps()


def counts_in_a_dict(x):
    _tally["calls"] += 1  # dict-item
    return x * _tally["calls"]


def counts_in_an_object(x):
    return _steps.bump(x)


def make_closure_counter():
    n = 0

    def step(x):
        nonlocal n
        n += 1  # nonlocal-store
        return x + n

    return step


counts_in_a_closure = make_closure_counter()


def host_random(x):
    import random

    import numpy as np

    a = np.random.rand(*x.shape)  # np-rand
    b = random.random()  # py-random
    return x * a + b


def pure_key(x, key):
    import jax

    return x + jax.random.normal(key, x.shape)
