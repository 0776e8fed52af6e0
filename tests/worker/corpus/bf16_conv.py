"""A flax linen conv net whose parameters are bfloat16 (from its maker), computing in bf16 with an f32 loss."""
import jax
import jax.numpy as jnp
from flax import linen as nn


class ConvNet(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)
        x = nn.relu(x)
        x = nn.Conv(16, (3, 3), strides=2, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)
        x = nn.relu(x).mean(axis=(1, 2))
        return nn.Dense(10, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)(x)


def loss(params, images, labels):
    logits = ConvNet().apply(params, images).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


def grad_step(params, images, labels):
    value, grads = jax.value_and_grad(loss)(params, images, labels)
    return value, jax.tree.map(lambda p, g: p - 0.1 * g.astype(p.dtype), params, grads)


def make_inputs():
    images = jax.random.normal(jax.random.key(0), (4, 12, 12, 3), jnp.bfloat16)
    params = ConvNet().init(jax.random.key(1), images)
    return params, images, jnp.arange(4) % 10


JAXSCOPE_INPUTS = {"loss": make_inputs, "grad_step": make_inputs}


def f32_out(params, images, labels):
    """f32 outputs of bf16 arithmetic: they carry bf16's error (jit and eager differ by ~0.2 %)."""
    logits = ConvNet().apply(params, images).astype(jnp.float32)
    return jax.nn.softmax(logits), jax.grad(loss)(params, images, labels)["params"]["Dense_0"]["kernel"].astype(jnp.float32)


JAXSCOPE_INPUTS["f32_out"] = make_inputs
