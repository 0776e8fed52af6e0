"""Would jit retrace? Compare the current inputs with other inputs, answered by the worker's JAX."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from jaxscope.analysis.retrace import RetraceResult
from jaxscope.qt.panes.inputs_panel import ARGS_MAX_CHARS, plain_label
from jaxscope.schema.trace import ErrorInfo
from jaxscope.targets import argspec


class RetraceDialog(QDialog):
    """Before (the traced inputs) vs after (editable); Check asks the window to run the comparison."""

    check_requested = Signal(str, str)  # before, after (call-argument texts)
    diff_requested = Signal(str)  # after: show the two traces' difference

    def __init__(self, function: str, before: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Would jit retrace {function}?")
        self.setObjectName("retraceDialog")
        mono = QFont("DejaVu Sans Mono", 10)
        self._before = before
        self.before = plain_label(before or "()")
        self.before.setFont(mono)
        self.after = QLineEdit()
        self.after.setMaxLength(ARGS_MAX_CHARS)  # before setText: the default cut is at 32767
        self.after.setText(before)
        self.after.setObjectName("retraceAfter")
        self.after.setFont(mono)
        self.error = plain_label()
        self.error.setStyleSheet("color: #c0392b;")
        self.answer = QPlainTextEdit()
        self.answer.setObjectName("retraceResult")
        self.answer.setReadOnly(True)
        self.answer.setFont(mono)
        self.answer.setPlaceholderText("Change a shape, a dtype or a static value above, then Check.")
        self.check = QPushButton("Check")
        self.check.setDefault(True)
        self.difference = QPushButton("Show the Difference")
        self.difference.setObjectName("retraceDifference")
        self.difference.setToolTip("Trace it with these inputs too and compare the two programs, equation by equation")
        self.difference.setEnabled(False)
        self.difference.clicked.connect(lambda: self.diff_requested.emit(self.after.text()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.difference, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.check, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Traced with", self.before)
        form.addRow("Call with", self.after)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.answer, 1)
        layout.addWidget(buttons)
        self.resize(760, 420)
        self.check.clicked.connect(self._check)
        self.after.returnPressed.connect(self._check)

    def _check(self) -> None:
        try:
            argspec.parse_call(self.after.text())
        except argspec.SpecError as exc:
            self.error.setText(exc.message)
            return
        self.error.setText("")
        self.answer.setPlainText("asking JAX…")
        self.check_requested.emit(self._before, self.after.text())

    def show_result(self, result: RetraceResult) -> None:
        self.answer.setPlainText(result.summary())
        self.difference.setEnabled(result.request.after == self.after.text())

    def show_error(self, info: ErrorInfo) -> None:
        self.answer.setPlainText(info.summary())
