"""Programs recorded on a TPU (`record_fixtures.py`) and run there by `make test-device`: a user's
nnx ViT train step under `@nnx.jit` (`optimizer.update(model, grads)`), an f32 MLP loss whose matmuls
a TPU runs as bf16 passes at JAX's default precision, and a stack of layers run by `lax.scan`."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Block(nnx.Module):
    def __init__(self, width: int, heads: int, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(width, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=width, decode=False, rngs=rngs)
        self.norm2 = nnx.LayerNorm(width, rngs=rngs)
        self.up = nnx.Linear(width, 4 * width, rngs=rngs)
        self.down = nnx.Linear(4 * width, width, rngs=rngs)

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(nnx.gelu(self.up(self.norm2(x))))


class ViT(nnx.Module):
    def __init__(self, width: int = 256, depth: int = 4, patch: int = 4, classes: int = 10, *, rngs: nnx.Rngs):
        self.embed = nnx.Conv(3, width, kernel_size=(patch, patch), strides=(patch, patch), padding="VALID", rngs=rngs)
        self.blocks = getattr(nnx, "List", list)([Block(width, 8, rngs) for _ in range(depth)])  # flax < 0.12: a list
        self.norm = nnx.LayerNorm(width, rngs=rngs)
        self.head = nnx.Linear(width, classes, rngs=rngs)

    def __call__(self, images):
        x = self.embed(images)
        b, h, w, c = x.shape
        x = x.reshape(b, h * w, c)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(axis=1))


@nnx.jit
def vit_step(model, optimizer, images, labels):
    def loss_fn(model):
        logits = model(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def make_vit():
    model = ViT(rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    images = jax.random.normal(jax.random.key(1), (64, 32, 32, 3))
    return model, optimizer, images, jnp.arange(64) % 10


def mlp_loss(params, x, y):
    """Three f32 matmuls and a squared error: on a TPU at default precision each matmul is a bf16
    pass, jit and eager round differently, and `highest` brings both back to the CPU's value."""
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


def make_mlp():
    keys = jax.random.split(jax.random.key(2), 5)
    sizes = [(512, 1024), (1024, 1024), (1024, 256)]
    params = [(jax.random.normal(k, s) / s[0] ** 0.5, jnp.zeros(s[1])) for k, s in zip(keys, sizes)]
    x = jax.random.normal(keys[3], (256, 512))
    y = jax.random.normal(keys[4], (256, 256))
    return params, x, y


def scan_layers(ws, x):
    """A stack of 6 dense layers run by `lax.scan`: the compiled while loop's trip count is 6."""

    def layer(h, w):
        h = jax.nn.relu(h @ w)
        return h, jnp.sum(h)

    h, sums = jax.lax.scan(layer, x, ws)
    return jnp.sum(h) + jnp.sum(sums)


def make_scan():
    return jax.random.normal(jax.random.key(3), (6, 256, 256)) / 16, jax.random.normal(jax.random.key(4), (128, 256))


JAXSCOPE_INPUTS = {"vit_step": make_vit, "mlp_loss": make_mlp, "scan_layers": make_scan}
