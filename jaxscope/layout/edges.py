"""Edge and anchor geometry of one body's layout (see `layout`'s module docstring).

Where an edge leaves and enters a box, the cubics drawn for unrouted edges, and how the ports of
an expanded owner map onto its sub-graphs' input and output nodes, so an edge crossing a cluster
boundary continues to the node inside. Coordinates are tenths of a px, as in `layout_body`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import floor
from typing import Any

import numpy as np

from jaxscope.layout.types import BodyLayout, Cluster, Point
from jaxscope.schema.graph import Body, Edge, Graph, Node, SubgraphRef
from jaxscope.schema.layout_tables import EdgeTable, Row
from jaxscope.schema.primitives import number, primitive


def straight_cubic(a: Point, b: Point) -> list[Point]:
    (x0, y0), (x3, y3) = a, b
    return [a, (x0 + (x3 - x0) / 3, y0 + (y3 - y0) / 3), (x0 + 2 * (x3 - x0) / 3, y0 + 2 * (y3 - y0) / 3), b]


def smooth_cubic(a: Point, b: Point, lr: bool) -> list[Point]:
    """A smooth cubic leaving `a` downwards (rightwards for LR) and entering `b` from above
    (coordinates in tenths of a px)."""
    (x0, y0), (x3, y3) = a, b
    if lr:
        d = max(abs(x3 - x0) / 2, 120.0)
        return [a, (x0 + d, y0), (x3 - d, y3), b]
    d = max(abs(y3 - y0) / 2, 120.0)
    return [a, (x0, y0 + d), (x3, y3 - d), b]


def smooth_flat(a: Point, b: Point, lr: bool) -> tuple[int, ...]:
    """`smooth_cubic(a, b, lr)`'s points rounded to whole tenths and flattened, without building
    the point list (the commonest edge into or out of a cluster)."""
    (x0, y0), (x3, y3) = a, b
    if lr:
        d = abs(x3 - x0) / 2
        if d < 120.0:
            d = 120.0
        ry0, ry3 = floor(y0 + 0.5), floor(y3 + 0.5)
        return (floor(x0 + 0.5), ry0, floor(x0 + d + 0.5), ry0, floor(x3 - d + 0.5), ry3, floor(x3 + 0.5), ry3)
    d = abs(y3 - y0) / 2
    if d < 120.0:
        d = 120.0
    rx0, rx3 = floor(x0 + 0.5), floor(x3 + 0.5)
    return (rx0, floor(y0 + 0.5), rx0, floor(y0 + d + 0.5), rx3, floor(y3 - d + 0.5), rx3, floor(y3 + 0.5))


def out_anchor(box: Sequence[float], lr: bool) -> Point:
    x, y, w, h = box
    return (x + w / 2, y) if lr else (x, y + h / 2)


def in_anchor(box: Sequence[float], lr: bool) -> Point:
    x, y, w, h = box
    return (x - w / 2, y) if lr else (x, y - h / 2)


def port_maps(owner: Node, ref: SubgraphRef, sub: Body, n_ops: int, n_outs: int) -> tuple[dict[int, str], dict[int, str]]:
    """{operand port: sub-graph input id}, {output port: sub-graph output id} (`layout`'s module docstring)."""
    ins = [n.id for n in sub.nodes if n.kind == "input"]
    outs = [n.id for n in sub.nodes if n.kind == "output"]
    ports: list[int] | None = None
    outputs_match = len(outs) == n_outs
    ports_of = primitive(owner.label).ports
    if ports_of == "while":
        is_cond = "cond" in (ref.param or ref.role)
        counts = number(owner.numbers, "cond_nconsts"), number(owner.numbers, "body_nconsts")
        if counts[0] and counts[1]:
            cn, bn = counts[0][0], counts[1][0]
            carry = list(range(cn + bn, n_ops))
            ports = (list(range(cn)) if is_cond else list(range(cn, cn + bn))) + carry
        if is_cond:
            outputs_match = False
    elif ports_of == "branches" and len(ins) == n_ops - 1:
        ports = list(range(1, n_ops))
    if ports is None or len(ports) != len(ins):
        ports = list(range(n_ops)) if len(ins) == n_ops else []
    in_map = {p: ins[k] for k, p in enumerate(ports)}
    out_map = dict(enumerate(outs)) if outputs_match else {}
    return in_map, out_map


def body_edges(
    graph: Graph,
    nodes: Sequence[Node],
    index: dict[str, int],
    edges: list[Edge],
    item_of_edge: list[tuple[int, int]],
    children: dict[str, list[tuple[int, SubgraphRef, BodyLayout]]],
    clusters: list[Cluster],
    paths: list[str],
    boxes: np.ndarray,
    troutes: dict[tuple[int, int], list[Point]],
    short_set: set[tuple[int, int]],
    lr: bool,
    memo: dict[str, Any],
) -> EdgeTable:
    """One body's edges in whole tenths: `item_of_edge` gives each edge's (source, target) box,
    `troutes` dot's splines by box pair, `short_set` the pairs dot saw, `memo` what is kept per
    body structure (see `_plain_edges`). An edge to or from an expanded owner continues into its
    clusters (`layout`'s docstring). `boxes` holds each item's (cx, cy, w, h), (n, 4)."""
    maps, special = _owner_ports(graph, nodes, index, edges, item_of_edge, children, clusters, memo)
    ends_of = _Ends(maps, children, paths, boxes, lr)
    box, sources, targets = ends_of.box, ends_of.sources, ends_of.targets

    plain = not children

    def rows_of(j: int) -> list[Row]:
        """Edge j's drawn edges, one per (source, target) end pair, in Python."""
        e, pair = edges[j], item_of_edge[j]
        route = troutes.get(pair) if troutes else None
        a, b = pair
        if route is None and (plain or (e.src not in children and e.dst not in children)):
            # The common case, kept lean: `smooth_cubic` between the anchors of two boxes.
            # Boxes are whole tenths, so the rounded anchors are integer expressions:
            # floor(x + w / 2 + 0.5) == x + (w + 1) // 2 and floor(x - w / 2 + 0.5) == x - w // 2.
            x0, y0, w0, h0 = box(a)
            x3, y3, w3, h3 = box(b)
            if lr:
                sx = x0 + w0 / 2
                ex = x3 - w3 / 2
                d = abs(ex - sx) / 2
                if d < 120.0:
                    d = 120.0
                flat = (x0 + (w0 + 1) // 2, y0, floor(sx + d + 0.5), y0, floor(ex - d + 0.5), y3, x3 - w3 // 2, y3)
            else:
                sy = y0 + h0 / 2
                ey = y3 - h3 / 2
                d = abs(ey - sy) / 2
                if d < 120.0:
                    d = 120.0
                flat = (x0, y0 + (h0 + 1) // 2, x0, floor(sy + d + 0.5), x3, floor(ey - d + 0.5), x3, y3 - h3 // 2)
            return [(paths[a], paths[b], flat, pair in short_set, e.aval)]
        if route is not None and (len(route) < 4 or len(route) % 3 != 1):
            route = None  # not a cubic chain: fall back to a straight cubic below
            straight = True
        else:
            straight = False
        is_short = pair in short_set
        if not children or (e.src not in children and e.dst not in children):
            ends = [(paths[a], out_anchor(box(a), lr), False)], [(paths[b], in_anchor(box(b), lr), False)]
        else:
            ends = sources(e, a), targets(e, b)
        out: list[Row] = []
        for sp, sa, s_in in ends[0]:
            for dp, da, d_in in ends[1]:
                if route is not None:
                    pts = route
                    if s_in:
                        pts = straight_cubic(sa, pts[0]) + pts[1:]
                    if d_in:
                        pts = pts + straight_cubic(pts[-1], da)[1:]
                elif straight:
                    pts = straight_cubic(sa, da)
                else:
                    out.append((sp, dp, smooth_flat(sa, da, lr), is_short, e.aval))
                    continue
                out.append((sp, dp, tuple([floor(v + 0.5) for p in pts for v in p]), is_short, e.aval))
        return out

    m = len(edges)
    if troutes or m < VECTOR_MIN:  # dot's bodies (routed by dot: ~1k boxes at most) and small ones
        return EdgeTable.from_rows([row for j in range(m) for row in rows_of(j)])
    table = _plain_edges(memo, paths, edges, item_of_edge, short_set, boxes, lr)
    if not special:
        return table
    parts: list[tuple[EdgeTable, str, int, int]] = []
    done = 0
    for j in special:  # an edge into or out of an expanded owner continues into its clusters: in Python
        parts.append((table.cut(done, j), "", 0, 0))
        parts.append((EdgeTable.from_rows(rows_of(j)), "", 0, 0))
        done = j + 1
    parts.append((table.cut(done, m), "", 0, 0))
    return EdgeTable.concat(parts)


Ports = dict[str, list[tuple[Cluster, dict[int, str], dict[int, str]]]]


def _owner_ports(
    graph: Graph,
    nodes: Sequence[Node],
    index: dict[str, int],
    edges: list[Edge],
    item_of_edge: list[tuple[int, int]],
    children: dict[str, list[tuple[int, SubgraphRef, BodyLayout]]],
    clusters: list[Cluster],
    memo: dict[str, Any],
) -> tuple[Ports, list[int]]:
    """Each expanded owner's clusters with their port maps (operand -> the box inside that takes
    it, output likewise), and the edges into or out of an expanded owner (an owner is never
    stubbed: those of its item)."""
    maps: Ports = {}
    if not children:
        return maps, []
    special = _touching(memo, item_of_edge, [index[owner_id] for owner_id in children])
    by_owner: dict[str, list[Cluster]] = {}
    for c in clusters:
        by_owner.setdefault(c.path.rpartition(":")[0], []).append(c)
    n_ops: dict[str, int] = {}
    n_outs: dict[str, int] = {}
    for e in map(edges.__getitem__, special):
        if e.dst in children:
            n_ops[e.dst] = max(n_ops.get(e.dst, 0), e.dst_port + 1)
        if e.src in children:
            n_outs[e.src] = max(n_outs.get(e.src, 0), e.src_port + 1)
    for owner_id, subs in children.items():
        owner = nodes[index[owner_id]]
        ops = max(len(owner.in_avals), n_ops.get(owner_id, 0))
        outs = max(len(owner.avals), n_outs.get(owner_id, 0))
        maps[owner_id] = [
            (c, *port_maps(owner, ref, graph.bodies[ref.body], ops, outs)) for c, (_, ref, _child) in zip(by_owner[owner_id], subs)
        ]
    return maps, special


class _Ends:
    """Where an edge starts and ends: at a box's anchor, or, for an expanded owner, at the box
    inside each of its clusters that its port maps to (the cluster's side when none does)."""

    def __init__(
        self, maps: Ports, children: dict[str, list[tuple[int, SubgraphRef, BodyLayout]]], paths: list[str], boxes: np.ndarray, lr: bool
    ) -> None:
        self.maps, self.children, self.paths, self.boxes, self.lr = maps, children, paths, boxes, lr

    def box(self, item: int) -> list[int]:
        xywh: list[int] = self.boxes[item].tolist()  # (cx, cy, w, h) in whole tenths
        return xywh

    @staticmethod
    def _inner(c: Cluster, local_id: str) -> tuple[int, int, int, int]:
        x, y, w, h = c.child.box(local_id)
        return (x + c.dx, y + c.dy, w, h)

    def sources(self, e: Edge, item: int) -> list[tuple[str, Point, bool]]:
        lr = self.lr
        if e.src in self.children:
            found = [
                (f"{c.path}/{out_map[e.src_port]}", out_anchor(self._inner(c, out_map[e.src_port]), lr), True)
                for c, _, out_map in self.maps[e.src]
                if e.src_port in out_map
            ]
            return found or [
                (c.path, (c.x + c.w, c.y + c.h / 2) if lr else (c.x + c.w / 2, c.y + c.h), True) for c, _, _ in self.maps[e.src]
            ]
        return [(self.paths[item], out_anchor(self.box(item), lr), False)]

    def targets(self, e: Edge, item: int) -> list[tuple[str, Point, bool]]:
        lr = self.lr
        if e.dst in self.children:
            found = [
                (f"{c.path}/{in_map[e.dst_port]}", in_anchor(self._inner(c, in_map[e.dst_port]), lr), True)
                for c, in_map, _ in self.maps[e.dst]
                if e.dst_port in in_map
            ]
            return found or [(c.path, (c.x, c.y + c.h / 2) if lr else (c.x + c.w / 2, c.y), True) for c, _, _ in self.maps[e.dst]]
        return [(self.paths[item], in_anchor(self.box(item), lr), False)]


VECTOR_MIN = 64  # edges in a body from which its plain edges are computed in numpy


def _pairs(memo: dict[str, Any], item_of_edge: list[tuple[int, int]]) -> np.ndarray:
    """Each edge's (source, target) item, (m, 2): made once per body structure."""
    pairs = memo.get("pairs")
    if pairs is None:
        pairs = memo["pairs"] = np.array(item_of_edge, dtype=np.int64).reshape(-1, 2)
    return pairs


def _touching(memo: dict[str, Any], item_of_edge: list[tuple[int, int]], items: list[int]) -> list[int]:
    """The edges into or out of `items`, ascending, in numpy: a walk of a 77k-edge body's edges
    in Python took ~10 ms of every expand in it."""
    pairs = _pairs(memo, item_of_edge)
    return np.flatnonzero(np.isin(pairs[:, 0], items) | np.isin(pairs[:, 1], items)).tolist()


def _plain_edges(
    memo: dict[str, Any],
    paths: list[str],
    edges: list[Edge],
    item_of_edge: list[tuple[int, int]],
    short_set: set[tuple[int, int]],
    box: np.ndarray,
    lr: bool,
) -> EdgeTable:
    """Every edge of a body drawn as `smooth_cubic` between its two boxes' anchors, in numpy
    (what `rows_of` computes for one, to the same integers). The columns that depend only on
    the body's structure are made once per structure and kept in `memo` (a grown layout reuses
    them: only the boxes moved)."""
    cols = memo.get("plain")
    if cols is None:
        pairs = _pairs(memo, item_of_edge)
        cols = memo["plain"] = (
            pairs[:, 0],
            pairs[:, 1],
            [paths[a] for a, _ in item_of_edge],
            [paths[b] for _, b in item_of_edge],
            [pair in short_set for pair in item_of_edge],
            [e.aval for e in edges],
        )
    a, b, src, dst, routed, aval = cols
    x0, y0, w0, h0 = box[a].T
    x3, y3, w3, h3 = box[b].T
    if lr:
        s, e = x0 + w0 / 2, x3 - w3 / 2
        d = np.maximum(np.abs(e - s) / 2, 120.0)
        columns = (x0 + (w0 + 1) // 2, y0, np.floor(s + d + 0.5), y0, np.floor(e - d + 0.5), y3, x3 - w3 // 2, y3)
    else:
        s, e = y0 + h0 / 2, y3 - h3 / 2
        d = np.maximum(np.abs(e - s) / 2, 120.0)
        columns = (x0, y0 + (h0 + 1) // 2, x0, np.floor(s + d + 0.5), x3, np.floor(e - d + 0.5), x3, y3 - h3 // 2)
    pts = np.stack([np.asarray(c, dtype=np.int64) for c in columns], axis=1).reshape(-1)
    return EdgeTable(src, dst, routed, aval, pts, np.arange(0, 8 * len(src) + 1, 8, dtype=np.int64))
