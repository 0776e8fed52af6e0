"""The model structure read from a real flax + optax train step's name stacks: the grouped view,
forward/backward pairs and the identical blocks."""

from __future__ import annotations

import functools

from jaxscope.analysis.scopes import pairs, read_scope
from jaxscope.schema.graph import Graph, Node
from jaxscope.schema.trace import FILE_INPUTS, FunctionRef, TraceRequest
from jaxscope.worker.trace import run_trace
from tests.conftest import MODELS


@functools.cache
def graph() -> Graph:
    return run_trace(TraceRequest(FunctionRef("deep_step", str(MODELS)), inputs=FILE_INPUTS), lambda p: None).graph


def top() -> list[tuple[str, Node]]:
    return [(n.id, n) for n in graph().top.nodes if n.kind == "eqn"]


def _model(view: Graph, pass_: str) -> Node:
    """The group of the model Deep in a pass: inside the loss of adamw_step that applies it."""
    (step,) = [n for n in view.top.nodes if n.subgraphs and n.subgraphs[0].role == f"adamw_step ({pass_})"]
    (loss,) = [n for n in view.bodies[step.subgraphs[0].body].nodes if n.label == "adamw_step.loss_fn"]
    (deep,) = [n for n in view.bodies[loss.subgraphs[0].body].nodes if n.label == "Deep"]
    return deep


def test_identical_blocks_are_marked_and_a_different_one_is_not() -> None:
    """block2 and block3 are one layer twice ("(2 alike)"); block1's program differs: its input carries no
    gradient, so its forward has no tangent ops for it and its backward no input cotangent
    (33 + 25 equations against 46 + 47)."""
    from jaxscope.analysis.scope_view import scoped

    view = scoped(graph()).graph
    for pass_ in ("forward", "backward"):
        deep = _model(view, pass_)
        blocks = {n.name_stack.rsplit("/", 1)[-1]: n for n in view.bodies[deep.subgraphs[0].body].nodes if n.id.startswith("g")}
        total = view.bodies[blocks["block2"].subgraphs[0].body].total_eqns
        assert blocks["block2"].label == "block2 (2 alike)" and blocks["block2"].params == (("equations", str(total)),)  # as its box reads
        assert blocks["block2"].subgraphs[0].role == "block2 (2 alike)" and "identical to block3" in blocks["block2"].detail
        assert blocks["block3"].subgraphs[0].role == "block3 (2 alike)"
        assert blocks["block1"].subgraphs[0].role == "block1" and blocks["head"].subgraphs[0].role == "head"
    values = [n.subgraphs[0].role for n in view.top.nodes if n.subgraphs and n.subgraphs[0].role.endswith(("(inputs)", "(outputs)"))]
    assert len(values) >= 3 and not any(" alike)" in role for role in values)  # groups of inputs are no repeated layers


def test_each_backward_dot_pairs_with_the_forward_dot_of_its_scope() -> None:
    eqns = top()
    key = {p: (n.source.file, n.source.line, n.frames[-1].line if n.frames else 0) if n.source else None for p, n in eqns}
    paired = pairs([(p, n.name_stack, key[p]) for p, n in eqns])
    nodes = dict(eqns)
    backward_dots = [p for p, n in eqns if n.label == "dot_general" and read_scope(n.name_stack).pass_ == "backward"]
    assert len(backward_dots) >= 6
    for p in backward_dots:
        scope = read_scope(nodes[p].name_stack).path
        forward = paired[p]
        assert forward and all(read_scope(nodes[f].name_stack).pass_ == "forward" for f in forward)
        assert all(read_scope(nodes[f].name_stack).path == scope for f in forward)
        assert any(nodes[f].label == "dot_general" for f in forward)
        assert all(p in paired[f] for f in forward)  # and back


def test_the_scoped_view_groups_modules_per_pass_and_keeps_every_equation_findable() -> None:
    from jaxscope.analysis.scope_view import scoped
    from jaxscope.ir.jaxpr_order import equations
    from jaxscope.schema.graph import resolve

    real = graph()
    view = scoped(real)
    groups = {n.subgraphs[0].role: n for n in view.graph.top.nodes if n.id.startswith("g")}
    assert not {"Deep (forward)", "Deep (backward)"} & set(groups)  # the model inside the loss that applies it
    # outside every module, by the calls it came through: adamw_step, then optax's own
    update = view.graph.bodies[groups["adamw_step"].subgraphs[0].body]
    assert any(n.label.startswith("optax: ") for n in update.nodes if n.id.startswith("g"))
    assert {"adamw_step (forward)", "adamw_step (backward)"} <= set(groups)  # the loss, both passes
    forward = view.graph.bodies[_model(view.graph, "forward").subgraphs[0].body]
    at = "adamw_step/adamw_step.loss_fn/Deep/"  # a group's scope: the calls down to it, then its modules
    assert {n.name_stack for n in forward.nodes if n.id.startswith("g")} == {at + b for b in ("block1", "block2", "block3", "head")}
    for path, node in equations(real):  # every equation, at its view path, is itself
        assert resolve(view.graph, view.to_view(path))[1] is node, path
        assert view.to_real(view.to_view(path)) == path
    total = sum(1 for _ in equations(real))
    inner = sum(1 for p, n in equations(view.graph) if not n.id.startswith("g"))
    assert inner == total  # nothing lost, nothing doubled


PLAIN_LOOP = """
import jax
import jax.numpy as jnp


def layernorm(x):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)


def block(w, x):
    h = layernorm(x)
    h = jnp.tanh(h @ w)
    return x + h


def loss(ws, x):
    for w in ws:
        x = block(w, x)
    return (x ** 2).mean()


def step(ws, x):
    grads = jax.grad(loss)(ws, x)
    return [w - 0.1 * g for w, g in zip(ws, grads)]
"""


