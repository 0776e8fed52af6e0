"""The cluster items: every cluster box under the edges, and the titles over them."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from jaxscope.layout import labels
from jaxscope.qt.graph.batch_item import BASELINE, FAR_LOD, TEXT_LOD, BatchItem, ViewState, lod_of, scene_pen
from jaxscope.qt.graph.scene_model import SceneModel


class ClusterItem(BatchItem):
    """Every cluster box, shallowest first, under the edges."""

    def __init__(self, model: SceneModel, state: ViewState) -> None:
        super().__init__(model, state, model.content.adjusted(-2, -2, 2, 2))
        self.setZValue(0.0)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        lod = lod_of(painter)
        pal = self.state.palette
        exposed = option.exposedRect
        painter.setPen(QPen(pal.cluster_border, 0) if lod < TEXT_LOD else scene_pen(pal.cluster_border, 1.0, lod))
        for c, pass_ in zip(self.model.clusters, self.model.cluster_pass):
            r = QRectF(c.x, c.y, c.w, c.h)
            if not r.intersects(exposed):
                continue
            painter.setBrush(pal.cluster_fill(c.depth, pass_))
            if lod < FAR_LOD:
                painter.drawRect(r)
            else:
                painter.drawRoundedRect(r, 6.0, 6.0)


class ClusterTitleItem(BatchItem):
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
        for c, pass_ in zip(self.model.clusters, self.model.cluster_pass):
            if not c.title or not self.model.title_rect(c).intersects(exposed):
                continue
            chars = max(int((c.w - 16.0) / labels.CHAR_W + 0.05), 1)  # as svg.py: the layout sizes clusters to fit
            title = labels.ellipsize(c.title, chars)
            if pal.opaque_clusters:
                w = st.metrics.horizontalAdvance(title) + 8.0
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(pal.cluster_fill(c.depth, pass_))
                painter.drawRoundedRect(QRectF(c.x + 4.0, c.y + 3.0, w, labels.TITLE_H - 6.0), 3.0, 3.0)
            painter.setPen(pal.title_text)
            painter.drawText(QPointF(c.x + 8.0, c.y + labels.TITLE_H / 2 + BASELINE), title)
