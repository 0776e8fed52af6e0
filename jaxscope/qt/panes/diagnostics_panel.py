"""The Diagnostics pane: hidden inputs and side effects the trace revealed, one row each."""

from __future__ import annotations

import html
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from jaxscope.schema.trace import Diagnostic

_MARK = {"error": "error", "warning": "warning", "info": "info"}
_COLOUR = {"error": "#d0453a", "warning": "#c98a00", "info": "#3d7ebf"}


class DiagnosticsPanel(QWidget):
    """Rows of (severity, what, where); activating a row asks the window to show its lines and nodes."""

    activated = Signal(object)  # Diagnostic

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setObjectName("diagnosticsTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["", "Diagnostic", "Where"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setWordWrap(False)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self._items: list[Diagnostic] = []
        self.tree.itemActivated.connect(self._activate)
        self.tree.itemClicked.connect(self._activate)

    def set_diagnostics(self, diagnostics: tuple[Diagnostic, ...], file: str = "") -> None:
        """Show these; `file` is the open file, whose lines are shown without its name."""
        self.tree.clear()
        self._items = list(diagnostics)
        for index, d in enumerate(self._items):
            where = ", ".join(
                f"line {loc.line}" if loc.file == file else f"{os.path.basename(loc.file)}:{loc.line}" for loc in d.locations[:4]
            )
            if len(d.locations) > 4:
                where += ", …"
            item = QTreeWidgetItem([_MARK[d.severity], d.title, where])
            item.setData(0, Qt.ItemDataRole.UserRole, index)
            item.setForeground(0, QBrush(QColor(_COLOUR[d.severity])))
            tip = "<p>" + html.escape(d.summary()).replace("\n", "<br>") + "</p>"  # user text, escaped
            for column in range(3):
                item.setToolTip(column, tip)
            self.tree.addTopLevelItem(item)
        if not self._items:
            item = QTreeWidgetItem(["", "No diagnostics: no captured globals, trace-time prints, key reuse or leaks.", ""])
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.tree.addTopLevelItem(item)

    def diagnostics(self) -> list[Diagnostic]:
        return list(self._items)

    def _activate(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        index = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(index, int) and 0 <= index < len(self._items):
            self.activated.emit(self._items[index])
