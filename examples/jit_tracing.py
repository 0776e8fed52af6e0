"""Jit tracing: Python runs once, the jaxpr is what gets compiled.

What it teaches: `jax.jit` does not run your function on numbers. It calls it once with
tracers (abstract values that carry only a shape and a dtype), records every array operation
into a jaxpr, lowers that to StableHLO, and XLA compiles it. Later calls with the same input
shapes, dtypes and static values reuse the compiled program without running your Python again;
a new shape, dtype or static value is a new cache key, so the function is traced again. That is
why a jitted function must be pure: whatever is not an input or an output (prints, globals,
appending to a list) happens once, at trace time, not on every call.

What to look at: in `forward`, [the call on line 39](show::39) to the jitted helper `standardize`
became one `jit` equation holding a nested jaxpr; inside it, `axis=-1` is static, so it is baked
into the reductions, and `lax.rsqrt` is an [rsqrt](show:rsqrt). The matrix product is a
[dot_general](show:dot_general), and [line 40](show::40) made three equations (dot_general,
broadcast_in_dim, add): `+ b` broadcasts `b` first.
In `scale`, the static `factor=2.0` appears as a literal in the `mul`: a different factor is a
different program.

Try: trace `forward` with `f32[32,16]` instead of `f32[8,16]`: same Python, a new jaxpr. Trace →
Would It Retrace… (Ctrl+R) says why jit would retrace, and the IR dock's StableHLO and Compiled HLO
tabs show what XLA is given and what it makes of it.
"""

import functools

import jax
import jax.numpy as jnp
from jax import lax


@functools.partial(jax.jit, static_argnames="axis")
def standardize(x, axis):
    mean = x.mean(axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5)


def forward(x, w, b):
    h = standardize(x, axis=-1)
    y = h @ w + b
    return jnp.maximum(y, 0.0).sum(axis=-1)


def scale(x, factor=2.0):
    return x * factor


JAXSCOPE_ARGS = {
    "forward": "f32[8,16], f32[16,4], f32[4]",
    "standardize": "f32[8,16], axis=-1",
    "scale": "f32[3], factor=2.0",
}
JAXSCOPE_MAIN = "forward"

if __name__ == "__main__":
    traces = []

    def counted(x, w, b):
        traces.append(x.shape)  # a side effect: runs only while tracing
        return forward(x, w, b)

    f = jax.jit(counted)
    w, b = jnp.ones((16, 4)), jnp.zeros(4)
    f(jnp.ones((8, 16)), w, b)
    f(jnp.zeros((8, 16)), w, b)  # same shapes: cached, not traced again
    f(jnp.ones((32, 16)), w, b)  # new shape: traced again
    print("traced for shapes:", traces)  # [(8, 16), (32, 16)]
    print(jax.make_jaxpr(forward)(jnp.ones((8, 16)), w, b))
    print(jax.jit(forward).lower(jnp.ones((8, 16)), w, b).as_text())  # StableHLO