def test_calls_of_one_function_from_one_line_are_layers_of_their_own(tmp_path) -> None:
    """No scopes (plain functions, a Python loop over the blocks): the calls of `block` have the
    same frames, yet each is its own group, numbered, the middle ones identical layers, and each
    backward call numbered as the forward call it transposes."""
    from jaxscope.analysis.scope_view import scoped
    from jaxscope.ir.jaxpr_order import equations

    path = tmp_path / "plain_loop.py"
    path.write_text(PLAIN_LOOP, encoding="utf-8")
    real = run_trace(
        TraceRequest(FunctionRef("step", str(path)), args="[f32[8,8], f32[8,8], f32[8,8], f32[8,8]], f32[4,8]"), lambda p: None
    ).graph
    view = scoped(real)
    groups = {n.label: n for n in view.graph.top.nodes if n.id.startswith("g")}
    assert {"loss (forward)", "loss (backward)"} <= set(groups)
    for pass_ in ("forward", "backward"):
        body = view.graph.bodies[groups[f"loss ({pass_})"].subgraphs[0].body]
        blocks = {n.name_stack: n for n in body.nodes if n.id.startswith("g")}
        assert {"loss/block #1", "loss/block #2", "loss/block #3", "loss/block #4"} <= set(blocks), sorted(blocks)
        sizes = [int(blocks[f"loss/block #{k}"].params[0][1]) for k in range(1, 5)]
        # the same block each time, but the first: its input carries no gradient (fewer tangents, no input cotangent)
        assert sizes[1] == sizes[2] == sizes[3] and 0 < sizes[0] < sizes[1], sizes
        assert blocks["loss/block #2"].label == "block #2 (3 alike)" and blocks["loss/block #1"].label == "block #1"
    # each call's equations are that call's: block #k's forward tanh feeds block #k+1's
    by_group: dict[str, set[str]] = {}
    for p, n in equations(view.graph):
        if n.label == "tanh":
            by_group.setdefault(p.rsplit("/", 1)[0], set()).add(p)
    assert sorted(len(v) for v in by_group.values()) == [1] * 4  # one tanh per forward call
    assert sum(1 for _ in equations(real)) == sum(1 for p, n in equations(view.graph) if not n.id.startswith("g"))


CHECKPOINTED = """
import jax
import jax.numpy as jnp


def layer(w, x):
    return jnp.tanh(x @ w)


def f(ws, x):
    def loss(ws):
        h = x
        for w in ws:
            h = jax.checkpoint(layer, policy=jax.checkpoint_policies.dots_saveable)(w, h)
        return jnp.sum(h ** 2)

    return jax.grad(loss)(ws)
"""


def test_checkpointed_layers_are_calls_inside_the_loss_that_makes_them(tmp_path) -> None:
    """Issue 49: under `jax.checkpoint` a layer's forward equations carry the layer's frames alone
    (JAX traced it apart): they were drawn loose beside the loss. Each call is a group of its own
    inside the loss's forward group, the three alike, marked as a remat region."""
    from jaxscope.analysis.scope_view import scoped

    path = tmp_path / "checkpointed.py"
    path.write_text(CHECKPOINTED, encoding="utf-8")
    real = run_trace(TraceRequest(FunctionRef("f", str(path)), args="[f32[8,8], f32[8,8], f32[8,8]], f32[4,8]"), lambda p: None).graph
    view = scoped(real).graph
    top = {n.label: n for n in view.top.nodes if n.id.startswith("g")}
    assert not [t for t in top if t.startswith("layer")]  # none beside the loss
    forward = view.bodies[top["f.loss (forward)"].subgraphs[0].body]
    layers = [n for n in forward.nodes if n.id.startswith("g")]
    # each marked as a remat region: the backward pass runs it again (its `checkpoint of layer` boxes)
    assert sorted(n.label for n in layers) == [f"layer #{k} (3 alike) · remat" for k in (1, 2, 3)]
    assert all("computes it again" in n.detail for n in layers)
    backward = view.bodies[top["f.loss (backward)"].subgraphs[0].body]
    assert [r.role for n in backward.nodes for r in n.subgraphs].count("checkpoint of layer") == 3


def test_nnx_blocks_are_named_by_their_places_in_both_passes_and_open_first() -> None:
    """Issue 60.2: an nnx CNN whose blocks differ in width: every module is named by its place
    (`block1/conv`, `dropout`), never by a library class's call, alike in the forward and the
    backward pass; block1's backward is block1's; the first view opens the model to block1 and block2
    (they fit), while the optimizer's update stays one shut box."""
    from jaxscope.analysis.cost import by_key, rows
    from jaxscope.analysis.scope_view import first_open, scoped
    from jaxscope.schema.graph import resolve

    corpus = MODELS.parent / "nnx_cnn_blocks.py"
    g = run_trace(TraceRequest(FunctionRef("train_step", str(corpus)), inputs=FILE_INPUTS), lambda p: None).graph
    names = set(by_key(rows(g), "scope", 0, g))
    assert not [n for n in names if "flax: Conv" in n or "BatchNorm" in n or "Dropout" in n], sorted(names)
    for module in ("block1/conv", "block1/bn", "block2/conv", "block2/bn", "dropout", "head"):
        for pass_ in ("forward", "backward"):
            assert f"train_step.loss_fn/CNN.__call__/{module} · {pass_}" in names, (module, pass_, sorted(names))
    view = scoped(g).graph
    opened = {resolve(view, p)[1].label for p in first_open(view)}
    assert {"block1", "block2", "CNN.__call__"} <= opened and "flax: Optimizer.update" not in opened, opened
