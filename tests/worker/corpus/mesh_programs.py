"""Programs on a mesh of 4 devices, as users write them: data parallel with a sharding constraint
(inputs from a maker that places them on the mesh), and shard_map + psum."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]), ("data",))


@jax.jit
def step(w, x):
    x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", None)))
    y = jnp.tanh(x @ w)
    return jnp.mean(y ** 2)


def make_inputs():
    w = jnp.ones((16, 8))
    x = jax.device_put(jnp.ones((32, 16)), NamedSharding(mesh, P("data", None)))
    return w, x


JAXSCOPE_INPUTS = {"step": make_inputs}


def local_sum(x):
    return jax.lax.psum(jnp.sum(x ** 2), "data")


def total(x):
    """shard_map + psum over the mesh's 4 devices."""
    return jax.shard_map(local_sum, mesh=mesh, in_specs=P("data"), out_specs=P())(x)


JAXSCOPE_ARGS = {"total": "f32[32,8]"}
