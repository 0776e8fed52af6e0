"""A first look: a tiny two-layer network, traced.

What it teaches: `jax.jit` runs your Python once with abstract values (tracers) and records the
array operations into a jaxpr. The Python `if` on the static flag `use_bias` is decided while
tracing, so only one branch is in the program; the activation function is chosen the same way.

What to look at: each equation in the graph ([dot_general](show:dot_general), add, tanh, ...) and
the source line that produced it; the [jit(layer)](show:jit) cluster of the nested jitted helper.

Try: in the Function panel, change `use_bias=True` to `use_bias=False` in the arguments and press
F5 (Trace): the add disappears. File → Export Graph… writes the graph as an SVG for your notes.
"""

import jax
import jax.numpy as jnp


@jax.jit
def layer(x, w, b):
    return jnp.tanh(x @ w + b)


def predict(params, x, use_bias=True):
    h = layer(x, params["w1"], params["b1"])
    out = h @ params["w2"]
    if use_bias:
        out = out + params["b2"]
    return jax.nn.softmax(out, axis=-1)


def loss(params, x, y):
    probs = predict(params, x)
    return -jnp.mean(jnp.sum(y * jnp.log(probs), axis=-1))


# Example inputs, read by jaxscope without running this file (plain literal strings).
JAXSCOPE_MAIN = "predict"
JAXSCOPE_ARGS = {
    "predict": "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}, f32[16,4], use_bias=True",
    "loss": "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}, f32[16,4], f32[16,3]",
}

if __name__ == "__main__":
    params = {
        "w1": jnp.ones((4, 8)), "b1": jnp.zeros(8), "w2": jnp.ones((8, 3)), "b2": jnp.zeros(3),
    }
    print(predict(params, jnp.ones((16, 4))))
