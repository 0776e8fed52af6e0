"""The edge tiles: `EdgeTileItem` paints the edges of one tile as a few batched paths (or the
long edges, culled one by one), dimmed outside a highlighted dataflow cone.

Where there are many long edges, they are drawn as *partial edges* (`layout.edge_shape`), and
nothing at the far level of detail; the edges of the selected boxes and of a highlighted dataflow
cone are drawn whole, and `ViewState.long_whole` draws them all whole."""

from __future__ import annotations

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from jaxscope.layout.edge_shape import draws_partial
from jaxscope.qt.graph.batch_item import (
    ARROW_W,
    DIM_OPACITY,
    FAR_LOD,
    TEXT_LOD,
    TINY_PX,
    BatchItem,
    ViewState,
    dashed,
    edge_shapes,
    lod_of,
    partial_shapes,
    scene_pen,
)
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.render.svg import EDGE_W

Group = tuple[bool, bool, bool]  # routed, dimmed, drawn partially
THIN_PX = 1.5  # long edges thinner than this on screen are drawn as hairlines, without antialiasing


class EdgeTileItem(BatchItem):
    """Edges of one tile drawn as a few batched paths; or, with `cull_each`, the long edges,
    each drawn only where its own bounding box is exposed."""

    def __init__(
        self, model: SceneModel, state: ViewState, indices: list[int], bounds: QRectF | None = None, cull_each: bool = False
    ) -> None:
        if bounds is None:
            boxes = model.edge_box[indices]
            x0, y0 = float(boxes[:, 0].min()), float(boxes[:, 1].min())
            bounds = QRectF(x0, y0, float(boxes[:, 2].max()) - x0, float(boxes[:, 3].max()) - y0)
        self.extent = bounds
        pad = ARROW_W + EDGE_W
        super().__init__(model, state, bounds.adjusted(-pad, -pad, pad, pad))
        self.indices = indices
        self.cull_each = cull_each
        if cull_each:  # a top-level item; the tiles hang under the edge layer, which has this z
            self.setZValue(1.0)
        self._shapes: dict[int, tuple[QPainterPath, QPolygonF | None]] = {}
        self._partial_shapes: dict[int, tuple[QPainterPath, QPolygonF | None]] = {}
        self._groups: dict[Group, list[int]] = {}
        self._paths: dict[Group, tuple[QPainterPath, QPainterPath]] = {}
        self._group_lines: dict[Group, list[QLineF]] = {}
        self._version: tuple[int, ...] = (-1,)

    def _shape(self, j: int, partial: bool = False) -> tuple[QPainterPath, QPolygonF | None]:
        cache = self._partial_shapes if partial else self._shapes
        shape = cache.get(j)
        if shape is None:
            points = self.model.edges[j].points
            shape = cache[j] = partial_shapes(points) if partial else edge_shapes(points)
        return shape

    def shapes_made(self) -> int:
        """How many edges' shapes (whole or as their two ends) were made: each on its first paint
        near enough to draw curves, never all of a long item's at once."""
        return len(self._shapes) + len(self._partial_shapes)

    def lines_made(self) -> dict[Group, list[QLineF]]:
        """The far lines made per group so far (ahead, with the model, or by a paint)."""
        return dict(self._group_lines)

    @property
    def partial(self) -> bool:
        """Whether this item draws most of its edges as their two ends (see the module docstring)."""
        return self.cull_each and draws_partial(len(self.indices), self.state.long_whole)

    def _whole(self) -> set[int]:
        """The long edges drawn whole although partial: those of the selected boxes."""
        if not self.state.selected:
            return set()  # without asking for the model's map: made for all edges, 75 ms at 50k, a first paint's
        at = self.model.long_edges_at()
        nodes = self.model.nodes
        return {j for i in self.state.selected for j in at.get(nodes[i].base, ())}

    def exposed_edges(self, area: QRectF, quarters: bool, ends: bool = False) -> set[int]:
        """The long edges with a culling box that overlaps `area`, by `QRectF.intersects`'s rule
        (a positive overlap; a box of zero width or height overlaps nothing); with `ends`, the
        boxes of the parts an edge drawn as its two ends draws."""
        ids, b = self.model.long_end_cull() if ends else self.model.long_edge_cull(quarters)
        x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
        hit = (x0 < x1) & (y0 < y1) & (x0 < area.right()) & (area.left() < x1) & (y0 < area.bottom()) & (area.top() < y1)
        return set(ids[hit].tolist())

    def groups(self) -> dict[Group, list[int]]:
        """(routed, dimmed, partial) -> edge indices; regrouped when the highlight cone changes
        (and for the long edges, the selection or `long_whole`)."""
        st = self.state
        partial = self.partial
        version = (st.version, st.selection_version, partial) if self.cull_each else (st.version,)
        if self._version != version:
            groups: dict[Group, list[int]] = {}
            routed = self.model.edge_routed
            dimming = st.cone_nodes is not None
            cone = st.cone_edges
            whole = self._whole() if partial else set()
            for j in self.indices:
                dim = dimming and j not in cone
                key = (routed[j], dim, partial and not (j in whole or (dimming and not dim)))
                group = groups.get(key)
                if group is None:
                    groups[key] = [j]
                else:
                    group.append(j)
            # dimmed first, so the highlighted cone is drawn over them
            self._groups = dict(sorted(groups.items(), key=lambda kv: not kv[0][1]))
            self._paths, self._group_lines = {}, {}
            self._version = version
        return self._groups

    def _batch_paths(self, key: Group, js: list[int]) -> tuple[QPainterPath, QPainterPath]:
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

    def warm(self, lod: float, region: QRectF | None = None) -> None:
        """Make the far lines a tile's paint at `lod` draws (`scene_items.warm_items`); for the long
        edges, the shapes a paint of `region` at `lod` draws (hundreds of long edges can end on
        one screen: ~50 us each)."""
        if self.cull_each:
            if region is not None and lod >= FAR_LOD:
                for (_, _, partial), js in self._exposed_groups(region, far=False):
                    for j in js:
                        self._shape(j, partial)
            return
        if lod >= FAR_LOD or max(self.extent.width(), self.extent.height()) * lod < TINY_PX:
            return
        for key, js in self.groups().items():
            if key not in self._group_lines:
                self._group_lines[key] = self.model.far_lines(js)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        if self.cull_each:
            self._paint_each(painter, option.exposedRect, lod)
            return
        if max(self.extent.width(), self.extent.height()) * lod < TINY_PX:
            return  # a few device px: the node tile's blob stands for it
        far = lod < FAR_LOD
        for key, js in self.groups().items():
            routed, dim, _ = key
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            pen, colour = self._pen(routed, lod, far)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if far:
                lines = self._group_lines.get(key)
                if lines is None:  # a tile draws the whole group: one list per group, not one per frame
                    lines = self._group_lines[key] = self.model.far_lines(js)
                painter.drawLines(lines)
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
        pen = scene_pen(colour, EDGE_W, lod)
        if not routed:
            dashed(pen, 5.0, 4.0)
        return pen, colour

    def _exposed_groups(self, rect: QRectF, far: bool) -> list[tuple[Group, list[int]]]:
        """`groups()` cut down to the edges a paint of `rect` draws, arrowheads reaching into it
        included (none drawn partially when `far`)."""
        area = rect.adjusted(-ARROW_W, -ARROW_W, ARROW_W, ARROW_W)
        out = []
        exposed: dict[bool, set[int]] = {}
        for key, group in self.groups().items():
            partial = key[2]
            if partial and far:
                continue  # a few px at this zoom: the boxes show without them
            shown = exposed.get(partial)
            if shown is None:
                shown = exposed[partial] = self.exposed_edges(area, quarters=not far, ends=partial)
            js = [j for j in group if j in shown]
            if js:
                out.append((key, js))
        return out

    def _paint_each(self, painter: QPainter, exposed: QRectF, lod: float) -> None:
        far = lod < FAR_LOD
        thin = not far and lod * EDGE_W <= THIN_PX
        antialiased = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
        if thin:  # hundreds of long edges can cross the screen: 14 ms a frame this way, 170 ms stroked with AA
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for (routed, dim, partial), js in self._exposed_groups(on_device(painter, exposed), far):
            painter.setOpacity(DIM_OPACITY if dim else 1.0)
            pen, colour = self._pen(routed, lod, far)
            if thin:
                pen = _hairline(pen.color(), routed, lod)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if far:
                painter.drawLines(self.model.far_lines(js))
                continue
            curves, arrows = QPainterPath(), QPainterPath()  # one call each: per-call overhead dominated
            arrows.setFillRule(Qt.FillRule.WindingFill)
            for j in js:
                curve, arrow = self._shape(j, partial)
                curves.addPath(curve)
                if arrow is not None:
                    arrows.addPolygon(arrow)
                    arrows.closeSubpath()
            painter.drawPath(curves)
            if lod >= TEXT_LOD and not arrows.isEmpty():
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                painter.drawPath(arrows)
        painter.setOpacity(1.0)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialiased)


def on_device(painter: QPainter, exposed: QRectF) -> QRectF:
    """The part of `exposed` (item coordinates) that lands on the painter's device. Filling its
    device-coordinate cache, Qt gives this item its whole bounding rect as exposed (the drawing,
    at zoom 1) and a pixmap the size of the viewport: the first paint at zoom 1 made the two ends
    of every long edge of the drawing to draw a screenful (mlp-50k: 17k of them, 0.38 s)."""
    device = painter.device()
    inverse, ok = painter.worldTransform().inverted()
    if device is None or not ok:
        return exposed
    return exposed.intersected(inverse.mapRect(QRectF(0.0, 0.0, float(device.width()), float(device.height()))))


def _hairline(colour: QColor, routed: bool, lod: float) -> QPen:
    """A one-device-pixel pen (Qt's cosmetic stroker clips a long curve to the screen cheaply;
    a scene-width pen strokes all of it), dashed like the scene pen at this zoom."""
    pen = QPen(colour, 0)
    pen.setCosmetic(True)
    if not routed:
        pen.setDashPattern([5.0 * lod, 4.0 * lod])
    return pen
