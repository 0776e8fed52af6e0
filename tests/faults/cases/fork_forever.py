"""User code that forks at import a child that never exits (a stray, left running)."""
import os
import time

import jax.numpy as jnp

if os.fork() == 0:
    while True:
        time.sleep(1)


def f(x):
    return jnp.sin(x)
