"""A flax MLP trained with optax whose LayerNorm a static flag switches: saved traces and diffs (issue 36)."""

import jax
import jax.numpy as jnp
import flax.linen as nn
import optax


class MLP(nn.Module):
    use_norm: bool = True

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16)(x)
        if self.use_norm:
            x = nn.LayerNorm()(x)
        return nn.Dense(1)(nn.relu(x))


def _inputs(use_norm):
    x = jnp.ones((8, 4))
    params = MLP(use_norm=use_norm).init(jax.random.key(0), x)
    return params, optax.adam(1e-3).init(params), x, jnp.ones((8, 1)), use_norm


def make_norm():
    return _inputs(True)


def make_plain():
    return _inputs(False)


def step(params, opt_state, x, y, use_norm):
    model = MLP(use_norm=use_norm)

    def loss_fn(p):
        return jnp.mean((model.apply(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optax.adam(1e-3).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


JAXSCOPE_INPUTS = {"step": make_norm}
