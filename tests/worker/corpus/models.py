"""Real models as users write them, each with its maker: flax linen + optax, flax nnx, equinox."""

import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax import nnx


class MLP(nn.Module):
    hidden: int = 16

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden, name="block1")(x))
        return nn.Dense(1, name="head")(x)


model = MLP()
tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))


def adamw_step(net, params, opt_state, batch):
    """One MSE training step of a linen module with the optax chain above."""

    def loss_fn(p):
        return jnp.mean((net.apply(p, batch["x"]) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def train_step(params, opt_state, batch):
    return adamw_step(model, params, opt_state, batch)


def make_train_inputs(seed=0):
    params = model.init(jax.random.key(seed), jnp.zeros((1, 4)))
    batch = {"x": jnp.ones((8, 4)), "y": jnp.zeros((8, 1))}
    return params, tx.init(params), batch


class Net(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 8, rngs=rngs)
        self.bn = nnx.BatchNorm(8, rngs=rngs)

    def __call__(self, x):
        return nnx.relu(self.bn(self.l1(x)))


def nnx_forward(graphdef, state, x):
    net = nnx.merge(graphdef, state)
    y = net(x)
    return y, nnx.split(net)[1]


def make_nnx_inputs():
    graphdef, state = nnx.split(Net(nnx.Rngs(0)))
    return graphdef, state, jnp.ones((2, 4))


def eqx_predict(model, xs):
    return jax.vmap(model)(xs)


def make_eqx_inputs(seed=0):
    return eqx.nn.MLP(3, 2, 8, 2, activation=jax.nn.gelu, key=jax.random.key(seed)), jnp.ones((5, 3))


def scaled(x, *, scale, bias=0.0):
    return x * scale + bias


def make_kwargs():
    return {"x": jnp.ones(3), "scale": 2.0}


def make_args_kwargs():
    return (jnp.ones(3),), {"scale": jnp.float32(2.0)}


def one(x):
    return jnp.sin(x)


def make_one():
    return jnp.ones((2, 2))  # one value that is no tuple: the one argument


def make_huge():
    return (jnp.zeros((200_000, 200_000)),)  # 160 GB for real: only eval_shape can make it


def make_numpy_only(seed=0):
    x = np.asarray(jnp.arange(3.0)) + seed  # not traceable: called for real
    return (x,)


def make_counted():
    os.environ["JAXSCOPE_TEST_MAKER_CALLS"] = str(int(os.environ.get("JAXSCOPE_TEST_MAKER_CALLS", "0")) + 1)
    return (jnp.ones(3),)


def make_raises():
    raise ValueError("no data here")


def make_strings():
    return (np.array(["a", "b"]),)


def make_too_many():
    return jnp.ones(3), jnp.ones(3), jnp.ones(3)


def make_mixed_keys():
    return ({1: jnp.ones(3), "a": jnp.ones(3)},)


def make_self_reference():
    x = [jnp.ones(3)]
    x.append(x)
    return (x,)


def make_exits():
    import sys

    sys.exit(3)


def make_deep():
    x = jnp.ones(3)
    for _ in range(5000):
        x = [x]
    return (x,)


JAXSCOPE_INPUTS = {"train_step": make_train_inputs, "nnx_forward": make_nnx_inputs}


def make_forever():
    while True:  # a maker that never returns
        pass


def make_f64():
    return (np.linspace(0.0, 1.0, 3),)  # NumPy's default float64


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        return x + nn.Dense(x.shape[-1], name="proj")(nn.gelu(nn.LayerNorm()(x)))


class Deep(nn.Module):
    @nn.compact
    def __call__(self, x):
        for i in range(3):  # three identical blocks
            x = Block(name=f"block{i + 1}")(x)
        return nn.Dense(1, name="head")(x)


deep = Deep()


def deep_step(params, opt_state, batch):
    return adamw_step(deep, params, opt_state, batch)


def make_deep_inputs(seed=0):
    params = deep.init(jax.random.key(seed), jnp.zeros((1, 8)))
    return params, tx.init(params), {"x": jnp.ones((4, 8)), "y": jnp.zeros((4, 1))}


JAXSCOPE_INPUTS["deep_step"] = make_deep_inputs
