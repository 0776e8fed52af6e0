"""The Log pane: user prints and worker output, written in batches.

A print loop in user code arrives as tens of thousands of small chunks; inserting each one into
the text widget froze the event loop for seconds (10 MB of prints: a 6.5 s freeze). Chunks are
queued and written together at most every FLUSH_MS, and only the tail that can be kept. A line is
shown up to MAX_LINE_CHARS: the text widget lays a line out whole, and one 10-million-character
print (growing with every flush) froze the window for minutes.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

FLUSH_MS = 50
LIMIT = 200_000  # characters written per flush (older ones would scroll out of the block limit anyway)
MAX_LINE_CHARS = 4_000  # characters shown of one line; the rest is counted in a note at its end


class LogPane(QPlainTextEdit):
    """A read-only, line-capped text pane; `append_text` returns at once."""

    def __init__(self, parent: QWidget | None = None, max_lines: int = 20_000) -> None:
        super().__init__(parent)
        self.setObjectName("logView")
        self.setReadOnly(True)
        self.setMaximumBlockCount(max_lines)
        self._pending: list[str] = []
        self._size = 0
        self._line_len = 0  # characters of the line being written, queued ones included
        self._dropped = 0  # characters of that line not shown
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def append_text(self, text: str) -> None:
        """Queue `text` for the next flush (the queue keeps only the last LIMIT characters)."""
        text = self._capped(text)
        self._pending.append(text)
        self._size += len(text)
        if self._size > 2 * LIMIT:
            self._pending = ["".join(self._pending)[-LIMIT:]]
            self._size = len(self._pending[0])
        if not self._timer.isActive():
            self._timer.start()

    def _capped(self, text: str) -> str:
        """`text` with every line cut at MAX_LINE_CHARS (lines go on across calls)."""
        if self._line_len + len(text) <= MAX_LINE_CHARS and not self._dropped:
            newline = text.rfind("\n")
            self._line_len = len(text) - newline - 1 if newline >= 0 else self._line_len + len(text)
            return text
        out: list[str] = []
        for k, part in enumerate(text.split("\n")):
            if k:  # a newline ends the line before this part
                if self._dropped:
                    out.append(f" … [{self._dropped:,} more characters on this line]")
                    self._dropped = 0
                out.append("\n")
                self._line_len = 0
            room = max(MAX_LINE_CHARS - self._line_len, 0)
            out.append(part[:room])
            self._line_len += min(len(part), room)
            self._dropped += max(len(part) - room, 0)
        return "".join(out)

    def flush(self) -> None:
        """Write what is queued, at the end."""
        text = "".join(self._pending)[-LIMIT:]
        self._pending, self._size = [], 0
        if text:
            self.moveCursor(QTextCursor.MoveOperation.End)
            self.insertPlainText(text)
