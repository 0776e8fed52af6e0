"""Pygments token colours in Qt text views: one bridge for the source and the jaxpr views.

Two ways to apply them, both lexing one line (block) at a time:

* `PygmentsHighlighter`, a QSyntaxHighlighter: every block, in order, carrying a block state
  that tells a Python line it starts inside a triple-quoted string. Simple and exact, but Qt
  calls it for every block on setPlainText: measured 0.9 s for a 4.7k-line Python file and
  about 3 s for a 50k-line jaxpr (0.3 s of that is the callback alone, even doing nothing).
* `LazyHighlighter`, used by both views: only the blocks on screen (plus a margin), formatted
  as they scroll into view, written straight into each block's QTextLayout as
  QSyntaxHighlighter does inside. Python lines that start inside a triple-quoted string get
  their opener from `python_string_openers`, a fast regex scan of the whole file.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

from pygments.lexer import Lexer
from pygments.style import StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import String, Token, _TokenType
from pygments.util import ClassNotFound
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextBlock, QTextCharFormat, QTextDocument, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit

STYLES: dict[str, str] = {"light": "default", "dark": "github-dark"}  # both ship with Pygments >= 2.14
FALLBACK_STYLE = "default"


def style_for_theme(theme: str) -> str:
    """The Pygments style name used for a view theme ("light" or "dark")."""
    return STYLES.get(theme, STYLES["light"])


def load_style(name: str) -> StyleMeta:
    """A Pygments style class by name, falling back to "default" for an unknown name."""
    try:
        return get_style_by_name(name)
    except ClassNotFound:
        return get_style_by_name(FALLBACK_STYLE)


@dataclass(frozen=True, slots=True)
class EditorColours:
    """The plain colours a style implies for the editor around the tokens."""

    background: QColor
    foreground: QColor
    gutter_background: QColor
    gutter_foreground: QColor
    dark: bool


def editor_colours(style_name: str) -> EditorColours:
    """Background, text and gutter colours for `style_name` (gutter derived from bg/fg)."""
    style = load_style(style_name)
    bg = QColor(style.background_color or "#ffffff")
    fg_hex = style.style_for_token(Token.Text).get("color") or style.style_for_token(Token).get("color")
    dark = bg.lightnessF() < 0.5
    fg = QColor(f"#{fg_hex}") if fg_hex else QColor("#e6edf3" if dark else "#1f2328")
    gutter_bg = bg.lighter(135) if dark else bg.darker(104)
    if dark and gutter_bg == bg:  # pure black does not lighten by a factor
        gutter_bg = QColor("#161b22")
    gutter_fg = _mix(fg, bg, 0.45)
    return EditorColours(bg, fg, gutter_bg, gutter_fg, dark)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """`a` moved towards `b` by `t` (0 = a, 1 = b)."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


class TokenFormats:
    """Pygments token type -> QTextCharFormat for one style, cached (None: draw as plain text).

    Token background colours are ignored so the views' per-line colours stay visible.
    """

    def __init__(self, style_name: str) -> None:
        self.style_name = style_name
        self._style = load_style(style_name)
        self._cache: dict[_TokenType, QTextCharFormat | None] = {}

    def get(self, ttype: _TokenType) -> QTextCharFormat | None:
        try:
            return self._cache[ttype]
        except KeyError:
            pass
        spec = self._style.style_for_token(ttype)
        fmt: QTextCharFormat | None = None
        if spec.get("color") or spec.get("bold") or spec.get("italic") or spec.get("underline"):
            fmt = QTextCharFormat()
            if spec.get("color"):
                fmt.setForeground(QColor(f"#{spec['color']}"))
            if spec.get("bold"):
                fmt.setFontWeight(QFont.Weight.Bold)
            if spec.get("italic"):
                fmt.setFontItalic(True)
            if spec.get("underline"):
                fmt.setFontUnderline(True)
        self._cache[ttype] = fmt
        return fmt


_TRIPLES = ('"""', "'''")


