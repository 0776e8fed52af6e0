"""A linen transformer: nn.scan over nn.remat'd blocks, trained with optax."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Block(nn.Module):
    dim: int

    @nn.compact
    def __call__(self, x, _):
        h = nn.LayerNorm()(x)
        h = nn.SelfAttention(num_heads=4)(h)
        x = x + h
        h = nn.Dense(4 * self.dim)(nn.LayerNorm()(x))
        x = x + nn.Dense(self.dim)(nn.gelu(h))
        return x, None


class Transformer(nn.Module):
    dim: int = 64
    depth: int = 6

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, self.dim)(tokens)
        Stack = nn.scan(nn.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True},
                        length=self.depth)
        x, _ = Stack(self.dim, name="blocks")(x, None)
        return nn.Dense(100)(nn.LayerNorm()(x))


model = Transformer()
tx = optax.adamw(1e-3)


def train_step(params, opt_state, tokens):
    def loss_fn(params):
        logits = model.apply(params, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def make_inputs():
    tokens = jax.random.randint(jax.random.key(0), (4, 17), 0, 100)
    params = model.init(jax.random.key(1), tokens[:, :-1])
    return params, tx.init(params), tokens


JAXSCOPE_INPUTS = {"train_step": make_inputs}
