"""One body laid out and composed with its expanded sub-graphs, then flattened into a Layout.

The machinery behind `layout.compute_layout` (see its module docstring for the rules): the
expanded set relative to a body, the per-body layout in whole tenths of a px (boxes, stub copies,
ranks, clusters of expanded owners), placed by an engine or grown from the body's base placement
(`grow`), and the flattening of nested body layouts into one node table, one edge table
(`layout_tables`) and cluster rows.
Placing the boxes (dot or layered) is the caller's `place`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress
from math import floor
from operator import sub
from typing import Any

import numpy as np

from jaxscope.layout import labels
from jaxscope.layout.edges import body_edges
from jaxscope.layout.layered import longest_path_ranks
from jaxscope.layout.types import BodyLayout, Children, Cluster, LayoutContext, Placed, Point, Tenths
from jaxscope.schema.graph import Body, Edge, SubgraphRef
from jaxscope.schema.layout import ClusterBox, Layout
from jaxscope.schema.layout_tables import EdgeTable, NodeTable

STUB_FANOUT = 2  # input/const nodes with more distinct consumers than this are stubbed
STUB_KINDS = ("input", "const")
CLUSTER_PAD = 10.0  # px around a sub-graph's contents inside its cluster box
CLUSTER_GAP = 12.0  # px between the clusters of one owner

# One sub-graph of an expanded owner, placed by `compose` (tenths, relative to the owner box's
# top-left): (index, ref, its layout, cluster x, y, w, h, the layout's offset x, y in the cluster).
ComposedSub = tuple[int, SubgraphRef, BodyLayout, int, int, int, int, int, int]


def tenths(v: float) -> int:
    """px -> whole tenths of a px. Body layouts are kept in tenths, so a translated copy of a
    cached body is exactly the original moved, and the output is rounded to 0.1 px for free."""
    return floor(v * 10.0 + 0.5)


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


def flatten(
    bl: BodyLayout,
    prefix: str,
    dx: int,
    dy: int,
    depth: int,
    nodes: list[tuple[NodeTable, str, int, int]],
    edges: list[tuple[EdgeTable, str, int, int]],
    clusters: list[tuple[str, str, int, int, int, int, int]],
    engines: set[str],
    notes: list[str],
) -> None:
    """Append `bl`'s clusters, moved by (dx, dy) tenths and prefixed, to the rows, and its boxes
    and edges with that move to `nodes` and `edges` (for one `concat` each)."""
    engines.update(bl.engines)
    notes.extend(bl.notes)
    nodes.append((bl.nodes, prefix, dx, dy))
    edges.append((bl.edges, prefix, dx, dy))
    for c in bl.clusters:
        clusters.append((prefix + c.path, c.title, c.x + dx, c.y + dy, c.w, c.h, depth))
        flatten(c.child, f"{prefix}{c.path}/", dx + c.dx, dy + c.dy, depth + 1, nodes, edges, clusters, engines, notes)


def cluster_boxes(rows: Iterable[Sequence[Any]]) -> tuple[ClusterBox, ...]:
    """(path, title, x, y, w, h, depth) rows in tenths -> ClusterBoxes."""
    return tuple([ClusterBox(p, title, x / 10, y / 10, w / 10, h / 10, d) for p, title, x, y, w, h, d in rows])


def to_layout(t: Tenths) -> Layout:
    """The Layout of `t` (px)."""
    return Layout(
        width=t.width / 10,
        height=t.height / 10,
        nodes=tuple(t.nodes),
        edges=tuple(t.edges),
        clusters=cluster_boxes(t.clusters),
        engine=t.engine,
        notes=t.notes,
    )


def from_layout(layout: Layout) -> Tenths:
    """`to_layout` undone, for a layout in whole tenths of a px (as `compute_layout` makes them)."""

    def tt(v: float) -> int:
        return floor(v * 10 + 0.5)

    return Tenths(
        tt(layout.width),
        tt(layout.height),
        NodeTable.from_rows([(n.path, tt(n.x), tt(n.y), tt(n.w), tt(n.h)) for n in layout.nodes]),
        EdgeTable.from_rows((e.src, e.dst, [tt(v) for p in e.points for v in p], e.routed, e.aval) for e in layout.edges),
        [(c.path, c.title, tt(c.x), tt(c.y), tt(c.w), tt(c.h), c.depth) for c in layout.clusters],
        layout.engine,
        layout.notes,
    )


def compose(subs: list[tuple[int, SubgraphRef, BodyLayout]], lr: bool) -> tuple[int, int, list[ComposedSub]]:
    """Size of an expanded owner's box, and its clusters relative to the box's top-left
    (all in tenths of a px)."""
    pad, title_h, gap = tenths(CLUSTER_PAD), tenths(labels.TITLE_H), tenths(CLUSTER_GAP)
    placed: list[ComposedSub] = []
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


GROW_MAX = 8  # owners changed from the base, at most, for a layout to grow from it (each costs O(boxes))


def grow(
    boxes: np.ndarray, troutes: dict[tuple[int, int], list[Point]], k: int, w2: int, h2: int
) -> tuple[np.ndarray, dict[tuple[int, int], list[Point]]]:
    """Item `k` resized to (w2, h2) and room made for it, nothing else rearranged: the user's
    mental map of the drawing survives an expand, and no engine runs. A dimension that grows keeps
    the box's top (left) and moves everything wholly below (right of) the old box by the growth;
    one that shrinks keeps the box centred where it was. Both maps are monotone, so boxes that did
    not overlap still do not, and none overlaps the resized box."""
    cx, cy, w, h = boxes[k].tolist()
    left, top = cx - w // 2, cy - h // 2
    right, bottom = left + w, top + h
    sx, sy = max(0, w2 - w), max(0, h2 - h)
    xs, ys, ws, hs = boxes.T
    shift_x = np.where(xs - ws // 2 >= right, sx, 0) if sx else np.zeros(len(boxes), dtype=np.int64)
    shift_y = np.where(ys - hs // 2 >= bottom, sy, 0) if sy else np.zeros(len(boxes), dtype=np.int64)
    out = boxes.copy()
    out[:, 0] += shift_x
    out[:, 1] += shift_y
    ncx, ncy = left + w2 // 2 if sx else cx, top + h2 // 2 if sy else cy
    out[k] = (ncx, ncy, w2, h2)
    if not troutes:
        return out, troutes
    nl, nt = ncx - w2 // 2, ncy - h2 // 2
    shifts = list(zip(shift_x.tolist(), shift_y.tolist()))  # per item, for the ends of dot's splines

    def room(pts: list[Point]) -> list[Point]:
        return [(px + sx if px >= right else px, py + sy if py >= bottom else py) for px, py in pts]

    def pin(new: list[Point], pts: list[Point], end: int, dx: float, dy: float) -> None:
        """Move a spline's end point and its control point by (dx, dy)."""
        if end == 0:
            new[:2] = [(px + dx, py + dy) for px, py in pts[:2]]
        else:
            new[-2:] = [(px + dx, py + dy) for px, py in pts[-2:]]

    moved = {}
    for (a, b), pts in troutes.items():
        # The middle of a spline makes room around the box like the boxes did; each end moves
        # with its own box (which need not be wholly past the box's sides), and an end on the
        # resized box to the same place on its new sides.
        new = room(pts) if sx or sy else list(pts)
        for end, item in ((0, a), (-1, b)):
            if item == k:
                px, py = pts[end]
                pin(new, pts, end, floor(nl + (px - left) * w2 / w + 0.5) - px, floor(nt + (py - top) * h2 / h + 0.5) - py)
            elif shifts[item] != (0, 0) or new[end] != pts[end]:
                pin(new, pts, end, *shifts[item])
        moved[a, b] = new
    return out, moved


