"""The window's small modal questions and notices, as functions of their parent and data."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from jaxscope.about import __version__
from jaxscope.analysis.guide import Example


def ask_python_file(parent: QWidget) -> str | None:
    path, _ = QFileDialog.getOpenFileName(
        parent,
        "Open Python File or Saved Trace",
        os.getcwd(),
        "Python or saved trace (*.py *.jaxscope);;Python (*.py);;Saved trace (*.jaxscope)",
    )
    return path or None


class ExamplePicker(QDialog):
    """The tutorials as a list: each one's title and file, and what it teaches in one line."""

    def __init__(self, parent: QWidget | None, items: list[Example]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open Example")
        self.items = items
        self.list = QListWidget()
        self.list.setObjectName("exampleList")
        self.list.setWordWrap(True)
        self.list.setSpacing(3)
        for e in items:
            row = QListWidgetItem(f"{e.title}  ({e.name}.py)" + (f"\n{e.summary}" if e.summary else ""))
            row.setToolTip(e.path)
            self.list.addItem(row)
        self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Each tutorial opens with its guide; its links select what they name in the graph."))
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        self.resize(620, 460)

    def chosen(self) -> str | None:
        row = self.list.currentRow()
        return self.items[row].path if 0 <= row < len(self.items) else None


def ask_example(parent: QWidget, items: list[Example]) -> str | None:
    """The path of the tutorial picked, or None."""
    picker = ExamplePicker(parent, items)
    return picker.chosen() if picker.exec() == QDialog.DialogCode.Accepted else None


def confirm_run(parent: QWidget, path: str) -> bool:
    """Whether the user lets jaxscope run `path`'s top-level code (tracing imports it)."""
    box = QMessageBox(parent)
    box.setWindowTitle("Run this file?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(
        f"Tracing {os.path.basename(path)} runs its top-level code, and the code it imports, with your "
        f"privileges (jaxscope isolates crashes, it is not a sandbox).\n\n{path}"
    )
    run = box.addButton("Run", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("View Only", QMessageBox.ButtonRole.RejectRole)
    box.exec()
    return box.clickedButton() is run


def _notice(parent: QWidget, title: str, text: str) -> None:
    box = QMessageBox(parent)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    box.exec()


def show_shortcuts(parent: QWidget, actions: list[QAction]) -> None:
    rows = [f"{a.text().replace('&', ''):<24} {a.shortcut().toString()}" for a in actions if not a.shortcut().isEmpty()]
    _notice(parent, "Keyboard Shortcuts", "\n".join(rows))


def show_about(parent: QWidget, jax_version: str) -> None:
    from PySide6 import __version__ as pyside_version

    _notice(parent, "About jaxscope", f"jaxscope {__version__}\njax {jax_version} (in the worker)\nQt / PySide6 {pyside_version}")
