"""Explicit state: a train step threads params and optimizer state.

What it teaches: a jitted function cannot keep state between calls, so a training step is a
pure function `(params, opt_state, batch) -> (new_params, new_opt_state, loss)`. The model
parameters and the optimizer state (here SGD with momentum, written by hand) are pytrees:
nested dicts of arrays that `jax.tree_util.tree_map` walks leaf by leaf. `jax.value_and_grad`
turns the loss into a function that also returns the gradient, a pytree shaped like `params`.
The caller threads the state through the loop: what goes out of one step goes into the next.

What to look at: every leaf of a pytree is its own input: [params](show:params) finds the
four parameter arrays, and [momentum](show:momentum) the optimizer state both coming in and
going out (`result[1]`). The forward pass has two [dot_general](show:dot_general)s and the
backward pass three more; the parameter update on [line 45](show::45) is one `mul` and one
`sub` per leaf, with `lr` baked in as a literal because it is static.

Try: change the batch `f32[32,4]` to `f32[128,4]` (and `y` to match): the parameters and the
optimizer state keep their shapes, only the batch dimension changes.
"""

import jax
import jax.numpy as jnp


def init(key, sizes=(4, 16, 3)):
    k1, k2 = jax.random.split(key)
    params = {
        "w1": jax.random.normal(k1, (sizes[0], sizes[1])) * 0.5, "b1": jnp.zeros(sizes[1]),
        "w2": jax.random.normal(k2, (sizes[1], sizes[2])) * 0.5, "b2": jnp.zeros(sizes[2]),
    }
    opt_state = {"momentum": jax.tree_util.tree_map(jnp.zeros_like, params)}
    return params, opt_state


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return jnp.mean(jnp.sum((logits - y) ** 2, axis=-1))


def train_step(params, opt_state, x, y, lr=0.1, beta=0.9):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    momentum = jax.tree_util.tree_map(
        lambda m, g: beta * m + g, opt_state["momentum"], grads
    )
    new_params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, momentum)
    return new_params, {"momentum": momentum}, loss


JAXSCOPE_ARGS = {
    "train_step": "{'w1': f32[4,16], 'b1': f32[16], 'w2': f32[16,3], 'b2': f32[3]}, "
    "{'momentum': {'w1': f32[4,16], 'b1': f32[16], 'w2': f32[16,3], 'b2': f32[3]}}, "
    "f32[32,4], f32[32,3], lr=0.1, beta=0.9",
    "loss_fn": "{'w1': f32[4,16], 'b1': f32[16], 'w2': f32[16,3], 'b2': f32[3]}, f32[32,4], f32[32,3]",
    "init": "key[], sizes=(4, 16, 3)",
}
JAXSCOPE_MAIN = "train_step"

if __name__ == "__main__":
    params, opt_state = init(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (32, 4))
    y = jnp.stack([x[:, 0], x[:, 1] * x[:, 2], jnp.sin(x[:, 3])], axis=-1)
    step = jax.jit(train_step)
    for i in range(201):
        params, opt_state, loss = step(params, opt_state, x, y)  # state in, new state out
        if i % 50 == 0:
            print(f"step {i}: loss {loss:.4f}")
