"""The overview map: a small picture of the whole graph in the graph view's corner, with the part
on screen outlined; a click or a drag there moves the view. Shown only while the graph is bigger
than the view (a 50k-equation train step at a zoom that shows text is a few screens of hundreds).

It watches the view from outside (its viewport's paints and resizes, its scroll bars), so the view
knows nothing of it; the picture is drawn once per scene model, from the model's columns."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.qt.graph.view import QtGraphView

MAP_SIZE = QSize(220, 160)  # px at most; the map keeps the graph's aspect
MARGIN = 10  # px from the view's bottom-right corner


class OverviewMap(QWidget):
    def __init__(self, view: QtGraphView) -> None:
        super().__init__(view)
        self.setObjectName("overviewMap")
        self.view = view
        self._model: SceneModel | None = None
        self._image: QImage | None = None
        self._scale = 1.0  # map px per scene px
        self._seen = QRectF()  # the scene rect on screen
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        view.viewport().installEventFilter(self)
        view.horizontalScrollBar().valueChanged.connect(self.sync)
        view.verticalScrollBar().valueChanged.connect(self.sync)
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Paint, QEvent.Type.Resize):
            self.sync()
        return False

    def sync(self) -> None:
        """Follow the view: shown while the graph does not fit, its picture of the model shown."""
        model = self.view.model
        if model is None:
            self.setVisible(False)
            return
        port = self.view.viewport()
        seen = self.view.mapToScene(port.rect()).boundingRect()
        content = model.content
        fits = seen.adjusted(-2, -2, 2, 2).contains(content)
        if fits or port.width() < 3 * MAP_SIZE.width() or port.height() < 2 * MAP_SIZE.height():
            self.setVisible(False)
            return
        if model is not self._model:
            self._draw(model)
        assert self._image is not None
        size = self._image.size()
        corner = port.geometry().bottomRight() - QPoint(size.width() + MARGIN, size.height() + MARGIN)
        if self.size() != size:
            self.resize(size)
        if self.pos() != corner:
            self.move(corner)
        if seen != self._seen:
            self._seen = seen
            self.update()
        if not self.isVisible():
            self.show()
            self.raise_()

    def _draw(self, model: SceneModel) -> None:
        """The whole graph, small: clusters, then every box in its family's colour (at least a pixel)."""
        content = model.content
        scale = min(MAP_SIZE.width() / max(content.width(), 1.0), MAP_SIZE.height() / max(content.height(), 1.0))
        w, h = max(int(content.width() * scale), 24), max(int(content.height() * scale), 24)
        image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        pal = self.view.view_state.palette
        image.fill(pal.background if pal.background is not None else QColor("#ffffff"))
        painter = QPainter(image)
        try:
            painter.scale(scale, scale)
            painter.setPen(QPen(pal.cluster_border, 0))
            for c, pass_ in zip(model.clusters, model.cluster_pass):
                painter.setBrush(pal.cluster_fill(c.depth, pass_))
                painter.drawRect(QRectF(c.x, c.y, c.w, c.h))
            painter.setPen(Qt.PenStyle.NoPen)
            nodes, families = model.nodes, model.families
            least = 1.0 / scale  # a box is a pixel at least
            by_family: dict[str, list[QRectF]] = {}
            for i, (x, y, w, h) in enumerate(zip(nodes.x.tolist(), nodes.y.tolist(), nodes.w.tolist(), nodes.h.tolist())):
                by_family.setdefault(families[i], []).append(QRectF(x, y, max(w, least), max(h, least)))
            for fam, rects in by_family.items():
                painter.setBrush(pal.family(fam).border)
                painter.drawRects(rects)
        finally:
            painter.end()
        self._model, self._image, self._scale = model, image, scale

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._image is None:
            return
        painter = QPainter(self)
        painter.drawImage(0, 0, self._image)
        painter.setPen(QPen(QColor("#8c959f"), 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(0.5, 0.5, self.width() - 1.0, self.height() - 1.0))
        accent = self.view.view_state.palette.accent
        fill = QColor(accent)
        fill.setAlpha(40)
        s = self._scale
        seen = QRectF(self._seen.x() * s, self._seen.y() * s, self._seen.width() * s, self._seen.height() * s)
        painter.setPen(QPen(accent, 1.5))
        painter.setBrush(fill)
        painter.drawRect(seen.intersected(QRectF(0, 0, self.width(), self.height())).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._go(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())

    def _go(self, at: QPointF) -> None:
        self.view.centerOn(QPointF(at.x() / self._scale, at.y() / self._scale))
