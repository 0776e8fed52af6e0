"""Sharding: one program for a whole mesh of devices.

What it teaches: `jax.jit` compiles one program for every device of a mesh. You say where some
arrays live (`with_sharding_constraint` and a `NamedSharding`: a `PartitionSpec` over the mesh's
axes); XLA's partitioner decides the rest and inserts the communication (a mean over a sharded batch
becomes a local sum and an all-reduce). `shard_map` is the other way: you write the program of one
device, on its shard, with the collectives spelled out (`psum`).

What to look at: in `data_parallel` the [constraint](show:sharding_constraint) says the batch is split
over `data`; the [matmul](show:dot_general) then runs on each device's rows, and the
[mean](show:reduce_sum) is where devices have to talk. In `tensor_parallel` the two weights are split
over `model`, the first by columns, the second by rows, so the hidden activations never need to be
gathered; `per_device` is a `shard_map` whose body sees one shard and ends in an explicit `psum`.

Try: in the Run pane set 4 CPU devices (or `jaxscope export examples/sharding.py --cpu-devices 4
--sharding -o mesh.svg`): the boxes show the part each device holds and the all-reduce XLA inserted;
Run: jit vs eager compares the program on the mesh with eager JAX."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

DEVICES = np.array(jax.devices())
DATA = Mesh(DEVICES, ("data",))  # every device holds a slice of the batch
MODEL = 2 if len(DEVICES) % 2 == 0 else 1
GRID = Mesh(DEVICES.reshape(-1, MODEL), ("data", "model"))  # 4 devices: 2 for the batch x 2 for the weights


def data_parallel(w, x):
    x = jax.lax.with_sharding_constraint(x, NamedSharding(DATA, P("data", None)))  # split the batch
    y = jnp.tanh(x @ w)  # each device: its rows, the whole w
    return jnp.mean(y**2)  # a sum over every device's rows: XLA inserts an all-reduce


def tensor_parallel(w1, w2, x):
    x = jax.lax.with_sharding_constraint(x, NamedSharding(GRID, P("data", None)))
    w1 = jax.lax.with_sharding_constraint(w1, NamedSharding(GRID, P(None, "model")))  # columns apart
    w2 = jax.lax.with_sharding_constraint(w2, NamedSharding(GRID, P("model", None)))  # rows apart
    h = jax.nn.relu(x @ w1)  # each device: its columns of h, nothing to gather
    return h @ w2  # partial sums over `model`: one all-reduce


def per_device(x):
    def shard(s):  # one device's program: it sees f32[32/N, 8]
        return jax.lax.psum(jnp.sum(s**2), "data")  # the collective is yours to write

    return jax.shard_map(shard, mesh=DATA, in_specs=P("data"), out_specs=P())(x)


JAXSCOPE_MAIN = "data_parallel"
JAXSCOPE_ARGS = {
    "data_parallel": "f32[16,8], f32[32,16]",
    "tensor_parallel": "f32[16,64], f32[64,16], f32[32,16]",
    "per_device": "f32[32,8]",
}
