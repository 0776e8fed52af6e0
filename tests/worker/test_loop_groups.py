"""Structure inside loops (issue 60.1), on a real equinox transformer whose stacked blocks run in
`lax.scan` under `jax.checkpoint`: the scan's body and the checkpoint in the backward scan are
grouped by the modules their equations ran in, the constants JAX hoisted out of the loop sit in one
group beside it, and every program path still reaches its drawn node and back."""

from __future__ import annotations

import functools
from pathlib import Path

from jaxscope.analysis.scope_view import ScopedGraph, expand_scopes, for_window
from jaxscope.schema.graph import Body, Graph, Node, resolve
from jaxscope.schema.trace import FILE_INPUTS, FunctionRef, TraceRequest
from jaxscope.worker.trace import run_trace

CORPUS = Path(__file__).parent / "corpus" / "eqx_scan_blocks.py"


@functools.cache
def view() -> ScopedGraph:
    graph = run_trace(TraceRequest(FunctionRef("step", str(CORPUS)), inputs=FILE_INPUTS), lambda p: None).graph
    return for_window(graph)


def _child(graph: Graph, body: Body, title: str) -> tuple[Node, Body]:
    """The node of `body` whose sub-program's title starts with `title`, and that sub-program."""
    found = [
        (n, graph.bodies[n.subgraphs[0].body])
        for n in body.nodes
        if n.subgraphs and graph.bodies[n.subgraphs[0].body].title.startswith(title)
    ]
    assert len(found) == 1, (title, [graph.bodies[n.subgraphs[0].body].title for n in body.nodes if n.subgraphs])
    return found[0]


def _titles(graph: Graph, body: Body) -> set[str]:
    return {graph.bodies[n.subgraphs[0].body].title for n in body.nodes if n.subgraphs and n.id.startswith("g")}


def test_the_scan_body_is_grouped_by_the_blocks_parts_and_hoisted_constants_beside_it() -> None:
    g = view().graph
    _, forward = _child(g, g.top, "step.<lambda> (forward)")
    _, stack = _child(g, forward, "Stack.__call__")
    _, scan = _child(g, stack, "scan of layer")
    # Block.__call__, which every equation of the body ran in, is the scan's own: its parts are the groups
    assert {"blocks.attn", "blocks.mlp", "model (inputs)"} <= _titles(g, scan)
    assert {t.split(" (")[0] for t in _titles(g, scan)} >= {"blocks.norm1", "blocks.norm2"}
    _, attn = _child(g, scan, "blocks.attn")
    assert _titles(g, attn) == {"qkv", "out"}
    # what JAX moved out of the body (the attention's scale, LayerNorm's counts) is one group, not a row of jit(_var) boxes
    assert "hoisted for scan of layer" in _titles(g, stack)
    assert not [n for n in stack.nodes if n.label == "jit"]


def test_the_checkpointed_layer_in_the_backward_scan_shows_its_recomputed_forward_and_its_backward() -> None:
    g = view().graph
    _, backward = _child(g, g.top, "step.<lambda> (backward)")
    _, stack = _child(g, backward, "Stack.__call__")
    _, scan = _child(g, stack, "scan of layer")
    _, remat = _child(g, scan, "checkpoint of layer")
    assert {"Block.__call__ (forward)", "Block.__call__ (backward)"} <= _titles(g, remat)
    _, again = _child(g, remat, "Block.__call__ (forward)")
    assert "blocks.attn" in _titles(g, again)  # named by the parameters it reads, as in the forward scan
    _, grads = _child(g, remat, "Block.__call__ (backward)")
    assert {"Attn.__call__", "MLP.__call__"} <= _titles(g, grads)
    # the checkpoint's operands are named by what the scan feeds them
    labels = {n.label for n in g.bodies[remat.id].nodes if n.kind == "input"} | {
        n.label for n in view().real.bodies[remat.id].nodes if n.kind == "input"
    }
    assert any(label.endswith("model.blocks.attn.qkv.weight") for label in labels), labels  # ("x3: " before it where JAX says the role)
    # and the backward scan's stacked results by the gradients they are
    ys = {n.label for n in view().real.bodies[scan.id].nodes if n.kind == "output"}
    assert any(label.endswith("result[1].blocks.attn.qkv.weight") for label in ys), ys


def test_every_program_path_reaches_its_drawn_node_and_back() -> None:
    v = view()
    assert v.inner, "no loop body was grouped"
    paths: list[str] = []

    def walk(body: Body, prefix: str) -> None:
        for n in body.nodes:
            paths.append(prefix + n.id)
            for i, ref in enumerate(n.subgraphs):
                walk(v.real.bodies[ref.body], f"{prefix}{n.id}:{i}/")

    walk(v.real.top, "")
    nested = [p for p in paths if "/" in p]
    assert len(nested) > 300
    for path in paths:
        shown = v.to_view(path)
        assert resolve(v.graph, shown)[1].id == path.rsplit("/", 1)[-1], (path, shown)
        assert v.to_real(shown) == path
    # a group inside a loop's body stands for its real equations there, and only those
    for shown in (v.to_view(p) for p in nested):
        parts = shown.split("/")
        at = next((i for i in range(1, len(parts)) if parts[i].startswith("g") and not parts[i - 1].startswith("g")), None)
        if at is not None:
            break
    assert at is not None
    group = "/".join([*parts[:at], parts[at].partition(":")[0]])
    members = v.real_paths([group])
    assert len(members) > 1 and all(v.to_view(m).startswith(group + ":0/") for m in members), (group, members)


def test_expanding_a_module_inside_a_loop_opens_the_loop_on_the_way() -> None:
    v = view()
    opened = expand_scopes(v.graph, ["Block.__call__ (backward)/Attn.__call__"])
    loops = [p for p in opened if resolve(v.graph, p)[1].label in ("scan", "remat2")]
    assert len(loops) == 2, sorted(opened)
    assert any(resolve(v.graph, p)[1].label == "Attn.__call__" for p in opened)
