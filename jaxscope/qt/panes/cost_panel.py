"""The Cost pane: what the program's equations cost and hold, fed plain data. A measure to colour
the graph by (its scale shown here), the totals, the memory in use over the program (its peak
marked: a click there selects the equations alive then; a click elsewhere, the equation run
then), and the costliest equations (a click selects one)."""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from jaxscope.analysis.measures import MEASURES, PROFILE_RUNS
from jaxscope.render.overlay import RAMP, human

# what the pane colours by: every measure (one that needs a profiled run says so: picking it asks for one)
CHOICES = (
    ("", "families (no measure)"),
    *((name, m.title if m.needs == "graph" else f"{m.title} (compiled, {PROFILE_RUNS} profiled runs)") for name, m in MEASURES.items()),
)


@dataclass(frozen=True)
class CostView:
    """What the pane shows of one trace."""

    totals: str  # a line of totals
    in_use: list[int]  # bytes in use while each top-level equation runs, in program order
    peak_at: int
    top: list[tuple[str, str, str, float, float, str]]  # (program path, module, primitive, flops, bytes, file:line), dearest first


class MemoryPlot(QWidget):
    """Bytes in use over the program's top-level equations, the peak marked."""

    picked = Signal(int)  # the equation's index in program order
    peak_picked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryPlot")
        self.setMinimumHeight(90)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setToolTip("Memory in use over the program: click the peak to select what is alive there")
        self.values: list[int] = []
        self.peak_at = -1

    def set_curve(self, values: list[int], peak_at: int) -> None:
        self.values, self.peak_at = values, peak_at
        self.update()

    def _area(self) -> QRectF:
        return QRectF(6.0, 6.0, max(self.width() - 12.0, 1.0), max(self.height() - 20.0, 1.0))

    def _x(self, i: int) -> float:
        area = self._area()
        return area.left() + area.width() * (i / max(len(self.values) - 1, 1))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        area = self._area()
        painter.setPen(QPen(self.palette().mid().color(), 1.0))
        painter.drawRect(area)
        if not self.values:
            painter.drawText(area, Qt.AlignmentFlag.AlignCenter, "no trace yet")
            return
        top = max(self.values) or 1
        step = max(len(self.values) // max(int(area.width()), 1), 1)  # at most a point per pixel
        path = QPainterPath(QPointF(area.left(), area.bottom()))
        for i in range(0, len(self.values), step):
            path.lineTo(QPointF(self._x(i), area.bottom() - area.height() * self.values[i] / top))
        path.lineTo(QPointF(area.right(), area.bottom()))
        fill = QColor(RAMP[2])
        fill.setAlpha(150)
        painter.fillPath(path, fill)
        painter.setPen(QPen(QColor(RAMP[4]), 1.2))
        painter.drawPath(path)
        if self.peak_at >= 0:
            x = self._x(self.peak_at)
            painter.setPen(QPen(QColor("#b42318"), 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
        painter.setPen(self.palette().text().color())
        painter.drawText(
            QRectF(area.left(), area.bottom() + 2, area.width(), 14),
            Qt.AlignmentFlag.AlignLeft,
            f"peak {human(float(top))}B at equation {self.peak_at + 1} of {len(self.values)}",
        )
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not self.values:
            return
        area = self._area()
        i = round((event.position().x() - area.left()) / max(area.width(), 1.0) * (len(self.values) - 1))
        i = min(max(i, 0), len(self.values) - 1)
        if self.peak_at >= 0 and abs(self._x(i) - self._x(self.peak_at)) <= 4.0:
            self.peak_picked.emit()
        else:
            self.picked.emit(i)


class CostPanel(QWidget):
    measure_changed = Signal(str)  # "" (no overlay) or a name of `measures.MEASURES`
    node_requested = Signal(str)  # a program path
    plot_picked = Signal(int)
    peak_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("costPanel")
        self.measure = QComboBox()
        self.measure.setObjectName("overlayMeasure")
        for key, text in CHOICES:
            self.measure.addItem(text, key)
        self.measure.currentIndexChanged.connect(lambda _i: self.measure_changed.emit(self.measure.currentData() or ""))
        self.scale = QLabel()
        self.scale.setObjectName("overlayScale")
        self.totals = QLabel("Trace a function to see what it costs.")
        self.totals.setObjectName("costTotals")
        self.totals.setWordWrap(True)
        self.totals.setTextFormat(Qt.TextFormat.PlainText)
        self.plot = MemoryPlot()
        self.plot.picked.connect(self.plot_picked)
        self.plot.peak_picked.connect(self.peak_requested)
        self.peak = QPushButton("Select what is alive at the peak")
        self.peak.clicked.connect(self.peak_requested)
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("costTop")
        self.table.setHorizontalHeaderLabels(["module", "primitive", "FLOPs", "bytes", "line"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # a module's path is long: it takes the room left
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)  # its innermost modules say which it is
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellClicked.connect(self._row_clicked)
        head = QHBoxLayout()
        head.addWidget(QLabel("Colour graph by:"))
        head.addWidget(self.measure)
        head.addWidget(self.scale, 1)
        side = QVBoxLayout()
        side.addWidget(self.totals)
        side.addWidget(self.plot, 1)
        side.addWidget(self.peak)
        body = QHBoxLayout()
        body.addLayout(side, 1)
        body.addWidget(self.table, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addLayout(body, 1)

    def _row_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        if item is not None:
            self.node_requested.emit(item.data(Qt.ItemDataRole.UserRole))

    def show_cost(self, view: CostView) -> None:
        self.totals.setText(view.totals)
        self.plot.set_curve(view.in_use, view.peak_at)
        self.table.setRowCount(len(view.top))
        for row, (path, module, prim, flops, nbytes, line) in enumerate(view.top):
            for col, text in enumerate((module, prim, human(flops), human(nbytes), line)):
                item = QTableWidgetItem(text)
                if col == 0:
                    item.setData(Qt.ItemDataRole.UserRole, path)  # what a click selects
                    item.setToolTip(f"{module}\n{path} {prim}")
                if col in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)

    def show_scale(self, caption: str, low: float, high: float) -> None:
        """The overlay's scale: a ramp from `low` to `high` (log), or nothing."""
        if not caption:
            self.scale.setText("")
            return
        if low == high == 0.0:  # no values yet (a profiled run on its way) or none: what is happening, no ramp
            self.scale.setText(f"<small>{html.escape(caption)}</small>")
            return
        stops = "".join(f"<span style='background:{c}'>&nbsp;&nbsp;&nbsp;</span>" for c in RAMP)
        self.scale.setText(f"{human(low)} {stops} {human(high)} &nbsp; <small>{html.escape(caption)} (log; grey: none)</small>")
