"""The integer params the analyses read (`Node.numbers`, `schema.primitives`) are read from this
jax's own equations, and the FLOPs counted from them are XLA's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxscope.analysis.cost import total
from jaxscope.schema.graph import Graph, Node
from jaxscope.schema.primitives import primitive
from jaxscope.worker.to_graph import build_graph


def _net(x: jax.Array, k: jax.Array, g: jax.Array, a: jax.Array, b: jax.Array) -> tuple[jax.Array, ...]:
    """A conv (NHWC, HWIO), a grouped conv, a batched matmul, a cube and a loop with both kinds of
    const: every reader of the table in use."""
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    z = jax.lax.conv_general_dilated(y, g, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)
    m = jnp.einsum("bij,bjk->bik", a, b) ** 3

    def body(c: jax.Array, row: jax.Array) -> tuple[jax.Array, jax.Array]:
        return jnp.tanh(c @ b[0] + row.sum()), c

    carry, _ = jax.lax.scan(body, m[0], a[0])
    w = jax.lax.while_loop(lambda v: v.sum() < 1e6, lambda v: v * 2.0 + x.sum(), m)
    return z, carry, w


def _inputs() -> tuple[jax.Array, ...]:
    shapes = [(2, 12, 12, 4), (3, 3, 4, 8), (3, 3, 4, 6), (5, 7, 7), (5, 7, 7)]
    return tuple(jnp.ones(s, jnp.float32) for s in shapes)


def _eqns(graph: Graph) -> list[Node]:
    return [n for b in graph.bodies.values() for n in b.nodes if n.kind == "eqn"]


def test_every_primitive_that_names_numbers_gets_them_from_this_jax() -> None:
    graph = build_graph(jax.make_jaxpr(_net)(*_inputs()), "_net")
    read = {n.label: dict(n.numbers) for n in _eqns(graph) if primitive(n.label).numbers is not None}
    assert set(read) >= {"conv_general_dilated", "dot_general", "integer_pow", "scan", "while"}, sorted(read)
    assert all(read.values()), read  # a jax that changed a param's form fails here, not silently in a count
    assert read["integer_pow"] == {"y": (3,)}
    assert read["scan"] == {"length": (7,)}
    convs = [dict(n.numbers) for n in _eqns(graph) if n.label == "conv_general_dilated"]
    assert sorted(c["feature_group_count"] for c in convs) == [(1,), (2,)]
    assert all(c["rhs_spec"] == (3, 2, 0, 1) for c in convs)  # HWIO: out features are dimension 3
    dots = [dict(n.numbers) for n in _eqns(graph) if n.label == "dot_general"]
    assert {"lhs_contracting": (2,), "rhs_contracting": (1,), "lhs_batch": (0,), "rhs_batch": (0,)} in dots


def _padded_convs(x: jax.Array, k: jax.Array) -> jax.Array:
    """SAME padding, strides, both dilations and groups: the taps on padding are no FLOPs to XLA."""
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    z = jax.lax.conv_general_dilated(
        y, k[..., :4, :], (2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1), ("NHWC", "HWIO", "NHWC"), feature_group_count=2
    )
    return jax.lax.conv(jnp.transpose(z, (0, 3, 1, 2)), jnp.ones((5, 8, 3, 3)), (3, 2), "SAME")  # NCHW, OIHW


def _pools(x: jax.Array) -> jax.Array:
    """An average pool (SAME: its padding counted, as XLA counts it) and a max pool."""
    avg = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    return jax.lax.reduce_window(avg, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _cumulative(x: jax.Array) -> tuple[jax.Array, ...]:
    """Each cumulative op along an axis of its own (one reversed): n − 1 steps per output on CPU."""
    return jax.lax.cumsum(x, axis=1), jax.lax.cummax(x, axis=2), jax.lax.cumprod(x, axis=0, reverse=True), jax.lax.cumlogsumexp(x, axis=1)


def _dense(a: jax.Array, b: jax.Array) -> jax.Array:
    return jnp.einsum("bij,bjk->bik", a, b) ** 3 @ b[0].T


@pytest.mark.same_jax
@pytest.mark.parametrize(
    ("part", "shapes"),
    [
        (_padded_convs, [(2, 12, 11, 8), (3, 3, 8, 8)]),
        (_dense, [(5, 7, 6), (5, 6, 9)]),
        (_pools, [(2, 12, 12, 4)]),
        (_cumulative, [(3, 10, 4)]),
    ],
    ids=["convolutions", "matmuls-and-a-cube", "pools", "cumulative"],
)
def test_flops_counted_from_the_numbers_are_xlas(part: object, shapes: list[tuple[int, ...]]) -> None:
    """Exactly the lowered program's own count (XLA's cost analysis): every kernel tap that lands on
    the input of a padded, strided, dilated, grouped or NCHW convolution, a batched contraction and
    the multiplies of a cube."""
    assert callable(part)
    inputs = [jnp.ones(s, jnp.float32) for s in shapes]
    ours = total(build_graph(jax.make_jaxpr(part)(*inputs), "part"))
    xla = jax.jit(part).lower(*inputs).cost_analysis()
    assert ours.flops == xla["flops"] and ours.transcendentals == xla.get("transcendentals", 0.0), (ours, xla)
