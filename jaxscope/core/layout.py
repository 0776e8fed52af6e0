"""Graph + expanded owner paths -> Layout: one body at a time, composed, cached.

How a layout is built
---------------------
* **Per body.** Each visible Body is laid out on its own. An *expanded* owner (its path is in
  `expanded` and it has `subgraphs`) is one big fixed-size box in its parent: its sub-graphs side
  by side (top to bottom for ``direction="LR"``), each with a title band of `labels.TITLE_H` and
  `CLUSTER_PAD` px of padding. The child layouts are then translated into that box and each gets a
  ClusterBox (path ``"<owner path>:<index>"``, title = `SubgraphRef.role`, depth 1 for a cluster
  in the top-level body, 2 inside that, ...). The expanded owner has no NodeBox of its own.
  Sub-layouts are cached by (body id, the expanded set relative to that instance), so a block
  called 200 times is laid out once; within one `compute_layout` call always, and across calls
  when the caller passes the same `cache` dict (the layout worker does, per graph).
* **Engines.** A body with at most `dot_max_nodes` boxes (stub copies included) goes to Graphviz
  dot (see `dot_layout`), a bigger one to the pure-Python layered layout (`layered`). `engine`
  forces one or the other. If pygraphviz is missing or dot fails, the layered layout is used and
  a note says so.
* **Long edges.** Ranks are longest-path ranks over the body's edges (sources moved down next to
  their nearest consumer). An edge spanning more than `max_span` ranks is left out of the dot
  graph and comes out with ``routed=False`` as a smooth cubic from the producer's bottom centre to
  the consumer's top centre (right centre -> left centre for LR). Shorter edges are
  ``routed=True``: dot's spline, or for the layered engine the same kind of cubic (that engine does
  not route). No edge is ever dropped: every edge of every visible body has an EdgePath (parallel
  edges, e.g. ``x * x``, get one EdgePath each, on the same curve).
* **Cost.** Everything outside dot is O(V + E) Python (50k boxes: about 1-3 s on a slow 2-core VM,
  most of it building the output objects); the cyclic GC is paused while a layout is built.
  dot's time depends on structure more than size: see `dot_layout`, and run it through
  `layout_client.LayoutClient`, which bounds it with a time budget.

Conventions
-----------
* **Units.** Layout px; one px is one Graphviz point (1/72 in) when talking to dot. Sizes come
  from `labels.node_size`. y grows downwards; the drawing starts at (0, 0) with a `MARGIN` of
  8 px; every coordinate is a multiple of 0.1 px (body layouts are kept in whole tenths, so a
  cached body drawn twice is exactly translated).
* **Stub copies.** An ``input`` or ``const`` node with more than `STUB_FANOUT` distinct consumers
  gets one copy per consumer, placed next to it; the copy's path is ``f"{path}#{k}"`` (k = 0, 1, ...
  in order of the consumer's first edge) and the EdgePaths to that consumer start at the copy.
  The original keeps its NodeBox (it has no edges of its own in the top-level body, so it sits in
  the first rank; inside a sub-graph it is where the edges from outside land). Renderers draw a
  copy like the original; ``path.partition("#")[0]`` is the node's real path.
* **Edges across a cluster boundary.** The owner's box is what the parent's layout sees; the
  EdgePaths then continue inside. Operand port p of an expanded owner is sub-graph input k when:
  the counts are equal (jit, scan, custom_jvp, ...: k = p); for ``cond``, operand 0 (the branch
  index) is not an input of any branch and p -> p - 1; for ``while``, the cond sub-graph takes
  ``cond_consts + carry`` and the body ``body_consts + carry`` (from the ``cond_nconsts`` and
  ``body_nconsts`` params). Output port i of the owner is output node i of every sub-graph with
  as many outputs as the owner (never the while cond). An edge whose port maps into no sub-graph
  ends (or starts) at the cluster box itself: its `dst` (or `src`) is the cluster path
  ``"<owner path>:<index>"`` and the point is the middle of the box's top (bottom) edge, once per
  cluster of that owner. A routed edge is dot's spline to the owner box, then a straight cubic to
  the node inside. When both ends are expanded owners, one EdgePath per (source, target) pair.
"""

