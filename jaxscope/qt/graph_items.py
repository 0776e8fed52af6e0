"""Batched scene items for `QtGraphView`: a few QGraphicsItems that each paint many nodes or edges.

Why batched: one QGraphicsItem per node and edge does not scale (perf-baseline §4: at 54k nodes a
17 s BSP build, 3.5 GB and 2 s fit-all repaints), while tiles of ~1200×800 scene px that paint
their contents in a few calls build in ~0.15 s and repaint fit-all in ~80 ms. So:

* nodes are grouped into `NodeTileItem`s by tile, edges into `EdgeTileItem`s by tile; an edge
  much bigger than a tile (a long, unrouted edge) goes to one `EdgeTileItem` that culls edge by
  edge instead, so it never stretches a tile's bounding rect over the whole drawing;
* clusters are one `ClusterItem` (boxes, under the edges) and one `ClusterTitleItem` (titles,
  over the edges, like the SVG exporter);
* every item culls by the exposed rect and picks a level of detail from the painter's scale:
  full (the SVG look: shapes and text), boxes (text would be under ~4 px: batched rects, curves
  without arrowheads) and far (fill-only rects, straight edges);
* everything is vector, in scene coordinates, with no pixmap caches: sharp on high-DPI screens.

Mutable view state (selection, search matches, highlight cone, source-line colours, palette) is
one shared `ViewState`; the view updates it and calls `update()` on the items concerned.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from jaxscope.core import labels
from jaxscope.core.model import ClusterBox, EdgePath, Graph, Layout, Node
from jaxscope.core.styles import Theme, family
from jaxscope.core.svg import NodeIndex, arrival_direction

TILE_W = 1200.0
TILE_H = 800.0
TEXT_LOD = 0.36  # below this scale an 11 px label would be under 4 px tall: no text
FAR_LOD = 0.12  # below this: fill-only rects and straight edges
TINY_PX = 8.0  # a tile smaller than this on screen is drawn as one rect (its edges not at all)
ARROW_LEN = 7.0
ARROW_W = 6.0
EDGE_W = 1.2
CARD_OFFSET = 3.0  # the second "card" behind an owner of collapsed sub-graphs
OUTLINE_W = 3.0  # selection outline, scene px (at least 2 device px)
MATCH_W = 2.0  # search-match outline
STRIPE_W = 5.0  # source-line colour stripe on a node's left edge
DIM_OPACITY = 0.25  # nodes and edges outside a highlighted dataflow cone
CELL = 256.0  # hit-test grid cell, scene px
_BASELINE = 0.36 * labels.FONT_SIZE  # from a line's vertical centre to its baseline (as svg.py)
_MARGIN = OUTLINE_W + CARD_OFFSET + 3.0  # how far a node's drawing may leave its box

Point = tuple[float, float]


# ---------------------------------------------------------------------------------- palette


def _colour(text: str, ink: str, opacity: float = 1.0) -> QColor:
    colour = QColor(ink if text == "currentColor" else text)
    if opacity < 1.0:
        colour.setAlphaF(opacity)
    return colour


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        max(a.alphaF(), b.alphaF()),
    )


@dataclass(slots=True)
class FamilyColours:
    fill: QColor
    border: QColor
    far: QColor  # fill at the far level of detail: pale fills vanish at that size


class Palette:
    """A Theme turned into QColors once, so paint() never parses colour strings."""

    def __init__(self, theme: Theme) -> None:
        ink = theme.ink
        self.theme = theme
        self.background: QColor | None = QColor(theme.background) if theme.background else None
        self.text = _colour(theme.text, ink)
        self.muted = _colour(theme.muted, ink, theme.muted_opacity)
        self.edge = _colour(theme.edge, ink, theme.edge_opacity)
        self.edge_unrouted = _colour(theme.edge_unrouted, ink, theme.unrouted_opacity)
        self.cluster_border = _colour(theme.cluster_border, ink)
        self.cluster_fills = [_colour(c, ink, theme.cluster_opacity) for c in theme.cluster_fills]
        self.title_text = _colour(theme.title_text, ink)
        self.opaque_clusters = theme.cluster_opacity >= 1.0
        dark = self.background is not None and self.background.lightnessF() < 0.5
        self.accent = QColor("#58a6ff" if dark else "#0969da")  # selection
        self.match = QColor("#e3b341" if dark else "#bf8700")  # search matches
        self.families: dict[str, FamilyColours] = {}
        for name, style in theme.families.items():
            fill = _colour(style.fill, ink, theme.fill_opacity)
            border = _colour(style.border, ink)
            self.families[name] = FamilyColours(fill, border, _mix(fill, border, 0.45))

    def family(self, name: str) -> FamilyColours:
        return self.families.get(name) or self.families["other"]

    def cluster_fill(self, depth: int) -> QColor:
        return self.cluster_fills[min(max(depth, 1), len(self.cluster_fills)) - 1]


def label_font() -> QFont:
    """The labels' monospace font at `labels.FONT_SIZE` px, unhinted so it scales linearly."""
    font = QFont()
    font.setFamilies([name.strip() for name in labels.FONT_FAMILY.split(",")])
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setPixelSize(round(labels.FONT_SIZE))
    font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return font


