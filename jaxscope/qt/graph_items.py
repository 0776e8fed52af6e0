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

Where things live: the tiled scene model and hit testing in `scene_model`; the palette, view
state, levels of detail and the base item in `batch_item`; the items in `node_items`,
`edge_items` and `cluster_items`. Their public names are re-exported here, and `build_items`
makes the items of one scene.
"""

from __future__ import annotations

from PySide6.QtWidgets import QGraphicsItem

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
from jaxscope.qt.node_items import NodeTileItem
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
    "Palette",
    "Point",
    "SceneModel",
    "ViewState",
    "build_items",
    "build_model",
    "edge_shapes",
    "label_font",
    "lod_of",
]


def build_items(model: SceneModel, state: ViewState) -> tuple[list[NodeTileItem], list[QGraphicsItem]]:
    """The node tiles (indexed like `model.node_tiles`) and every item, for the scene."""
    node_items = [NodeTileItem(model, state, ids) for ids in model.node_tiles]
    items: list[QGraphicsItem] = [ClusterItem(model, state), ClusterTitleItem(model, state)]
    items.extend(EdgeTileItem(model, state, ids, bounds) for ids, bounds in model.edge_tiles)
    if model.long_edges:
        long_item = EdgeTileItem(model, state, sorted(model.long_edges), cull_each=True)
        # Thousands of long edges can cross the screen (gpt_jit-50k: 5k, 180 ms a frame): Qt keeps this
        # item's on-screen part as a pixmap and, on a pan, paints only the strip that scrolled in.
        long_item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        items.append(long_item)
    items.extend(node_items)
    return node_items, items
