"""An equinox transformer whose blocks are stacked with `filter_vmap` and run by `lax.scan` under
`jax.checkpoint`: scan-over-layers, as large models are written (issue 60.1)."""
import equinox as eqx
import jax
import jax.numpy as jnp


class Attn(eqx.Module):
    qkv: eqx.nn.Linear
    out: eqx.nn.Linear

    def __init__(self, d, key):
        k1, k2 = jax.random.split(key)
        self.qkv = eqx.nn.Linear(d, 3 * d, key=k1)
        self.out = eqx.nn.Linear(d, d, key=k2)

    def __call__(self, x):
        q, k, v = jnp.split(jax.vmap(self.qkv)(x), 3, axis=-1)
        w = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
        return jax.vmap(self.out)(w @ v)


class MLP(eqx.Module):
    up: eqx.nn.Linear
    down: eqx.nn.Linear

    def __init__(self, d, key):
        k1, k2 = jax.random.split(key)
        self.up = eqx.nn.Linear(d, 4 * d, key=k1)
        self.down = eqx.nn.Linear(4 * d, d, key=k2)

    def __call__(self, x):
        return jax.vmap(self.down)(jax.nn.gelu(jax.vmap(self.up)(x)))


class Block(eqx.Module):
    norm1: eqx.nn.LayerNorm
    attn: Attn
    norm2: eqx.nn.LayerNorm
    mlp: MLP

    def __init__(self, d, key):
        k1, k2 = jax.random.split(key)
        self.norm1 = eqx.nn.LayerNorm(d)
        self.attn = Attn(d, k1)
        self.norm2 = eqx.nn.LayerNorm(d)
        self.mlp = MLP(d, k2)

    def __call__(self, x):
        x = x + self.attn(jax.vmap(self.norm1)(x))
        return x + self.mlp(jax.vmap(self.norm2)(x))


class Stack(eqx.Module):
    blocks: Block
    head: eqx.nn.Linear

    def __init__(self, d, n, key):
        keys = jax.random.split(key, n + 1)
        self.blocks = eqx.filter_vmap(lambda k: Block(d, k))(keys[:n])
        self.head = eqx.nn.Linear(d, 1, key=keys[n])

    def __call__(self, x):
        params, static = eqx.partition(self.blocks, eqx.is_array)

        @jax.checkpoint
        def layer(h, p):
            return eqx.combine(p, static)(h), None

        h, _ = jax.lax.scan(layer, x, params)
        return jax.vmap(self.head)(h).mean()


@eqx.filter_jit
def step(model, x):
    loss, grads = eqx.filter_value_and_grad(lambda m: m(x))(model)
    return loss, grads


def make():
    return Stack(32, 6, jax.random.key(0)), jax.random.normal(jax.random.key(1), (16, 32))


JAXSCOPE_INPUTS = {"step": make}
