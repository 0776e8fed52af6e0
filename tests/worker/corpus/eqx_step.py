"""An equinox model stepped under `eqx.filter_jit`, as the equinox docs write it (SGD by hand)."""
import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_jit
def step(model, x, y):
    def loss_fn(model):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    model = eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))
    return loss, model


def make_inputs():
    model = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))
    return model, jnp.ones((16, 4)), jnp.zeros((16, 2))


JAXSCOPE_INPUTS = {"step": make_inputs}
