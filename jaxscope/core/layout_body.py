"""One body laid out and composed with its expanded sub-graphs, then flattened into a Layout.

The machinery behind `layout.compute_layout` (see its module docstring for the rules): the
expanded set relative to a body, the per-body layout in whole tenths of a px (boxes, stub copies,
ranks, clusters of expanded owners), and the flattening of nested body layouts into NodeBoxes,
EdgePaths and ClusterBoxes. Placing the boxes (dot or layered) is the caller's `place`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import floor
from operator import sub
from typing import TYPE_CHECKING

from jaxscope.core import labels
from jaxscope.core.layered import longest_path_ranks
from jaxscope.core.layout_edges import body_edges
from jaxscope.core.model import Body, ClusterBox, EdgePath, Graph, Node, NodeBox, SubgraphRef

if TYPE_CHECKING:
    from jaxscope.core.layout import _Ctx

STUB_FANOUT = 2  # input/const nodes with more distinct consumers than this are stubbed
STUB_KINDS = ("input", "const")
CLUSTER_PAD = 10.0  # px around a sub-graph's contents inside its cluster box
CLUSTER_GAP = 12.0  # px between the clusters of one owner

Children = dict[str, list[tuple[int, SubgraphRef, "BodyLayout"]]]  # owner id -> its laid-out sub-graphs


def tenths(v: float) -> int:
    """px -> whole tenths of a px. Body layouts are kept in tenths, so a translated copy of a
    cached body is exactly the original moved, and the output is rounded to 0.1 px for free."""
    return floor(v * 10.0 + 0.5)


def expandable(graph: Graph, node: Node) -> bool:
    """Whether `node` owns sub-graphs that are all in `graph` (so it can be expanded)."""
    return bool(node.subgraphs) and all(ref.body in graph.bodies for ref in node.subgraphs)


def split_rel(rel: Iterable[str]) -> tuple[set[str], dict[tuple[str, int], list[str]]]:
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
class Cluster:
    path: str  # "<owner id>:<index>", relative to the body
    title: str
    x: int  # top-left, body coordinates, tenths of a px
    y: int
    w: int
    h: int
    child: BodyLayout
    dx: int  # where the child's (0, 0) lands, body coordinates
    dy: int


@dataclass(slots=True)
class BodyLayout:
    """One body laid out at the origin, in tenths of a px; paths are relative to the body."""

    w: int
    h: int
    nodes: list[tuple[str, int, int, int, int]]  # path, centre x, centre y, w, h
    pos: dict[str, tuple[int, int, int, int]]  # local id -> (cx, cy, w, h)
    edges: list[tuple[str, str, tuple[int, ...], bool, str]]  # points flattened: x0, y0, x1, y1, ...
    clusters: list[Cluster]
    engines: frozenset[str]
    notes: tuple[str, ...]


def flatten(
    bl: BodyLayout,
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
    """Append `bl`'s boxes, edges and clusters, moved by (dx, dy) tenths and prefixed, to the lists."""
    engines.update(bl.engines)
    notes.extend(bl.notes)
    node_box, edge_path = NodeBox, EdgePath
    nodes.extend(
        [node_box(prefix + path, (x + dx) / 10, (y + dy) / 10, w / 10, h / 10) for path, x, y, w, h in bl.nodes]
    )
    add_edge = edges.append
    for src, dst, flat, routed, aval in bl.edges:
        if len(flat) == 8:  # one cubic, by far the commonest: unpacked, no iterator or zip
            x0, y0, x1, y1, x2, y2, x3, y3 = flat
            pts = (
                ((x0 + dx) / 10, (y0 + dy) / 10),
                ((x1 + dx) / 10, (y1 + dy) / 10),
                ((x2 + dx) / 10, (y2 + dy) / 10),
                ((x3 + dx) / 10, (y3 + dy) / 10),
            )
        else:
            it = iter(flat)
            pts = tuple([((px + dx) / 10, (py + dy) / 10) for px, py in zip(it, it)])
        add_edge(edge_path(prefix + src, prefix + dst, pts, routed, aval))
    for c in bl.clusters:
        x, y = (c.x + dx) / 10, (c.y + dy) / 10
        clusters.append(ClusterBox(prefix + c.path, c.title, x, y, c.w / 10, c.h / 10, depth))
        flatten(c.child, f"{prefix}{c.path}/", dx + c.dx, dy + c.dy, depth + 1, nodes, edges, clusters, engines, notes)


