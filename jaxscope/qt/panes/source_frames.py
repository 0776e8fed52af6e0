"""The source pane's call chain: the selected equation's frames, the user's and the libraries'
under them (``deep_step :152 › Block.__call__ :137 › flax linear.py:287 Dense.__call__``), each a
link that shows its file and line. The user's file stays in its own view (colours, marks, flow
marks untouched); any other file of the chain (a helper module, flax's or optax's code) opens
read-only in a second view, whose line clicks select the equations that came through that line."""

from __future__ import annotations

import html
import os
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from jaxscope.ir.linking import same_file
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text
from jaxscope.schema.graph import SourceLoc


def read_frame_file(path: str) -> str:
    """A frame's file from disk: a regular file of at most MAX_SOURCE_BYTES (`schema.files`)."""
    return read_text(path, MAX_SOURCE_BYTES)


def short_function(qualname: str) -> str:
    """``train_step.<locals>.loss_fn`` -> ``loss_fn``; ``Dense.__call__`` stays."""
    return qualname.rsplit(".<locals>.", 1)[-1]


def chain_html(frames: tuple[SourceLoc, ...], primitive: str, link_colour: str, library_colour: str) -> str:
    """The chain as links ``frame:N``; a file's name is written where it changes, a library's name
    where its frames start. Every text is escaped (file and function names are the user's)."""
    parts, last_file, last_library = [], "", None
    for i, f in enumerate(frames):
        where = f":{f.line}" if f.file == last_file else f"{os.path.basename(f.file)}:{f.line}"
        prefix = f"{f.library} " if f.library and f.library != last_library else ""
        colour = library_colour if f.library else link_colour
        text = html.escape(f"{prefix}{short_function(f.function)} {where}")
        parts.append(f'<a href="frame:{i}" style="color:{colour}; text-decoration:none">{text}</a>')
        last_file, last_library = f.file, f.library
    if primitive:
        parts.append(f"<b>{html.escape(primitive)}</b>")
    return " › ".join(parts)


def _rich_label(name: str) -> QLabel:
    """A wrapping label of our own rich text (every user string in it escaped)."""
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    label.setContentsMargins(6, 2, 6, 2)
    return label


class SourceFrames(QWidget):
    """The source dock: the flow legend and the chain bar over two views, the user's file (`main`)
    and any other file of the chain."""

    other_line_clicked = Signal(str, int)  # file, 1-based line, clicked in the other file's view
    pair_clicked = Signal(str)  # the path of an equation of the other pass (forward <-> backward)

    def __init__(self, main: QtSourceView, read: Callable[[str], str] = read_frame_file, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.main = main
        self.read = read  # the window's reads a saved trace's copies while one is shown
        self.frames: tuple[SourceLoc, ...] = ()
        self.legend = _rich_label("flowLegend")  # what the source's colour bars mean (the window fills it)
        self.bar = _rich_label("sourceFrames")
        self.bar.setToolTip(
            "Where the selected equation came from: your frames, then the library's under them. Click one to show its line."
        )
        self.bar.linkActivated.connect(self._link)
        self.bar.hide()
        self.other = QtSourceView()
        self.other.setObjectName("otherSourceView")
        self.other.line_clicked.connect(lambda line: self.other_line_clicked.emit(self.other.path, line))
        self.other_title = _rich_label("otherSourceTitle")
        self.other_title.linkActivated.connect(lambda _href: self.back())
        other_box = QWidget()
        ol = QVBoxLayout(other_box)
        ol.setContentsMargins(0, 0, 0, 0)
        ol.setSpacing(0)
        ol.addWidget(self.other_title)
        ol.addWidget(self.other, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(main)
        self.stack.addWidget(other_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.legend)
        layout.addWidget(self.bar)
        layout.addWidget(self.stack, 1)

    def show_chain(
        self, frames: tuple[SourceLoc, ...], primitive: str = "", scope: str = "", pass_: str = "", paired: tuple[str, ...] = ()
    ) -> None:
        """The selected equation's frames (none: the bar hides), its scope and pass, and links to the
        equations of the other pass it pairs with."""
        self.frames = frames
        dark = self.main.theme == "dark"
        link = "#7fb2f0" if dark else "#2f6fb5"
        text = chain_html(frames, primitive, link, "#c39bd3" if dark else "#7d3c98")
        if scope or pass_:
            head = html.escape(" · ".join(x for x in (scope, pass_) if x))
            other = "forward" if pass_ == "backward" else "backward"
            links = ", ".join(f'<a href="pair:{html.escape(p, quote=True)}" style="color:{link}">{html.escape(p)}</a>' for p in paired[:8])
            tail = f" — its {other}: {links}" + (" …" if len(paired) > 8 else "") if paired else ""
            text = f"<b>{head}</b>{tail}<br>{text}"
        self.bar.setText(text)
        self.bar.setVisible(bool(frames) or bool(scope))

    def showing_other(self) -> bool:
        return self.stack.currentIndex() == 1

    def open_frame(self, index: int) -> bool:
        """Show frame `index`'s line: in the user's view if it is that file, else read-only in the other."""
        if not 0 <= index < len(self.frames):
            return False
        return self.open_location(self.frames[index])

    def open_location(self, loc: SourceLoc) -> bool:
        if self.main.path and same_file(loc.file, self.main.path):
            self.back()
            self.main.mark_lines([loc.line])
            return True
        if self.other.path != loc.file:
            try:
                text = self.read(loc.file)
            except OSError as exc:
                self.other_title.setText(html.escape(f"cannot show {loc.file}: {exc.strerror or exc}") + self._back_link())
                self.other.set_source("", "")
                self.stack.setCurrentIndex(1)
                return False
            self.other.set_theme(self.main.theme)
            self.other.set_source(text, loc.file)
        whose = f"{loc.library} — library code, read-only" if loc.library else "your code, read-only here"
        self.other_title.setText(
            f"<b>{html.escape(os.path.basename(loc.file))}</b> ({html.escape(whose)}) "
            f"<span style='color:gray'>{html.escape(loc.file)}</span>{self._back_link()}"
        )
        self.other_title.setToolTip(loc.file)
        self.stack.setCurrentIndex(1)
        self.other.mark_lines([loc.line])
        return True

    def back(self) -> None:
        """The user's file again."""
        self.stack.setCurrentIndex(0)

    def reset(self) -> None:
        """A new document or trace: the user's file, no chain."""
        self.back()
        self.show_chain(())

    def _back_link(self) -> str:
        name = os.path.basename(self.main.path) if self.main.path else "your file"
        return f' · <a href="back">back to {html.escape(name)}</a>'

    def _link(self, href: str) -> None:
        if href.startswith("frame:"):
            self.open_frame(int(href.split(":", 1)[1]))
        elif href.startswith("pair:"):
            self.pair_clicked.emit(href.split(":", 1)[1])
