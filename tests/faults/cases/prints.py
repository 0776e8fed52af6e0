import jax.numpy as jnp


def f(x):
    line = "x" * 99
    for _ in range(20_000):  # 2 MB of output while tracing
        print(line)
    return x + 1