class LineLexer:
    """Lexes one line into (start, length, token type) spans in Qt's UTF-16 positions.

    `opener` (e.g. ``rf\"\"\"``) says the line starts inside a string opened on an earlier line:
    it is lexed as if prefixed by the opener, so the string and what follows it colour right.
    """

    def __init__(self, lexer: Lexer) -> None:
        lexer.stripnl = False
        lexer.ensurenl = False
        lexer.stripall = False
        self.lexer = lexer

    def spans(self, text: str, opener: str = "") -> list[tuple[int, int, _TokenType]]:
        """Spans for `text` (one line, no newline)."""
        return self.spans_and_end(text, opener, track_end=False)[0]

    def spans_and_end(self, text: str, opener: str = "", track_end: bool = True) -> tuple[list[tuple[int, int, _TokenType]], str]:
        """Spans for `text` and the opener of a triple-quoted string still open at its end ("" if none)."""
        tokens = list(self.lexer.get_tokens_unprocessed(opener + text + ("\n" if track_end else "")))
        shift = len(opener)
        out: list[tuple[int, int, _TokenType]] = []
        for i, ttype, value in tokens:
            start, end = max(i - shift, 0), min(i + len(value) - shift, len(text))
            if end > start:
                out.append((start, end - start, ttype))
        return _to_utf16(text, out), (_open_string(tokens) if track_end else "")


def _open_string(tokens: list[tuple[int, _TokenType, str]]) -> str:
    """The opener of the triple-quoted string the line ends in: its newline lexed as String."""
    if not tokens or tokens[-1][1] not in String:
        return ""
    for k in range(len(tokens) - 1, -1, -1):
        value = tokens[k][2]
        if value in _TRIPLES:  # while the string is open, the last triple quote is its opener
            affix = tokens[k - 1][2] if k > 0 and tokens[k - 1][1] in String.Affix else ""
            return affix + value
    return ""


_PY_SCAN = re.compile(
    r"""(?P<comment>\#[^\n]*)"""
    r"""|(?P<prefix>(?<![\w])[rRbBuUfFtT]{1,2})?(?P<triple>\"\"\"|''')"""
    r"""|(?:(?<![\w])[rRbBuUfFtT]{1,2})?(?:"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)"""
)
_PY_CLOSE = {
    '"""': re.compile(r'[^\\"]*(?:(?:\\.|"(?!""))[^\\"]*)*"""', re.S),
    "'''": re.compile(r"[^\\']*(?:(?:\\.|'(?!''))[^\\']*)*'''", re.S),
}


