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
* zoomed out so far that every tile is a few device px, the view hides the tiles (they hang
  under two layer items) and shows one `OverviewItem` that draws the same blobs in a few calls;
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

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem

from jaxscope.qt.batch_item import (
    ARROW_LEN,
    ARROW_W,
    CARD_OFFSET,
    DIM_OPACITY,
    EDGE_W,
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
from jaxscope.qt.cluster_items import ClusterItem, ClusterTitleItem
from jaxscope.qt.edge_items import EdgeTileItem
from jaxscope.qt.node_items import NodeTileItem, OverviewItem
from jaxscope.qt.scene_model import CELL, TILE_H, TILE_W, GridIndex, NodeRec, SceneModel, build_model

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
    """The items of one scene, and what the view needs to switch the overview on and off."""

    node_items: list[NodeTileItem]  # indexed like `model.node_tiles`
    items: list[QGraphicsItem]  # the top-level ones, for `QGraphicsScene.addItem`
    layers: list[QGraphicsItem]  # the parents of the edge tiles and of the node tiles
    overview: OverviewItem  # stands for both layers when every tile is tiny
    tile_span: float  # the longest side of any tile: at a scale below TINY_PX / tile_span all are tiny

    def set_overview(self, on: bool) -> None:
        """Show the overview instead of the tiles (it draws what they would: see `OverviewItem`)."""
        if on != self.overview.isVisible():
            self.overview.setVisible(on)
            for layer in self.layers:
                layer.setVisible(not on)


def _layer(z: float) -> QGraphicsItem:
    """A parent for many tiles: hiding it hides them all in one call (no contents of its own)."""
    layer = QGraphicsRectItem()
    layer.setPen(Qt.PenStyle.NoPen)
    layer.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
    layer.setZValue(z)
    return layer


def build_items(model: SceneModel, state: ViewState) -> SceneItems:
    """Every item of one scene. The node and edge tiles hang under two layers, so that the view
    can swap them for the overview in two calls when zoomed far out."""
    node_layer, edge_layer = _layer(3.0), _layer(1.0)
    node_items = [NodeTileItem(model, state, ids) for ids in model.node_tiles]
    edge_items = [EdgeTileItem(model, state, ids, bounds) for ids, bounds in model.edge_tiles]
    for tile in node_items:
        tile.setParentItem(node_layer)
    for tile in edge_items:
        tile.setParentItem(edge_layer)
    items: list[QGraphicsItem] = [ClusterItem(model, state), ClusterTitleItem(model, state), edge_layer, node_layer]
    if model.long_edges:
        long_item = EdgeTileItem(model, state, sorted(model.long_edges), cull_each=True)
        # Thousands of long edges can cross the screen (gpt_jit-50k: 5k, 180 ms a frame): Qt keeps this
        # item's on-screen part as a pixmap and, on a pan, paints only the strip that scrolled in.
        long_item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        items.append(long_item)
    overview = OverviewItem(model, state, node_items)
    items.append(overview)
    span = max((max(t.extent.width(), t.extent.height()) for t in (*node_items, *edge_items)), default=0.0)
    return SceneItems(node_items, items, [edge_layer, node_layer], overview, span)
