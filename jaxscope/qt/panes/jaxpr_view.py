"""The jaxpr text pane: highlighted, searchable, linked to the graph and source by line.

Jaxpr texts reach 2-4 MB (50k lines), so highlighting is on-screen only (`LazyHighlighter`);
QPlainTextEdit itself lays out lazily, so setting such a text costs about what Qt needs to
split it into blocks.
"""

from __future__ import annotations

from pygments.lexer import Lexer
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QWidget

from jaxscope.ir.jaxpr_lexer import JaxprLexer
from jaxscope.qt.panes.source_view import CodeView
from jaxscope.qt.panes.syntax_colours import LazyHighlighter, style_for_theme


class QtJaxprView(CodeView):
    """Read-only IR text (a jaxpr by default; StableHLO/HLO with their lexers) with the shared
    gutter, marks, line clicks and find."""

    def __init__(self, parent: QWidget | None = None, lexer: Lexer | None = None) -> None:
        super().__init__(parent)
        self.highlighter = LazyHighlighter(self, lexer or JaxprLexer(), style_for_theme(self.theme))

    def set_text(self, text: str, document: QTextDocument | None = None) -> None:
        """Show a new jaxpr text, or `document_maker`'s `document` of it (made off the GUI thread);
        clears colours and marks, scrolls to the top."""
        self._line_colours = {}
        self._marks, self._mark_set = [], set()
        self.highlighter.enabled = False  # nothing to format while Qt rebuilds the blocks
        if document is not None:
            self.show_document(document)
        else:
            self.setPlainText(text)
        self.verticalScrollBar().setValue(0)
        self.horizontalScrollBar().setValue(0)
        self.highlighter.enabled = True
        self.highlighter.reset({})
        self._refresh()

    def _set_highlight_style(self, style: str) -> None:
        self.highlighter.set_style(style)

    def find(self, text: str, backward: bool = False) -> bool:  # type: ignore[override]  # one find for every code view, not QPlainTextEdit's flags
        """Select the next (or previous) match of `text`, case-insensitive, wrapping around the ends."""
        if not text:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if super().find(text, flags):
            return True
        saved = self.textCursor()
        wrap = QTextCursor(self.document())
        wrap.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        self.setTextCursor(wrap)
        if super().find(text, flags):
            return True
        self.setTextCursor(saved)
        return False
