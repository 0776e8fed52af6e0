"""The read-only code panes: `CodeView` (shared gutter, line colours, marks, clicks) and
`QtSourceView`, the user's source file with Python highlighting.

Two visual layers, kept apart on purpose: *line colours* are soft backgrounds plus a chip in
the gutter saying "this line emitted equations" (one palette colour per line, Compiler Explorer
style); *marks* say "this is what you selected elsewhere": an outline, a tinted overlay and an
arrow in the gutter. All text is shown as plain text; nothing is interpreted as rich text.

Both are painted for the on-screen lines only, under the text, rather than as ExtraSelections:
QPlainTextEdit walks every extra selection for every visible block on each paint, which measured
4.6 s to set 50k line colours on a big jaxpr and 0.7 s per repaint with 10k marks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.python import PythonLexer
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound
from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPolygonF,
    QResizeEvent,
    QTextBlock,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import QApplication, QPlainTextDocumentLayout, QPlainTextEdit, QToolTip, QWidget

from jaxscope.analysis.flow_marks import LineMark
from jaxscope.qt.graph.tooltips import tooltip_html
from jaxscope.qt.panes import flow_paint
from jaxscope.qt.panes.syntax_colours import (
    EditorColours,
    LazyHighlighter,
    LineLexer,
    editor_colours,
    python_string_openers,
    style_for_theme,
)

MARK_ACCENT = {"light": "#1c6dd0", "dark": "#58a6ff"}  # outline, arrow; a tint of it fills the line
MARK_FILL_ALPHA = {"light": 48, "dark": 72}
CHIP_W = 4  # the line-colour chip at the gutter's right edge
ARROW_W = 12  # room for the mark arrow at the gutter's left edge


def monospace_font() -> QFont:
    """The system fixed-pitch font, made explicit for platforms that answer a proportional one."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    return font


INSERT_CHARS = 8192  # characters per insertText call when a document is made off the GUI thread


def insert_in_parts(doc: QTextDocument, text: str) -> None:
    """`doc.setPlainText(text)` for an empty `doc`, as insertText calls of about `INSERT_CHARS`
    characters cut before a newline. One setPlainText of a 10 MB jaxpr on another thread stopped
    the GUI thread's text painting for 0.2-0.3 s (both wait on something inside Qt); in parts, the
    longest wait is ~40 ms, for 10-20 % more time on the making thread."""
    cursor = QTextCursor(doc)
    i, n = 0, len(text)
    while i < n:
        j = text.find("\n", min(i + INSERT_CHARS, n))
        j = n if j < 0 else j
        cursor.insertText(text[i:j])
        i = j


def make_block_layouts(doc: QTextDocument) -> None:
    """Give each block its (empty) QTextLayout now, on the making thread: the view's `setDocument`
    otherwise makes one per block on the GUI thread (a big jaxpr's text stalls it). Nothing is laid
    out, so no font engine is touched."""
    block = doc.firstBlock()
    while block.isValid():
        block.layout()
        block = block.next()


class _PaletteLines(Mapping[int, QColor]):
    """Line -> its colour, from a line -> palette index map (cycling), looked up when asked."""

    __slots__ = ("indices", "_colours")

    def __init__(self, indices: dict[int, int], colours: list[QColor]) -> None:
        self.indices, self._colours = indices, colours  # the map as given, not copied

    def __getitem__(self, line: int) -> QColor:
        return self._colours[self.indices[line] % len(self._colours)]

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)