Structure = tuple[
    list[str], dict[str, int], list[tuple[int, int]], list[Edge], list[tuple[int, int]], list[tuple[int, int]], set[int]
]  # paths, index, sizes, edges, item_of_edge, pair_list, ghosts


def structure(ctx: LayoutContext, body: Body, notes: list[str]) -> Structure:
    """What placing `body` starts from, whatever is expanded: items (nodes, then stub copies),
    their collapsed sizes, the edges as item pairs, and the pairs the engine sees."""
    nodes = body.nodes
    n_nodes = len(nodes)
    paths = [n.id for n in nodes]
    index = dict(zip(paths, range(n_nodes)))
    name = body.title or body.id
    sizes: list[tuple[int, int]] = []
    memo = ctx.size_memo
    on_boxes = ctx.annotations.get(body.id)
    for n in nodes:
        note = on_boxes.get(n.id, "") if on_boxes else ""
        key = (n.kind, n.label, n.avals, n.params, note)
        size = memo.get(key)
        if size is None:
            w, h = labels.node_size(n, note)
            size = memo[key] = (tenths(w), tenths(h))
        sizes.append(size)

    edges = [e for e in body.edges if e.src in index and e.dst in index]
    if len(edges) != len(body.edges):
        notes.append(f"{len(body.edges) - len(edges)} edge(s) of {name} name unknown nodes and are not drawn")

    # Distinct consumers, in order of first edge, of the nodes that could be stubbed (only those).
    # (A box of several values, a module group's "15 inputs", is never copied: a copy would carry some.)
    stubbable = {n.id for n in nodes if n.kind in STUB_KINDS and not n.subgraphs and len(n.avals) <= 1}
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
    # Stubbed originals that are not drawn: every use has its own copy. A sub-graph's input stays:
    # the edges from outside its cluster land on it.
    ghosts: set[int] = set()
    top = body.id == ctx.graph.root
    for n in nodes:
        uses = consumers.get(n.id)
        if uses and len(uses) > STUB_FANOUT and n.id in stubbable:
            size = sizes[index[n.id]]
            copies = stub_item[n.id] = {}
            for k, v in enumerate(uses):
                copies[v] = len(sizes)
                sizes.append(size)
                paths.append(f"{n.id}#{k}")
            if top or n.kind != "input":
                ghosts.add(index[n.id])
                sizes[index[n.id]] = (10, 10)  # a 1 px placeholder keeps the engines' item numbering

    if stub_item:
        item_of_edge: list[tuple[int, int]] = []
        for e in edges:
            stubs = stub_item.get(e.src)
            item = index[e.src] if stubs is None else stubs[e.dst]
            item_of_edge.append((item, index[e.dst]))
    else:
        item_of_edge = [(index[e.src], index[e.dst]) for e in edges]
    pair_list = list(dict.fromkeys([p for p in item_of_edge if p[0] != p[1]]))
    return paths, index, sizes, edges, item_of_edge, pair_list, ghosts


