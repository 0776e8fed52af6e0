"""The grouped view on small hand-made graphs: which groups a first layout opens, the way between
drawn and program paths, residuals, one edge per pair of boxes, calls told apart without scopes."""

from __future__ import annotations

from jaxscope.analysis.scope_view import first_open, for_window, scoped
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc, group_of, resolve


def _graph(stacks: list[str], frames: list[tuple[SourceLoc, ...]] | None = None, avals: str = "f32[4,8]") -> Graph:
    """in0 -> e0 -> e1 -> ... -> out0, equation i with name stack `stacks[i]` (and `frames[i]`)."""
    nodes = [Node("in0", "input", "x", avals=(avals,))]
    edges = []
    prev = "in0"
    for i, stack in enumerate(stacks):
        nodes.append(Node(f"e{i}", "eqn", "sin", avals=(avals,), name_stack=stack, frames=frames[i] if frames else ()))
        edges.append(Edge(prev, f"e{i}", 0, 0, avals))
        prev = f"e{i}"
    nodes.append(Node("out0", "output", "y", avals=(avals,)))
    edges.append(Edge(prev, "out0", 0, 0, avals))
    return Graph("f", {"b0": Body("b0", "f", tuple(nodes), tuple(edges), len(stacks), len(stacks))}, "b0")


def _groups(g: Graph, body: Body | None = None) -> dict[str, Node]:
    return {n.label: n for n in (body or g.top).nodes if group_of(n) is not None}


def test_a_model_opens_to_its_repeated_blocks_and_a_plain_function_as_it_was() -> None:
    stacks = [f"jvp(Net)/block{b}/dense{d}" for b in range(3) for d in range(2)] + ["transpose(jvp(Net))/block0/dense0"]
    view = scoped(_graph(stacks))
    groups = _groups(view.graph)
    assert {"Net (forward)", "Net (backward)"} <= set(groups)
    opened = first_open(view.graph)
    # the way to the blocks, each block a box (3 alike: identical layers); the backward holds no repeats: shut
    assert opened == {groups["Net (forward)"].id}
    forward = view.graph.bodies[groups["Net (forward)"].subgraphs[0].body]
    assert sorted(n.label for n in forward.nodes if group_of(n)) == ["block0 (3 alike)", "block1 (3 alike)", "block2 (3 alike)"]
    shown_whole = first_open(view.graph, blocks_fit=len(view.graph.top.nodes) + 1)  # they do not fit: a level at a time
    assert {f"{groups['Net (forward)'].id}:0/{n.id}" for n in forward.nodes if group_of(n)} <= shown_whole


def test_a_model_without_repeats_opens_a_whole_level_at_a_time() -> None:
    stacks = [f"jvp(Net)/block{b}" for b in range(3) for _ in range(b + 1)] + ["transpose(jvp(Net))/block0"] * 2
    view = scoped(_graph(stacks))
    groups = _groups(view.graph)
    opened = first_open(view.graph)
    assert {groups["Net (forward)"].id, groups["Net (backward)"].id} <= opened  # the level of the top modules
    forward = view.graph.bodies[groups["Net (forward)"].subgraphs[0].body]
    blocks = {f"{groups['Net (forward)'].id}:0/{n.id}" for n in forward.nodes if group_of(n)}
    assert len(blocks) == 3 and blocks <= opened  # the next level fits too: all of it
    assert not (blocks & first_open(view.graph, fits=len(view.graph.top.nodes) + 8))  # one that does not: none of it
    plain = _graph(["", ""])
    assert not for_window(plain).grouped and first_open(plain) == auto_expanded(plain)


def test_a_group_stands_for_its_equations_and_its_own_boxes_for_nothing() -> None:
    real = _graph(["jvp(Net)/a", "jvp(Net)/a", "jvp(Net)/b", "transpose(jvp(Net))/a"])
    view = scoped(real)
    for node_id in ("e0", "e1", "e2", "e3"):
        shown = view.to_view(node_id)
        assert shown != node_id and resolve(view.graph, shown)[1] is resolve(real, node_id)[1]
        assert view.real_paths([shown]) == [node_id]
    forward = _groups(view.graph)["Net (forward)"].id
    assert sorted(view.real_paths([forward])) == ["e0", "e1", "e2"]
    inner = view.graph.bodies[_groups(view.graph)["Net (forward)"].subgraphs[0].body]
    boxes = [f"{forward}:0/{n.id}" for n in inner.nodes if n.kind in ("input", "output")]
    assert boxes and view.real_paths(boxes) == []  # "1 input", "1 output": the group's, not the program's


