"""A newcomer's nnx CNN: two conv blocks of different widths (conv + BatchNorm), Dropout and a head,
trained by `nnx.Optimizer` under `@nnx.jit` (issue 60.2)."""
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class ConvBlock(nnx.Module):
    def __init__(self, cin, cout, rngs):
        self.conv = nnx.Conv(cin, cout, kernel_size=(3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(cout, rngs=rngs)

    def __call__(self, x):
        return nnx.relu(self.bn(self.conv(x)))


class CNN(nnx.Module):
    def __init__(self, rngs):
        self.block1 = ConvBlock(1, 16, rngs)
        self.block2 = ConvBlock(16, 32, rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.head = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        x = self.block1(x)
        x = nnx.avg_pool(x, (2, 2), strides=(2, 2))
        x = self.block2(x)
        x = x.mean(axis=(1, 2))
        return self.head(self.dropout(x))


@nnx.jit
def train_step(model, optimizer, images, labels):
    def loss_fn(model):
        logits = model(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def make():
    model = CNN(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    return model, optimizer, jax.random.normal(jax.random.key(1), (8, 28, 28, 1)), jnp.arange(8) % 10


JAXSCOPE_INPUTS = {"train_step": make}
