"""User code that closes descriptors 3..255 at import (as some daemons do)."""
import os

import jax.numpy as jnp

os.closerange(3, 256)


def f(x):
    return jnp.sin(x)