def test_residuals_are_counted_and_a_pair_of_boxes_has_one_edge() -> None:
    # the forward module's two values both reach the backward module: two residuals, one edge drawn
    nodes = [Node("in0", "input", "x", avals=("f32[256]",))]
    nodes += [Node(f"e{i}", "eqn", "sin", avals=("f32[256]",), name_stack="jvp(Net)/a") for i in range(2)]
    nodes += [Node("e2", "eqn", "mul", avals=("f32[256]",), name_stack="transpose(jvp(Net))/a"), Node("out0", "output", "y")]
    edges = [
        Edge("in0", "e0"),
        Edge("in0", "e1"),
        Edge("e0", "e2", 0, 0, "f32[256]"),
        Edge("e1", "e2", 0, 1, "f32[256]"),
        Edge("e2", "out0"),
    ]
    view = scoped(Graph("f", {"b0": Body("b0", "f", tuple(nodes), tuple(edges), 3, 3)}, "b0"))
    groups = _groups(view.graph)
    forward, backward = groups["Net (forward)"], groups["Net (backward)"]
    assert "2 residuals read by the backward pass (2.0 KiB)" in forward.detail
    body = view.graph.bodies[forward.subgraphs[0].body]
    assert next(n for n in body.nodes if n.kind == "output").label == "2 outputs, 2 residuals"
    between = [e for e in view.graph.top.edges if (e.src, e.dst) == (forward.id, backward.id)]
    assert len(between) == 1 and len(forward.avals) == 2  # both values are its outputs; one edge draws them


def test_calls_of_one_function_from_one_line_are_told_apart_by_its_line_going_back() -> None:
    """No scopes: `for w in ws: x = block(w, x)` gives every call the same frames; block's lines go
    12, 13 in each call, so the call ends where they go back to 12."""

    def at(fn: str, line: int) -> SourceLoc:
        return SourceLoc("m.py", line, function=fn)

    forward = [(at("step", 20), at("loss", 9), at("block", line)) for _ in range(3) for line in (12, 13)]
    update = [(at("step", 21), at("sgd", 30))] * 2  # (a call of one equation is no group)
    view = scoped(_graph(["jvp()"] * len(forward) + [""] * 2, forward + update))
    loss = _groups(view.graph)["loss (forward)"]
    body = view.graph.bodies[loss.subgraphs[0].body]
    blocks = sorted(n.name_stack for n in body.nodes if group_of(n))
    assert blocks == ["loss/block #1", "loss/block #2", "loss/block #3"]
    assert all(n.label.endswith(" (3 alike)") for n in body.nodes if group_of(n))  # identical layers


def test_a_one_line_block_is_split_where_its_first_place_comes_again_and_a_leaf_loop_is_not() -> None:
    """`x + self.down(gelu(self.up(self.norm(x))))`: every equation of a call is on block's line 15,
    so only the place of its first equation coming again, reading the last call's result, ends a
    call; `tree.map(lambda p, g: p - g, ...)` repeats its place too, but no leaf reads the last."""

    def at(fn: str, line: int, col: int = 0) -> SourceLoc:
        return SourceLoc("m.py", line, col, function=fn)

    one_call = [(at("step", 30), at("loss", 20, 8), at("Model.__call__", 25, 16), at("Block.__call__", 15, col)) for col in (49, 41, 15)]
    update = [(at("step", 31), at("sgd", 40, 11), at("sgd.<lambda>", 40, col)) for col in (30, 26)] * 3  # p - lr * g per leaf
    real = _graph(["jvp()"] * 9 + [""] * 6, one_call * 3 + update)  # a chain: each equation reads the one before
    edges = tuple(e for e in real.top.edges if not (e.dst in ("e11", "e13") and e.src in ("e10", "e12")))  # leaves read no leaf
    view = scoped(Graph("f", {"b0": Body("b0", "f", real.top.nodes, edges, 15, 15)}, "b0"))
    model = _groups(view.graph, view.graph.bodies[_groups(view.graph)["loss (forward)"].subgraphs[0].body])["Model.__call__"]
    blocks = sorted(n.name_stack for n in view.graph.bodies[model.subgraphs[0].body].nodes if group_of(n))
    assert blocks == [f"loss/Model.__call__/Block.__call__ #{k}" for k in (1, 2, 3)]
    sgd = _groups(view.graph)["sgd"]
    assert [n.label for n in view.graph.bodies[sgd.subgraphs[0].body].nodes if group_of(n)] == ["sgd.<lambda>"]  # one call


