"""The source and jaxpr panes (jaxscope.qt.panes.source_view / jaxpr_view / highlight), headless."""

from __future__ import annotations

import pathlib
import time

import pytest
from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Keyword, Name, String
from PySide6 import QtCore, QtGui, QtTest

from jaxscope.ir import linking
from jaxscope.qt.panes.jaxpr_view import QtJaxprView
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.qt.panes.syntax_colours import (
    LineLexer,
    PygmentsHighlighter,
    TokenFormats,
    editor_colours,
    python_string_openers,
    style_for_theme,
)
from jaxscope.schema.trace import TraceResult
from tests.conftest import HOSTILE, line_in

Qt = QtCore.Qt
QPoint = QtCore.QPoint
ROOT = pathlib.Path(__file__).resolve().parents[2]
BASICS = (ROOT / "examples" / "basics.py").read_text(encoding="utf-8")
PREDICT = TraceResult.from_json((ROOT / "tests" / "fixtures" / "basics_predict.json").read_text(encoding="utf-8"))


def show(qtbot, widget, w: int = 700, h: int = 500):
    qtbot.addWidget(widget)
    widget.resize(w, h)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def line_y(view, line: int) -> int:
    """Viewport y of the middle of 1-based `line`."""
    block = view.document().findBlockByNumber(line - 1)
    rect = view.blockBoundingGeometry(block).translated(view.contentOffset())
    return int(rect.center().y())


def line_of(source: str, needle: str) -> int:
    return line_in(source, needle)


def format_at(view, line: int, column: int):
    """The highlighter's QTextCharFormat covering (line, column), or None."""
    ranges = view.document().findBlockByNumber(line - 1).layout().formats()
    for r in ranges:
        if r.start <= column < r.start + r.length:
            return QtGui.QTextCharFormat(r.format)  # a copy: the range dies with `ranges`
    return None


def colour_at(view, line: int, column: int) -> str | None:
    fmt = format_at(view, line, column)
    return fmt.foreground().color().name() if fmt is not None else None


def token_colour(theme: str, ttype) -> str:
    return TokenFormats(style_for_theme(theme)).get(ttype).foreground().color().name()


def pixel(view, x: int, y: int) -> str:
    image = view.viewport().grab().toImage()
    return image.pixelColor(x, y).name()


@pytest.fixture
def source(qtbot):
    view = show(qtbot, QtSourceView())
    view.set_source(BASICS, "examples/basics.py")
    return view


@pytest.fixture
def jaxpr(qtbot):
    view = show(qtbot, QtJaxprView())
    view.set_text(PREDICT.jaxpr_text)
    return view


# ---------------------------------------------------------------------------- clicks


