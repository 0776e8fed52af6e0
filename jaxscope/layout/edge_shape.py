"""How an edge is drawn, the same in the window and in the exports: its arrowhead, and long
edges in their *partial* form.

An edge's curve ends at the base of its arrowhead (`arrowed`), where there is room for that.

An edge whose bounding box is wider than `LONG_W` or taller than `LONG_H` px is *long*. Where a
drawing has `PARTIAL_MIN` or more of them, each is drawn as its two ends: its first and last
`STUB_LEN` px, leaving its source and arriving (with the arrowhead) at its target. Hundreds of whole
curves across a drawing hid its boxes (an unrolled training step at 10k equations: a curtain of
forward-to-backward residuals over half of it, and a grey wedge when the whole graph is shown).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the CLI's argument parser: nothing heavy at import time
    from jaxscope.schema.layout import EdgePath, Layout

Point = tuple[float, float]

STUB_LEN = 48.0  # px of each end of a partially drawn long edge
PARTIAL_MIN = 64  # long edges in a drawing from which they are drawn as their two ends
LONG_W, LONG_H = 1200.0, 800.0  # an edge whose bounding box is wider or taller than this is long
LONG_EDGES = ("auto", "ends", "whole")  # how exports draw long edges: as the window does by default, or always so
ARROW_LEN, ARROW_W = 7.0, 6.0  # an arrowhead's length and the width of its base, px


def arrival_direction(pts: Sequence[Point]) -> Point | None:
    """The unit direction the path arrives in at its last point (from the nearest distinct point)."""
    tip = pts[-1]
    for p in reversed(pts[:-1]):
        dx, dy = tip[0] - p[0], tip[1] - p[1]
        n = math.hypot(dx, dy)
        if n > 1e-6:
            return dx / n, dy / n
    return None


def arrowed(pts: Sequence[Point]) -> tuple[list[Point], tuple[Point, Point, Point] | None]:
    """An edge's path (2+ points) as drawn: its points, ending at the arrowhead's base when the
    edge is longer than two arrowheads (a stroke ending at the tip would blunt it), and the
    arrowhead (tip, then the two corners of its base); None when the path has no direction."""
    pts = list(pts)
    tip = pts[-1]
    direction = arrival_direction(pts)
    if direction is None:
        return pts, None
    dx, dy = direction
    bx, by = tip[0] - dx * ARROW_LEN, tip[1] - dy * ARROW_LEN
    if math.dist(pts[0], tip) > 2 * ARROW_LEN:
        pts[-1] = (bx, by)
        if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:  # the last control point moves with it: same tangent
            c2 = pts[-2]
            pts[-2] = (c2[0] - dx * ARROW_LEN, c2[1] - dy * ARROW_LEN)
    nx, ny = -dy * ARROW_W / 2, dx * ARROW_W / 2
    return pts, (tip, (bx + nx, by + ny), (bx - nx, by - ny))


def check_long_edges(long_edges: str) -> str:
    """`long_edges` if it is one of `LONG_EDGES`; ValueError otherwise."""
    if long_edges not in LONG_EDGES:
        raise ValueError(f"long_edges must be one of {', '.join(LONG_EDGES)}, got {long_edges!r}")
    return long_edges


def draws_partial(long_edges: int, whole: bool) -> bool:
    """Whether a drawing with `long_edges` long edges draws them as their two ends (`whole`: they
    were asked for whole)."""
    return not whole and long_edges >= PARTIAL_MIN


def long_edge_ids(edges: Sequence[EdgePath]) -> list[int]:
    """The indices of the long edges, in order (an `EdgeTable`'s from its columns, in numpy)."""
    from jaxscope.schema.layout_tables import EdgeTable

    if isinstance(edges, EdgeTable):
        some, lo, hi = edges.bounds()
        span = (hi - lo) / 10.0  # tenths -> px
        long = (edges.point_counts()[some] >= 2) & ((span[:, 0] > LONG_W) | (span[:, 1] > LONG_H))
        ids: list[int] = some[long].tolist()
        return ids
    out = []
    for j, e in enumerate(edges):
        if len(e.points) >= 2:
            xs, ys = [p[0] for p in e.points], [p[1] for p in e.points]
            if max(xs) - min(xs) > LONG_W or max(ys) - min(ys) > LONG_H:
                out.append(j)
    return out


def partial_edges(layout: Layout, long_edges: str) -> frozenset[int]:
    """The edges an export draws as their two ends: with `long_edges` "auto" the long ones where
    the window would ("ends": always; "whole": none)."""
    if long_edges == "whole":
        return frozenset()
    ids = long_edge_ids(layout.edges)
    return frozenset(ids) if long_edges == "ends" or draws_partial(len(ids), False) else frozenset()


def partial_edge(pts: Sequence[Point], length: float = STUB_LEN) -> tuple[list[Point], list[Point]] | None:
    """The two ends of an edge drawn as a *partial edge*: the first part of its path, leaving the
    source, and the last part, arriving at the target, each about `length` px along the chord
    (exactly parts of the curve: cubics are cut, not approximated); None when the edge is too
    short for that to hide much (drawn whole)."""
    if len(pts) < 2 or math.dist(pts[0], pts[-1]) <= 2.5 * length:
        return None
    if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:
        first, last = pts[:4], pts[-4:]
        head = _split_cubic(first, _cut(first[0], first[3], length))[0]
        tail = _split_cubic(last, 1.0 - _cut(last[0], last[3], length))[1]
        return head, tail
    a, b = pts[0], pts[1]
    c, d = pts[-2], pts[-1]
    return [a, _lerp(a, b, _cut(a, b, length))], [_lerp(d, c, _cut(c, d, length)), d]


def _lerp(p: Point, q: Point, t: float) -> Point:
    return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t)


def _split_cubic(c: Sequence[Point], t: float) -> tuple[list[Point], list[Point]]:
    """One cubic cut at `t` (de Casteljau): the two cubics that draw exactly its two parts."""
    p0, p1, p2, p3 = c
    a, b, d = _lerp(p0, p1, t), _lerp(p1, p2, t), _lerp(p2, p3, t)
    e, f = _lerp(a, b, t), _lerp(b, d, t)
    m = _lerp(e, f, t)
    return [p0, a, e, m], [m, f, d, p3]


def _cut(p: Point, q: Point, length: float) -> float:
    """The parameter `length` px along the chord p-q (at most 0.45: the two ends never meet)."""
    return min(0.45, length / max(math.dist(p, q), 1e-6))