def test_one_expression_whose_parts_come_back_to_its_first_column_is_one_call() -> None:
    """`x = params["wte"][tokens] + params["wpe"][None]`: lt, gather at col 8, a broadcast at col 32,
    then the add at col 8 again, reading the gather: the same line and column, not the same
    equation (another primitive), so not a second call."""

    def at(fn: str, line: int, col: int = 0) -> SourceLoc:
        return SourceLoc("m.py", line, col, function=fn)

    labels = ["lt", "gather", "broadcast_in_dim", "add"]
    cols = [8, 8, 32, 8]
    frames = [(at("step", 50), at("loss", 46, c)) for c in cols] + [(at("step", 51), at("sgd", 40))] * 2
    base = _graph(["jvp()"] * 4 + [""] * 2, frames)
    nodes = tuple(
        Node(
            n.id,
            n.kind,
            labels[int(n.id[1:])] if n.id[1:].isdigit() and int(n.id[1:]) < 4 else n.label,
            avals=n.avals,
            name_stack=n.name_stack,
            frames=n.frames,
        )
        for n in base.top.nodes
    )
    view = scoped(Graph("f", {"b0": Body("b0", "f", nodes, base.top.edges, 6, 6)}, "b0"))
    assert "loss (forward)" in _groups(view.graph)  # one call: no "loss #1", "loss #2"


def test_library_calls_are_named_as_their_users_know_them() -> None:
    """Issue 49 (a first step): an nnx optimizer's update read `flax: _check_grads_arg_passed._check_gr…`
    and optax's transforms `scale_by_adam.update_fn`: a library's private wrapper is folded into its
    caller, and a closure is named by the function that made it (the optax transform)."""
    from jaxscope.analysis.module_keys import group_key

    def frame(function: str, library: str = "") -> SourceLoc:
        return SourceLoc("/lib.py" if library else "/step.py", 1, function=function, library=library)

    frames = (
        frame("train_step"),
        frame("_check_grads_arg_passed.<locals>._check_grads_wrapper", "flax"),
        frame("Optimizer.update", "flax"),
        frame("chain.<locals>.update_fn", "optax"),
        frame("scale_by_adam.<locals>.update_fn", "optax"),
        frame("tree_update_moment", "optax"),
        frame("tree_update_moment.<locals>.<lambda>", "optax"),
        frame("_abs_sq", "optax"),
    )
    node = Node("e0", "eqn", "mul", ("f32[4]",), frames=frames)
    key, by_scope = group_key(node)
    assert not by_scope
    assert key == ("program", "flax: Optimizer.update", "optax: chain", "scale_by_adam", "tree_update_moment")  # its lambda: the same call
    step_count = Node("e2", "eqn", "add", ("u32[]",), frames=frames[:3])  # emitted by Optimizer.update under the wrapper alone
    assert group_key(step_count)[0] == ("program", "flax: Optimizer.update")  # with its siblings, not left at the top
    user = Node("e1", "eqn", "mul", ("f32[4]",), frames=(frame("step"), frame("loss.<locals>.inner"), frame("helper")))
    assert group_key(user)[0] == ("program", "loss.inner", "helper")  # the user's own closures keep their full name


def test_identical_layers_have_the_same_shapes_too() -> None:
    """Issue 49: a conv net's `block1 ×2 … identical to block2` though their channels differ. Identical
    layers are the same primitives on the same shapes and dtypes; block2 and block3 (8 -> 8) are, block1 (4 -> 8) is not."""
    nodes = [Node("in0", "input", "x", ("f32[2,4]",))]
    edges = []
    widths = {"block1": (4, 8), "block2": (8, 8), "block3": (8, 8)}
    src = "in0"
    for k, (block, (a, b)) in enumerate(widths.items()):
        dot, act = f"e{2 * k}", f"e{2 * k + 1}"
        nodes.append(Node(dot, "eqn", "dot_general", (f"f32[2,{b}]",), (f"f32[2,{a}]",), name_stack=block))
        nodes.append(Node(act, "eqn", "tanh", (f"f32[2,{b}]",), (f"f32[2,{b}]",), name_stack=block))
        edges += [Edge(src, dot, aval=f"f32[2,{a}]"), Edge(dot, act, aval=f"f32[2,{b}]")]
        src = act
    nodes.append(Node("out0", "output", "out0", ("f32[2,8]",)))
    edges.append(Edge(src, "out0", aval="f32[2,8]"))
    graph = Graph("f", {"b0": Body("b0", "f", tuple(nodes), tuple(edges), 6, 6)}, "b0")
    view = scoped(graph)
    titles = sorted(n.subgraphs[0].role for b in view.graph.bodies.values() for n in b.nodes if n.id.startswith("g") and "block" in n.label)
    assert titles == ["block1", "block2 (2 alike)", "block3 (2 alike)"], titles
    block1 = next(n for b in view.graph.bodies.values() for n in b.nodes if n.id.startswith("g") and n.label == "block1")
    assert "same structure as block2, block3, other shapes" in block1.detail  # not identical, but the same layer