from __future__ import annotations

import heapq
from math import floor
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from jaxscope.core import labels
from jaxscope.core.dot_layout import dot_available, run_dot
from jaxscope.core.layered import LAYER_GAP, NODE_GAP, layered_layout, longest_path_ranks
from jaxscope.core.model import Body, ClusterBox, EdgePath, Graph, Layout, Node, NodeBox, SubgraphRef
from jaxscope.core.serialize import gc_paused

STUB_FANOUT = 2  # input/const nodes with more distinct consumers than this are stubbed
STUB_KINDS = ("input", "const")
CLUSTER_PAD = 10.0  # px around a sub-graph's contents inside its cluster box
CLUSTER_GAP = 12.0  # px between the clusters of one owner
MARGIN = 8.0  # px around the whole drawing
ENGINES = ("auto", "dot", "layered")

Point = tuple[float, float]


def _t(v: float) -> int:
    """px -> whole tenths of a px. Body layouts are kept in tenths, so a translated copy of a
    cached body is exactly the original moved, and the output is rounded to 0.1 px for free."""
    return floor(v * 10.0 + 0.5)


# ------------------------------------------------------------------------------- public API


def compute_layout(
    graph: Graph,
    expanded: Collection[str] = (),
    *,
    direction: str = "TB",
    max_span: int = 4,
    dot_max_nodes: int = 2500,
    engine: str = "auto",
    cache: dict | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Layout:
    """Lay out the visible part of `graph` (see the module docstring).

    `cache` (optional) keeps sub-layouts between calls on the *same* graph: pass the same dict
    every time, and a fresh one for a new graph. `progress` (optional) is called with
    ``("dot", n_boxes)`` right before each dot run and ``("dot-done", n_boxes)`` right after it
    (the layout worker uses it to apply its time budget to dot only).
    """
    if direction not in ("TB", "LR"):
        raise ValueError(f"direction must be 'TB' or 'LR', not {direction!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    ctx = _Ctx(graph, direction, int(max_span), int(dot_max_nodes), engine, {} if cache is None else cache)
    ctx.progress = progress
    nodes: list[NodeBox] = []
    edges: list[EdgePath] = []
    clusters: list[ClusterBox] = []
    engines: set[str] = set()
    notes: list[str] = []
    with gc_paused():
        root, _ = ctx.layout(graph.root, expanded)
        m = _t(MARGIN)
        _flatten(root, "", m, m, 1, nodes, edges, clusters, engines, notes)
    if engines == {"dot", "layered"}:
        used = "dot+layered"
    elif engines:
        used = next(iter(engines))
    else:
        used = "layered" if engine == "layered" else "dot"
    return Layout(
        width=(root.w + 2 * m) / 10,
        height=(root.h + 2 * m) / 10,
        nodes=tuple(nodes),
        edges=tuple(edges),
        clusters=tuple(clusters),
        engine=used,
        notes=tuple(dict.fromkeys(notes)),
    )


def visible_count(graph: Graph, expanded: Collection[str]) -> int:
    """How many nodes are drawn (stub copies not counted; expanded owners not counted)."""
    memo: dict[tuple, int] = {}

    def count(body_id: str, rel: Iterable[str]) -> int:
        body = graph.bodies[body_id]
        local, inner = _split_rel(rel)
        total = len(body.nodes)
        if not local:
            return total
        for node in body.nodes:
            if node.id in local and _expandable(graph, node):
                total -= 1
                for i, ref in enumerate(node.subgraphs):
                    sub_rel = tuple(sorted(inner.get((node.id, i), ())))
                    key = (ref.body, sub_rel)
                    if key not in memo:
                        memo[key] = count(ref.body, sub_rel)
                    total += memo[key]
        return total

    return count(graph.root, expanded)


def expanded_to_depth(graph: Graph, depth: int) -> frozenset[str]:
    """Paths of every sub-graph owner nested fewer than `depth` levels deep (0: none)."""
    out: list[str] = []
    level = [(graph.root, "")]
    for _ in range(max(0, depth)):
        nxt = []
        for body_id, prefix in level:
            for node in graph.bodies[body_id].nodes:
                if _expandable(graph, node):
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
    skipped (a smaller or deeper one may still fit)."""
    count = len(graph.top.nodes)
    heap: list[tuple[int, int, int, str, Node]] = []
    seq = 0

    def push(body_id: str, prefix: str, depth: int) -> None:
        nonlocal seq
        for node in graph.bodies[body_id].nodes:
            if _expandable(graph, node):
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


# ------------------------------------------------------------------------------- internals


def _expandable(graph: Graph, node: Node) -> bool:
    return bool(node.subgraphs) and all(ref.body in graph.bodies for ref in node.subgraphs)


def _split_rel(rel: Iterable[str]) -> tuple[set[str], dict[tuple[str, int], list[str]]]:
    """Relative expanded paths -> (local owner ids, {(owner id, index): paths inside it})."""
    local: set[str] = set()
    inner: dict[tuple[str, int], list[str]] = {}
    for path in rel:
        head, sep, rest = path.partition("/")
        if not sep:
            local.add(path)
            continue
        owner, colon, index = head.partition(":")
        if colon and index.isdigit():
            inner.setdefault((owner, int(index)), []).append(rest)
    return local, inner


@dataclass(slots=True)
class _Cluster:
    path: str  # "<owner id>:<index>", relative to the body
    title: str
    x: int  # top-left, body coordinates, tenths of a px
    y: int
    w: int
    h: int
    child: _BodyLayout
    dx: int  # where the child's (0, 0) lands, body coordinates
    dy: int


@dataclass(slots=True)
class _BodyLayout:
    """One body laid out at the origin, in tenths of a px; paths are relative to the body."""

    w: int
    h: int
    nodes: list[tuple[str, int, int, int, int]]  # path, centre x, centre y, w, h
    pos: dict[str, tuple[int, int, int, int]]  # local id -> (cx, cy, w, h)
    edges: list[tuple[str, str, tuple[int, ...], bool, str]]  # points flattened: x0, y0, x1, y1, ...
    clusters: list[_Cluster]
    engines: frozenset[str]
    notes: tuple[str, ...]


def _flatten(
    bl: _BodyLayout,
    prefix: str,
    dx: float,
    dy: float,
    depth: int,
    nodes: list[NodeBox],
    edges: list[EdgePath],
    clusters: list[ClusterBox],
    engines: set[str],
    notes: list[str],
) -> None:
    engines.update(bl.engines)
    notes.extend(bl.notes)
    for path, x, y, w, h in bl.nodes:
        nodes.append(NodeBox(prefix + path, (x + dx) / 10, (y + dy) / 10, w / 10, h / 10))
    for src, dst, flat, routed, aval in bl.edges:
        it = iter(flat)
        pts = tuple([((px + dx) / 10, (py + dy) / 10) for px, py in zip(it, it)])
        edges.append(EdgePath(prefix + src, prefix + dst, pts, routed, aval))
    for c in bl.clusters:
        x, y = (c.x + dx) / 10, (c.y + dy) / 10
        clusters.append(ClusterBox(prefix + c.path, c.title, x, y, c.w / 10, c.h / 10, depth))
        _flatten(c.child, f"{prefix}{c.path}/", dx + c.dx, dy + c.dy, depth + 1, nodes, edges, clusters, engines, notes)


def _straight(a: Point, b: Point) -> list[Point]:
    (x0, y0), (x3, y3) = a, b
    return [a, (x0 + (x3 - x0) / 3, y0 + (y3 - y0) / 3), (x0 + 2 * (x3 - x0) / 3, y0 + 2 * (y3 - y0) / 3), b]


def _curve(a: Point, b: Point, lr: bool) -> list[Point]:
    """A smooth cubic leaving `a` downwards (rightwards for LR) and entering `b` from above
    (coordinates in tenths of a px)."""
    (x0, y0), (x3, y3) = a, b
    if lr:
        d = max(abs(x3 - x0) / 2, 120.0)
        return [a, (x0 + d, y0), (x3 - d, y3), b]
    d = max(abs(y3 - y0) / 2, 120.0)
    return [a, (x0, y0 + d), (x3, y3 - d), b]


def _out_anchor(box: tuple[float, float, float, float], lr: bool) -> Point:
    x, y, w, h = box
    return (x + w / 2, y) if lr else (x, y + h / 2)


def _in_anchor(box: tuple[float, float, float, float], lr: bool) -> Point:
    x, y, w, h = box
    return (x - w / 2, y) if lr else (x, y - h / 2)


def _int_param(node: Node, name: str) -> int | None:
    for key, value in node.params:
        if key == name:
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _port_maps(
    owner: Node, ref: SubgraphRef, sub: Body, n_ops: int, n_outs: int
) -> tuple[dict[int, str], dict[int, str]]:
    """{operand port: sub-graph input id}, {output port: sub-graph output id} (module docstring)."""
    ins = [n.id for n in sub.nodes if n.kind == "input"]
    outs = [n.id for n in sub.nodes if n.kind == "output"]
    ports: list[int] | None = None
    outputs_match = len(outs) == n_outs
    if owner.label == "while":
        is_cond = "cond" in (ref.param or ref.role)
        cn, bn = _int_param(owner, "cond_nconsts"), _int_param(owner, "body_nconsts")
        if cn is not None and bn is not None:
            carry = list(range(cn + bn, n_ops))
            ports = (list(range(cn)) if is_cond else list(range(cn, cn + bn))) + carry
        if is_cond:
            outputs_match = False
    elif owner.label == "cond" and len(ins) == n_ops - 1:
        ports = list(range(1, n_ops))
    if ports is None or len(ports) != len(ins):
        ports = list(range(n_ops)) if len(ins) == n_ops else []
    in_map = {p: ins[k] for k, p in enumerate(ports)}
    out_map = dict(enumerate(outs)) if outputs_match else {}
    return in_map, out_map


class _Ctx:
    def __init__(self, graph: Graph, direction: str, max_span: int, dot_max_nodes: int, engine: str, cache: dict):
        self.graph = graph
        self.lr = direction == "LR"
        self.max_span = max_span
        self.dot_max_nodes = dot_max_nodes
        self.engine = engine
        self.cache = cache
        self.opts = (direction, max_span, dot_max_nodes, engine)
        self._dot_ok: bool | None = None
        self.size_memo: dict[tuple, tuple[int, int]] = {}  # node_size depends on these fields only
        self.progress: Callable[[str, int], None] | None = None

    def dot_ok(self) -> bool:
        if self._dot_ok is None:
            self._dot_ok = dot_available()
        return self._dot_ok

    def layout(self, body_id: str, rel: Iterable[str]) -> tuple[_BodyLayout, tuple]:
        """The (cached) layout of `body_id` with `rel` expanded, and its normalised cache key."""
        body = self.graph.bodies[body_id]
        local, inner = _split_rel(rel)
        children: dict[str, list[tuple[int, SubgraphRef, _BodyLayout]]] = {}
        parts = []
        if local:
            for node in body.nodes:
                if node.id in local and _expandable(self.graph, node):
                    subs = []
                    for i, ref in enumerate(node.subgraphs):
                        child, child_key = self.layout(ref.body, inner.get((node.id, i), ()))
                        subs.append((i, ref, child))
                        parts.append((node.id, i, child_key))
                    children[node.id] = subs
        key = (self.opts, body_id, tuple(parts))
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = self._layout_body(body, children)
        return hit, key

    # -- one body

    def _compose(self, subs: list[tuple[int, SubgraphRef, _BodyLayout]]) -> tuple[int, int, list]:
        """Size of an expanded owner's box, and its clusters relative to the box's top-left
        (all in tenths of a px)."""
        pad, title_h, gap = _t(CLUSTER_PAD), _t(labels.TITLE_H), _t(CLUSTER_GAP)
        placed = []
        cursor = bw = bh = 0
        for i, ref, child in subs:
            title_w = _t(len(labels.ellipsize(ref.role)) * labels.CHAR_W + 2 * labels.PAD_X)
            cw = max(child.w + 2 * pad, title_w)
            ch = title_h + child.h + 2 * pad
            cx, cy = (0, cursor) if self.lr else (cursor, 0)
            placed.append((i, ref, child, cx, cy, cw, ch, (cw - child.w) // 2, title_h + pad))
            if self.lr:
                cursor += ch + gap
                bw, bh = max(bw, cw), cursor - gap
            else:
                cursor += cw + gap
                bw, bh = cursor - gap, max(bh, ch)
        return bw, bh, placed

    def _layout_body(self, body: Body, children: dict[str, list[tuple[int, SubgraphRef, _BodyLayout]]]) -> _BodyLayout:
        lr = self.lr
        nodes = body.nodes
        n_nodes = len(nodes)
        index = {n.id: k for k, n in enumerate(nodes)}
        notes: list[str] = []
        name = body.title or body.id

        # Boxes (tenths of a px): one per node (an expanded owner's is its clusters), then stubs.
        sizes: list[tuple[int, int]] = []
        composed: dict[str, tuple[int, int, list]] = {}
        memo = self.size_memo
        for n in nodes:
            if n.id in children:
                bw, bh, _ = composed[n.id] = self._compose(children[n.id])
                sizes.append((bw, bh))
                continue
            key = (n.kind, n.label, n.avals, n.params)
            size = memo.get(key)
            if size is None:
                w, h = labels.node_size(n)
                size = memo[key] = (_t(w), _t(h))
            sizes.append(size)
        paths = [n.id for n in nodes]

        edges = [e for e in body.edges if e.src in index and e.dst in index]
        if len(edges) != len(body.edges):
            notes.append(f"{len(body.edges) - len(edges)} edge(s) of {name} name unknown nodes and are not drawn")

        consumers: dict[str, dict[str, None]] = {}
        for e in edges:
            consumers.setdefault(e.src, {})[e.dst] = None
        stub_item: dict[tuple[str, str], int] = {}
        for n in nodes:
            uses = consumers.get(n.id)
            if uses and len(uses) > STUB_FANOUT and n.kind in STUB_KINDS and n.id not in children:
                size = sizes[index[n.id]]
                for k, v in enumerate(uses):
                    stub_item[(n.id, v)] = len(sizes)
                    sizes.append(size)
                    paths.append(f"{n.id}#{k}")

        item_of_edge: list[tuple[int, int]] = []
        pairs: dict[tuple[int, int], None] = {}
        for e in edges:
            a = stub_item.get((e.src, e.dst)) if stub_item else None
            pair = (index[e.src] if a is None else a, index[e.dst])
            item_of_edge.append(pair)
            if pair[0] != pair[1]:
                pairs[pair] = None
        pair_list = list(pairs)
        n_items = len(sizes)
        ranks = longest_path_ranks(n_items, pair_list)
        span = self.max_span
        short = [p for p in pair_list if ranks[p[1]] - ranks[p[0]] <= span]
        short_set = set(short)

        # Positions (px floats from the engines).
        use_dot = self.engine == "dot" or (self.engine == "auto" and n_items <= self.dot_max_nodes)
        if self.engine == "auto" and n_items > self.dot_max_nodes:
            notes.append(f"{name}: {n_items} nodes, above dot's limit of {self.dot_max_nodes}; used the layered layout")
        if use_dot and not self.dot_ok():
            use_dot = False
            notes.append("pygraphviz is not available; used the layered layout")
        px_sizes = [(w / 10, h / 10) for w, h in sizes]
        routes: dict[tuple[int, int], list[Point]] = {}
        centres: list[Point] = []
        if use_dot and n_items:
            try:
                if self.progress is not None:
                    self.progress("dot", n_items)
                try:
                    centres, routes = run_dot(px_sizes, short, direction="LR" if lr else "TB")
                finally:
                    if self.progress is not None:
                        self.progress("dot-done", n_items)
            except Exception as exc:  # a dot failure must not lose the drawing
                use_dot = False
                notes.append(f"dot failed on {name} ({type(exc).__name__}: {exc}); used the layered layout")
        if not use_dot:
            routes = {}
            tb_sizes = [(h, w) for w, h in px_sizes] if lr else px_sizes
            sweeps = 4 if n_items <= 20000 else 2  # past that, nobody reads it all; keep it fast
            xs, ys = layered_layout(
                tb_sizes, pair_list, ranks=ranks, order_edges=short, sweeps=sweeps, layer_gap=LAYER_GAP, node_gap=NODE_GAP
            )
            centres = list(zip(ys, xs)) if lr else list(zip(xs, ys))

        # To tenths, with the top-left corner of everything at (0, 0).
        if n_items:
            min_x = min(c[0] - s[0] / 2 for c, s in zip(centres, px_sizes))
            min_y = min(c[1] - s[1] / 2 for c, s in zip(centres, px_sizes))
            for pts in routes.values():
                for px, py in pts:
                    if px < min_x:
                        min_x = px
                    if py < min_y:
                        min_y = py
        else:
            min_x = min_y = 0.0
        boxes = [(_t(c[0] - min_x), _t(c[1] - min_y), s[0], s[1]) for c, s in zip(centres, sizes)]
        troutes = {k: [(_t(px - min_x), _t(py - min_y)) for px, py in pts] for k, pts in routes.items()}
        max_x = max((b[0] + (b[2] + 1) // 2 for b in boxes), default=0)
        max_y = max((b[1] + (b[3] + 1) // 2 for b in boxes), default=0)
        for pts in troutes.values():
            for px, py in pts:
                if px > max_x:
                    max_x = px
                if py > max_y:
                    max_y = py

        out_nodes = []
        pos: dict[str, tuple[int, int, int, int]] = {}
        clusters: list[_Cluster] = []
        for k, path in enumerate(paths):
            box = boxes[k]
            if k < n_nodes:
                pos[path] = box
            if path in composed and k < n_nodes:
                bw, bh, placed = composed[path]
                left, top = box[0] - bw // 2, box[1] - bh // 2
                for i, ref, child, cx, cy, cw, ch, ox, oy in placed:
                    x0, y0 = left + cx, top + cy
                    clusters.append(_Cluster(f"{path}:{i}", ref.role, x0, y0, cw, ch, child, x0 + ox, y0 + oy))
            else:
                out_nodes.append((path, box[0], box[1], box[2], box[3]))

        # Port maps of expanded owners.
        maps: dict[str, list[tuple[_Cluster, dict[int, str], dict[int, str]]]] = {}
        if children:
            by_owner: dict[str, list[_Cluster]] = {}
            for c in clusters:
                by_owner.setdefault(c.path.rpartition(":")[0], []).append(c)
            n_ops: dict[str, int] = {}
            n_outs: dict[str, int] = {}
            for e in edges:
                if e.dst in children:
                    n_ops[e.dst] = max(n_ops.get(e.dst, 0), e.dst_port + 1)
                if e.src in children:
                    n_outs[e.src] = max(n_outs.get(e.src, 0), e.src_port + 1)
            for owner_id, subs in children.items():
                owner = nodes[index[owner_id]]
                ops = max(len(owner.in_avals), n_ops.get(owner_id, 0))
                outs = max(len(owner.avals), n_outs.get(owner_id, 0))
                maps[owner_id] = [
                    (c, *_port_maps(owner, ref, self.graph.bodies[ref.body], ops, outs))
                    for c, (_, ref, _child) in zip(by_owner[owner_id], subs)
                ]

        def inner_box(c: _Cluster, local_id: str) -> tuple[int, int, int, int]:
            x, y, w, h = c.child.pos[local_id]
            return (x + c.dx, y + c.dy, w, h)

        def sources(e, item: int) -> list[tuple[str, Point, bool]]:
            if e.src in children:
                found = [
                    (f"{c.path}/{out_map[e.src_port]}", _out_anchor(inner_box(c, out_map[e.src_port]), lr), True)
                    for c, _, out_map in maps[e.src]
                    if e.src_port in out_map
                ]
                return found or [
                    (c.path, (c.x + c.w, c.y + c.h / 2) if lr else (c.x + c.w / 2, c.y + c.h), True)
                    for c, _, _ in maps[e.src]
                ]
            return [(paths[item], _out_anchor(boxes[item], lr), False)]

        def targets(e, item: int) -> list[tuple[str, Point, bool]]:
            if e.dst in children:
                found = [
                    (f"{c.path}/{in_map[e.dst_port]}", _in_anchor(inner_box(c, in_map[e.dst_port]), lr), True)
                    for c, in_map, _ in maps[e.dst]
                    if e.dst_port in in_map
                ]
                return found or [
                    (c.path, (c.x, c.y + c.h / 2) if lr else (c.x + c.w / 2, c.y), True) for c, _, _ in maps[e.dst]
                ]
            return [(paths[item], _in_anchor(boxes[item], lr), False)]

        out_edges = []
        plain = not children
        for e, pair in zip(edges, item_of_edge):
            a, b = pair
            route = troutes.get(pair)
            if plain and route is None:  # the common case, kept lean: a cubic between two boxes
                x0, y0, w0, h0 = boxes[a]
                x3, y3, w3, h3 = boxes[b]
                if lr:
                    x0 += w0 / 2
                    x3 -= w3 / 2
                    d = max(abs(x3 - x0) / 2, 120.0)
                    flat = (x0, y0, x0 + d, y0, x3 - d, y3, x3, y3)
                else:
                    y0 += h0 / 2
                    y3 -= h3 / 2
                    d = max(abs(y3 - y0) / 2, 120.0)
                    flat = (x0, y0, x0, y0 + d, x3, y3 - d, x3, y3)
                out_edges.append(
                    (paths[a], paths[b], tuple([floor(v + 0.5) for v in flat]), pair in short_set, e.aval)
                )
                continue
            if route is not None and (len(route) < 4 or len(route) % 3 != 1):
                route = None  # not a cubic chain: fall back to a straight cubic below
                straight = True
            else:
                straight = False
            is_short = pair in short_set
            if not children or (e.src not in children and e.dst not in children):
                ends = [(paths[a], _out_anchor(boxes[a], lr), False)], [(paths[b], _in_anchor(boxes[b], lr), False)]
            else:
                ends = sources(e, a), targets(e, b)
            for sp, sa, s_in in ends[0]:
                for dp, da, d_in in ends[1]:
                    if route is not None:
                        pts = route
                        if s_in:
                            pts = _straight(sa, pts[0]) + pts[1:]
                        if d_in:
                            pts = pts + _straight(pts[-1], da)[1:]
                    elif straight:
                        pts = _straight(sa, da)
                    else:
                        pts = _curve(sa, da, lr)
                    out_edges.append((sp, dp, tuple([floor(v + 0.5) for p in pts for v in p]), is_short, e.aval))

        engines = frozenset({"dot" if use_dot else "layered"}) if n_items else frozenset()
        return _BodyLayout(
            w=max_x,
            h=max_y,
            nodes=out_nodes,
            pos=pos,
            edges=out_edges,
            clusters=clusters,
            engines=engines,
            notes=tuple(notes),
        )
