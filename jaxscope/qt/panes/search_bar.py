"""The graph's search box, always there above the graph: a query (primitive, scope such as
``block1/up``, input name, shape, ``:12``), the match count, next and previous. It works on any
object with the graph view's search API, so it is tested without a window."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget


class Searchable(Protocol):
    def search(self, text: str) -> list[str]: ...

    @property
    def match_count(self) -> int: ...

    @property
    def current_match_index(self) -> int: ...

    def next_match(self) -> str | None: ...

    def previous_match(self) -> str | None: ...


class _Field(QLineEdit):
    """Enter: next match; Shift+Enter: previous; Esc: clear."""

    def __init__(self, bar: SearchBar) -> None:
        super().__init__()
        self.bar = bar

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.bar.step(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else +1)
        elif event.key() == Qt.Key.Key_Escape and self.text():
            self.clear()
        else:
            super().keyPressEvent(event)


class SearchBar(QWidget):
    def __init__(self, target: Searchable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.field = _Field(self)
        self.field.setObjectName("graphSearch")
        self.field.setPlaceholderText("Find in graph: primitive, scope (block1/up), input, shape or :line")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel("")
        self.count.setObjectName("graphSearchCount")
        self.count.setMinimumWidth(90)
        self.previous = QToolButton()
        self.previous.setText("▲")
        self.previous.setToolTip("Previous match (Shift+Enter)")
        self.next = QToolButton()
        self.next.setText("▼")
        self.next.setToolTip("Next match (Enter)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.previous)
        layout.addWidget(self.next)
        self._timer = QTimer(self)  # search as the user types, once they pause (a 50k graph: tens of ms a search)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.run)
        self.field.textChanged.connect(lambda _text: self._timer.start())
        self.previous.clicked.connect(lambda: self.step(-1))
        self.next.clicked.connect(lambda: self.step(+1))
        self._shown_for = ""

    def run(self) -> int:
        """Search now for the field's text; returns the match count."""
        self._timer.stop()
        text = self.field.text().strip()
        self._shown_for = text
        found = len(self.target.search(text))  # "" clears the outlines
        self._say()
        return found

    def step(self, direction: int) -> str | None:
        if self.field.text().strip() != self._shown_for:
            self.run()
        path = self.target.next_match() if direction > 0 else self.target.previous_match()
        self._say()
        return path

    def refresh(self) -> None:
        """The graph changed (a new layout): the same query over what is drawn now."""
        if self.field.text().strip():
            self.run()

    def focus(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def _say(self) -> None:
        n, i = self.target.match_count, self.target.current_match_index
        if not self._shown_for:
            self.count.setText("")
        elif n == 0:
            self.count.setText("no match")
        else:
            self.count.setText(f"{i + 1} of {n}" if i >= 0 else f"{n} match{'es' if n != 1 else ''}")
