"""The model structure read from a real flax + optax train step's name stacks: the scope tree,
forward/backward pairs and the three identical blocks."""

from __future__ import annotations

import functools

import pytest

from jaxscope.analysis.scopes import hierarchy, pairs, read_scope, repeats
from jaxscope.schema.graph import Node
from jaxscope.schema.trace import FILE_INPUTS, FunctionRef, TraceRequest
from tests.conftest import MODELS

pytest.importorskip("flax")

from jaxscope.worker.trace import run_trace


@functools.cache
def top() -> list[tuple[str, Node]]:
    graph = run_trace(TraceRequest(FunctionRef("deep_step", str(MODELS)), inputs=FILE_INPUTS), lambda p: None).graph
    return [(n.id, n) for n in graph.top.nodes if n.kind == "eqn"]


def test_the_scope_tree_has_the_modules_with_both_passes() -> None:
    root = hierarchy([(p, n.label, n.name_stack) for p, n in top()])
    (deep,) = root.children.values()
    assert deep.name == "Deep" and set(deep.children) == {"block1", "block2", "block3", "head"}
    block1 = deep.children["block1"]
    assert {"LayerNorm_0", "proj"} <= set(block1.children)
    assert block1.passes["forward"] > 0 and block1.passes["backward"] > 0
    assert root.total() == len(top())
    assert root.equations  # the optimizer update (optax) is outside every module


def test_identical_blocks_are_found_and_a_different_one_is_not() -> None:
    """block2 and block3 are one layer twice; block1's program differs: its input carries no
    gradient, so its forward has no tangent ops for it and its backward no input cotangent
    (33 + 25 equations against 46 + 47)."""
    root = hierarchy([(p, n.label, n.name_stack) for p, n in top()])
    same = repeats(root)
    assert same["Deep/block2"] == same["Deep/block3"] == ["Deep/block2", "Deep/block3"]
    assert "Deep/block1" not in same and "Deep/head" not in same


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

    graph = run_trace(TraceRequest(FunctionRef("deep_step", str(MODELS)), inputs=FILE_INPUTS), lambda p: None).graph
    view = scoped(graph)
    groups = {n.subgraphs[0].role: n for n in view.graph.top.nodes if n.id.startswith("g")}
    assert {"Deep (forward)", "Deep (backward)"} <= set(groups)
    assert any(role.startswith("optax: ") for role in groups)  # the update, outside every module, by its library call
    forward = view.graph.bodies[groups["Deep (forward)"].subgraphs[0].body]
    assert {n.label for n in forward.nodes if n.id.startswith("g")} == {"block1", "block2", "block3", "head"}
    for path, node in equations(graph):  # every equation, at its view path, is itself
        assert resolve(view.graph, view.to_view(path))[1] is node, path
        assert view.to_real(view.to_view(path)) == path
    total = sum(1 for _ in equations(graph))
    inner = sum(1 for p, n in equations(view.graph) if not n.id.startswith("g"))
    assert inner == total  # nothing lost, nothing doubled