# ---------------------------------------------------------------------------------- model


@dataclass(slots=True)
class NodeRec:
    """One drawn box (a stub copy is its own record); `base` is the path without ``#k``."""

    path: str
    base: str
    node: Node | None
    x: float  # top-left corner and size, scene px
    y: float
    w: float
    h: float
    kind: str
    fam: str
    owner: bool  # a collapsed owner of sub-graphs (double-click expands it)
    tile: int = -1
    lines: list[str] | None = None  # computed on first full-detail paint
    _rect: QRectF | None = None

    @property
    def rect(self) -> QRectF:
        """The box as a QRectF, made on first use (most boxes of a big graph never need one)."""
        r = self._rect
        if r is None:
            r = self._rect = QRectF(self.x, self.y, self.w, self.h)
        return r

    def contains(self, x: float, y: float, slop: float = 0.0) -> bool:
        return self.x - slop <= x <= self.x + self.w + slop and self.y - slop <= y <= self.y + self.h + slop

    def text_lines(self) -> list[str]:
        if self.lines is None:
            self.lines = labels.node_lines(self.node) if self.node is not None else [labels.ellipsize(self.path)]
        return self.lines


class GridIndex:
    """Rects bucketed into square cells by their centre (a rect bigger than a cell goes into
    every cell it covers); a point query reads the 3×3 cells around the point."""

    def __init__(self, cell: float = CELL) -> None:
        self.cell = cell
        self.buckets: dict[tuple[int, int], list[int]] = {}

    def insert(self, key: int, x0: float, y0: float, x1: float, y1: float) -> None:
        c = self.cell
        buckets = self.buckets
        if x1 - x0 <= c and y1 - y0 <= c:
            cell = (int((x0 + x1) / 2 // c), int((y0 + y1) / 2 // c))
            bucket = buckets.get(cell)
            if bucket is None:
                buckets[cell] = [key]
            else:
                bucket.append(key)
            return
        for gx in range(int(x0 // c), int(x1 // c) + 1):
            for gy in range(int(y0 // c), int(y1 // c) + 1):
                buckets.setdefault((gx, gy), []).append(key)

    def near(self, x: float, y: float) -> set[int]:
        """Keys of every rect that may contain (x, y)."""
        gx, gy = int(x // self.cell), int(y // self.cell)
        out: set[int] = set()
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                out.update(self.buckets.get((gx + dx, gy + dy), ()))
        return out


@dataclass(slots=True)
class SceneModel:
    """Everything the items draw and the view queries, built once per (graph, layout)."""

    graph: Graph
    layout: Layout
    nodes: list[NodeRec]
    clusters: list[ClusterBox]  # by depth, then layout order
    content: QRectF
    by_base: dict[str, list[int]]  # base path -> record indices (original and stub copies)
    node_tiles: list[list[int]]  # record indices by tile, tiles in (column, row) order
    tile_of: dict[tuple[int, int], int]  # (column, row) -> index into node_tiles
    oversized: list[int]  # boxes bigger than a tile (never from the real layouts; hit-tested apart)
    title_grid: GridIndex  # cluster title bands, keys index `clusters`
    edges: Sequence[EdgePath]  # layout.edges, as is
    edge_boxes: list[tuple[float, float, float, float] | None]  # x0, y0, x1, y1; None: not drawable
    edge_tiles: list[tuple[list[int], QRectF]]  # edge indices by tile, with their bounds
    long_edges: dict[int, QRectF]  # edges bigger than a tile, with their bounds (culled one by one)
    _by_path: dict[str, int] | None = None
    _ends: list[tuple[str, str]] | None = None

    @property
    def by_path(self) -> dict[str, int]:
        """Exact box path -> record index (made on first use)."""
        if self._by_path is None:
            self._by_path = {}
            for i, rec in enumerate(self.nodes):
                self._by_path.setdefault(rec.path, i)
        return self._by_path

    def edge_ends(self) -> list[tuple[str, str]]:
        """(src, dst) of every edge with stub suffixes removed (made on first use)."""
        if self._ends is None:
            self._ends = [(e.src.partition("#")[0], e.dst.partition("#")[0]) for e in self.edges]
        return self._ends

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

    def title_rect(self, c: ClusterBox) -> QRectF:
        return QRectF(c.x, c.y, c.w, min(labels.TITLE_H, c.h))


class _Resolver:
    """Base path -> Node, caching the body of every path prefix (``e4:1/``): resolving 50k paths
    one by one from the root (`model.resolve`) would dominate building the scene."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.index = NodeIndex(graph)
        self.bodies: dict[str, dict[str, Node] | None] = {"": self._nodes(graph.root)}

    def _nodes(self, body_id: str) -> dict[str, Node]:
        return {n.id: n for n in self.graph.bodies[body_id].nodes}

    def get(self, base: str) -> Node | None:
        prefix, _, local = base.rpartition("/")
        nodes = self.bodies.get(prefix, False)
        if nodes is False:
            owner = self.index.get(prefix.rpartition(":")[0])
            try:
                ref = owner.subgraphs[int(prefix.rpartition(":")[2])] if owner is not None else None
                nodes = self._nodes(ref.body) if ref is not None else None
            except (IndexError, ValueError, KeyError):
                nodes = None
            self.bodies[prefix] = nodes
        return nodes.get(local) if nodes else None


def build_model(graph: Graph, layout: Layout) -> SceneModel:
    """Resolve every box to its Node and bucket boxes and edges into tiles."""
    nodes, by_base, node_tiles, tile_of, oversized = _build_nodes(graph, layout)
    edge_boxes, edge_tiles, long_edges = _build_edges(layout)
    clusters = sorted(layout.clusters, key=lambda c: c.depth)
    title_grid = GridIndex()
    for k, c in enumerate(clusters):
        title_grid.insert(k, c.x, c.y, c.x + c.w, c.y + min(labels.TITLE_H, c.h))
    return SceneModel(
        graph=graph,
        layout=layout,
        nodes=nodes,
        clusters=clusters,
        content=QRectF(0.0, 0.0, max(layout.width, 1.0), max(layout.height, 1.0)),
        by_base=by_base,
        node_tiles=node_tiles,
        tile_of=tile_of,
        oversized=oversized,
        title_grid=title_grid,
        edges=layout.edges,
        edge_boxes=edge_boxes,
        edge_tiles=edge_tiles,
        long_edges=long_edges,
    )


def _build_nodes(
    graph: Graph, layout: Layout
) -> tuple[list[NodeRec], dict[str, list[int]], list[list[int]], dict[tuple[int, int], int], list[int]]:
    """One NodeRec per box, base path -> records, and the tiles. The hot loop of a 50k-node
    build (~10 µs a node would be half a second), so it is kept flat."""
    get = _Resolver(graph).get
    nodes: list[NodeRec] = []
    by_base: dict[str, list[int]] = {}
    tiles: dict[tuple[int, int], list[int]] = {}
    oversized: list[int] = []
    bodies = graph.bodies
    for i, box in enumerate(layout.nodes):
        path = box.path
        base = path.partition("#")[0] if "#" in path else path
        node = get(base)
        if node is None:
            kind, fam, owner = "eqn", "other", False
        else:
            kind, fam = node.kind, family(node)
            owner = bool(node.subgraphs) and all(ref.body in bodies for ref in node.subgraphs)
        cx, cy, w, h = box.x, box.y, box.w, box.h
        nodes.append(NodeRec(path, base, node, cx - w / 2, cy - h / 2, w, h, kind, fam, owner))
        ids = by_base.get(base)
        if ids is None:
            by_base[base] = [i]
        else:
            ids.append(i)
        key = (int(cx // TILE_W), int(cy // TILE_H))
        tile = tiles.get(key)
        if tile is None:
            tiles[key] = [i]
        else:
            tile.append(i)
        if w > TILE_W or h > TILE_H:
            oversized.append(i)
    node_tiles: list[list[int]] = []
    tile_of: dict[tuple[int, int], int] = {}
    for t, key in enumerate(sorted(tiles)):
        ids = tiles[key]
        for i in ids:
            nodes[i].tile = t
        node_tiles.append(ids)
        tile_of[key] = t
    return nodes, by_base, node_tiles, tile_of, oversized


def _build_edges(
    layout: Layout,
) -> tuple[list[tuple[float, float, float, float] | None], list[tuple[list[int], QRectF]], dict[int, QRectF]]:
    """Each edge's bounding box, the edges bucketed into tiles by bbox centre, and apart from
    them the edges bigger than a tile."""
    boxes: list[tuple[float, float, float, float] | None] = []
    etiles: dict[tuple[int, int], list[int]] = {}
    ebounds: dict[tuple[int, int], list[float]] = {}
    long_edges: dict[int, QRectF] = {}
    for j, e in enumerate(layout.edges):
        pts = e.points
        if len(pts) == 4:  # the common case, one cubic; unrolled: min()/max() cost 6x more
            (ax, ay), (bx, by), (cx, cy), (dx, dy) = pts
            x0 = ax if ax < bx else bx
            x0 = cx if cx < x0 else x0
            x0 = dx if dx < x0 else x0
            x1 = ax if ax > bx else bx
            x1 = cx if cx > x1 else x1
            x1 = dx if dx > x1 else x1
            y0 = ay if ay < by else by
            y0 = cy if cy < y0 else y0
            y0 = dy if dy < y0 else y0
            y1 = ay if ay > by else by
            y1 = cy if cy > y1 else y1
            y1 = dy if dy > y1 else y1
        elif len(pts) >= 2:
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        else:
            boxes.append(None)
            continue
        boxes.append((x0, y0, x1, y1))
        if x1 - x0 > TILE_W or y1 - y0 > TILE_H:
            long_edges[j] = QRectF(x0, y0, x1 - x0, y1 - y0)
            continue
        key = (int((x0 + x1) / 2 // TILE_W), int((y0 + y1) / 2 // TILE_H))
        tile = etiles.get(key)
        if tile is None:
            etiles[key] = [j]
            ebounds[key] = [x0, y0, x1, y1]
        else:
            tile.append(j)
            b = ebounds[key]
            if x0 < b[0]:
                b[0] = x0
            if y0 < b[1]:
                b[1] = y0
            if x1 > b[2]:
                b[2] = x1
            if y1 > b[3]:
                b[3] = y1
    edge_tiles = []
    for key in sorted(etiles):
        x0, y0, x1, y1 = ebounds[key]
        edge_tiles.append((etiles[key], QRectF(x0, y0, x1 - x0, y1 - y0)))
    return boxes, edge_tiles, long_edges


class ViewState:
    """What the view changes and the items read while painting."""

    def __init__(self, palette: Palette) -> None:
        self.palette = palette
        self.font = label_font()
        self.metrics = QFontMetricsF(self.font)
        self.selected: set[int] = set()  # record indices
        self.matches: set[int] = set()
        self.stripes: dict[int, QColor] = {}
        self.cone_nodes: set[int] | None = None  # None: no highlight
        self.cone_edges: set[int] = set()
        self.version = 0  # bumped whenever the cone changes (batched draw lists depend on it)

    def set_cone(self, nodes: set[int] | None, edges: set[int]) -> None:
        self.cone_nodes = nodes
        self.cone_edges = edges
        self.version += 1


# ---------------------------------------------------------------------------------- geometry


def edge_shapes(pts: Sequence[Point]) -> tuple[QPainterPath, QPolygonF | None]:
    """The curve (ending at the arrow's base, as svg.py does) and the arrowhead triangle."""
    pts = list(pts)
    tip = pts[-1]
    direction = arrival_direction(pts)
    arrow = None
    if direction is not None:
        dx, dy = direction
        if math.dist(pts[0], tip) > 2 * ARROW_LEN:
            back = (dx * ARROW_LEN, dy * ARROW_LEN)
            pts[-1] = (tip[0] - back[0], tip[1] - back[1])
            if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:
                pts[-2] = (pts[-2][0] - back[0], pts[-2][1] - back[1])
        bx, by = tip[0] - dx * ARROW_LEN, tip[1] - dy * ARROW_LEN
        nx, ny = -dy * ARROW_W / 2, dx * ARROW_W / 2
        arrow = QPolygonF([QPointF(*tip), QPointF(bx + nx, by + ny), QPointF(bx - nx, by - ny)])
    path = QPainterPath(QPointF(*pts[0]))
    if (len(pts) - 1) % 3 == 0:
        for i in range(1, len(pts), 3):
            (a, b), (c, d), (e, f) = pts[i], pts[i + 1], pts[i + 2]
            path.cubicTo(a, b, c, d, e, f)
    else:
        for x, y in pts[1:]:
            path.lineTo(x, y)
    return path, arrow


def _scene_pen(colour: QColor, width: float, lod: float) -> QPen:
    """A pen `width` scene px wide, but never under one device px."""
    pen = QPen(colour, max(width, 1.0 / max(lod, 1e-6)))
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    return pen


def _dashed(pen: QPen, on: float, off: float) -> QPen:
    w = max(pen.widthF(), 1e-6)
    pen.setDashPattern([on / w, off / w])
    return pen


def lod_of(painter: QPainter) -> float:
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


# ---------------------------------------------------------------------------------- items


class _BatchItem(QGraphicsItem):
    """Shared plumbing: a fixed bounding rect and the extended style option (exposedRect)."""

    def __init__(self, model: SceneModel, state: ViewState, bounds: QRectF) -> None:
        super().__init__()
        self.model = model
        self.state = state
        self._bounds = bounds
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def boundingRect(self) -> QRectF:
        return self._bounds


class NodeTileItem(_BatchItem):
    """The boxes of one tile; `painted` counts the boxes the last paint() drew (for tests)."""

    def __init__(self, model: SceneModel, state: ViewState, indices: list[int]) -> None:
        recs = [model.nodes[i] for i in indices]
        x0, y0 = min(r.x for r in recs), min(r.y for r in recs)
        x1, y1 = max(r.x + r.w for r in recs), max(r.y + r.h for r in recs)
        self.extent = QRectF(x0, y0, x1 - x0, y1 - y0)  # the boxes' union, no margin
        super().__init__(model, state, self.extent.adjusted(-_MARGIN, -_MARGIN, _MARGIN, _MARGIN))
        self.indices = indices
        self._index_set: frozenset[int] | None = None
        self.setZValue(3.0)
        self.painted = 0
        self._groups: list[tuple[str, bool, list[QRectF]]] = []
        self._groups_version = -1
        self._tiny: tuple[str, bool] = ("other", True)
        self._tiny_version = -1

    @property
    def index_set(self) -> frozenset[int]:
        if self._index_set is None:
            self._index_set = frozenset(self.indices)
        return self._index_set

    def groups(self) -> list[tuple[str, bool, list[QRectF]]]:
        """Rects by (family, dimmed), for the batched levels of detail; rebuilt when the cone changes."""
        if self._groups_version != self.state.version:
            cone = self.state.cone_nodes
            by: dict[tuple[str, bool], list[QRectF]] = {}
            nodes = self.model.nodes
            for i in self.indices:
                rec = nodes[i]
                by.setdefault((rec.fam, cone is not None and i not in cone), []).append(rec.rect)
            # dimmed first, so in-cone boxes are drawn over them
            self._groups = [(fam, dim, rects) for (fam, dim), rects in sorted(by.items(), key=lambda kv: not kv[0][1])]
            self._groups_version = self.state.version
        return self._groups

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        if max(self.extent.width(), self.extent.height()) * lod < TINY_PX:
            self._paint_tiny(painter, lod)
        elif lod < TEXT_LOD:
            self._paint_batched(painter, lod)
        else:
            self._paint_full(painter, option.exposedRect, lod)

    # -- the whole tile is a few device px: one rect in its commonest family's colour

    def _paint_tiny(self, painter: QPainter, lod: float) -> None:
        st = self.state
        if self._tiny_version != st.version:
            cone, nodes = st.cone_nodes, self.model.nodes
            lit = Counter(nodes[i].fam for i in self.indices if cone is None or i in cone)
            counts = lit or Counter(nodes[i].fam for i in self.indices)
            self._tiny = (counts.most_common(1)[0][0], bool(lit))
            self._tiny_version = st.version
        fam, lit_ = self._tiny
        painter.setOpacity(1.0 if lit_ else DIM_OPACITY)
        painter.fillRect(self.extent, st.palette.family(fam).far)
        painter.setOpacity(1.0)
        self.painted = len(self.indices)
        self._outlines(painter, lod, True)

    # -- batched (no text)

    def _paint_batched(self, painter: QPainter, lod: float) -> None:
        st, pal = self.state, self.state.palette
        far = lod < FAR_LOD
        count = 0
        for fam, dim, rects in self.groups():
            colours = pal.family(fam)
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            if far:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colours.far)
            else:
                painter.setPen(QPen(colours.border, 0))
                painter.setBrush(colours.fill)
            painter.drawRects(rects)
            count += len(rects)
        painter.setOpacity(1.0)
        self.painted = count
        nodes = self.model.nodes
        if st.stripes and not far:
            for i in self.index_set.intersection(st.stripes):
                r = nodes[i].rect
                painter.fillRect(QRectF(r.left(), r.top(), STRIPE_W, r.height()), st.stripes[i])
        self._outlines(painter, lod, far)

    def _outlines(self, painter: QPainter, lod: float, far: bool) -> None:
        st, pal, nodes = self.state, self.state.palette, self.model.nodes
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for ids, colour, width in ((st.matches, pal.match, MATCH_W), (st.selected, pal.accent, OUTLINE_W)):
            mine = self.index_set.intersection(ids)
            if not mine:
                continue
            pad = width / 2 + 1.0
            if far:  # the selection grows to a dot you can find; matches (maybe thousands) do not
                pad = max(pad, 2.0 / max(lod, 1e-6)) if ids is st.selected else 0.0
            rects = [nodes[i].rect.adjusted(-pad, -pad, pad, pad) for i in sorted(mine)]
            if far:
                pen = QPen(colour, 2.0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.setBrush(colour)
                painter.drawRects(rects)
                painter.setBrush(Qt.BrushStyle.NoBrush)
            else:
                painter.setPen(_scene_pen(colour, width, lod / 2))
                painter.drawRects(rects)

    # -- full detail

    def _paint_full(self, painter: QPainter, exposed: QRectF, lod: float) -> None:
        st, pal, nodes = self.state, self.state.palette, self.model.nodes
        cone = st.cone_nodes
        area = exposed.adjusted(-_MARGIN, -_MARGIN, _MARGIN, _MARGIN)
        painter.setFont(st.font)
        metrics = st.metrics
        opacity = 1.0
        count = 0
        outlined: list[int] = []
        for i in self.indices:
            rec = nodes[i]
            r = rec.rect
            if not r.intersects(area):
                continue
            count += 1
            want = DIM_OPACITY if cone is not None and i not in cone else 1.0
            if want != opacity:
                painter.setOpacity(want)
                opacity = want
            colours = pal.family(rec.fam)
            stripe = st.stripes.get(i)
            self._shape(painter, rec, colours, stripe)
            lines = rec.text_lines()
            top = r.center().y() - len(lines) * labels.LINE_H / 2
            cx = r.center().x()
            for k, line in enumerate(lines):
                muted = k > 0 or rec.kind == "literal"
                painter.setPen(pal.muted if muted else pal.text)
                y = top + (k + 0.5) * labels.LINE_H + _BASELINE
                painter.drawText(QPointF(cx - metrics.horizontalAdvance(line) / 2, y), line)
            if i in st.matches or i in st.selected:
                outlined.append(i)
        if opacity != 1.0:
            painter.setOpacity(1.0)
        for i in outlined:  # after every box, so a neighbour never covers an outline
            self._outline(painter, nodes[i], i in st.selected, lod)
        self.painted = count

    def _shape(self, painter: QPainter, rec: NodeRec, colours: FamilyColours, stripe: QColor | None) -> None:
        """The node's outline shape, like svg.py: rounded box, pill, dashed box or ellipse."""
        r = rec.rect
        kind = rec.kind
        if kind == "literal":
            pen, radius = QPen(colours.border, 1.0), -1.0
        elif kind in ("input", "output"):
            pen, radius = QPen(colours.border, 2.0 if kind == "output" else 1.4), min(r.height(), r.width()) / 2
        elif kind == "const":
            pen, radius = _dashed(QPen(colours.border, 1.4), 4.0, 2.0), 2.0
        else:
            pen, radius = QPen(colours.border, 1.2), 4.0
            if rec.owner:
                painter.setPen(QPen(colours.border, 1.0))
                painter.setBrush(colours.fill)
                painter.drawRoundedRect(r.translated(CARD_OFFSET, CARD_OFFSET), 4.0, 4.0)
        painter.setBrush(colours.fill)
        if stripe is None:
            painter.setPen(pen)
            _draw_shape(painter, r, radius)
            return
        painter.setPen(Qt.PenStyle.NoPen)
        _draw_shape(painter, r, radius)
        clip = QPainterPath()
        if radius < 0:
            clip.addEllipse(r)
        else:
            clip.addRoundedRect(r, radius, radius)
        painter.save()
        painter.setClipPath(clip, Qt.ClipOperation.IntersectClip)
        painter.fillRect(QRectF(r.left(), r.top(), STRIPE_W, r.height()), stripe)
        painter.restore()
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        _draw_shape(painter, r, radius)

    def _outline(self, painter: QPainter, rec: NodeRec, selected: bool, lod: float) -> None:
        pal = self.state.palette
        colour, width = (pal.accent, OUTLINE_W) if selected else (pal.match, MATCH_W)
        pad = width / 2 + 1.5
        r = rec.rect.adjusted(-pad, -pad, pad, pad)
        painter.setPen(_scene_pen(colour, width, lod / 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if rec.kind == "literal":
            painter.drawEllipse(r)
        elif rec.kind in ("input", "output"):
            radius = min(r.height(), r.width()) / 2
            painter.drawRoundedRect(r, radius, radius)
        else:
            painter.drawRoundedRect(r, 5.0, 5.0)


def _draw_shape(painter: QPainter, r: QRectF, radius: float) -> None:
    if radius < 0:
        painter.drawEllipse(r)
    else:
        painter.drawRoundedRect(r, radius, radius)


class EdgeTileItem(_BatchItem):
    """Edges of one tile drawn as a few batched paths; or, with `cull_each`, the long edges,
    each drawn only where its own bounding box is exposed."""

    def __init__(self, model: SceneModel, state: ViewState, indices: list[int], bounds: QRectF | None = None,
                 cull_each: bool = False) -> None:
        if bounds is None:
            boxes = [model.edge_boxes[j] for j in indices]
            x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
            bounds = QRectF(x0, y0, max(b[2] for b in boxes) - x0, max(b[3] for b in boxes) - y0)
        self.extent = bounds
        pad = ARROW_W + EDGE_W
        super().__init__(model, state, bounds.adjusted(-pad, -pad, pad, pad))
        self.indices = indices
        self.cull_each = cull_each
        self.setZValue(1.0)
        self._shapes: dict[int, tuple[QPainterPath, QPolygonF | None]] = {}
        self._line_of: dict[int, QLineF] = {}
        self._groups: dict[tuple[bool, bool], list[int]] = {}
        self._paths: dict[tuple[bool, bool], tuple[QPainterPath, QPainterPath]] = {}
        self._version = -1

    def _shape(self, j: int) -> tuple[QPainterPath, QPolygonF | None]:
        shape = self._shapes.get(j)
        if shape is None:
            shape = self._shapes[j] = edge_shapes(self.model.edges[j].points)
        return shape

    def _lines(self, js: Iterable[int]) -> list[QLineF]:
        """Straight first-to-last-point lines (the far level of detail), made once per edge."""
        cache = self._line_of
        out = []
        for j in js:
            line = cache.get(j)
            if line is None:
                pts = self.model.edges[j].points
                (x0, y0), (x1, y1) = pts[0], pts[-1]
                line = cache[j] = QLineF(x0, y0, x1, y1)
            out.append(line)
        return out

    def groups(self) -> dict[tuple[bool, bool], list[int]]:
        """(routed, dimmed) -> edge indices; regrouped when the highlight cone changes."""
        st = self.state
        if self._version != st.version:
            groups: dict[tuple[bool, bool], list[int]] = {}
            edges = self.model.edges
            dimming = st.cone_nodes is not None
            cone = st.cone_edges
            for j in self.indices:
                key = (edges[j].routed, dimming and j not in cone)
                group = groups.get(key)
                if group is None:
                    groups[key] = [j]
                else:
                    group.append(j)
            # dimmed first, so the highlighted cone is drawn over them
            self._groups = dict(sorted(groups.items(), key=lambda kv: not kv[0][1]))
            self._paths = {}
            self._version = st.version
        return self._groups

    def _batch_paths(self, key: tuple[bool, bool], js: list[int]) -> tuple[QPainterPath, QPainterPath]:
        """One path of curves and one of arrowheads for a group, built on first use."""
        paths = self._paths.get(key)
        if paths is None:
            curves, arrows = QPainterPath(), QPainterPath()
            arrows.setFillRule(Qt.FillRule.WindingFill)  # two arrowheads on one spot must not cancel out
            for j in js:
                curve, arrow = self._shape(j)
                curves.addPath(curve)
                if arrow is not None:
                    arrows.addPolygon(arrow)
                    arrows.closeSubpath()
            paths = self._paths[key] = (curves, arrows)
        return paths

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        if self.cull_each:
            self._paint_each(painter, option.exposedRect, lod)
            return
        if max(self.extent.width(), self.extent.height()) * lod < TINY_PX:
            return  # a few device px: the node tile's blob stands for it
        far = lod < FAR_LOD
        for key, js in self.groups().items():
            routed, dim = key
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            pen, colour = self._pen(routed, lod, far)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if far:
                painter.drawLines(self._lines(js))
                continue
            curves, arrows = self._batch_paths(key, js)
            painter.drawPath(curves)
            if lod >= TEXT_LOD and not arrows.isEmpty():
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                painter.drawPath(arrows)
        painter.setOpacity(1.0)

    def _pen(self, routed: bool, lod: float, far: bool) -> tuple[QPen, QColor]:
        pal = self.state.palette
        colour = pal.edge if routed else pal.edge_unrouted
        if far:
            pen = QPen(colour, 0)
            return pen, colour
        pen = _scene_pen(colour, EDGE_W, lod)
        if not routed:
            _dashed(pen, 5.0, 4.0)
        return pen, colour

    def _paint_each(self, painter: QPainter, exposed: QRectF, lod: float) -> None:
        bbox = self.model.long_edges
        far = lod < FAR_LOD
        area = exposed.adjusted(-ARROW_W, -ARROW_W, ARROW_W, ARROW_W)
        for (routed, dim), group in self.groups().items():
            js = [j for j in group if bbox[j].intersects(area)]
            if not js:
                continue
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            pen, colour = self._pen(routed, lod, far)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if far:
                painter.drawLines(self._lines(js))
                continue
            for j in js:
                painter.drawPath(self._shape(j)[0])
            if lod >= TEXT_LOD:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                for j in js:
                    arrow = self._shape(j)[1]
                    if arrow is not None:
                        painter.drawPolygon(arrow)
        painter.setOpacity(1.0)


class ClusterItem(_BatchItem):
    """Every cluster box, shallowest first, under the edges."""

    def __init__(self, model: SceneModel, state: ViewState) -> None:
        super().__init__(model, state, model.content.adjusted(-2, -2, 2, 2))
        self.setZValue(0.0)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        pal = self.state.palette
        exposed = option.exposedRect
        painter.setPen(QPen(pal.cluster_border, 0) if lod < TEXT_LOD else _scene_pen(pal.cluster_border, 1.0, lod))
        for c in self.model.clusters:
            r = QRectF(c.x, c.y, c.w, c.h)
            if not r.intersects(exposed):
                continue
            painter.setBrush(pal.cluster_fill(c.depth))
            if lod < FAR_LOD:
                painter.drawRect(r)
            else:
                painter.drawRoundedRect(r, 6.0, 6.0)


class ClusterTitleItem(_BatchItem):
    """Cluster titles over the edges, each on a patch of its cluster's fill (as svg.py)."""

    def __init__(self, model: SceneModel, state: ViewState) -> None:
        super().__init__(model, state, model.content.adjusted(-2, -2, 2, 2))
        self.setZValue(2.0)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if lod_of(painter) < TEXT_LOD:
            return
        st, pal = self.state, self.state.palette
        exposed = option.exposedRect
        painter.setFont(st.font)
        for c in self.model.clusters:
            if not c.title or not self.model.title_rect(c).intersects(exposed):
                continue
            chars = max(int((c.w - 16.0) / labels.CHAR_W + 0.05), 1)  # as svg.py: the layout sizes clusters to fit
            title = labels.ellipsize(c.title, chars)
            if pal.opaque_clusters:
                w = st.metrics.horizontalAdvance(title) + 8.0
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(pal.cluster_fill(c.depth))
                painter.drawRoundedRect(QRectF(c.x + 4.0, c.y + 3.0, w, labels.TITLE_H - 6.0), 3.0, 3.0)
            painter.setPen(pal.title_text)
            painter.drawText(QPointF(c.x + 8.0, c.y + labels.TITLE_H / 2 + _BASELINE), title)


def build_items(model: SceneModel, state: ViewState) -> tuple[list[NodeTileItem], list[QGraphicsItem]]:
    """The node tiles (indexed like `model.node_tiles`) and every item, for the scene."""
    node_items = [NodeTileItem(model, state, ids) for ids in model.node_tiles]
    items: list[QGraphicsItem] = [ClusterItem(model, state), ClusterTitleItem(model, state)]
    items.extend(EdgeTileItem(model, state, ids, bounds) for ids, bounds in model.edge_tiles)
    if model.long_edges:
        items.append(EdgeTileItem(model, state, sorted(model.long_edges), cull_each=True))
    items.extend(node_items)
    return node_items, items