def test_click_in_text_emits_the_line(qtbot, source):
    line = line_of(BASICS, 'out = h @ params["w2"]')
    with qtbot.waitSignal(source.line_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(source.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(40, line_y(source, line)))
    assert blocker.args == [line]


def test_click_in_gutter_emits_the_line(qtbot, source):
    with qtbot.waitSignal(source.line_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(source.gutter, Qt.MouseButton.LeftButton, pos=QPoint(10, line_y(source, 3)))
    assert blocker.args == [3]


def test_drag_and_clicks_below_the_text_emit_nothing(qtbot, source):
    seen: list[int] = []
    source.line_clicked.connect(seen.append)
    y = line_y(source, 5)
    QtTest.QTest.mousePress(source.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(20, y))
    QtTest.QTest.mouseMove(source.viewport(), QPoint(200, line_y(source, 9)))
    QtTest.QTest.mouseRelease(source.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(200, line_y(source, 9)))
    short = QtSourceView()
    show(qtbot, short)
    short.set_source("x = 1\n", "a.py")
    short.line_clicked.connect(seen.append)
    qtbot.mouseClick(short.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(20, 400))
    assert seen == []


def test_jaxpr_click_emits_the_line(qtbot, jaxpr):
    with qtbot.waitSignal(jaxpr.line_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(jaxpr.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(60, line_y(jaxpr, 14)))
    assert blocker.args == [14]


# ---------------------------------------------------------------------------- colours and marks


def test_line_colours_paint_behind_the_text(qtbot, source):
    colours = linking.line_colours(PREDICT.graph, "examples/basics.py")
    hexes = {line: linking.PALETTE_LIGHT[i] for line, i in colours.items()}
    source.set_line_colours(hexes)
    assert source.line_colours() == hexes
    x = source.viewport().width() - 20  # past the end of the code: background only
    for line, hex_ in hexes.items():
        assert pixel(source, x, line_y(source, line)) == hex_
    assert pixel(source, x, line_y(source, 2)) == editor_colours(style_for_theme("light")).background.name()
    source.set_line_colours({})
    assert pixel(source, x, line_y(source, 20)) == editor_colours(style_for_theme("light")).background.name()


def test_marks_differ_from_line_colours(qtbot, source):
    source.set_line_colours({20: linking.PALETTE_LIGHT[0], 25: linking.PALETTE_LIGHT[2]})
    source.mark_lines([25])
    assert source.marked_lines() == [25]
    x = source.viewport().width() - 20
    marked, coloured = pixel(source, x, line_y(source, 25)), pixel(source, x, line_y(source, 20))
    assert marked not in (linking.PALETTE_LIGHT[2], coloured)
    source.clear_marks()
    assert source.marked_lines() == []
    assert pixel(source, x, line_y(source, 25)) == linking.PALETTE_LIGHT[2]


def test_mark_lines_scrolls_the_first_into_view(qtbot):
    view = show(qtbot, QtSourceView())
    view.set_source("".join(f"x{i} = {i}\n" for i in range(1, 1001)), "long.py")
    assert 700 not in view.visible_lines()
    view.mark_lines([900, 700, 5000, 0])  # out-of-range lines are dropped
    assert view.marked_lines() == [700, 900]
    assert 700 in view.visible_lines()
    top = view.firstVisibleBlock().blockNumber()
    view.mark_lines([top + 3])  # already on screen: no jump
    assert view.firstVisibleBlock().blockNumber() == top
    view.mark_lines([10], scroll=False)
    assert view.firstVisibleBlock().blockNumber() == top


def test_jaxpr_marks_and_scroll(qtbot):
    view = show(qtbot, QtJaxprView())
    view.set_text("\n".join(f"    v{i}:f32[] = sin a   # m.py:{i}:0 (f)" for i in range(3000)))
    view.mark_lines([2500, 2501])
    assert 2500 in view.visible_lines()
    assert view.highlighter.is_formatted(2499)


# ---------------------------------------------------------------------------- highlighting


def test_python_keywords_are_coloured(qtbot, source):
    line = line_of(BASICS, "def layer(")
    assert colour_at(source, line, 0) == token_colour("light", Keyword)
    assert colour_at(source, line, 4) == token_colour("light", Name.Function)


def test_triple_quoted_string_lines_stay_strings(qtbot, source):
    inside = line_of(BASICS, "What it teaches:")  # a line in the middle of the module docstring
    assert colour_at(source, inside, 0) == token_colour("light", String.Double)
    after = line_of(BASICS, "import jax.numpy")
    assert colour_at(source, after, 0) == token_colour("light", Keyword.Namespace)


def test_jaxpr_tokens_are_coloured(qtbot, jaxpr):
    text = PREDICT.jaxpr_text.splitlines()
    assert colour_at(jaxpr, 1, text[0].index("lambda")) == token_colour("light", Keyword)
    n = next(i for i, t in enumerate(text) if "dot_general[" in t)
    assert colour_at(jaxpr, n + 1, text[n].index("dot_general")) == token_colour("light", Name.Function)
    assert colour_at(jaxpr, n + 1, text[n].index("#") + 3) == token_colour("light", Comment.Single)


def test_theme_switch_recolours(qtbot, source, jaxpr):
    line = line_of(BASICS, "def layer(")
    for view in (source, jaxpr):
        view.set_theme("dark")
        assert view.palette().color(QtGui.QPalette.ColorRole.Base).name() == editor_colours("github-dark").background.name()
    assert colour_at(source, line, 0) == token_colour("dark", Keyword)
    assert colour_at(jaxpr, 1, 2) == token_colour("dark", Keyword)
    assert token_colour("dark", Keyword) != token_colour("light", Keyword)
    source.set_theme("light")
    assert colour_at(source, line, 0) == token_colour("light", Keyword)


def test_pygments_highlighter_carries_strings_across_blocks(qtbot):
    doc = QtGui.QTextDocument()
    doc.setPlainText('x = 1\ns = r"""a\nb # not a comment\nc""" + "d"\ny = 2')
    hl = PygmentsHighlighter(PythonLexer(), "default", doc)
    hl.rehighlight()

    def colour(block: int, col: int) -> str | None:
        for r in doc.findBlockByNumber(block).layout().formats():
            if r.start <= col < r.start + r.length:
                return r.format.foreground().color().name()
        return None

    string = token_colour("light", String.Double)
    assert colour(2, 0) == string and colour(2, 3) == string  # "# not a comment" is still string
    assert colour(3, 0) == string
    assert colour(4, 0) != string
    assert doc.findBlockByNumber(2).userState() > 0 and doc.findBlockByNumber(3).userState() == 0
    hl.set_style("github-dark")
    assert colour(3, 0) == token_colour("dark", String.Double)


def test_python_string_openers():
    text = 's = """a\nb\nc"""\n# """ not a string\nt = rb\'\'\'\n\'\'\'\nu = "\'\'\'"\nv = f"""{x}\n"""'
    assert python_string_openers(text) == {1: '"""', 2: '"""', 5: "rb'''", 8: 'f"""'}
    assert python_string_openers('open = """never closed\nstill\nstill') == {1: '"""', 2: '"""'}
    assert python_string_openers("") == {}


def test_utf16_positions_after_astral_characters():
    spans = LineLexer(PythonLexer()).spans('s = "🙂" + name')
    by_text = {(s, n): t for s, n, t in spans}
    qt_pos = len('s = "🙂" + '.encode("utf-16-le")) // 2  # the emoji is two UTF-16 units
    assert (qt_pos, 4) in by_text and by_text[(qt_pos, 4)] in Name


def test_hostile_text_is_shown_verbatim(qtbot):
    view = show(qtbot, QtSourceView())
    text = "\n".join(f"x{i} = {s!r}  # {s}" for i, s in enumerate(HOSTILE)) + "\n<b>bold?</b>\n"
    view.set_source(text, "<script>.py")
    assert view.blockCount() == len(HOSTILE) + 2
    assert view.document().findBlockByNumber(len(HOSTILE)).text() == "<b>bold?</b>"
    view.mark_lines(range(1, 5))
    view.grab()
    jaxpr = show(qtbot, QtJaxprView())
    jaxpr.set_text("\n".join(HOSTILE))
    assert jaxpr.document().findBlockByNumber(0).text() == HOSTILE[0]
    jaxpr.grab()


# ---------------------------------------------------------------------------- find


def test_find_wraps_around(qtbot):
    view = show(qtbot, QtJaxprView())
    view.set_text("a\nfoo one\nb\nc\nFOO two\nd")
    hits = []
    for _ in range(3):
        assert view.find("foo")
        hits.append(view.textCursor().blockNumber() + 1)
    assert hits == [2, 5, 2]
    assert view.find("foo", backward=True) is True  # from line 2 backwards: wraps to line 5
    assert view.textCursor().blockNumber() + 1 == 5
    before = view.textCursor().position()
    assert view.find("zzz") is False and view.find("") is False
    assert view.textCursor().position() == before


def test_find_scrolls_to_the_match(qtbot):
    view = show(qtbot, QtJaxprView())
    view.set_text("\n".join(["x = sin a"] * 5000 + ["needle"]))
    assert view.find("needle")
    assert 5001 in view.visible_lines()


# ---------------------------------------------------------------------------- big texts


def big_jaxpr(lines: int = 50_000) -> str:
    eq = "    v{i}:f32[4,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b   # /p/model.py:{n}:8 (f)"
    return "\n".join(eq.format(i=i, n=i % 400 + 1) for i in range(lines))


def test_a_new_text_formats_the_lines_on_screen_at_once_and_the_margin_a_turn_later(qtbot):
    """The slot showing a new text formats only what is on screen (a 120k-line jaxpr's margin of
    30 blocks took ~5 ms more of it); the lines around follow on the next event-loop turn."""
    view = show(qtbot, QtJaxprView())
    view.set_text(big_jaxpr(2000))
    last = view.visible_lines()[-1]  # 1-based
    assert view.highlighter.is_formatted(0) and view.highlighter.is_formatted(last - 1)
    assert not view.highlighter.is_formatted(last + 5)
    qtbot.waitUntil(lambda: view.highlighter.is_formatted(last + 5), timeout=2000)
    assert not view.highlighter.is_formatted(last + 60)


def test_big_jaxpr_sets_fast_and_highlights_lazily(qtbot):
    text = big_jaxpr()
    assert len(text) > 4_000_000
    view = show(qtbot, QtJaxprView())
    t = time.perf_counter()
    view.set_text(text)
    elapsed = time.perf_counter() - t
    assert view.blockCount() == 50_000
    assert elapsed < 5, elapsed  # ~0.25 s here; generous for slow CI machines
    assert view.highlighter.is_formatted(0) and not view.highlighter.is_formatted(40_000)
    assert colour_at(view, 1, 4) == token_colour("light", Name.Variable)
    view.verticalScrollBar().setValue(40_000)
    qtbot.wait(10)
    assert view.highlighter.is_formatted(40_000)
    assert colour_at(view, 40_001, 4) == token_colour("light", Name.Variable)
    colours = {n: linking.PALETTE_LIGHT[n % 10] for n in range(1, 50_001)}
    t = time.perf_counter()
    view.set_line_colours(colours)
    view.mark_lines(range(1, 50_001, 5))
    view.grab()
    assert time.perf_counter() - t < 5


def test_a_document_made_on_another_thread_shows_like_set_text(qtbot):
    """`document_maker` splits a text into blocks off the GUI thread; shown, it looks and behaves
    like `set_text`'s (font, tab stops, no wrap, no undo, lazy highlighting, clicks), and the
    document it replaces is deleted."""
    import threading

    from shiboken6 import isValid

    text = PREDICT.jaxpr_text + "\n" + big_jaxpr()[:200_000]
    plain = show(qtbot, QtJaxprView())
    plain.set_text(text)
    view = show(qtbot, QtJaxprView())
    make = view.document_maker()
    made = []
    worker = threading.Thread(target=lambda: made.extend(make(t) for t in (text, "second")))
    worker.start()
    worker.join()
    first, second = made
    assert first.thread() is view.thread()
    view.set_text(text, first)
    assert view.document() is first and view.toPlainText() == text and view.blockCount() == plain.blockCount()
    assert not first.isUndoRedoEnabled() and view.document().defaultFont() == plain.document().defaultFont()
    option, expected = first.defaultTextOption(), plain.document().defaultTextOption()
    assert option.tabStopDistance() == expected.tabStopDistance() and option.wrapMode() == expected.wrapMode()
    qtbot.wait(10)
    assert view.grab().toImage() == plain.grab().toImage()  # same gutter, same highlighted text
    n = next(i for i, t in enumerate(text.splitlines()) if "dot_general[" in t)
    assert colour_at(view, n + 1, text.splitlines()[n].index("dot_general")) == token_colour("light", Name.Function)
    with qtbot.waitSignal(view.line_clicked) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(40, line_y(view, 3)))
    assert blocker.args == [3]
    view.set_text("second", second)
    assert view.toPlainText() == "second"
    qtbot.waitUntil(lambda: not isValid(first))


def test_screenshots_render_in_both_themes(qtbot, tmp_path):
    colours = linking.line_colours(PREDICT.graph, "examples/basics.py")
    links = linking.jaxpr_links(PREDICT.graph, PREDICT.jaxpr_text)
    jcolours = {ln: colours[src.line] for p, src in links.sources.items() if src.line in colours for ln in links.lines_for_node(p)}
    for theme in ("light", "dark"):
        pal = linking.PALETTE_DARK if theme == "dark" else linking.PALETTE_LIGHT
        src = show(qtbot, QtSourceView())
        src.set_theme(theme)
        src.set_source(BASICS, "examples/basics.py")
        src.set_line_colours({n: pal[i] for n, i in colours.items()})
        src.mark_lines([25])
        jx = show(qtbot, QtJaxprView())
        jx.set_theme(theme)
        jx.set_text(PREDICT.jaxpr_text)
        jx.set_line_colours({n: pal[i] for n, i in jcolours.items()})
        jx.mark_lines(links.equation_lines(links.lines_for_node("e1")[0]))
        for name, view in (("source", src), ("jaxpr", jx)):
            path = tmp_path / f"{name}_{theme}.png"
            assert view.grab().save(str(path))
            image = QtGui.QImage(str(path))
            assert (image.width(), image.height()) == (700, 500)
            corner = image.pixelColor(image.width() - 30, image.height() - 40)  # below the text
            assert (corner.lightnessF() < 0.3) == (theme == "dark")


def test_text_set_before_show_is_highlighted_once_visible(qtbot):
    view = QtSourceView()
    qtbot.addWidget(view)
    view.set_source(BASICS * 10, "examples/basics.py")
    view.resize(700, 300)
    view.show()
    qtbot.waitExposed(view)
    view.resize(700, 2400)  # many more lines come on screen
    qtbot.wait(10)
    last = view.visible_lines()[-1]
    assert last > 100
    assert view.highlighter.is_formatted(last - 1)


def test_a_text_inserted_in_parts_is_the_text_set_at_once():
    """`insert_in_parts` (a big document made off the GUI thread) cuts before newlines: the same
    blocks and text as `setPlainText`, empty lines, a line longer than a part and no final newline too."""
    from PySide6.QtGui import QTextDocument

    from jaxscope.qt.panes.source_view import INSERT_CHARS, insert_in_parts

    lines = ["a = b", "", "x" * (3 * INSERT_CHARS), "\tc", ""] * 7 + ["  last"]
    for text in ("\n".join(lines), "\n".join(lines) + "\n", "\n" * (INSERT_CHARS + 5)):
        whole, parts = QTextDocument(), QTextDocument()
        whole.setPlainText(text)
        parts.setUndoRedoEnabled(False)
        insert_in_parts(parts, text)
        assert parts.toPlainText() == whole.toPlainText() == text
        assert parts.blockCount() == whole.blockCount() == text.count("\n") + 1


def test_a_made_document_gets_its_gutter_width_before_it_is_shown(qtbot):
    """A long made document gets its text width (the gutter's digits, the vertical scroll bar)
    before it is set: a width change lays out every block of the document shown, so a big one was
    laid out twice. The gutter widget has exactly the room the text leaves it."""
    view = show(qtbot, QtJaxprView())
    view.set_text("")
    narrow = view.gutter_width()
    text = "\n".join(f"line {i}" for i in range(12_000))  # 5 digits
    doc = view.document_maker()(text)
    resized: list[int] = []
    real = view.resizeEvent

    def count(event):
        resized.append(view.document().blockCount())
        real(event)

    view.resizeEvent = count
    view.set_text(text, doc)
    qtbot.wait(10)
    assert view.gutter_width() > narrow
    assert view.gutter.width() == view.viewportMargins().left() == view.gutter_width()
    assert 12_000 not in resized  # the text's width changed while the old document was shown


def test_line_colours_by_palette_index_are_the_colours_themselves(qtbot):
    by_hex, by_index = show(qtbot, QtJaxprView()), show(qtbot, QtJaxprView())
    text = "\n".join(f"line {i}" for i in range(20))
    palette = ["#ff0000", "#00ff00", "#0000ff"]
    indices = {2: 0, 3: 1, 7: 5, 12: 2}
    for view in (by_hex, by_index):
        view.set_text(text)
    by_hex.set_line_colours({n: palette[i % 3] for n, i in indices.items()})
    by_index.set_line_colour_indices(indices, palette)
    assert by_index.line_colours() == by_hex.line_colours() == {2: "#ff0000", 3: "#00ff00", 7: "#0000ff", 12: "#0000ff"}
    qtbot.wait(10)
    assert by_index.grab().toImage() == by_hex.grab().toImage()
    # looked up as lines are painted: ~90k lines of an IR text make no dict of colours on the GUI thread
    assert by_index.line_colour_indices() is indices and by_hex.line_colour_indices() is None
    by_index.set_text(text)
    assert by_index.line_colours() == {}


def test_the_log_pane_shows_a_huge_line_cut_and_says_how_much_it_left_out(qtbot):
    """`print("z" * 10_000_000)` in traced code: the line arrives in 64 KB chunks; the pane keeps
    a few thousand of its characters and a note, and the lines after it whole."""
    from jaxscope.qt.panes.log_pane import MAX_LINE_CHARS, LogPane

    pane = LogPane()
    qtbot.addWidget(pane)
    chunk = "z" * 65536
    for _ in range(152):  # ~10 MB
        pane.append_text(chunk)
    pane.append_text("\nafter\n")
    pane.append_text("short line\n")
    pane.flush()
    lines = pane.toPlainText().split("\n")
    assert lines[0] == "z" * MAX_LINE_CHARS + f" … [{152 * 65536 - MAX_LINE_CHARS:,} more characters on this line]"
    assert lines[1:] == ["after", "short line", ""]


def test_the_legend_draws_each_swatch_as_its_mark_is_drawn():
    """Python-only lines get a hollow bar in the source, so their legend swatch is hollow too."""
    from jaxscope.qt.panes.flow_paint import STYLES, legend_items

    glyphs = {text: glyph for _colour, text, glyph in legend_items("light")}
    assert glyphs[STYLES["python"][0]] == "\u25af"
    assert glyphs[STYLES["error"][0]] == glyphs[STYLES["staged"][0]] == "\u258c"


def test_fusion_names_are_shown_whole_in_a_narrow_dock(qtbot):
    from jaxscope.ir.hlo_links import FusionInfo
    from jaxscope.qt.panes.ir_tabs import IrTabs
    from jaxscope.qt.panes.jaxpr_view import QtJaxprView

    tabs = IrTabs(QtJaxprView())
    qtbot.addWidget(tabs)
    tabs.resize(260, 400)
    tabs.show()
    name = "negate_multiply_exponential_add_fusion.12"
    tabs.set_fusions([FusionInfo(name, "kLoop", 40, 6, ("e1", "e2"), (3, 4))])
    tabs.setCurrentIndex(3)
    qtbot.wait(20)
    tree = tabs.fusions
    assert tree.columnWidth(0) >= tree.fontMetrics().horizontalAdvance(name)


def test_a_line_low_in_the_view_is_brought_up_so_that_a_shrinking_pane_keeps_it(qtbot):
    """An error's line in the bottom third of the Source pane goes to a third from the top: the
    Problems dock growing below it then shrinks the pane without hiding it (a walk saw it cut)."""
    view = show(qtbot, QtSourceView())
    view.set_source("".join(f"x{i} = {i}\n" for i in range(1, 201)), "m.py")
    shown = view.visible_lines()
    low, high = shown[-2], shown[len(shown) // 4]
    view.scroll_to_line(high)  # well on screen: no jump
    assert view.visible_lines() == shown
    view.scroll_to_line(low)
    now = view.visible_lines()
    assert low in now and now.index(low) < len(now) // 2
