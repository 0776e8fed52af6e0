"""A small nnx train step under @nnx.jit with optax: traced with JAX, flax and optax on PYTHONPATH (issue 58)."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.up = nnx.Linear(8, 32, rngs=rngs)
        self.down = nnx.Linear(32, 2, rngs=rngs)

    def __call__(self, x):
        return self.down(jax.nn.relu(self.up(x)))


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(m):
        return ((m(x) - y) ** 2).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def make():
    model = MLP(nnx.Rngs(0))
    return model, nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param), jnp.ones((4, 8)), jnp.zeros((4, 2))


JAXSCOPE_INPUTS = {"train_step": make}
