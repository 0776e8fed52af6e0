"""The flax docs' MNIST CNN (linen) with optax and a TrainState, as the quick start writes it."""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(features=32, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = nn.Conv(features=64, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(features=256)(x)
        x = nn.relu(x)
        return nn.Dense(features=10)(x)


@jax.jit
def train_step(state, batch):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch["image"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits=logits, labels=batch["label"]).mean()
        return loss, logits

    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    state = state.apply_gradients(grads=grads)
    accuracy = jnp.mean(jnp.argmax(logits, -1) == batch["label"])
    return state, {"loss": loss, "accuracy": accuracy}


def make_inputs():
    cnn = CNN()
    params = cnn.init(jax.random.key(0), jnp.ones([1, 28, 28, 1]))["params"]
    state = train_state.TrainState.create(apply_fn=cnn.apply, params=params, tx=optax.sgd(0.01, 0.9))
    batch = {"image": jax.random.normal(jax.random.key(1), (32, 28, 28, 1)), "label": jnp.arange(32) % 10}
    return state, batch


JAXSCOPE_INPUTS = {"train_step": make_inputs}
