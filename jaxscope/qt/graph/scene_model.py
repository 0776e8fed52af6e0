"""The scene model behind `QtGraphView`: every box and edge of a (graph, layout), bucketed by tile.

Built once per layout, plain data plus QRectFs: one `NodeRec` per drawn box (resolved to its
Node), the boxes bucketed into tiles of `TILE_W` × `TILE_H` scene px (the tiles double as the
hit-test grid, see `SceneModel.node_at`) and the edges into tiles twice that each way, a
`GridIndex` over the cluster title bands, and the edges bigger than a box tile kept apart. The
items in `scene_items` paint from it.
Some of what the items paint from is made on first use, and `SceneModel.warm` makes the part a
fit-all first paint needs ahead, on the thread that built the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from operator import attrgetter as _get
from operator import itemgetter
from typing import Any

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QColor

from jaxscope.layout import labels
from jaxscope.layout.edge_shape import LONG_H, LONG_W, STUB_LEN
from jaxscope.qt.graph.scene_index import EMPTY_I, BoxIndex, GridIndex, NodeRecs, Resolved
from jaxscope.render.styles import cluster_passes
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import ClusterBox, EdgePath, Layout
from jaxscope.schema.layout_tables import EdgeTable, NodeTable, node_paths

TILE_W, TILE_H = LONG_W, LONG_H  # an edge bigger than a tile is a long one, kept apart from the tiles
# Edge tiles draw nothing from afar (no blob), so bigger ones cost no picture: gpt-50k's 4.3k edge
# tiles became 1.8k, ~15 ms less of every scene build (one item each), pans and first zoom-1
# paints unchanged.
EDGE_TILE_W, EDGE_TILE_H = 2 * TILE_W, 2 * TILE_H


@dataclass(slots=True)
class SceneModel:
    """Everything the items draw and the view queries, built once per (graph, layout)."""

    graph: Graph
    layout: Layout
    nodes: NodeRecs
    clusters: list[ClusterBox]  # by depth, then layout order
    cluster_pass: list[str]  # each cluster's pass ("backward" is tinted; `render.styles.cluster_passes`)
    content: QRectF
    node_tiles: list[list[int]]  # record indices by tile, tiles in (column, row) order
    node_bounds: list[QRectF]  # each node tile's boxes' union
    tile_of: dict[tuple[int, int], int]  # (column, row) -> index into node_tiles
    oversized: list[int]  # boxes bigger than a tile (never from the real layouts; hit-tested apart)
    title_grid: GridIndex  # cluster title bands, keys index `clusters`
    edges: Sequence[EdgePath]  # layout.edges, as is
    edge_box: np.ndarray  # (edges, 4): x0, y0, x1, y1 of each edge; NaN: not drawn (a repeat, or no curve)
    edge_line: np.ndarray  # (edges, 4): each edge's first and last point (its far look); NaN without a curve
    edge_routed: list[bool]  # each edge's `routed`: what paints read, with no EdgePath made (an EdgeTable's)
    edge_tiles: list[tuple[list[int], QRectF]]  # edge indices by tile, with their bounds
    long_edges: list[int]  # the edges bigger than a tile, ascending (culled one by one, by `edge_box`)
    resolved: Resolved  # shared by the models of one graph
    _bases: list[str] | None = None
    _stripes: tuple[dict[str, str], dict[int, QColor]] | None = None
    _by_base: BoxIndex | None = None
    _by_path: dict[str, int] | None = None
    _ends: list[tuple[str, str]] | None = None
    _long_at: dict[str, list[int]] | None = None
    _families: list[str] | None = None
    _tile_families: list[str] | None = None
    _far_lines: dict[int, QLineF] = field(default_factory=dict)
    _long_cull: dict[bool, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _end_cull: tuple[np.ndarray, np.ndarray] | None = None

    def warm(self, long_lines: bool = True, lookups: bool = True) -> None:
        """Make what the first paint of the whole drawing asks for (the tiles' blob colours, the
        long edges' culling boxes and, with `long_lines`, their far lines) now, off the GUI thread:
        at gpt-50k those took 0.25 s of a 0.3 s first paint. Long edges drawn as their ends draw
        nothing far off, so their lines are not needed then. With `lookups`, also the base path map
        that carrying a selection, search or highlight over reads when the scene is set (~9 ms at
        mlp-50k's 72k boxes; without any, the first click makes it). Call it before the model is
        shared."""
        self.tile_families()
        if lookups:
            self.by_base.warm()
        ids, _ = self.long_edge_cull(False)
        if long_lines:
            self.far_lines(ids.tolist())

    def made(self) -> frozenset[str]:
        """Which of the parts made on first use exist now ("stripes", "by_base", "by_path",
        "edge_ends", "long_edges_at", "tile_families"): the view makes them off the GUI thread
        ahead, or not at all until asked (the per-edge map: 75 ms at 50k), and says which it did."""
        parts = {
            "stripes": self._stripes,
            "by_base": self._by_base,
            "by_path": self._by_path,
            "edge_ends": self._ends,
            "long_edges_at": self._long_at,
            "tile_families": self._tile_families,
        }
        return frozenset(name for name, part in parts.items() if part is not None)

    def far_lines_made(self) -> frozenset[int]:
        """The edges whose far lines (`far_lines`) are made already."""
        return frozenset(self._far_lines)

    @property
    def by_base(self) -> BoxIndex:
        """Base path -> record indices, the original's and its stub copies' (made on first use)."""
        if self._by_base is None:
            self._by_base = BoxIndex(self.bases)
        return self._by_base

    @property
    def bases(self) -> list[str]:
        """Each record's base path (made on first use)."""
        if self._bases is None:
            self._resolve()
        assert self._bases is not None  # `_resolve` made it
        return self._bases

    def _resolve(self) -> None:
        """`bases` and `families` from one lookup of every path, in C (each lookup of 72k fresh path
        strings, hashed for the first time, took ~15 ms)."""
        got = list(map(self.resolved.__getitem__, self.nodes.paths))
        self._bases, self._families = list(map(_BASE, got)), list(map(_FAM, got))

    def stripes(self, colours: dict[str, str]) -> dict[int, QColor]:
        """Record index -> its source-line stripe, for `colours` (base path -> ``#rrggbb``; a stub
        copy's path stands for its base), made once per colours dict: from `model_for`, off the GUI
        thread (at mlp-50k's 72k boxes, 27 ms of it even with every box looked up in C). The
        colours cover every located node of the graph, drawn or not, in a few palette entries."""
        got = self._stripes
        if got is None or got[0] is not colours:
            given = colours
            if any("#" in path for path in colours):
                colours = {path.partition("#")[0]: colour for path, colour in colours.items()}
            made: dict[str | None, QColor] = {colour: c for colour in set(colours.values()) if (c := QColor(colour)).isValid()}
            per_box = list(map(made.get, map(colours.get, self.bases)))  # None: no stripe
            stripes: dict[int, QColor] = {i: c for i, c in compress(enumerate(per_box), per_box) if c is not None}
            got = self._stripes = (given, stripes)
        return got[1]

    def box_colours(self, colours: dict[str, str]) -> dict[int, QColor]:
        """Record index -> the colour `colours` gives its base path (an overlay's fills)."""
        made = {c: QColor(c) for c in set(colours.values())}
        return {i: made[c] for i, base in enumerate(self.bases) if (c := colours.get(base)) is not None and made[c].isValid()}

    @property
    def by_path(self) -> dict[str, int]:
        """Exact box path -> record index (made on first use; paths are unique)."""
        if self._by_path is None:
            self._by_path = dict(zip(self.nodes.paths, range(len(self.nodes.paths))))  # in C
        return self._by_path

    @property
    def families(self) -> list[str]:
        """Each record's family (made on first use): tiles count them in C for their far colour."""
        if self._families is None:
            self._resolve()
        assert self._families is not None  # `_resolve` made it
        return self._families

    def tile_families(self) -> list[str]:
        """Each node tile's commonest family, ties to the one seen first (made on first use): the
        colour of the blob a tiny tile is drawn as, when no dataflow cone is highlighted. Counted
        in numpy (a Counter per tile: ~15 ms at mlp-50k's 2.4k tiles)."""
        if self._tile_families is None:
            self._tile_families = commonest_per_group(self.families, self.nodes.tile, len(self.node_tiles))
        return self._tile_families

    def far_lines(self, js: Iterable[int]) -> list[QLineF]:
        """Edges `js` as straight first-to-last-point lines (the far level of detail), each made once."""
        cache = self._far_lines
        js = list(js)
        new = [j for j in js if j not in cache]
        if new:
            for j, (x0, y0, x1, y1) in zip(new, self.edge_line[new].tolist()):
                cache[j] = QLineF(x0, y0, x1, y1)
        return [cache[j] for j in js]

    def long_edge_cull(self, quarters: bool) -> tuple[np.ndarray, np.ndarray]:
        """(edge index, box) rows for culling the long edges, made on first use: each edge's
        bounding box, or with `quarters` the control boxes of its curve's four quarters (one
        cubic: de Casteljau twice; any other path: its bounding box), which bound the parts of a
        long S-curve far more tightly. Arrays, so that a pan tests thousands of long edges in
        one numpy expression instead of one `QRectF.intersects` call per box (gpt_jit-50k's 4k
        long edges: most of a 20 ms pan)."""
        got = self._long_cull.get(quarters)
        if got is None:
            if quarters:
                cubic, c, ids = self._long_cubics()
            else:
                cubic, c, ids = EMPTY_I, np.zeros((0, 4, 2)), np.array(self.long_edges, dtype=np.int64)
            boxes = self.edge_box[ids].reshape(-1, 4)
            if len(cubic):
                parts = _quarter_points(c)  # (n, 4, 4, 2)
                qboxes = np.concatenate([parts.min(axis=2), parts.max(axis=2)], axis=2).reshape(-1, 4)
                ids = np.concatenate([ids, np.repeat(cubic, 4)])
                boxes = np.concatenate([boxes, qboxes])
            got = self._long_cull[quarters] = (ids, boxes)
        return got

    def _long_cubics(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The long edges drawn as one cubic, their control points (n, 4, 2), and the other long
        edges; an `EdgeTable`'s from its columns, no EdgePath made."""
        ids = np.array(self.long_edges, dtype=np.int64)
        edges = self.edges
        if isinstance(edges, EdgeTable):
            one = edges.point_counts()[ids] == 4
            return ids[one], edges.curves(ids[one]), ids[~one]
        one = np.array([len(edges[j].points) == 4 for j in ids.tolist()], dtype=bool)
        cubic = ids[one]
        return cubic, np.array([edges[j].points for j in cubic.tolist()], dtype=float).reshape(-1, 4, 2), ids[~one]

    def long_end_cull(self) -> tuple[np.ndarray, np.ndarray]:
        """`long_edge_cull`'s rows for the long edges drawn as their two ends (`partial_edge`): the
        control boxes of the two parts of a one-cubic edge, each edge's bounding box otherwise (and
        when it is too short to be cut). Culled by their curves' quarters, the long edges crossing
        the screen had their two ends made although neither is on it: mlp-50k zoomed in to 1 at 8
        places along the drawing made 9.3k ends, 214 this way."""
        got = self._end_cull
        if got is None:
            cubic, c, other = self._long_cubics()
            chord = np.hypot(*(c[:, 3] - c[:, 0]).T) if len(c) else np.zeros(0)
            cut = chord > 2.5 * STUB_LEN  # else drawn whole
            t = np.minimum(0.45, STUB_LEN / np.maximum(chord, 1e-6))[cut, None]
            parts = np.concatenate([_cubic_part(c[cut], t, head=True), _cubic_part(c[cut], 1.0 - t, head=False)])
            boxes = np.concatenate([parts.min(axis=1), parts.max(axis=1)], axis=1)
            rest = np.concatenate([other, cubic[~cut]])
            got = self._end_cull = (
                np.concatenate([np.tile(cubic[cut], 2), rest]),
                np.concatenate([boxes, self.edge_box[rest].reshape(-1, 4)]),
            )
        return got

    def edge_ends(self) -> list[tuple[str, str]]:
        """(src, dst) of every edge with stub suffixes removed (made on first use)."""
        if self._ends is None:
            edges = self.edges
            pairs = edges.ends() if isinstance(edges, EdgeTable) else [(e.src, e.dst) for e in edges]
            self._ends = [(src.partition("#")[0], dst.partition("#")[0]) for src, dst in pairs]
        return self._ends

    def long_edges_at(self) -> dict[str, list[int]]:
        """Base path -> the long edges that start or end there (made on first use): what a
        selection shows whole when long edges are drawn as their two ends."""
        if self._long_at is None:
            ends = self.edge_ends()
            self._long_at = {}
            for j in self.long_edges:
                src, dst = ends[j]
                self._long_at.setdefault(src, []).append(j)
                if dst != src:
                    self._long_at.setdefault(dst, []).append(j)
        return self._long_at

    def node_at(self, x: float, y: float, slop: float = 0.0) -> int | None:
        """The topmost box containing (x, y): the tiles double as the hit-test grid (a box is
        far smaller than a tile, so it lies within the 3×3 tiles around its centre's tile)."""
        kx, ky = int(x // TILE_W), int(y // TILE_H)
        best = -1
        nodes = self.nodes
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                t = self.tile_of.get((kx + dx, ky + dy))
                if t is None:
                    continue
                for i in self.node_tiles[t]:
                    if i > best and nodes[i].contains(x, y, slop):
                        best = i
        for i in self.oversized:
            if i > best and nodes[i].contains(x, y, slop):
                best = i
        return best if best >= 0 else None

    def cluster_title_at(self, scene_pos: QPointF) -> str | None:
        """The path of the cluster whose title band is at `scene_pos` (the deepest one)."""
        hits = [k for k in self.title_grid.near(scene_pos.x(), scene_pos.y()) if self.title_rect(self.clusters[k]).contains(scene_pos)]
        if not hits:
            return None
        return self.clusters[max(hits, key=lambda k: self.clusters[k].depth)].path

    def owner_rect(self, owner: str) -> QRectF | None:
        """Where an owner is drawn: its box when collapsed, its clusters' union when expanded."""
        if owner in self.by_path:
            return QRectF(self.nodes[self.by_path[owner]].rect)
        rect = QRectF()
        prefix = owner + ":"
        for c in self.clusters:
            if c.path.startswith(prefix) and c.path[len(prefix) :].isdigit():
                rect = rect.united(QRectF(c.x, c.y, c.w, c.h))
        return rect if not rect.isNull() else None

    def title_rect(self, c: ClusterBox) -> QRectF:
        return QRectF(c.x, c.y, c.w, min(labels.TITLE_H, c.h))


def commonest(counts: Counter[str]) -> str:
    """`counts.most_common(1)`'s key: ties go to the first counted."""
    return max(counts, key=counts.__getitem__)


def commonest_per_group(values: list[str], group: np.ndarray, groups: int) -> list[str]:
    """Per group 0..groups-1 (each one non-empty), the commonest of its `values`; ties go to the
    value whose first item in the group comes first, as `commonest` of a Counter filled in index
    order."""
    if not groups:
        return []
    names = list(dict.fromkeys(values))
    code = np.fromiter(map(dict(zip(names, range(len(names)))).__getitem__, values), dtype=np.int64, count=len(values))
    key = group.astype(np.int64) * len(names) + code
    counts = np.bincount(key, minlength=groups * len(names))
    order = np.argsort(key, kind="stable")  # each key's first item first
    first = np.full(groups * len(names), len(values), dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], key[order][1:] != key[order][:-1]])) if len(key) else EMPTY_I
    first[key[order][starts]] = order[starts]
    score = np.where(counts > 0, counts * (len(values) + 1) - first, -1).reshape(groups, len(names))
    return [names[k] for k in score.argmax(axis=1).tolist()]


def _cubic_part(c: np.ndarray, t: np.ndarray, head: bool) -> np.ndarray:
    """(n, 4, 2) cubics cut at `t` (n, 1) (de Casteljau): the control points of each one's part
    before the cut (`head`) or after it, (n, 4, 2), as `edge_shape.partial_edge` draws them."""
    p0, p1, p2, p3 = c[:, 0], c[:, 1], c[:, 2], c[:, 3]
    a, b, d = p0 + (p1 - p0) * t, p1 + (p2 - p1) * t, p2 + (p3 - p2) * t
    e, f = a + (b - a) * t, b + (d - b) * t
    m = e + (f - e) * t
    return np.stack([p0, a, e, m] if head else [m, f, d, p3], axis=1)


def _quarter_points(c: np.ndarray) -> np.ndarray:
    """(n, 4, 2) cubics -> (n, 4, 4, 2): the control points of each one's four quarters (de
    Casteljau at t = 1/2, and again on each half)."""
    p0, p1, p2, p3 = c[:, 0], c[:, 1], c[:, 2], c[:, 3]
    a, b, d = (p0 + p1) / 2, (p1 + p2) / 2, (p2 + p3) / 2
    e, f = (a + b) / 2, (b + d) / 2
    m = (e + f) / 2
    halves = np.stack([np.stack([p0, a, e, m], 1), np.stack([m, f, d, p3], 1)], 1)  # (n, 2, 4, 2)
    q0, q1, q2, q3 = halves[:, :, 0], halves[:, :, 1], halves[:, :, 2], halves[:, :, 3]
    a, b, d = (q0 + q1) / 2, (q1 + q2) / 2, (q2 + q3) / 2
    e, f = (a + b) / 2, (b + d) / 2
    m = (e + f) / 2
    quarters = np.stack([np.stack([q0, a, e, m], 2), np.stack([m, f, d, q3], 2)], 2)  # (n, 2, 2, 4, 2)
    return quarters.reshape(len(c), 4, 4, 2)


def build_model(graph: Graph, layout: Layout, resolved: Resolved | None = None) -> SceneModel:
    """Resolve every box to its Node and bucket boxes and edges into tiles; `resolved` (an
    earlier model's, used if of the same graph) saves resolving the paths it has seen."""
    if resolved is None or resolved.graph is not graph:
        resolved = Resolved(graph)
    nodes, node_tiles, node_bounds, tile_of, oversized = _build_nodes(layout, resolved)
    edge_box, edge_line, edge_routed, edge_tiles, long_edges = _build_edges(layout)
    clusters = sorted(layout.clusters, key=lambda c: c.depth)
    passes = cluster_passes(graph) if clusters else {}
    title_grid = GridIndex()
    for k, c in enumerate(clusters):
        title_grid.insert(k, c.x, c.y, c.x + c.w, c.y + min(labels.TITLE_H, c.h))
    return SceneModel(
        graph=graph,
        layout=layout,
        nodes=nodes,
        clusters=clusters,
        cluster_pass=[passes.get(c.path, "") for c in clusters],
        content=QRectF(0.0, 0.0, max(layout.width, 1.0), max(layout.height, 1.0)),
        node_tiles=node_tiles,
        node_bounds=node_bounds,
        tile_of=tile_of,
        oversized=oversized,
        title_grid=title_grid,
        edges=layout.edges,
        edge_box=edge_box,
        edge_line=edge_line,
        edge_routed=edge_routed,
        edge_tiles=edge_tiles,
        long_edges=long_edges,
        resolved=resolved,
    )


def _tiles(
    x0: np.ndarray,
    y0: np.ndarray,
    x1: np.ndarray,
    y1: np.ndarray,
    kx: np.ndarray,
    ky: np.ndarray,
    labels: np.ndarray | None = None,
) -> tuple[list[list[int]], list[QRectF], list[tuple[int, int]], np.ndarray]:
    """Items with extents (x0, y0)-(x1, y1) grouped by tile key (kx, ky), in C: each tile's item
    indices (ascending), or their `labels`, its items' union, its key, tiles in key order; and
    each item's tile."""
    n = len(kx)
    if n == 0:
        return [], [], [], np.zeros(0, dtype=np.int64)
    order = np.lexsort((ky, kx))  # stable: a tile's items stay in index order
    skx, sky = kx[order], ky[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(skx[1:], skx[:-1], out=new[1:])
    new[1:] |= sky[1:] != sky[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    tile = np.empty(n, dtype=np.int64)
    tile[order] = np.repeat(np.arange(len(starts)), ends - starts)
    ids = (order if labels is None else labels[order]).tolist()
    groups = [ids[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    bx0 = np.minimum.reduceat(x0[order], starts).tolist()
    by0 = np.minimum.reduceat(y0[order], starts).tolist()
    bx1 = np.maximum.reduceat(x1[order], starts).tolist()
    by1 = np.maximum.reduceat(y1[order], starts).tolist()
    bounds = [QRectF(a, b, c - a, d - b) for a, b, c, d in zip(bx0, by0, bx1, by1)]
    keys = list(zip(skx[starts].tolist(), sky[starts].tolist()))
    return groups, bounds, keys, tile


_BASE, _FAM = itemgetter(0), itemgetter(3)


def _build_nodes(
    layout: Layout, resolved: Resolved
) -> tuple[NodeRecs, list[list[int]], list[QRectF], dict[tuple[int, int], int], list[int]]:
    """The boxes' records (made on demand) and the tiles with their bounds (here, off the GUI
    thread: the tile items' own min/max over 50k boxes took 0.2 s of gpt-50k's scene build), in
    numpy."""
    boxes = layout.nodes
    if isinstance(boxes, NodeTable):  # read from the layout process: the columns, no NodeBox made
        cx, cy, w, h = np.ascontiguousarray(boxes.px().T)
    else:
        cx, cy, w, h = (np.fromiter(map(_get(a), boxes), dtype=float, count=len(boxes)) for a in "xywh")
    x0, y0 = cx - w / 2, cy - h / 2
    node_tiles, node_bounds, keys, tile = _tiles(x0, y0, x0 + w, y0 + h, cx // TILE_W, cy // TILE_H)
    nodes = NodeRecs(node_paths(boxes), x0, y0, w, h, tile, resolved, dict(layout.annotations) if layout.annotations else None)
    oversized = np.flatnonzero((w > TILE_W) | (h > TILE_H)).tolist()
    tile_of = {(int(kx), int(ky)): t for t, (kx, ky) in enumerate(keys)}
    return nodes, node_tiles, node_bounds, tile_of, oversized


SLICE = 8192  # items per numpy call that runs Python code or copies out (a few ms holding the GIL)
_HASH_MUL = np.array(
    [
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
        0x2545F4914F6CDD1D,
        0x94D049BB133111EB,
    ],
    dtype=np.uint64,
)


def _slices(items: Sequence[int]) -> list[Sequence[int]]:
    return [items[i : i + SLICE] for i in range(0, len(items), SLICE)]


def _cubics(edges: Sequence[EdgePath]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each edge's number of points; the indices of the one-cubic edges (the common case) and
    their control points, (n, 4, 2): an `EdgeTable`'s straight from its columns, otherwise
    gathered in C in slices (one C call holds the GIL, and the GUI thread waits)."""
    if isinstance(edges, EdgeTable):
        return (edges.point_counts(), *edges.cubics())
    seqs = [e.points for e in edges]
    lens = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    cubic = np.flatnonzero(lens == 4)
    coords = np.concatenate(
        [np.zeros((0, 4, 2))]
        + [
            np.fromiter(chain.from_iterable(chain.from_iterable(seqs[j] for j in part)), dtype=float, count=8 * len(part)).reshape(-1, 4, 2)
            for part in _slices(cubic.tolist())
        ]
    )
    return lens, cubic, coords


def _build_edges(
    layout: Layout,
) -> tuple[np.ndarray, np.ndarray, list[bool], list[tuple[list[int], QRectF]], list[int]]:
    """Each edge's bounding box, far line and `routed`, the edges bucketed into tiles by bbox
    centre, and apart from them the edges bigger than a tile. An edge drawn exactly like an earlier
    one (the same ends and curve: one of several values flowing between the same two boxes) is in
    neither: gpt_jit-50k's 200 forward-to-backward calls carry 6k residuals, which drew 6k long
    curves on 200 tracks."""
    edges = layout.edges
    m = len(edges)
    lens, cubic, coords = _cubics(edges)
    box = np.full((m, 4), np.nan)
    p0, p1, p2, p3 = coords[:, 0], coords[:, 1], coords[:, 2], coords[:, 3]  # 2.5x faster than reducing axis 1
    box[cubic, :2] = np.minimum(np.minimum(p0, p1), np.minimum(p2, p3))
    box[cubic, 2:] = np.maximum(np.maximum(p0, p1), np.maximum(p2, p3))
    line = np.full((m, 4), np.nan)
    line[cubic, :2] = coords[:, 0]
    line[cubic, 2:] = coords[:, 3]
    for j in np.flatnonzero((lens >= 2) & (lens != 4)).tolist():
        pts = edges[j].points
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        box[j] = (min(xs), min(ys), max(xs), max(ys))
        line[j] = (*pts[0], *pts[-1])
    table = edges if isinstance(edges, EdgeTable) else None
    routed_of = table.routed if table is not None else [e.routed for e in edges]
    drawable = lens >= 2
    # Only edges whose curve another edge may repeat can be drawn already: those whose coordinates'
    # bits hash alike (a sort of ints, in C), then their ends and exact points compared in Python.
    same = np.zeros(m, dtype=bool)
    if len(cubic) > 1:
        bits = coords.reshape(-1, 8).view(np.uint64)
        hashed = bits @ _HASH_MUL  # wraps around: a hash, exact equality is checked below
        _, inverse, counts = np.unique(hashed, return_inverse=True, return_counts=True)
        same[cubic[counts[inverse.ravel()] > 1]] = True
    same |= drawable & (lens != 4)
    drawn: set[tuple[Any, ...]] = set()
    for j in np.flatnonzero(same).tolist():
        if table is not None:  # its curve in tenths: no EdgePath made
            track: tuple[Any, ...] = (table.src[j], table.dst[j], table.routed[j], table.flat(j))
        else:
            e = edges[j]
            track = (e.src, e.dst, e.routed, e.points)
        if track in drawn:
            drawable[j] = False
        else:
            drawn.add(track)
    x0, y0, x1, y1 = box[:, 0], box[:, 1], box[:, 2], box[:, 3]
    with np.errstate(invalid="ignore"):
        big = drawable & ((x1 - x0 > LONG_W) | (y1 - y0 > LONG_H))
    tiled = np.flatnonzero(drawable & ~big)
    box[~drawable] = np.nan
    long_edges = np.flatnonzero(big).tolist()
    tx0, ty0, tx1, ty1 = x0[tiled], y0[tiled], x1[tiled], y1[tiled]
    groups, bounds, _, _ = _tiles(tx0, ty0, tx1, ty1, (tx0 + tx1) / 2 // EDGE_TILE_W, (ty0 + ty1) / 2 // EDGE_TILE_H, tiled)
    edge_tiles = list(zip(groups, bounds))
    return box, line, routed_of, edge_tiles, long_edges