def place_fresh(ctx: LayoutContext, body: Body, composed: dict[str, tuple[int, int, list[ComposedSub]]]) -> Placed:
    """Every item of `body` placed by an engine (`ctx.place`), expanded owners at their clusters' size."""
    notes: list[str] = []
    paths, index, sizes, edges, item_of_edge, pair_list, ghosts = structure(ctx, body, notes)
    for owner_id, (bw, bh, _) in composed.items():
        sizes[index[owner_id]] = (bw, bh)
    n_items = len(sizes)
    ranks = longest_path_ranks(n_items, pair_list)
    span = ctx.max_span
    short = [p for p in pair_list if ranks[p[1]] - ranks[p[0]] <= span]

    # Positions (px floats from the engines).
    px_sizes = [(w / 10, h / 10) for w, h in sizes]
    use_dot, cxs, cys, routes = ctx.place(body.title or body.id, px_sizes, short, pair_list, ranks, notes)

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
    boxes = np.array([(x, y, w, h) for x, y, (w, h) in zip(bxs, bys, sizes)], dtype=np.int64).reshape(-1, 4)
    troutes: dict[tuple[int, int], list[Point]] = {
        k: [(tenths(px - min_x), tenths(py - min_y)) for px, py in pts] for k, pts in routes.items()
    }
    return Placed(
        paths,
        index,
        edges,
        item_of_edge,
        set(short),
        ghosts,
        sizes,
        boxes,
        troutes,
        use_dot,
        frozenset(composed),
        tuple(notes),
        {},
    )