class _Gutter(QWidget):
    """Line numbers, colour chips and mark arrows; paints and clicks through its editor."""

    def __init__(self, editor: CodeView) -> None:
        super().__init__(editor)
        self.editor = editor
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.editor.paint_gutter(self, event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            line = self.editor.line_at(int(event.position().y()))
            if line is not None:
                self.editor.line_clicked.emit(line)


class CodeView(QPlainTextEdit):
    """Read-only monospace text with a gutter, per-line colours, marks and a click signal."""

    line_clicked = Signal(int)  # 1-based line, on a single click (not a drag) in text or gutter

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setUndoRedoEnabled(False)
        self.setFont(monospace_font())
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.gutter = _Gutter(self)
        self._made_doc: QTextDocument | None = None  # the `show_document` document shown, kept alive here
        self._line_colours: Mapping[int, QColor] = {}
        self._marks: list[int] = []
        self._mark_set: set[int] = set()
        self._press: QPoint | None = None
        self.theme = "light"
        self.colours: EditorColours = editor_colours(style_for_theme("light"))
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self._update_gutter_width()
        self._apply_palette()

    def document_maker(self) -> Callable[[str], QTextDocument]:
        """A function for any thread that makes the document of a text as `setPlainText` would
        here (font, tab stops, no wrapping, no undo), owned by this view's thread: splitting a
        multi-MB text into blocks is most of what setting it costs (a 10 MB jaxpr: 0.35 s of the
        GUI thread by `setPlainText`, 0.08 s by `show_document`). QTextDocument is reentrant."""
        font, option, home = QFont(self.font()), QTextOption(self.document().defaultTextOption()), self.thread()

        def make(text: str) -> QTextDocument:
            # No layout here (`show_document` adds it): with one, a one-block text is laid out at
            # once, with font engines cached by this thread, which crashed Qt once it had ended.
            doc = QTextDocument()
            doc.setUndoRedoEnabled(False)
            doc.setDefaultFont(font)
            doc.setDefaultTextOption(option)
            insert_in_parts(doc, text)
            make_block_layouts(doc)
            doc.moveToThread(home)
            return doc

        return make

    def show_document(self, doc: QTextDocument) -> None:
        """Show a document from `document_maker`; the one it replaces, if also made so, is deleted
        once the event loop runs."""
        old, self._made_doc = self._made_doc, doc
        doc.setDocumentLayout(QPlainTextDocumentLayout(doc))
        # The text's new width first, while the old document is shown: a change of it lays out
        # every block shown (a 50k-equation jaxpr's 150k lines: ~8 ms each time; the gutter's
        # digits and the scroll bar a long text brings each changed it once the text was set).
        blocks = doc.blockCount()
        tall = blocks * self.fontMetrics().lineSpacing() > self.viewport().height()
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn if tall else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._update_gutter_width(blocks)
        self.setDocument(doc)
        if old is not None:
            old.deleteLater()

    # ------------------------------------------------------------------ theme

    def set_theme(self, theme: str) -> None:
        """ "light" or "dark": editor colours, token colours and mark colours follow."""
        self.theme = "dark" if theme == "dark" else "light"
        self.colours = editor_colours(style_for_theme(self.theme))
        self._apply_palette()
        self._set_highlight_style(style_for_theme(self.theme))
        self._refresh()

    def _set_highlight_style(self, style: str) -> None:
        """Subclasses switch their highlighter's style here."""

    def _apply_palette(self) -> None:
        pal = self.palette()
        c = self.colours
        for role, colour in (
            (QPalette.ColorRole.Base, c.background),
            (QPalette.ColorRole.Text, c.foreground),
            (QPalette.ColorRole.Window, c.gutter_background),
            (QPalette.ColorRole.WindowText, c.foreground),
            (QPalette.ColorRole.Highlight, QColor("#264f78" if c.dark else "#b3d4fc")),
            (QPalette.ColorRole.HighlightedText, c.foreground),
            (QPalette.ColorRole.Button, c.gutter_background),  # scroll bars
            (QPalette.ColorRole.ButtonText, c.gutter_foreground),
            (QPalette.ColorRole.Light, c.gutter_background.lighter(120)),
            (QPalette.ColorRole.Mid, c.gutter_foreground),
            (QPalette.ColorRole.Dark, c.gutter_background.darker(130)),
        ):
            pal.setColor(role, colour)
        self.setPalette(pal)
        self.viewport().update()

    @property
    def accent(self) -> QColor:
        return QColor(MARK_ACCENT[self.theme])

    # ------------------------------------------------------------------ line colours and marks

    def set_line_colours(self, colours: dict[int, str]) -> None:
        """1-based line -> background colour (hex); replaces the previous colours."""
        cache: dict[str, QColor] = {}
        for hex_ in set(colours.values()):
            colour = QColor(hex_)
            if colour.isValid():
                cache[hex_] = colour
        self._line_colours = {int(line): cache[hex_] for line, hex_ in colours.items() if hex_ in cache}
        self._refresh()

    def set_line_colour_indices(self, indices: dict[int, int], palette: list[str]) -> None:
        """1-based line -> index into `palette` (cycling); replaces the previous colours. Kept as
        given and looked up as lines are painted: an IR text at 50k equations colours ~90k lines,
        and a dict of their colours took 10-15 ms of the GUI thread."""
        made = [QColor(hex_) for hex_ in palette]
        self._line_colours = _PaletteLines(indices, made) if made else {}
        self._refresh()

    def line_colours(self) -> dict[int, str]:
        return {line: c.name() for line, c in self._line_colours.items()}

    def line_colour_indices(self) -> dict[int, int] | None:
        """The line -> palette index map `set_line_colour_indices` was given, kept as is (None when
        the colours were given by hex)."""
        return self._line_colours.indices if isinstance(self._line_colours, _PaletteLines) else None

    def mark_lines(self, lines: Iterable[int], scroll: bool = True) -> None:
        """Mark `lines` (1-based) strongly, replacing earlier marks; scroll the first into view."""
        count = self.blockCount()
        self._marks = sorted({int(n) for n in lines if 1 <= int(n) <= count})
        self._mark_set = set(self._marks)
        self._refresh()
        if scroll and self._marks:
            self.scroll_to_line(self._marks[0])

    def clear_marks(self) -> None:
        self.mark_lines((), scroll=False)

    def marked_lines(self) -> list[int]:
        return list(self._marks)

    def _refresh(self) -> None:
        """Repaint the text area and gutter after colours or marks changed."""
        self.viewport().update()
        self.gutter.update()

    # ------------------------------------------------------------------ scrolling and geometry

    def visible_lines(self) -> range:
        """The 1-based lines at least partly on screen."""
        first = self.firstVisibleBlock().blockNumber() + 1
        count = max(self.viewport().height() // max(self.fontMetrics().lineSpacing(), 1), 1)
        return range(first, min(first + count, self.blockCount()) + 1)

    def scroll_to_line(self, line: int) -> None:
        """Bring `line` on screen (a third from the top) unless it is visible already above the
        bottom third (there, a pane that shrinks a little, as a dock below grows, would hide it)."""
        shown = self.visible_lines()
        if line in shown and shown.index(line) < max(len(shown) * 2 // 3, 1):
            return
        self.verticalScrollBar().setValue(max(line - 1 - len(shown) // 3, 0))

    def line_at(self, y: int) -> int | None:
        """The 1-based line drawn at viewport height `y`, or None below the last line."""
        block = self.cursorForPosition(QPoint(0, y)).block()
        if not block.isValid():
            return None
        rect = self.blockBoundingGeometry(block).translated(self.contentOffset())
        if y > rect.bottom() + 1 or y < rect.top() - 1:
            return None
        return block.blockNumber() + 1

    def _visible_blocks(self) -> Iterator[tuple[QTextBlock, QRectF]]:
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        height = self.viewport().height()
        while block.isValid():
            rect = self.blockBoundingGeometry(block).translated(offset)
            if rect.top() > height:
                break
            if block.isVisible():
                yield block, rect
            block = block.next()

    # ------------------------------------------------------------------ gutter

    def gutter_width(self, blocks: int | None = None) -> int:
        """For `blocks` lines (by default, the document's)."""
        digits = max(len(str(max(self.blockCount() if blocks is None else blocks, 1))), 3)
        return ARROW_W + self.fontMetrics().horizontalAdvance("9") * digits + 8 + CHIP_W

    def _update_gutter_width(self, blocks: int | None = None) -> None:
        """The text's left margin, for `blocks` lines (`blockCountChanged` passes the new count)."""
        self.setViewportMargins(self.gutter_width(blocks), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        cr = self.contentsRect()
        self.gutter.setGeometry(QRect(cr.left(), cr.top(), self.viewportMargins().left(), cr.height()))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        """Numbers right-aligned, a chip for coloured lines, an arrow for marked ones."""
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), self.colours.gutter_background)
        width = gutter.width()
        number_right = width - CHIP_W - 5
        painter.setFont(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        for block, rect in self._visible_blocks():
            line = block.blockNumber() + 1
            top, h = int(rect.top()), int(rect.height())
            if top > event.rect().bottom() or top + h < event.rect().top():
                continue
            colour = self._line_colours.get(line)
            if colour is not None:
                painter.fillRect(QRect(width - CHIP_W, top, CHIP_W, h), _strong(colour, self.colours.dark))
            marked = line in self._mark_set
            if marked:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(self.accent)
                cy, half = top + h / 2, min(h / 2 - 2, 5)
                painter.drawPolygon(QPolygonF([QPointF(3, cy - half), QPointF(3 + half * 1.6, cy), QPointF(3, cy + half)]))
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.setFont(bold if marked else self.font())
            painter.setPen(self.accent if marked else self.colours.gutter_foreground)
            painter.drawText(
                QRect(ARROW_W, top, number_right - ARROW_W, h), int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), str(line)
            )
        painter.end()

    # ------------------------------------------------------------------ painting marks and clicks

    def paintEvent(self, event: QPaintEvent) -> None:
        if self._line_colours or self._mark_set:
            self._paint_line_backgrounds(event)
        super().paintEvent(event)
        if self._mark_set:
            self._paint_mark_outlines()

    def _paint_line_backgrounds(self, event: QPaintEvent) -> None:
        """Line colours, then the mark tint over them, under the text (drawn next by Qt)."""
        painter = QPainter(self.viewport())
        width = self.viewport().width()
        tint = QColor(self.accent)
        tint.setAlpha(MARK_FILL_ALPHA[self.theme])
        area = event.rect()
        for block, rect in self._visible_blocks():
            if rect.bottom() < area.top() or rect.top() > area.bottom():
                continue
            line = block.blockNumber() + 1
            row = QRectF(0.0, rect.top(), width, rect.height())
            colour = self._line_colours.get(line)
            if colour is not None:
                painter.fillRect(row, colour)
            if line in self._mark_set:
                painter.fillRect(row, tint)
        painter.end()

    def _paint_mark_outlines(self) -> None:
        painter = QPainter(self.viewport())
        painter.setPen(QPen(self.accent, 1.5))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        right = self.viewport().width() - 1.5
        run: list[QRectF] = []
        for block, rect in self._visible_blocks():
            if block.blockNumber() + 1 in self._mark_set:
                run.append(rect)
                continue
            self._outline(painter, run, right)
            run = []
        self._outline(painter, run, right)
        painter.end()

    @staticmethod
    def _outline(painter: QPainter, run: list[QRectF], right: float) -> None:
        """One rounded outline around a run of consecutive marked lines."""
        if run:
            painter.drawRoundedRect(QRectF(1.0, run[0].top() + 0.75, right - 1.0, run[-1].bottom() - run[0].top() - 1.5), 3, 3)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        press, self._press = self._press, None
        if event.button() != Qt.MouseButton.LeftButton or press is None:
            return
        pos = event.position().toPoint()
        if (pos - press).manhattanLength() <= QApplication.startDragDistance():
            line = self.line_at(pos.y())
            if line is not None:
                self.line_clicked.emit(line)


def _strong(colour: QColor, dark: bool) -> QColor:
    """The chip colour: the soft line colour made vivid enough to read as a marker in the gutter."""
    saturation = min(1.0, colour.hslSaturationF() + 0.25)
    return QColor.fromHslF(colour.hslHueF(), saturation, 0.45 if dark else 0.62, colour.alphaF())


def lexer_for_path(path: str) -> Lexer:
    """Python for .py files and unnamed text; Pygments' guess by file name otherwise."""
    if not path or path.endswith((".py", ".pyi", ".pyw")):
        return PythonLexer()
    try:
        return get_lexer_for_filename(path)
    except ClassNotFound:
        return TextLexer()


class QtSourceView(CodeView):
    """The user's source file: Python highlighting, line colours, marks, line clicks, and the
    marks of what tracing baked in (see `flow_paint`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = ""
        self.highlighter = LazyHighlighter(self, PythonLexer(), style_for_theme(self.theme))
        self._flow: dict[int, LineMark] = {}

    def set_flow_marks(self, marks: dict[int, LineMark]) -> None:
        """Line -> what happened to it while tracing; replaces the previous marks."""
        self._flow = dict(marks)
        self._refresh()

    def flow_marks(self) -> dict[int, LineMark]:
        return dict(self._flow)

    def flow_tooltip(self, line: int) -> str:
        mark = self._flow.get(line)
        return flow_paint.tooltip(mark) if mark is not None else ""

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._flow:
            painter = QPainter(self.viewport())
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            left = self.contentOffset().x() + self.document().documentMargin()
            flow_paint.paint(painter, self._visible_blocks(), self._flow, self.viewport().width(),
                             self.colours.background, self.theme, QFontMetricsF(self.font()), left)  # fmt: skip
            painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and self._flow and isinstance(event, QHelpEvent):
            pos = self.viewport().mapFromGlobal(event.globalPos())
            line = self.line_at(pos.y()) if pos.x() >= 0 else None
            text = self.flow_tooltip(line) if line else ""
            if text:
                QToolTip.showText(event.globalPos(), tooltip_html(text), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def set_source(self, text: str, path: str) -> None:
        """Show `text`, the file at `path` (used only to pick the lexer); clears colours and marks."""
        self.path = path
        self._line_colours = {}
        self._marks, self._mark_set = [], set()
        self._flow = {}
        lexer = lexer_for_path(path)
        self.highlighter.enabled = False  # nothing to format while Qt rebuilds the blocks
        self.highlighter.line_lexer = LineLexer(lexer)
        self.setPlainText(text)
        self.verticalScrollBar().setValue(0)
        self.horizontalScrollBar().setValue(0)
        python = isinstance(lexer, PythonLexer)
        self.highlighter.enabled = True
        self.highlighter.reset(python_string_openers(self.toPlainText()) if python else {})
        self._refresh()

    def _set_highlight_style(self, style: str) -> None:
        self.highlighter.set_style(style)
