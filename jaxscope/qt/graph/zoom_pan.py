"""A view over a drawing of fixed extent that zooms around the cursor, pans by dragging and fits
the drawing: the navigation of the graph view, kept apart from what it draws.

Its position is the scroll bars' (the scene rect always leaves a viewport's worth of room around
the drawing, so Qt adds no indent and zooming around the cursor never hits a scroll limit). A
subclass says what the drawing is (`has_content`, `content_rect`) and reacts to a click, a change
of scale (`_update_detail`) and Escape.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent, QResizeEvent, QTransform, QWheelEvent
from PySide6.QtWidgets import QApplication, QFrame, QGraphicsView, QWidget

from jaxscope.qt.graph.batch_item import TEXT_LOD

MAX_SCALE = 4.0
FIT_MAX_SCALE = 1.25  # fit_all never blows a small graph up beyond this
READABLE = 0.6  # a first view's least scale: 11 px labels drawn 6.6 px tall
FIT_PADDING = 16  # viewport px around the drawing after fit_all
ZOOM_STEP = 1.25


def fit_scale(width: int, height: int, rect: QRectF, max_scale: float) -> float:
    """The scale that shows `rect` whole in a viewport of `width` x `height` px (with `FIT_PADDING`)."""
    w, h = max(width - 2 * FIT_PADDING, 10), max(height - 2 * FIT_PADDING, 10)
    return min(w / max(rect.width(), 1e-6), h / max(rect.height(), 1e-6), max_scale)


class ZoomPanView(QGraphicsView):
    """See the module docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self._auto_fit = True  # refit on resize until the user moves the view
        self._fit_readable = False  # that refit is `fit_readable`'s (else `fit_all`'s)
        self._press: QPoint | None = None
        self._press_button = Qt.MouseButton.NoButton
        self._last: QPoint = QPoint()
        self._panning = False
        self._viewport_px = (0, 0)  # its last size, for work on another thread (read, not asked of Qt)

    # -- what a subclass says

    def has_content(self) -> bool:
        return False

    def content_rect(self) -> QRectF:
        """The drawing's extent in scene coordinates."""
        return QRectF()

    def _update_detail(self) -> None:
        """The scale changed."""

    def _click(self, pos: QPoint, modifiers: Qt.KeyboardModifier) -> None:
        """A left click that did not pan, at viewport `pos`."""

    def _escape(self) -> None:
        """Escape was pressed."""

    # -- zoom and pan

    def zoom_in(self) -> None:
        self.zoom_by(ZOOM_STEP, self.viewport().rect().center())

    def zoom_out(self) -> None:
        self.zoom_by(1 / ZOOM_STEP, self.viewport().rect().center())

    def zoom(self) -> float:
        """The current scale (1.0: one scene px per device-independent px)."""
        return self._scale()

    def zoom_to(self, scale: float, centre: QPointF | None = None) -> None:
        """Zoom to `scale` (clamped as the wheel's is) around `centre` (scene px; default: the view's)."""
        target = self._view_centre() if centre is None else centre
        self._auto_fit = False
        self.set_scale(scale)
        self.centre_at(target)

    def fit_all(self) -> None:
        """Zoom (at most to `FIT_MAX_SCALE`) and centre so the whole drawing is visible."""
        if not self.has_content():
            return
        self._auto_fit, self._fit_readable = True, False
        self._fit_rect(self.content_rect(), FIT_MAX_SCALE)

    def fit_readable(self) -> None:
        """A new graph's first view: the whole drawing when its labels can be read so (`READABLE`);
        else its top at the scale that fits its width, or its top-left at a readable one when even
        that is too small (a train step's passes side by side): the overview map shows the rest,
        and Fit Graph the whole. Kept through resizes as `fit_all` is."""
        if not self.has_content():
            return
        c, vp = self.content_rect(), self.viewport().rect()
        if fit_scale(vp.width(), vp.height(), c, FIT_MAX_SCALE) >= READABLE:
            self.fit_all()
            return
        wide = max(min((vp.width() - 2 * FIT_PADDING) / max(c.width(), 1.0), 1.0), READABLE)
        self._auto_fit, self._fit_readable = True, True
        self.set_scale(wide)
        # wider than the view even so (a flat train step's row of optimizer inputs): its top-left, where
        # the program starts and a reader does; its middle was a stretch of that row and empty canvas
        fits = c.width() * wide <= vp.width() - 2 * FIT_PADDING + 1
        x = c.center().x() if fits else c.left() + (vp.width() / 2 - FIT_PADDING) / wide
        self.centerOn(QPointF(x, c.top() + (vp.height() / 2 - FIT_PADDING) / wide))

    def set_scale(self, s: float) -> None:
        s = min(max(s, self._min_scale()), MAX_SCALE)
        self.setTransform(QTransform.fromScale(s, s))
        self._update_scene_rect()
        self._update_detail()

    def zoom_by(self, factor: float, anchor: QPoint) -> None:
        """Scale by `factor`, keeping the scene point under `anchor` (viewport px) where it is."""
        self._auto_fit = False
        target = self.mapToScene(anchor)
        self.set_scale(self._scale() * factor)
        self.scroll_to(target, anchor)

    def centre_at(self, scene_point: QPointF) -> None:
        self.scroll_to(scene_point, self._viewport_centre())

    def reveal_rect(self, rect: QRectF) -> None:
        """Centre `rect`, zooming out if it does not fit; zooming in to it (up to a readable scale)
        when the view is too far out for its text, as a fitted big graph is: a search or a guide
        link that selects a block's nodes then shows them, not a dot at zoom 0.04."""
        self._auto_fit = False
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        margin = 2 * FIT_PADDING / max(self._scale(), 1e-6)
        if rect.width() + margin > visible.width() or rect.height() + margin > visible.height():
            self._fit_rect(rect, self._scale())
        elif self._scale() < TEXT_LOD:  # labels are not drawn
            vp = self.viewport().rect()
            self._fit_rect(rect, max(self._scale(), min(fit_scale(vp.width(), vp.height(), rect, FIT_MAX_SCALE), 1.0)))
        else:
            self.centerOn(rect.center())

    def scroll_to(self, scene_point: QPointF, viewport_point: QPoint | QPointF) -> None:
        """Scroll so that `scene_point` shows at `viewport_point`, to the nearest device px: the
        scroll bars are the view's position (the scene rect always leaves room, so Qt adds no
        indent), and `centerOn` truncates, which crept ~1 px per re-layout that kept the view."""
        p = self.transform().map(QPointF(scene_point))
        self.horizontalScrollBar().setValue(round(p.x() - viewport_point.x()))
        self.verticalScrollBar().setValue(round(p.y() - viewport_point.y()))

    def _fit_rect(self, rect: QRectF, max_scale: float) -> None:
        vp = self.viewport().rect()
        self.set_scale(fit_scale(vp.width(), vp.height(), rect, max_scale))
        self.centerOn(rect.center())

    def _scale(self) -> float:
        return self.transform().m11()

    def _min_scale(self) -> float:
        if not self.has_content():
            return 0.01
        c = self.content_rect()
        vp = self.viewport().rect()
        fit = min(vp.width() / max(c.width(), 1.0), vp.height() / max(c.height(), 1.0))
        return max(min(fit * 0.5, 0.05), 1e-5)

    def _viewport_centre(self) -> QPointF:
        vp = self.viewport()
        return QPointF(vp.width() / 2, vp.height() / 2)

    def _view_centre(self) -> QPointF:
        """The scene point at the viewport's exact centre (`mapToScene` takes whole px only)."""
        inverse, _ = self.transform().inverted()
        c = self._viewport_centre()
        return inverse.map(QPointF(self.horizontalScrollBar().value() + c.x(), self.verticalScrollBar().value() + c.y()))

    def _update_scene_rect(self) -> None:
        """The drawing plus a viewport's worth of room on every side, so the view can always be
        centred anywhere (zooming around the cursor never hits a scroll limit)."""
        if not self.has_content():
            return
        vp = self.viewport().rect()
        room = max(vp.width(), vp.height(), 100) / max(self._scale(), 1e-6)
        self.setSceneRect(self.content_rect().adjusted(-room, -room, room, room))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() in (Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton):
            self._press = self._last = event.position().toPoint()
            self._press_button = event.button()
            self._panning = False
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None:
            pos = event.position().toPoint()
            if not self._panning and (pos - self._press).manhattanLength() >= QApplication.startDragDistance():
                self._panning = True
                self._auto_fit = False
                self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            if self._panning:
                delta = pos - self._last
                self._last = pos
                h, v = self.horizontalScrollBar(), self.verticalScrollBar()
                h.setValue(h.value() - delta.x())
                v.setValue(v.value() - delta.y())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and event.button() == self._press_button:
            clicked = not self._panning and event.button() == Qt.MouseButton.LeftButton
            self._press = None
            self._panning = False
            self.viewport().unsetCursor()
            if clicked:
                self._click(event.position().toPoint(), event.modifiers())
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        if delta.y():
            self.zoom_by(2.0 ** (delta.y() / 480.0), event.position().toPoint())
        elif delta.x():
            self._auto_fit = False
            h = self.horizontalScrollBar()
            h.setValue(h.value() - delta.x())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif key in (Qt.Key.Key_F, Qt.Key.Key_0):
            self.fit_all()
        elif key == Qt.Key.Key_Escape:
            self._escape()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:
        centre = self._view_centre()
        super().resizeEvent(event)
        vp = self.viewport().rect()
        self._viewport_px = (vp.width(), vp.height())
        if not self.has_content():
            return
        if self._auto_fit:
            self.fit_readable() if self._fit_readable else self.fit_all()
        else:
            self._update_scene_rect()
            self.centre_at(centre)