def python_string_openers(text: str) -> dict[int, str]:
    """0-based line -> opener (``\"\"\"``, ``r'''``, ...) for the lines that start inside a
    triple-quoted string. One regex pass; comments and one-line strings are skipped over."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    out: dict[int, str] = {}
    pos = 0
    while True:
        m = _PY_SCAN.search(text, pos)
        if m is None:
            return out
        if m.group("triple") is None:
            pos = max(m.end(), pos + 1)
            continue
        quote = m.group("triple")
        close = _PY_CLOSE[quote].match(text, m.end())
        end = close.end() if close else len(text)
        first, last = bisect_left(newlines, m.start()), bisect_left(newlines, end - 1)
        opener = (m.group("prefix") or "") + quote
        for line in range(first + 1, last + 1):
            out[line] = opener
        pos = end


def _to_utf16(text: str, spans: list[tuple[int, int, _TokenType]]) -> list[tuple[int, int, _TokenType]]:
    """Re-express code-point spans in UTF-16 units (Qt's positions); a no-op for BMP-only text."""
    if text.isascii() or all(ord(c) <= 0xFFFF for c in text):
        return spans
    offsets = [0]
    for c in text:
        offsets.append(offsets[-1] + (2 if ord(c) > 0xFFFF else 1))
    return [(offsets[s], offsets[s + n] - offsets[s], t) for s, n, t in spans]


class PygmentsHighlighter(QSyntaxHighlighter):
    """A QSyntaxHighlighter driven by a Pygments lexer and style (see module doc for its cost).

    `triple_quotes` (default: on for Python lexers) carries open triple-quoted strings from a
    block to the next through the block state.
    """

    def __init__(
        self, lexer: Lexer, style: str = "default", document: QTextDocument | None = None, triple_quotes: bool | None = None
    ) -> None:
        super().__init__(document)  # type: ignore[arg-type]  # None (no document yet) works; PySide6's stubs omit it
        if triple_quotes is None:
            triple_quotes = "python" in (getattr(lexer, "aliases", None) or ())
        self.triple_quotes = triple_quotes
        self.line_lexer = LineLexer(lexer)
        self.formats = TokenFormats(style)
        self._openers: list[str] = [""]  # block state -> opener; state 0 (or -1) is plain code

    @property
    def style_name(self) -> str:
        return self.formats.style_name

    def set_style(self, style: str) -> None:
        """Switch colours and re-highlight the document."""
        if style != self.formats.style_name:
            self.formats = TokenFormats(style)
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        state = self.previousBlockState()
        opener = self._openers[state] if 0 < state < len(self._openers) else ""
        spans, end = self.line_lexer.spans_and_end(text, opener, track_end=self.triple_quotes)
        for start, length, ttype in spans:
            fmt = self.formats.get(ttype)
            if fmt is not None:
                self.setFormat(start, length, fmt)
        if end and end not in self._openers:
            self._openers.append(end)
        self.setCurrentBlockState(self._openers.index(end) if end else 0)


class LazyHighlighter(QObject):
    """Formats only the blocks of `editor` that are (nearly) on screen, as they come into view.

    Writes formats straight into each block's QTextLayout, as QSyntaxHighlighter does inside,
    but without a per-block callback over the whole document. Call `reset()` after new text.
    """

    MARGIN = 30  # blocks above and below the viewport formatted ahead of scrolling

    def __init__(self, editor: QPlainTextEdit, lexer: Lexer, style: str = "default") -> None:
        super().__init__(editor)
        self.editor = editor
        self.line_lexer = LineLexer(lexer)
        self.formats = TokenFormats(style)
        self.enabled = True
        self._done: set[int] = set()
        self._openers: dict[int, str] = {}
        self._busy = False
        editor.updateRequest.connect(lambda _rect, _dy: self.highlight_visible())
        editor.viewport().installEventFilter(self)  # a taller viewport shows more blocks

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.highlight_visible()
        return False

    @property
    def style_name(self) -> str:
        return self.formats.style_name

    def set_style(self, style: str) -> None:
        """Switch colours; blocks off screen are re-formatted when they come back into view."""
        if style != self.formats.style_name:
            self.formats = TokenFormats(style)
            self.reset(None)

    def reset(self, openers: dict[int, str] | None = None) -> None:
        """Forget what was formatted and format what is on screen now, the margin around it on the
        next event-loop turn (a new 120k-line jaxpr's 80 blocks took 14 ms of the slot showing
        it). Pass `openers` (0-based block -> open string, see `python_string_openers`) with new
        text; None keeps the current ones."""
        if openers is not None:
            self._openers = openers
        self._done.clear()
        self.highlight_visible(margin=0)
        QTimer.singleShot(0, self, self.highlight_visible)

    def is_formatted(self, block_number: int) -> bool:
        return block_number in self._done

    def highlight_visible(self, margin: int = MARGIN) -> None:
        """Format the on-screen blocks (plus `margin` blocks each side) not formatted yet."""
        if self._busy or not self.enabled:
            return
        self._busy = True
        try:
            for block in self._visible_blocks(margin):
                if block.blockNumber() not in self._done:
                    self.format_block(block)
        finally:
            self._busy = False

    def format_block(self, block: QTextBlock) -> None:
        """Lex one block and store its formats in its layout."""
        number = block.blockNumber()
        self._done.add(number)
        ranges: list[QTextLayout.FormatRange] = []
        spans = self.line_lexer.spans(block.text(), self._openers.get(number, ""))
        for start, length, ttype in spans:
            fmt = self.formats.get(ttype)
            if fmt is not None:
                r = QTextLayout.FormatRange()
                r.start, r.length, r.format = start, length, fmt
                ranges.append(r)
        layout = block.layout()
        if not ranges and not layout.formats():
            return
        layout.setFormats(ranges)
        self.editor.document().markContentsDirty(block.position(), block.length())

    def _visible_blocks(self, margin: int) -> Iterator[QTextBlock]:
        editor = self.editor
        first = editor.firstVisibleBlock()
        if not first.isValid():
            return
        start = max(first.blockNumber() - margin, 0)
        height = editor.viewport().height()
        line_h = max(editor.fontMetrics().lineSpacing(), 1)
        last = first.blockNumber() + height // line_h + 1 + margin
        block = editor.document().findBlockByNumber(start)
        while block.isValid() and block.blockNumber() <= last:
            yield block
            block = block.next()
