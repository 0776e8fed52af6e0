"""The part of a big layout that the view will show, sent ahead of the whole (`LayoutClient`).

Expanding or collapsing a cluster keeps the view's scale and puts the toggled owner's top-left
corner back where it was on screen, so the layout process knows, once the layout is computed,
which rectangle of it the window will show first: the rectangle shown before, moved by as much
as the owner's top-left corner moved. Its boxes, edges and clusters make a small layout the
window draws at once; the whole one follows. At 72k boxes the whole layout costs the window
~0.3 s more (sending and decoding it, its scene model and tiles), all of it linear in the
drawing; the part is a few hundred boxes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxscope.layout.types import Tenths

PREVIEW_MIN = 2000  # boxes in a layout from which its shown part goes ahead
PREVIEW_SHARE = 0.25  # ... when that part holds at most this share of the boxes (else: just the whole)


@dataclass(frozen=True)
class Region:
    """What a view shows before a cluster is toggled: the rect (scene px) and where the toggled
    owner's top-left corner was in it (`owner` is its path)."""

    owner: str
    ax: float
    ay: float
    x0: float
    y0: float
    x1: float
    y1: float

    def to_json(self) -> list[Any]:
        return [self.owner, self.ax, self.ay, self.x0, self.y0, self.x1, self.y1]

    @classmethod
    def from_json(cls, data: Any) -> Region:
        """The Region `to_json` wrote; ValueError for anything else."""
        if not isinstance(data, list) or len(data) != 7 or not isinstance(data[0], str):
            raise ValueError(f"not a region: {str(data)[:80]}")
        owner, *numbers = data
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            raise ValueError(f"a region's coordinates must be numbers: {str(data)[:80]}")
        return cls(owner, *(float(v) for v in numbers))


def owner_top_left(t: Tenths, owner: str) -> tuple[int, int] | None:
    """Where `owner` is drawn in `t`, top-left corner in tenths: its box when collapsed, its
    clusters' union when expanded (as the view finds it); None if it is not drawn."""
    paths = t.nodes.paths
    try:
        i = paths.index(owner)
    except ValueError:
        pass
    else:
        cx, cy, w, h = t.nodes.boxes[i].tolist()
        return cx - w // 2, cy - h // 2
    prefix = owner + ":"
    corners = [(x, y) for path, _, x, y, _, _, _ in t.clusters if path.startswith(prefix) and path[len(prefix) :].isdigit()]
    if not corners:
        return None
    return min(x for x, _ in corners), min(y for _, y in corners)


def region_part(t: Tenths, region: Region) -> Tenths | None:
    """The part of `t` the view will show first: the boxes, edges and clusters that meet the
    region's rect moved with its owner; None when `t` is small or that part is not much smaller
    than the whole (nothing to gain)."""
    n = len(t.nodes)
    if n < PREVIEW_MIN:
        return None
    x0, y0, x1, y1 = (round(v * 10) for v in (region.x0, region.y0, region.x1, region.y1))
    corner = owner_top_left(t, region.owner)
    if corner is not None:
        dx, dy = corner[0] - round(region.ax * 10), corner[1] - round(region.ay * 10)
        x0, y0, x1, y1 = x0 + dx, y0 + dy, x1 + dx, y1 + dy
    cx, cy, w, h = t.nodes.boxes.T
    meets = (cx + (w + 1) // 2 >= x0) & (cx - w // 2 <= x1) & (cy + (h + 1) // 2 >= y0) & (cy - h // 2 <= y1)
    shown = np.flatnonzero(meets)
    if len(shown) > PREVIEW_SHARE * n:
        return None
    some, lo, hi = t.edges.bounds()
    edges = some[(hi[:, 0] >= x0) & (lo[:, 0] <= x1) & (hi[:, 1] >= y0) & (lo[:, 1] <= y1)]
    clusters = [c for c in t.clusters if c[2] <= x1 and c[2] + c[4] >= x0 and c[3] <= y1 and c[3] + c[5] >= y0]
    return Tenths(t.width, t.height, t.nodes.take(shown), t.edges.take(edges), clusters, t.engine, t.notes)
