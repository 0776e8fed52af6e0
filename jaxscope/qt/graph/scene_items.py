"""Batched scene items for `QtGraphView`: a few QGraphicsItems that each paint many nodes or edges.

Why batched: one QGraphicsItem per node and edge does not scale (perf-baseline §4: at 54k nodes a
17 s BSP build, 3.5 GB and 2 s fit-all repaints), while tiles of ~1200×800 scene px that paint
their contents in a few calls build in ~0.15 s and repaint fit-all in ~80 ms. So:

* nodes are grouped into `NodeTileItem`s by tile, edges into `EdgeTileItem`s by tiles twice as
  big each way (they draw nothing from afar); an edge much bigger than a box tile (a long,
  unrouted edge) goes to one `EdgeTileItem` that culls edge by edge instead, so it never
  stretches a tile's bounding rect over the whole drawing;
* clusters are one `ClusterItem` (boxes, under the edges) and one `ClusterTitleItem` (titles,
  over the edges, like the SVG exporter);
* every item culls by the exposed rect and picks a level of detail from the painter's scale:
  full (the SVG look: shapes and text), boxes (text would be under ~4 px: batched rects, curves
  without arrowheads) and far (fill-only rects, straight edges);
* a tile a few device px across would draw one blob (a node tile) or nothing (an edge tile): at
  each scale the view hides those tiles, and one `OverviewItem` draws the node tiles' blobs in a
  few calls, from the model (`SceneItems.set_scale`); when every tile is that small, the two layer
  items the tiles hang under are hidden instead, and a scene whose first paint is such a one is
  shown before its tile items are made (`SceneItems.make_tiles`);
* everything is vector, in scene coordinates, sharp on high-DPI screens; the one pixmap cache
  is Qt's device-coordinate cache of the long edges' item (a screenful, redrawn on zoom).

Mutable view state (selection, search matches, highlight cone, source-line colours, palette) is
one shared `ViewState`; the view updates it and calls `update()` on the items concerned.

Where things live: the tiled scene model and hit testing in `scene_model`; the palette, view
state, levels of detail and the base item in `batch_item`; the items in `node_items`,
`edge_items` and `cluster_items`. Their public names are re-exported here, and `build_items`
makes the items of one scene.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem

from jaxscope.qt.graph.batch_item import (
    ARROW_LEN,
    ARROW_W,
    CARD_OFFSET,
    DIM_OPACITY,
    FAR_LOD,
    MATCH_W,
    OUTLINE_W,
    STRIPE_W,
    TEXT_LOD,
    TINY_PX,
    BatchItem,
    FamilyColours,
    Palette,
    Point,
    ViewState,
    edge_shapes,
    label_font,
    lod_of,
)
from jaxscope.qt.graph.cluster_items import ClusterItem, ClusterTitleItem
from jaxscope.qt.graph.edge_items import EdgeTileItem
from jaxscope.qt.graph.node_items import NodeTileItem, OverviewItem
from jaxscope.qt.graph.scene_index import CELL, GridIndex, NodeRec
from jaxscope.qt.graph.scene_model import TILE_H, TILE_W, SceneModel, build_model
from jaxscope.render.svg import EDGE_W

__all__ = [
    "ARROW_LEN",
    "ARROW_W",
    "CARD_OFFSET",
    "CELL",
    "DIM_OPACITY",
    "EDGE_W",
    "FAR_LOD",
    "MATCH_W",
    "OUTLINE_W",
    "STRIPE_W",
    "TEXT_LOD",
    "TILE_H",
    "TILE_W",
    "TINY_PX",
    "BatchItem",
    "ClusterItem",
    "ClusterTitleItem",
    "EdgeTileItem",
    "FamilyColours",
    "GridIndex",
    "NodeRec",
    "NodeTileItem",
    "OverviewItem",
    "Palette",
    "Point",
    "SceneItems",
    "SceneModel",
    "ViewState",
    "build_items",
    "build_model",
    "edge_shapes",
    "label_font",
    "lod_of",
]


@dataclass
class SceneItems:
    """The items of one scene, and what the view needs to stand the overview in for tiny tiles.

    Made `pending` (`build_items(tiles=False)`), the node and edge tile items are not made yet: a
    first paint that shows every tile as a blob (a big drawing seen whole) draws none of them, and
    at gpt-50k their ~6.5k items took 30-45 ms before it. `make_tiles` makes them, a few at a time
    after that paint, or all at once if a zoom needs them first."""

    model: SceneModel
    state: ViewState
    node_items: list[NodeTileItem]  # indexed like `model.node_tiles` (made in that order)
    edge_items: list[EdgeTileItem]  # indexed like `model.edge_tiles`
    items: list[QGraphicsItem]  # the top-level ones, for `QGraphicsScene.addItem`
    layers: list[QGraphicsItem]  # the parents of the edge tiles and of the node tiles
    overview: OverviewItem  # draws the node tiles that are tiny at the view's scale
    by_span: list[tuple[list[float], list[int]]]  # node tiles, edge tiles: spans ascending, tile indices in that order
    long_item: EdgeTileItem | None = None  # the edges bigger than a tile, if any
    hidden: list[int] = field(default_factory=lambda: [0, 0])  # how many of each are hidden now (the smallest)
    pending: bool = False  # tile items still to make (`make_tiles`)

    def tiles(self, kind: int) -> Sequence[NodeTileItem | EdgeTileItem]:
        """The node (0) or edge (1) tile items made so far, by tile index."""
        return self.node_items if kind == 0 else self.edge_items

    def tiny_counts(self, scale: float) -> list[int]:
        """How many node tiles and edge tiles are under `TINY_PX` on screen at `scale` (a tile's
        longest side times the scale, the tiles' own test): a prefix of each `by_span` order."""
        limit = TINY_PX / scale if scale > 0 else 0.0
        return [bisect_left(spans, limit) for spans, _ in self.by_span]

    def all_tiny(self, scale: float) -> bool:
        """Whether every tile is under `TINY_PX` on screen at `scale` (drawn as a blob, or not at all)."""
        return all(c == len(spans) for c, (spans, _) in zip(self.tiny_counts(scale), self.by_span))

    def make_tiles(self, budget: int | None = None) -> bool:
        """Make the tile items still to make (at most `budget` of them), under their layers; True
        once all are made. Made after the scene is shown, they are visible (`hidden` stays right:
        a scene is pending only while every tile is tiny, and the layers are hidden then)."""
        model, state = self.model, self.state
        edge_layer, node_layer = self.layers
        left = budget if budget is not None else len(model.node_tiles) + len(model.edge_tiles)
        while left > 0 and len(self.node_items) < len(model.node_tiles):
            node_tile = NodeTileItem(model, state, len(self.node_items))
            node_tile.setParentItem(node_layer)
            self.node_items.append(node_tile)
            left -= 1
        while left > 0 and len(self.edge_items) < len(model.edge_tiles):
            ids, bounds = model.edge_tiles[len(self.edge_items)]
            edge_tile = EdgeTileItem(model, state, ids, bounds)
            edge_tile.setParentItem(edge_layer)
            self.edge_items.append(edge_tile)
            left -= 1
        self.pending = len(self.node_items) < len(model.node_tiles) or len(self.edge_items) < len(model.edge_tiles)
        return not self.pending

    def set_scale(self, scale: float) -> None:
        """Hide every tile under `TINY_PX` on screen at `scale` (`tiny_counts`): the overview draws
        the node tiles among them as the blobs they would draw, and a tiny edge tile draws nothing
        anyway. Fewer Python paint() calls: at
        mlp-10k's fit-all 600 of 880 node tiles are tiny, but not all, so the overview alone could
        not stand in. Only the tiles that change sides are touched; when every tile is tiny, the
        two layers are hidden instead (two calls). A tile still to make is made now if the scale
        shows it."""
        counts, all_tiny = self.tiny_counts(scale), self.all_tiny(scale)
        if self.pending and not all_tiny:
            self.make_tiles()
        for layer in self.layers:
            if layer.isVisible() == all_tiny:
                layer.setVisible(not all_tiny)
        if not all_tiny:
            for kind, count in enumerate(counts):
                before, tiles, order = self.hidden[kind], self.tiles(kind), self.by_span[kind][1]
                for t in order[min(before, count) : max(before, count)]:
                    tiles[t].setVisible(count < before)
                self.hidden[kind] = count
        self.overview.set_count(counts[0])


def warm_items(items: SceneItems, scale: float, region: QRectF | None = None) -> None:
    """Make the draw lists a first paint at `scale` asks of the tiles that are not tiny then (the
    others are hidden) and, with `region`, that meet it (scene px), on the thread that built the
    items, before they are in a scene."""
    for kind, count in enumerate(items.tiny_counts(scale)):
        tiles = items.tiles(kind)
        for t in items.by_span[kind][1][count:]:
            if t < len(tiles) and (region is None or tiles[t].extent.intersects(region)):
                tiles[t].warm(scale)
    if items.long_item is not None and region is not None:
        items.long_item.warm(scale, region)


def _layer(z: float) -> QGraphicsItem:
    """A parent for many tiles: hiding it hides them all in one call (no contents of its own)."""
    layer = QGraphicsRectItem()
    layer.setPen(Qt.PenStyle.NoPen)
    layer.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
    layer.setZValue(z)
    return layer


def build_items(model: SceneModel, state: ViewState, tiles: bool = True) -> SceneItems:
    """Every item of one scene; without `tiles`, all but the node and edge tile items, made later
    (`SceneItems.make_tiles`). The tiles hang under two layers, so that the view can hide them
    all in two calls when the overview stands in for every one of them."""
    node_layer, edge_layer = _layer(3.0), _layer(1.0)
    items: list[QGraphicsItem] = [ClusterItem(model, state), ClusterTitleItem(model, state), edge_layer, node_layer]
    long_item = None
    if model.long_edges:
        long_item = EdgeTileItem(model, state, model.long_edges, cull_each=True)
        # Thousands of long edges can cross the screen (gpt_jit-50k: 5k, 180 ms a frame): Qt keeps this
        # item's on-screen part as a pixmap and, on a pan, paints only the strip that scrolled in.
        long_item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        items.append(long_item)
    by_span = [_by_span(model.node_bounds), _by_span([bounds for _, bounds in model.edge_tiles])]
    overview = OverviewItem(model, state, by_span[0][1])
    items.append(overview)
    made = SceneItems(model, state, [], [], items, [edge_layer, node_layer], overview, by_span, long_item, pending=True)
    if tiles:
        made.make_tiles()
    return made


def _by_span(extents: Sequence[QRectF]) -> tuple[list[float], list[int]]:
    """The tiles' longest sides ascending, and the tiles' indices in that order: the tiles that
    are tiny at any scale are a prefix of it."""
    spans = [max(r.width(), r.height()) for r in extents]
    order = sorted(range(len(extents)), key=spans.__getitem__)
    return [spans[i] for i in order], order