def place_grown(ctx: LayoutContext, body: Body, composed: dict[str, tuple[int, int, list[ComposedSub]]], base: Placed) -> Placed | None:
    """`base` grown (`grow`) to the owners now expanded, or None when too much changed."""
    idx = base.index
    changed = [idx[i] for i in composed.keys() ^ base.composed]  # expanded or collapsed
    changed += [idx[i] for i in composed.keys() & base.composed if composed[i][:2] != base.sizes[idx[i]]]
    changed.sort()
    if len(changed) > GROW_MAX:
        return None
    sizes, boxes, troutes = list(base.sizes), base.boxes, base.troutes
    nodes = body.nodes
    for k in changed:
        owner = nodes[k]
        if owner.id in composed:
            w2, h2 = composed[owner.id][:2]
        else:
            note = ctx.annotations.get(body.id, {}).get(owner.id, "")
            key = (owner.kind, owner.label, owner.avals, owner.params, note)
            w2, h2 = ctx.size_memo.get(key) or tuple(tenths(v) for v in labels.node_size(owner, note))
        sizes[k] = (w2, h2)
        boxes, troutes = grow(boxes, troutes, k, w2, h2)
    return Placed(
        base.paths,
        base.index,
        base.edges,
        base.item_of_edge,
        base.short_set,
        base.ghosts,
        sizes,
        boxes,
        troutes,
        base.use_dot,
        frozenset(composed),
        base.notes,
        base.memo,
    )


def layout_body(ctx: LayoutContext, body: Body, children: Children, base: Placed | None = None) -> tuple[BodyLayout, Placed | None]:
    """Lay out `body` at the origin, its expanded owners (`children`) as boxes of clusters: by
    growing `base` (the body's last placement by an engine) when few owners differ from it, else
    by an engine. Also returns the engine's placement (the new base), None when grown."""
    lr = ctx.lr
    composed = {owner_id: compose(subs, lr) for owner_id, subs in children.items()}
    placed = place_grown(ctx, body, composed, base) if base is not None else None
    fresh = None
    if placed is None:
        placed = fresh = place_fresh(ctx, body, composed)
    paths, boxes, troutes, ghosts = placed.paths, placed.boxes, placed.troutes, placed.ghosts
    max_x = int((boxes[:, 0] + (boxes[:, 2] + 1) // 2).max()) if len(boxes) else 0
    max_y = int((boxes[:, 1] + (boxes[:, 3] + 1) // 2).max()) if len(boxes) else 0
    for pts in troutes.values():
        for px, py in pts:  # whole tenths, as the boxes
            if px > max_x:
                max_x = int(px)
            if py > max_y:
                max_y = int(py)

    clusters: list[Cluster] = []
    if composed or ghosts:
        for path, (bw, bh, placed_subs) in composed.items():
            bx, by = boxes[placed.index[path], :2].tolist()
            left, top = bx - bw // 2, by - bh // 2
            for i, ref, child, cx, cy, cw, ch, ox, oy in placed_subs:
                x0, y0 = left + cx, top + cy
                clusters.append(Cluster(f"{path}:{i}", ref.role, x0, y0, cw, ch, child, x0 + ox, y0 + oy))
        shown = np.ones(len(paths), dtype=bool)  # not the expanded owners (their clusters are) nor stubbed originals
        shown[[placed.index[path] for path in composed] + sorted(ghosts)] = False
        out_nodes = NodeTable(list(compress(paths, shown.tolist())), boxes[shown])
    else:
        out_nodes = NodeTable(paths, boxes)

    out_edges = body_edges(
        ctx.graph,
        body.nodes,
        placed.index,
        placed.edges,
        placed.item_of_edge,
        children,
        clusters,
        paths,
        boxes,
        troutes,
        placed.short_set,
        lr,
        placed.memo,
    )
    engines = frozenset({"dot" if placed.use_dot else "layered"}) if len(boxes) else frozenset()
    layout = BodyLayout(
        w=max_x,
        h=max_y,
        nodes=out_nodes,
        index=placed.index,
        boxes=boxes,
        edges=out_edges,
        clusters=clusters,
        engines=engines,
        notes=placed.notes,
    )
    return layout, fresh
