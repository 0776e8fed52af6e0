"""The Guide pane: a tutorial's docstring as readable text whose "show me" links select nodes."""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from jaxscope.analysis.guide import Guide


def guide_html(guide: Guide, link_colour: str = "#2f6fb5") -> str:
    """The guide as HTML; every piece of text is escaped, links carry only their query."""
    parts = [f"<h3>{html.escape(guide.title)}</h3>"]
    for paragraph in guide.paragraphs:
        out = []
        for span in paragraph:
            text = html.escape(span.text)
            if span.code:
                text = f"<code>{text}</code>"
            if span.query:
                href = html.escape("show:" + span.query, quote=True)
                text = f'<a href="{href}" style="color:{link_colour}">{text}</a>'
            out.append(text)
        parts.append("<p>" + "".join(out) + "</p>")
    return "\n".join(parts)


class GuidePanel(QWidget):
    """Shows one guide; clicking a link emits its query (the window searches the graph)."""

    show_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser()
        self.browser.setObjectName("guideBrowser")
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.anchorClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.guide: Guide | None = None

    def set_guide(self, guide: Guide | None, dark: bool = False) -> None:
        self.guide = guide
        if guide is None:
            self.browser.setPlainText("This file has no guide. Tutorials (File → Open Example…) explain what to look at here.")
            return
        self.browser.setHtml(guide_html(guide, "#7fb2f0" if dark else "#2f6fb5"))

    def click(self, query: str) -> None:
        """What clicking the link for `query` does (also used by tests)."""
        self.show_requested.emit(query)

    def _clicked(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("show:"):
            self.show_requested.emit(QUrl.fromPercentEncoding(text[len("show:") :].encode()))
