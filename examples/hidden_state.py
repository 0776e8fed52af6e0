"""Hidden state: captured globals and trace-time prints.

What it teaches: a jitted function sees only its arguments as inputs. A global array that it
reads is captured at trace time and baked into the program as a constant: `SCALE` is not an
input of the jaxpr. A global Python float is baked in as a literal number, so rebinding it
after the first call changes nothing: jit reuses the cached trace and keeps computing with the
old value (run this file to see it). A Python `print` runs while tracing, once, and shows a
tracer instead of numbers; `jax.debug.print` is staged into the program and prints real values
on every call. Pass state in as arguments instead (`fixed_forward`).

What to look at: in `forward`, the captured global [SCALE](show:SCALE) feeds the `mul` like an
input but is a constant; `OFFSET` is only the literal `1.0` in the `add`. The `print` on line 28
made no equation at all, while `jax.debug.print` is a staged
[debug_print](show:debug_print) equation, fed by the [sum on line 29](show::29).

Try: read the Diagnostics tab (each entry selects its node), then pick `fixed_forward` in the
Function panel and compare its graph, where scale and offset are inputs.
"""

import jax
import jax.numpy as jnp

SCALE = jnp.array([0.5, 1.0, 2.0, 4.0])  # a global array: captured as a constant
OFFSET = 1.0  # a global Python float: inlined as a literal, stale after a rebind


def forward(x):
    print("tracing forward with", x)  # runs once, at trace time, and prints a tracer
    jax.debug.print("forward: sum(x) = {s}", s=x.sum())  # staged: runs on every call
    return x * SCALE + OFFSET


def fixed_forward(x, scale, offset):
    jax.debug.print("fixed_forward: sum(x) = {s}", s=x.sum())
    return x * scale + offset


JAXSCOPE_ARGS = {
    "forward": "f32[4]",
    "fixed_forward": "f32[4], f32[4], f32[]",
}
JAXSCOPE_MAIN = "forward"

if __name__ == "__main__":
    f = jax.jit(forward)
    x = jnp.ones(4)
    print(f(x))  # traces (the print runs), then runs: [1.5 2. 3. 5.]
    OFFSET = 100.0  # rebinding the global does not retrace
    print(f(x))  # still [1.5 2. 3. 5.]: the cached program has 1.0 baked in
    print(jax.jit(fixed_forward)(x, SCALE, jnp.float32(OFFSET)))  # [100.5 101. 102. 104.]
