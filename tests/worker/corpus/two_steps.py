"""Two versions of one step in one file (tanh, then relu and a scale): `jaxscope diff f.py::step_a
f.py::step_b` compares them (issue 60.5)."""
import jax
import jax.numpy as jnp


def mlp_a(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.sum((h @ params["w2"]) ** 2)


def mlp_b(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    h = h * 2.0
    return jnp.sum((h @ params["w2"]) ** 2)


def step_a(params, x):
    return jax.value_and_grad(mlp_a)(params, x)


def step_b(params, x):
    return jax.value_and_grad(mlp_b)(params, x)


def make():
    k = jax.random.split(jax.random.key(0), 3)
    return {"w1": jax.random.normal(k[0], (8, 16)), "b1": jnp.zeros(16), "w2": jax.random.normal(k[1], (16, 4))}, jax.random.normal(k[2], (4, 8))


JAXSCOPE_INPUTS = {"step_a": make, "step_b": make}
