"""File → Export Graph: where to, and the CLI's options (`jaxscope export`): theme, PNG resolution,
how many levels of nested sub-graphs are open, the legend. The format follows the file's suffix."""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

FORMATS = "SVG (*.svg);;PNG (*.png);;PDF (*.pdf);;HTML page (*.html);;DOT (*.dot);;JSON (*.json)"
THEMES = ("light", "dark", "transparent")


@dataclass(frozen=True)
class ExportOptions:
    path: str
    theme: str = "light"
    dpi: int = 96
    legend: bool = False
    collapse: int | None = None  # None: as the window shows it; N: N levels of sub-graphs open


class ExportDialog(QDialog):
    def __init__(self, parent: QWidget | None, path: str, theme: str, depth: int) -> None:
        """`depth`: how deep the graph's sub-graphs nest (the collapse choices go that far)."""
        super().__init__(parent)
        self.setWindowTitle("Export Graph")
        self.path = QLineEdit(path)
        self.path.setObjectName("exportPath")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        where = QHBoxLayout()
        where.addWidget(self.path, 1)
        where.addWidget(browse)
        self.theme = QComboBox()
        self.theme.addItems(THEMES)
        self.theme.setCurrentText(theme if theme in THEMES else "light")
        self.dpi = QSpinBox()
        self.dpi.setRange(24, 600)
        self.dpi.setValue(96)
        self.dpi.setSuffix(" dpi")
        self.dpi.setToolTip("PNG only: 96 is one pixel per layout pixel, 192 for high-density screens")
        self.collapse = QComboBox()
        self.collapse.addItem("as shown in the window", None)
        self.collapse.addItem("all sub-graphs collapsed", 0)
        for level in range(1, max(depth, 0) + 1):
            self.collapse.addItem(f"{level} level{'s' if level > 1 else ''} open" + (" (all)" if level == depth else ""), level)
        self.legend = QCheckBox("a legend of the node colours")
        form = QFormLayout(self)
        form.addRow("File:", where)
        form.addRow("Theme:", self.theme)
        form.addRow("Resolution:", self.dpi)
        form.addRow("Sub-graphs:", self.collapse)
        form.addRow("", self.legend)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(560, self.sizeHint().height())

    def options(self) -> ExportOptions:
        collapse = self.collapse.currentData()
        return ExportOptions(
            self.path.text().strip(),
            self.theme.currentText(),
            self.dpi.value(),
            self.legend.isChecked(),
            collapse if isinstance(collapse, int) else None,
        )

    def _browse(self) -> None:
        start = self.path.text() or os.getcwd()
        path, _ = QFileDialog.getSaveFileName(self, "Export Graph", start, FORMATS)
        if path:
            self.path.setText(path)
