"""An nnx train step as the flax docs write it: `@nnx.jit`, an `nnx.Optimizer` built in the maker and
updated in place, BatchNorm statistics updated in place, dropout with its own Rngs."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Block(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        self.norm = nnx.BatchNorm(dim, rngs=rngs)  # before a bias: a bias right before it gets a gradient of noise only
        self.up = nnx.Linear(dim, 2 * dim, rngs=rngs)
        self.drop = nnx.Dropout(0.1, rngs=rngs)
        self.down = nnx.Linear(2 * dim, dim, rngs=rngs)

    def __call__(self, x):
        return x + self.down(self.drop(jax.nn.gelu(self.up(self.norm(x)))))


class Model(nnx.Module):
    def __init__(self, dim: int, classes: int, rngs: nnx.Rngs):
        self.blocks = nnx.List([Block(dim, rngs) for _ in range(2)])
        self.head = nnx.Linear(dim, classes, rngs=rngs)

    def __call__(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


@nnx.jit
def train_step(model, optimizer, images, labels):
    def loss_fn(model):
        logits = model(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def make_inputs():
    model = Model(16, 4, nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    images = jax.random.normal(jax.random.key(1), (8, 16))
    labels = jnp.arange(8) % 4
    return model, optimizer, images, labels


JAXSCOPE_INPUTS = {"train_step": make_inputs}
