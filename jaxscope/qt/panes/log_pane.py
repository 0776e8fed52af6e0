"""The Log pane: user prints and worker output, written in batches.

A print loop in user code arrives as tens of thousands of small chunks; inserting each one into
the text widget froze the event loop for seconds (10 MB of prints: a 6.5 s freeze). Chunks are
queued and written together at most every FLUSH_MS, and only the tail that can be kept.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

FLUSH_MS = 50
LIMIT = 200_000  # characters written per flush (older ones would scroll out of the block limit anyway)


class LogPane(QPlainTextEdit):
    """A read-only, line-capped text pane; `append_text` returns at once."""

    def __init__(self, parent: QWidget | None = None, max_lines: int = 20_000) -> None:
        super().__init__(parent)
        self.setObjectName("logView")
        self.setReadOnly(True)
        self.setMaximumBlockCount(max_lines)
        self._pending: list[str] = []
        self._size = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def append_text(self, text: str) -> None:
        """Queue `text` for the next flush (the queue keeps only the last LIMIT characters)."""
        self._pending.append(text)
        self._size += len(text)
        if self._size > 2 * LIMIT:
            self._pending = ["".join(self._pending)[-LIMIT:]]
            self._size = len(self._pending[0])
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Write what is queued, at the end."""
        text = "".join(self._pending)[-LIMIT:]
        self._pending, self._size = [], 0
        if text:
            self.moveCursor(QTextCursor.MoveOperation.End)
            self.insertPlainText(text)
