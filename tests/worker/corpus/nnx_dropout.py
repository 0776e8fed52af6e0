"""An nnx step with Dropout under @nnx.jit: its random bits are drawn in loops (jax 0.12: inside an XLA call)."""
import jax, jax.numpy as jnp, optax
from flax import nnx

class M(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(16, 32, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)
        self.l2 = nnx.Linear(32, 4, rngs=rngs)
    def __call__(self, x):
        return self.l2(self.drop(jax.nn.relu(self.l1(x))))

@nnx.jit
def step(model, opt, x, y):
    def loss(m):
        return ((m(x) - y) ** 2).mean()
    l, g = nnx.value_and_grad(loss)(model)
    opt.update(model, g)
    return l

def make():
    m = M(nnx.Rngs(0, dropout=1))
    return (m, nnx.Optimizer(m, optax.adam(1e-3), wrt=nnx.Param), jnp.ones((8, 16)), jnp.zeros((8, 4)))

JAXSCOPE_INPUTS = {"step": make}