def compose(subs: list[tuple[int, SubgraphRef, BodyLayout]], lr: bool) -> tuple[int, int, list]:
    """Size of an expanded owner's box, and its clusters relative to the box's top-left
    (all in tenths of a px)."""
    pad, title_h, gap = tenths(CLUSTER_PAD), tenths(labels.TITLE_H), tenths(CLUSTER_GAP)
    placed = []
    cursor = bw = bh = 0
    for i, ref, child in subs:
        title_w = tenths(len(labels.ellipsize(ref.role)) * labels.CHAR_W + 2 * labels.PAD_X)
        cw = max(child.w + 2 * pad, title_w)
        ch = title_h + child.h + 2 * pad
        cx, cy = (0, cursor) if lr else (cursor, 0)
        placed.append((i, ref, child, cx, cy, cw, ch, (cw - child.w) // 2, title_h + pad))
        if lr:
            cursor += ch + gap
            bw, bh = max(bw, cw), cursor - gap
        else:
            cursor += cw + gap
            bw, bh = cursor - gap, max(bh, ch)
    return bw, bh, placed


def layout_body(ctx: _Ctx, body: Body, children: Children) -> BodyLayout:
    """Lay out `body` at the origin, its expanded owners (`children`) as boxes of clusters."""
    lr = ctx.lr
    nodes = body.nodes
    n_nodes = len(nodes)
    paths = [n.id for n in nodes]
    index = dict(zip(paths, range(n_nodes)))
    notes: list[str] = []
    name = body.title or body.id

    # Boxes (tenths of a px): one per node (an expanded owner's is its clusters), then stubs.
    sizes: list[tuple[int, int]] = []
    composed: dict[str, tuple[int, int, list]] = {}
    memo = ctx.size_memo
    for n in nodes:
        if n.id in children:
            bw, bh, _ = composed[n.id] = compose(children[n.id], lr)
            sizes.append((bw, bh))
            continue
        key = (n.kind, n.label, n.avals, n.params)
        size = memo.get(key)
        if size is None:
            w, h = labels.node_size(n)
            size = memo[key] = (tenths(w), tenths(h))
        sizes.append(size)

    edges = [e for e in body.edges if e.src in index and e.dst in index]
    if len(edges) != len(body.edges):
        notes.append(f"{len(body.edges) - len(edges)} edge(s) of {name} name unknown nodes and are not drawn")

    # Distinct consumers, in order of first edge, of the nodes that could be stubbed (only those).
    stubbable = {n.id for n in nodes if n.kind in STUB_KINDS and n.id not in children}
    consumers: dict[str, dict[str, None]] = {}
    if stubbable:
        for e in edges:
            src = e.src
            if src in stubbable:
                uses = consumers.get(src)
                if uses is None:
                    consumers[src] = {e.dst: None}
                else:
                    uses[e.dst] = None
    stub_item: dict[str, dict[str, int]] = {}  # stubbed node id -> {consumer id: its copy's item}
    ghosts: set[int] = set()  # stubbed originals: every use has its own copy, so the original is not drawn
    for n in nodes:
        uses = consumers.get(n.id)
        if uses and len(uses) > STUB_FANOUT and n.kind in STUB_KINDS and n.id not in children:
            size = sizes[index[n.id]]
            copies = stub_item[n.id] = {}
            for k, v in enumerate(uses):
                copies[v] = len(sizes)
                sizes.append(size)
                paths.append(f"{n.id}#{k}")
            ghosts.add(index[n.id])
            sizes[index[n.id]] = (10, 10)  # a 1 px placeholder keeps the engines' item numbering

    if stub_item:
        item_of_edge: list[tuple[int, int]] = []
        for e in edges:
            copies = stub_item.get(e.src)
            item = index[e.src] if copies is None else copies[e.dst]
            item_of_edge.append((item, index[e.dst]))
    else:
        item_of_edge = [(index[e.src], index[e.dst]) for e in edges]
    pair_list = list(dict.fromkeys([p for p in item_of_edge if p[0] != p[1]]))
    n_items = len(sizes)
    ranks = longest_path_ranks(n_items, pair_list)
    span = ctx.max_span
    short = [p for p in pair_list if ranks[p[1]] - ranks[p[0]] <= span]
    short_set = set(short)

    # Positions (px floats from the engines).
    px_sizes = [(w / 10, h / 10) for w, h in sizes]
    use_dot, cxs, cys, routes = ctx.place(name, px_sizes, short, pair_list, ranks, notes)

    # To tenths, with the top-left corner of everything at (0, 0).
    if n_items:
        min_x = min(map(sub, cxs, [s[0] / 2 for s in px_sizes]))
        min_y = min(map(sub, cys, [s[1] / 2 for s in px_sizes]))
        for pts in routes.values():
            for px, py in pts:
                if px < min_x:
                    min_x = px
                if py < min_y:
                    min_y = py
    else:
        min_x = min_y = 0.0
    # floor((c - min) * 10.0 + 0.5) is `tenths(c - min)`, inlined: two calls per box add up.
    bxs = [floor((cx - min_x) * 10.0 + 0.5) for cx in cxs]
    bys = [floor((cy - min_y) * 10.0 + 0.5) for cy in cys]
    boxes = [(x, y, w, h) for x, y, (w, h) in zip(bxs, bys, sizes)]
    troutes = {k: [(tenths(px - min_x), tenths(py - min_y)) for px, py in pts] for k, pts in routes.items()}
    max_x = max([x + (w + 1) // 2 for x, (w, _) in zip(bxs, sizes)], default=0)
    max_y = max([y + (h + 1) // 2 for y, (_, h) in zip(bys, sizes)], default=0)
    for pts in troutes.values():
        for px, py in pts:
            if px > max_x:
                max_x = px
            if py > max_y:
                max_y = py

    pos = dict(zip(paths[:n_nodes], boxes))
    clusters: list[Cluster] = []
    if composed or ghosts:
        out_nodes = []
        for k in range(n_nodes):
            path = paths[k]
            box = boxes[k]
            if path in composed:
                bw, bh, placed = composed[path]
                left, top = box[0] - bw // 2, box[1] - bh // 2
                for i, ref, child, cx, cy, cw, ch, ox, oy in placed:
                    x0, y0 = left + cx, top + cy
                    clusters.append(Cluster(f"{path}:{i}", ref.role, x0, y0, cw, ch, child, x0 + ox, y0 + oy))
            elif k not in ghosts:
                out_nodes.append((path, *box))
        out_nodes += [(path, *box) for path, box in zip(paths[n_nodes:], boxes[n_nodes:])]
    else:
        out_nodes = [(path, *box) for path, box in zip(paths, boxes)]

    out_edges = body_edges(
        ctx.graph, nodes, index, edges, item_of_edge, children, clusters, paths, boxes, troutes, short_set, lr
    )
    engines = frozenset({"dot" if use_dot else "layered"}) if n_items else frozenset()
    return BodyLayout(
        w=max_x,
        h=max_y,
        nodes=out_nodes,
        pos=pos,
        edges=out_edges,
        clusters=clusters,
        engines=engines,
        notes=tuple(notes),
    )
