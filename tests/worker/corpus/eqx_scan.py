"""An equinox transformer-ish MLP stack: layers stacked with eqx.filter_vmap, scanned with lax.scan
under jax.checkpoint, trained with optax under eqx.filter_jit."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class Block(eqx.Module):
    norm: eqx.nn.LayerNorm
    up: eqx.nn.Linear
    down: eqx.nn.Linear

    def __init__(self, dim, key):
        k1, k2 = jax.random.split(key)
        self.norm = eqx.nn.LayerNorm(dim)
        self.up = eqx.nn.Linear(dim, 4 * dim, key=k1)
        self.down = eqx.nn.Linear(4 * dim, dim, key=k2)

    def __call__(self, x):
        return x + self.down(jax.nn.gelu(self.up(self.norm(x))))


class Model(eqx.Module):
    embed: eqx.nn.Linear
    blocks: Block
    head: eqx.nn.Linear

    def __init__(self, dim, depth, key):
        ke, kb, kh = jax.random.split(key, 3)
        self.embed = eqx.nn.Linear(8, dim, key=ke)
        self.blocks = eqx.filter_vmap(lambda k: Block(dim, k))(jax.random.split(kb, depth))
        self.head = eqx.nn.Linear(dim, 2, key=kh)

    def __call__(self, x):
        x = self.embed(x)
        dynamic, static = eqx.partition(self.blocks, eqx.is_array)

        @jax.checkpoint
        def layer(x, params):
            block = eqx.combine(params, static)
            return block(x), None

        x, _ = jax.lax.scan(layer, x, dynamic)
        return self.head(x)


@eqx.filter_jit
def train_step(model, opt_state, x, y):
    def loss_fn(model):
        pred = jax.vmap(model)(x)
        return jnp.mean((pred - y) ** 2)

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


optim = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))


def make_inputs():
    model = Model(32, 6, jax.random.key(0))
    opt_state = optim.init(eqx.filter(model, eqx.is_array))
    x = jax.random.normal(jax.random.key(1), (16, 8))
    y = jax.random.normal(jax.random.key(2), (16, 2))
    return model, opt_state, x, y


JAXSCOPE_INPUTS = {"train_step": make_inputs}
