"""The IR dock: jaxpr, StableHLO, compiled HLO and XLA's fusions, as tabs of one widget.

One dock with tabs inside (rather than tabbed docks) keeps the IRs side by side with the graph
and avoids Qt 6.11's stray tab bar for a second group of tabbed docks.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from jaxscope.ir.hlo_lexer import HloLexer, StableHloLexer
from jaxscope.ir.hlo_links import FusionInfo
from jaxscope.qt.panes.inputs_panel import plain_label
from jaxscope.qt.panes.jaxpr_view import QtJaxprView


class IrTabs(QTabWidget):
    """Tabs: jaxpr (given), StableHLO, Compiled HLO, Fusions; a status line for lowering/compiling."""

    ir_line_clicked = Signal(str, int)  # stage, 1-based line
    fusion_selected = Signal(object)  # FusionInfo
    compile_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, jaxpr: QtJaxprView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("irTabs")
        self.jaxpr = jaxpr
        self.views = {"stablehlo": QtJaxprView(lexer=StableHloLexer()), "compiled": QtJaxprView(lexer=HloLexer())}
        self.views["stablehlo"].setObjectName("stablehloView")
        self.views["compiled"].setObjectName("hloView")
        self.status = plain_label()
        self.status.setObjectName("hloStatus")
        self.compile_button = QPushButton("Compile")
        self.compile_button.setToolTip("Ask XLA to compile (can take minutes for big unrolled programs)")
        self.cancel_button = QPushButton("Cancel")
        self.fusions = QTreeWidget()
        self.fusions.setObjectName("fusionTree")
        self.fusions.setHeaderLabels(["Fusion (kernel)", "Kind", "Ops", "Equations", "Lines"])
        self.fusions.setRootIsDecorated(False)
        # names whole (`negate_multiply_fusion.3`, not `negate_…`): the columns fit their text, the tree scrolls
        self.fusions.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.fusions.header().setStretchLastSection(True)
        self.fusions.setTextElideMode(Qt.TextElideMode.ElideNone)
        self._fusions: list[FusionInfo] = []
        self.addTab(jaxpr, "jaxpr")
        self.addTab(self._with_status(self.views["stablehlo"]), "StableHLO")
        self.addTab(self._with_status(self.views["compiled"], buttons=True), "Compiled HLO")
        self.addTab(self.fusions, "Fusions")
        for stage, view in self.views.items():
            view.line_clicked.connect(lambda line, s=stage: self.ir_line_clicked.emit(s, line))
        self.fusions.itemClicked.connect(self._fusion_clicked)
        self.fusions.itemActivated.connect(self._fusion_clicked)
        self.compile_button.clicked.connect(self.compile_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.clear()

    def _with_status(self, view: QtJaxprView, buttons: bool = False) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        if buttons:
            row = QHBoxLayout()
            row.setContentsMargins(6, 2, 6, 0)
            row.addWidget(self.status, 1)
            row.addWidget(self.compile_button)
            row.addWidget(self.cancel_button)
            layout.addLayout(row)
        layout.addWidget(view, 1)
        return box

    def clear(self, note: str = "") -> None:
        for view in self.views.values():
            view.set_text("")
        self.fusions.clear()
        self._fusions = []
        self.set_status(note)

    def set_status(self, text: str, compiling: bool = False, can_compile: bool = False) -> None:
        self.status.setText(text)
        self.cancel_button.setVisible(compiling)
        self.compile_button.setVisible(can_compile and not compiling)

    def set_text(self, stage: str, text: str, document: QTextDocument | None = None) -> None:
        self.views[stage].set_text(text, document)

    def set_fusions(self, fusions: list[FusionInfo]) -> None:
        self.fusions.clear()
        self._fusions = list(fusions)
        for index, f in enumerate(self._fusions):
            lines = ", ".join(str(n) for n in f.source_lines[:6]) + (", …" if len(f.source_lines) > 6 else "")
            item = QTreeWidgetItem([f.name, f.kind, str(f.n_ops), str(len(f.nodes)), lines])
            item.setData(0, Qt.ItemDataRole.UserRole, index)
            item.setToolTip(0, "<p>" + html.escape(f"{f.name}: {f.kind} fusion of {f.n_ops} ops from {len(f.nodes)} equations") + "</p>")
            self.fusions.addTopLevelItem(item)
        self.setTabText(3, f"Fusions ({len(self._fusions)})" if self._fusions else "Fusions")

    def fusion_list(self) -> list[FusionInfo]:
        return list(self._fusions)

    def set_theme(self, theme: str) -> None:
        for view in (self.jaxpr, *self.views.values()):
            view.set_theme(theme)

    def _fusion_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        index = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(index, int) and 0 <= index < len(self._fusions):
            self.fusion_selected.emit(self._fusions[index])
