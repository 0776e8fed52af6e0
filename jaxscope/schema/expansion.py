"""Which sub-graphs a drawing opens, from the graph alone: the owners that can open, every one
down to a depth (``--collapse N``), and the pick that fits a first view (`auto_expanded`). The
analyses (`scope_view.first_open`), the layout process and the exports all ask here, so none of
them reaches into another's layer for it."""

from __future__ import annotations

import heapq

from jaxscope.schema.graph import Graph, Node


def expandable(graph: Graph, node: Node) -> bool:
    """Whether `node` owns sub-graphs that are all in `graph` (so it can be expanded)."""
    return bool(node.subgraphs) and all(ref.body in graph.bodies for ref in node.subgraphs)


def expanded_to_depth(graph: Graph, depth: int) -> frozenset[str]:
    """Paths of every sub-graph owner nested fewer than `depth` levels deep (0: none)."""
    out: list[str] = []
    level = [(graph.root, "")]
    for _ in range(max(0, depth)):
        nxt = []
        for body_id, prefix in level:
            for node in graph.bodies[body_id].nodes:
                if expandable(graph, node):
                    path = prefix + node.id
                    out.append(path)
                    for i, ref in enumerate(node.subgraphs):
                        nxt.append((ref.body, f"{path}:{i}/"))
        level = nxt
        if not level:
            break
    return frozenset(out)


def auto_expanded(graph: Graph, max_visible: int = 600) -> frozenset[str]:
    """Expand owners breadth-first (shallowest first, then smaller first, then program order)
    as long as the visible node count stays <= `max_visible`; an owner that does not fit is
    skipped (a smaller or deeper one may still fit). Library internals (sub-graphs none of whose
    equations come from a user line, e.g. `jit(_normal)` of `jax.random.normal`) stay collapsed
    when the graph has user lines at all: they would bury the user's program in JAX's."""
    count = len(graph.top.nodes)
    located: dict[str, bool] = {}

    def has_user_lines(body_id: str) -> bool:
        if body_id not in located:
            located[body_id] = False  # cycles cannot happen, but never recurse forever
            located[body_id] = any(
                n.source is not None or any(has_user_lines(r.body) for r in n.subgraphs) for n in graph.bodies[body_id].nodes
            )
        return located[body_id]

    user_program = has_user_lines(graph.root)
    heap: list[tuple[int, int, int, str, Node]] = []
    seq = 0

    def push(body_id: str, prefix: str, depth: int) -> None:
        nonlocal seq
        for node in graph.bodies[body_id].nodes:
            if not node.subgraphs:  # most nodes: no call of `expandable` (~70k at mlp-50k)
                continue
            if expandable(graph, node) and (not user_program or any(has_user_lines(r.body) for r in node.subgraphs)):
                added = sum(len(graph.bodies[r.body].nodes) for r in node.subgraphs) - 1
                heapq.heappush(heap, (depth, added, seq, prefix + node.id, node))
                seq += 1

    push(graph.root, "", 0)
    chosen: list[str] = []
    while heap:
        depth, added, _, path, node = heapq.heappop(heap)
        if count + added > max_visible:
            continue
        count += added
        chosen.append(path)
        for i, ref in enumerate(node.subgraphs):
            push(ref.body, f"{path}:{i}/", depth + 1)
    return frozenset(chosen)
