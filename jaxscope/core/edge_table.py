"""A layout's edges as columns: each edge's ends, `routed` and aval in lists, every curve's
coordinates (integer tenths of a px) in one numpy array. EdgePaths are made on demand.

The layout process computes a body's plain edges in numpy (`layout_edges.body_edges`), moves a
sub-layout into place by adding to one array (`concat`), and sends the coordinates as bytes;
the GUI process keeps them as they come and the scene model reads them without an EdgePath
made. As rows of tuples, 75k edges cost the layout process ~0.5 s per grown 50k drawing
(computing, translating, encoding) and the GUI ~0.2 s to read and gather again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

from jaxscope.core.model import EdgePath
from jaxscope.core.serialize import maker

_EDGE = maker(EdgePath)
Row = tuple[str, str, Sequence[int], bool, str]  # src, dst, flat tenths (x0, y0, x1, y1, ...), routed, aval
_EMPTY_I = np.zeros(0, dtype=np.int64)


def points_of(flat: Sequence[int]) -> tuple[tuple[float, float], ...]:
    """Flattened tenths -> an EdgePath's points in px."""
    if len(flat) == 8:
        x0, y0, x1, y1, x2, y2, x3, y3 = flat
        return ((x0 / 10, y0 / 10), (x1 / 10, y1 / 10), (x2 / 10, y2 / 10), (x3 / 10, y3 / 10))
    it = iter(flat)
    return tuple([(px / 10, py / 10) for px, py in zip(it, it)])


class EdgeTable(Sequence[EdgePath]):
    """`Layout.edges` as columns; edge j's curve is ``pts[start[j]:start[j + 1]]`` (x, y pairs in
    tenths). An EdgePath got by index is kept (a view asks for the same ones at every repaint);
    one got by iterating is not (an export walks them all once); edges along the same curve
    share one points tuple. Equal to the tuple of its EdgePaths."""

    __slots__ = ("src", "dst", "routed", "aval", "pts", "start", "_made", "_points")

    def __init__(
        self, src: list[str], dst: list[str], routed: list[bool], aval: list[str], pts: np.ndarray, start: np.ndarray
    ) -> None:
        if not len(src) == len(dst) == len(routed) == len(aval) == len(start) - 1:
            raise ValueError(f"edge columns of different lengths: {len(src)}, {len(dst)}, {len(routed)}, {len(aval)}, {len(start) - 1}")
        self.src, self.dst, self.routed, self.aval = src, dst, routed, aval
        self.pts, self.start = pts, start
        self._made: list[EdgePath | None] = [None] * len(src)
        self._points: dict[tuple[int, ...], tuple[tuple[float, float], ...]] = {}

    @classmethod
    def from_rows(cls, rows: Iterable[Row]) -> EdgeTable:
        """The table of (src, dst, flat, routed, aval) rows."""
        src: list[str] = []
        dst: list[str] = []
        routed: list[bool] = []
        aval: list[str] = []
        flats: list[Sequence[int]] = []
        for s, d, flat, r, a in rows:
            src.append(s)
            dst.append(d)
            flats.append(flat)
            routed.append(r)
            aval.append(a)
        lens = np.fromiter(map(len, flats), dtype=np.int64, count=len(flats))
        start = np.zeros(len(flats) + 1, dtype=np.int64)
        np.cumsum(lens, out=start[1:])
        pts = np.fromiter((v for flat in flats for v in flat), dtype=np.int64, count=int(start[-1]))
        return cls(src, dst, routed, aval, pts, start)

    @classmethod
    def concat(cls, parts: Sequence[tuple[EdgeTable, str, int, int]]) -> EdgeTable:
        """The parts' edges one after another, each part's paths prefixed and its curves moved by
        (dx, dy) tenths: how a body's sub-layouts are put in place."""
        src: list[str] = []
        dst: list[str] = []
        routed: list[bool] = []
        aval: list[str] = []
        pts: list[np.ndarray] = [_EMPTY_I]
        starts: list[np.ndarray] = [_EMPTY_I]
        base = 0
        for t, prefix, dx, dy in parts:
            if prefix:
                src += [prefix + s for s in t.src]
                dst += [prefix + d for d in t.dst]
            else:
                src += t.src
                dst += t.dst
            routed += t.routed
            aval += t.aval
            p = t.pts
            if dx or dy:
                p = (p.reshape(-1, 2) + np.array([dx, dy], dtype=np.int64)).reshape(-1)
            pts.append(p)
            starts.append(t.start[:-1] + base)
            base += len(t.pts)
        start = np.append(np.concatenate(starts), base).astype(np.int64)
        return cls(src, dst, routed, aval, np.concatenate(pts).astype(np.int64), start)

    def cut(self, a: int, b: int) -> EdgeTable:
        """Edges a..b-1 as a table of their own."""
        s0, s1 = int(self.start[a]), int(self.start[b])
        return EdgeTable(
            self.src[a:b], self.dst[a:b], self.routed[a:b], self.aval[a:b], self.pts[s0:s1], self.start[a : b + 1] - s0
        )

    def __len__(self) -> int:
        return len(self.src)

    @overload
    def __getitem__(self, j: int) -> EdgePath: ...
    @overload
    def __getitem__(self, j: slice) -> tuple[EdgePath, ...]: ...

    def __getitem__(self, j: int | slice) -> EdgePath | tuple[EdgePath, ...]:
        if isinstance(j, slice):
            return tuple([self[k] for k in range(*j.indices(len(self.src)))])
        e = self._made[j]
        if e is None:
            e = self._made[j] = self._make(j)
        return e

    def __iter__(self) -> Iterator[EdgePath]:
        made = self._made
        for j in range(len(self.src)):
            e = made[j]
            yield e if e is not None else self._make(j)

    def flat(self, j: int) -> tuple[int, ...]:
        """Edge j's curve, flattened, in tenths of a px."""
        return tuple(self.pts[self.start[j] : self.start[j + 1]].tolist())

    def _make(self, j: int) -> EdgePath:
        flat = self.flat(j)
        points = self._points.get(flat)
        if points is None:
            points = self._points[flat] = points_of(flat)
        return _EDGE(self.src[j], self.dst[j], points, self.routed[j], self.aval[j])

    def point_counts(self) -> np.ndarray:
        return np.diff(self.start) // 2

    def cubics(self) -> tuple[np.ndarray, np.ndarray]:
        """The indices of the edges drawn as one cubic (the common case) and their control points
        in px, (n, 4, 2), gathered in C."""
        cubic = np.flatnonzero(self.point_counts() == 4)
        coords = self.pts[self.start[cubic, None] + np.arange(8)].reshape(-1, 4, 2) / 10
        return cubic, coords

    def ends(self) -> list[tuple[str, str]]:
        """Each edge's (src, dst) path, no EdgePath made."""
        return list(zip(self.src, self.dst))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"EdgeTable({len(self.src)} edges)"
