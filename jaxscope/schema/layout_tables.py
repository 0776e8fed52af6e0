"""A layout's boxes and edges as columns: paths and other strings in lists, every coordinate
(integer tenths of a px) in numpy arrays. NodeBoxes and EdgePaths are made on demand.

The layout process computes a big body's plain edges in numpy (`layout.edges.body_edges`),
moves a sub-layout into place by adding to arrays (`concat`), and sends the coordinates as
bytes; the GUI process keeps them as they come and the scene model reads them without a NodeBox
or EdgePath made. As rows of tuples, a 50k-box drawing cost the layout process ~0.5 s per grown
layout (computing, translating, encoding) and the GUI ~0.2 s to read and gather again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

import numpy as np

from jaxscope.schema.codec import maker
from jaxscope.schema.layout import EdgePath, NodeBox

_EDGE, _NODE = maker(EdgePath), maker(NodeBox)
Row = tuple[str, str, Sequence[int], bool, str]  # src, dst, flat tenths (x0, y0, x1, y1, ...), routed, aval
NodeRow = tuple[str, int, int, int, int]  # path, centre x, centre y, w, h in tenths
_EMPTY_I = np.zeros(0, dtype=np.int64)
# Rows a table's iteration converts from its columns at a time: one `tolist` of a 77k-edge
# table's 620k coordinates held the GIL 30-60 ms of an export on a thread (the GUI's stall).
ITER_BLOCK = 8192
T = TypeVar("T")


class _Table(Sequence[T], Generic[T]):
    """A sequence whose items are made from columns on demand: one got by index is kept (a view
    asks for the same ones at every repaint), one got by iterating is not (an export walks them
    all once: each table's `__iter__` converts its columns once). Equal to the tuple of its items."""

    __slots__ = ("_made",)
    _made: list[T | None]

    def _make(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if isinstance(i, slice):
            return tuple([self[k] for k in range(*i.indices(len(self)))])
        item = self._made[i]
        if item is None:
            item = self._made[i] = self._make(i if i >= 0 else i + len(self))
        return item

    def made_rows(self) -> frozenset[int]:
        """The rows made and kept so far: reading a table or walking it keeps none."""
        return frozenset(i for i, row in enumerate(self._made) if row is not None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items)"


def _prefixed(prefix: str, strings: list[str]) -> list[str]:
    return [prefix + s for s in strings] if prefix else strings


class NodeTable(_Table[NodeBox]):
    """`Layout.nodes` as columns: the paths, and each box's centre x, centre y, w and h in tenths
    of a px, (n, 4)."""

    __slots__ = ("paths", "boxes")

    def __init__(self, paths: list[str], boxes: np.ndarray) -> None:
        if boxes.shape != (len(paths), 4):
            raise ValueError(f"{len(paths)} paths but boxes of shape {boxes.shape}")
        self.paths, self.boxes = paths, boxes
        self._made = [None] * len(paths)

    @classmethod
    def from_rows(cls, rows: Sequence[NodeRow]) -> NodeTable:
        boxes = np.fromiter((v for row in rows for v in row[1:]), dtype=np.int64, count=4 * len(rows)).reshape(-1, 4)
        return cls([row[0] for row in rows], boxes)

    @classmethod
    def concat(cls, parts: Sequence[tuple[NodeTable, str, int, int]]) -> NodeTable:
        """The parts' boxes one after another, each part's paths prefixed and moved by (dx, dy) tenths."""
        paths: list[str] = []
        boxes = [np.zeros((0, 4), dtype=np.int64)]
        for t, prefix, dx, dy in parts:
            paths += _prefixed(prefix, t.paths)
            boxes.append(t.boxes + np.array([dx, dy, 0, 0], dtype=np.int64) if dx or dy else t.boxes)
        return cls(paths, np.concatenate(boxes))

    def cut(self, a: int, b: int) -> NodeTable:
        return NodeTable(self.paths[a:b], self.boxes[a:b])

    def take(self, ids: np.ndarray) -> NodeTable:
        """Boxes `ids` (ascending) as a table of their own."""
        return NodeTable([self.paths[i] for i in ids.tolist()], self.boxes[ids])

    def __len__(self) -> int:
        return len(self.paths)

    def _make(self, i: int) -> NodeBox:
        return _node_box(self.paths[i], self.boxes[i].tolist())

    def __iter__(self) -> Iterator[NodeBox]:
        made, paths = self._made, self.paths
        for a in range(0, len(paths), ITER_BLOCK):  # the columns converted once, a block at a time
            b = a + ITER_BLOCK
            for item, path, box in zip(made[a:b], paths[a:b], self.boxes[a:b].tolist()):
                yield item if item is not None else _node_box(path, box)

    def px(self) -> np.ndarray:
        """The boxes in px (the very floats the NodeBoxes hold), (n, 4): centre x, centre y, w, h."""
        return self.boxes / 10


def _node_box(path: str, box: list[int]) -> NodeBox:
    """A box in tenths (centre x, centre y, w, h) -> its NodeBox in px."""
    x, y, w, h = box
    return _NODE(path, x / 10, y / 10, w / 10, h / 10)


def node_paths(nodes: Sequence[NodeBox]) -> list[str]:
    """Each box's path, no NodeBox made for a `NodeTable`."""
    return nodes.paths if isinstance(nodes, NodeTable) else [b.path for b in nodes]


def points_of(flat: Sequence[int]) -> tuple[tuple[float, float], ...]:
    """Flattened tenths -> an EdgePath's points in px."""
    if len(flat) == 8:
        x0, y0, x1, y1, x2, y2, x3, y3 = flat
        return ((x0 / 10, y0 / 10), (x1 / 10, y1 / 10), (x2 / 10, y2 / 10), (x3 / 10, y3 / 10))
    it = iter(flat)
    return tuple([(px / 10, py / 10) for px, py in zip(it, it)])


class EdgeTable(_Table[EdgePath]):
    """`Layout.edges` as columns; edge j's curve is ``pts[start[j]:start[j + 1]]`` (x, y pairs in
    tenths). Kept edges along the same curve share one points tuple."""

    __slots__ = ("src", "dst", "routed", "aval", "pts", "start", "_points")

    def __init__(self, src: list[str], dst: list[str], routed: list[bool], aval: list[str], pts: np.ndarray, start: np.ndarray) -> None:
        if not len(src) == len(dst) == len(routed) == len(aval) == len(start) - 1:
            raise ValueError(f"edge columns of different lengths: {len(src)}, {len(dst)}, {len(routed)}, {len(aval)}, {len(start) - 1}")
        self.src, self.dst, self.routed, self.aval = src, dst, routed, aval
        self.pts, self.start = pts, start
        self._made = [None] * len(src)
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
            src += _prefixed(prefix, t.src)
            dst += _prefixed(prefix, t.dst)
            routed += t.routed
            aval += t.aval
            p = t.pts
            if dx or dy:
                p = (p.reshape(-1, 2) + np.array([dx, dy], dtype=np.int64)).reshape(-1)
            pts.append(p)
            starts.append(t.start[:-1] + base)
            base += len(t.pts)
        start = np.append(np.concatenate(starts), base).astype(np.int64, copy=False)
        return cls(src, dst, routed, aval, np.concatenate(pts).astype(np.int64, copy=False), start)

    def cut(self, a: int, b: int) -> EdgeTable:
        """Edges a..b-1 as a table of their own."""
        s0, s1 = int(self.start[a]), int(self.start[b])
        return EdgeTable(self.src[a:b], self.dst[a:b], self.routed[a:b], self.aval[a:b], self.pts[s0:s1], self.start[a : b + 1] - s0)

    def take(self, ids: np.ndarray) -> EdgeTable:
        """Edges `ids` (ascending) as a table of their own."""
        js = ids.tolist()
        lens = np.diff(self.start)[ids]
        start = np.zeros(len(js) + 1, dtype=np.int64)
        np.cumsum(lens, out=start[1:])
        at = np.repeat(self.start[ids] - start[:-1], lens) + np.arange(int(start[-1]))  # each one's coordinates
        return EdgeTable(
            [self.src[j] for j in js],
            [self.dst[j] for j in js],
            [self.routed[j] for j in js],
            [self.aval[j] for j in js],
            self.pts[at],
            start,
        )

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges with at least one point, and their curves' bounding boxes' low and high
        corners, (n, 2) each, in tenths."""
        some = np.flatnonzero(np.diff(self.start) > 0)  # reduceat's segments run from one index to the next
        if not len(some):
            return some, np.zeros((0, 2), dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
        xy = self.pts.reshape(-1, 2)
        at = self.start[some] // 2
        return some, np.minimum.reduceat(xy, at), np.maximum.reduceat(xy, at)

    def __len__(self) -> int:
        return len(self.src)

    def flat(self, j: int) -> tuple[int, ...]:
        """Edge j's curve, flattened, in tenths of a px."""
        return tuple(self.pts[self.start[j] : self.start[j + 1]].tolist())

    def _make(self, j: int) -> EdgePath:
        flat = self.flat(j)
        points = self._points.get(flat)
        if points is None:
            points = self._points[flat] = points_of(flat)
        return _EDGE(self.src[j], self.dst[j], points, self.routed[j], self.aval[j])

    def __iter__(self) -> Iterator[EdgePath]:
        # The columns converted once (an export walks every edge), a block at a time, and the points
        # of an edge made here not shared through `_points`: that would keep a tuple per edge after the walk.
        edge, starts = _EDGE, self.start.tolist()
        for k in range(0, len(self), ITER_BLOCK):
            m = k + ITER_BLOCK
            start = starts[k : m + 1]
            first = start[0]
            pts = self.pts[first : start[-1]].tolist()
            columns = zip(self._made[k:m], self.src[k:m], self.dst[k:m], self.routed[k:m], self.aval[k:m], start, start[1:])
            for item, src, dst, routed, aval, a, b in columns:
                yield item if item is not None else edge(src, dst, points_of(pts[a - first : b - first]), routed, aval)

    def point_counts(self) -> np.ndarray:
        return np.diff(self.start) // 2

    def cubics(self) -> tuple[np.ndarray, np.ndarray]:
        """The indices of the edges drawn as one cubic (the common case) and their control points
        in px, (n, 4, 2), gathered in C."""
        one = self.point_counts() == 4
        if one.all():  # the layered engine's edges: the points as they are, no gather
            return np.arange(len(self)), self.pts.reshape(-1, 4, 2) / 10
        cubic = np.flatnonzero(one)
        return cubic, self.curves(cubic)

    def curves(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The control points of edges `ids`, each one cubic, in px, (n, 4, 2)."""
        return self.pts[self.start[np.asarray(ids, dtype=np.int64), None] + np.arange(8)].reshape(-1, 4, 2) / 10

    def ends(self) -> list[tuple[str, str]]:
        """Each edge's (src, dst) path, no EdgePath made."""
        return list(zip(self.src, self.dst))
