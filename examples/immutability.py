"""Immutability: x.at[i].set(y) instead of x[i] = y.

What it teaches: JAX arrays cannot be changed in place. The `.at[...]` methods (`set`, `add`,
`min`, `max`, `mul`, `get`) describe an update and return a new array; in the program they are
`scatter` equations (one per kind: `scatter`, `scatter-add`, `scatter-min`, ...), and
`lax.dynamic_update_slice` writes a whole block at a traced offset. Under jit, XLA usually
performs these updates in place when the old array is no longer used, so the copy costs
nothing. Plain item assignment, as in `broken_inplace`, is a TypeError while tracing;
`fixed_inplace` is the same function written with `.at`.

What to look at: in `update`, each `.at[...]` line is one [scatter](show:scatter) (the search
finds all three kinds); the duplicate indices in `idx` add up in the
[scatter-add](show:scatter-add). The traced index `i` on [line 26](show::26) first gets a
`lt`/`add`/`select_n` that wraps a negative index, as Python would. The block write is a
[dynamic_update_slice](show:dynamic_update_slice), fed by a `dynamic_slice` read.

Try: trace `broken_inplace` and read the error and its line; then trace `fixed_inplace`.
"""

import jax
import jax.numpy as jnp
from jax import lax


def update(x, i, y, idx):
    x = x.at[i].set(y)  # traced index: scatter
    x = x.at[idx].add(1.0)  # an array of indices, duplicates accumulate: scatter-add
    x = x.at[2:5].min(0.0)  # clamp a static slice: scatter-min
    window = lax.dynamic_slice(x, (i,), (2,))  # read 2 elements at a traced offset
    return lax.dynamic_update_slice(x, window * 2.0, (0,))  # write them back at 0


def broken_inplace(x):
    x[0] = 1.0  # TypeError: JAX arrays are immutable
    return x


def fixed_inplace(x):
    return x.at[0].set(1.0)


JAXSCOPE_ARGS = {
    "update": "f32[8], i32[], f32[], i32[3]",
    "broken_inplace": "f32[8]",
    "fixed_inplace": "f32[8]",
}
JAXSCOPE_MAIN = "update"

if __name__ == "__main__":
    x = jnp.arange(8.0)
    print(jax.jit(update)(x, 3, -1.0, jnp.array([1, 1, 6])))  # [-2. 0. 0. -1. 0. 5. 7. 7.]
    print(x)  # unchanged: [0. 1. 2. 3. 4. 5. 6. 7.]
    print(jax.jit(fixed_inplace)(x))  # [1. 1. 2. 3. 4. 5. 6. 7.]
