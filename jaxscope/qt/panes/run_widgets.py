"""The Run pane's parts: a table as tall as its rows, labels that hide when empty, and the causes of a
difference (issue 56: each with its evidence and its fix, real ones first).

Strings from the user's code go into plain-text labels; tooltips are rich text, so theirs are escaped.
"""

from __future__ import annotations

import html
from typing import TypeVar

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableWidget, QVBoxLayout, QWidget

from jaxscope.analysis.runs.causes import where
from jaxscope.qt.panes.inputs_panel import plain_label
from jaxscope.schema.run import Cause, RunResult

STATE_COLOURS = {"ok": "#2e8b57", "close": "#c98a00", "fail": "#d0453a"}
W = TypeVar("W", bound=QWidget)


def tip_html(text: str) -> str:
    """Escaped user text in a rich-text tooltip; <pre> keeps the jit/eager lines aligned."""
    return "<pre>" + html.escape(text) + "</pre>"


def named(widget: W, name: str, tip: str = "") -> W:
    widget.setObjectName(name)
    widget.setToolTip(tip)
    return widget


def say(label: QLabel, text: str) -> None:
    """Set a label's text and show it only when there is some."""
    label.setText(text)
    label.setVisible(bool(text))


class FitTable(QTableWidget):
    """A read-only table as tall as its rows (up to `most`, then it scrolls), inside the pane's scroll area.

    Narrower than its columns, it scrolls sideways itself (so the labels around it still wrap to the pane),
    and grows by the scroll bar's height then.
    """

    def __init__(self, columns: list[str], stretch_last: bool, most: int = 12) -> None:
        super().__init__(0, len(columns))
        self.most = most
        self._width = 0
        self.setHorizontalHeaderLabels(columns)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(stretch_last)

    def fit(self) -> None:
        """Call after filling: measures the columns once (a big pytree has many rows) and sets the height."""
        self.resizeRowsToContents()
        header = self.horizontalHeader()
        self._width = 2 * self.frameWidth() + sum(
            max(header.sectionSizeHint(c), self.sizeHintForColumn(c)) for c in range(self.columnCount())
        )
        self._width += self.verticalScrollBar().sizeHint().width() if self.rowCount() > self.most else 0
        if not header.stretchLastSection():  # shrink-wrapped: no empty grid to the right
            self.setMaximumWidth(self._width)
        self.updateGeometry()
        self._fit_height()

    def _fit_height(self) -> None:
        height = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(r) for r in range(min(self.rowCount(), self.most)))
        if self._width > self.width():
            height += self.horizontalScrollBar().sizeHint().height()
        self.setFixedHeight(height)

    def sizeHint(self) -> QSize:
        return QSize(self._width, self.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()


class CausesView(QWidget):
    """One block per cause of a difference: its kind and summary in bold (red when it fails the run,
    green when explained), its evidence lines, its fix; the evidence runs and what could not run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runCauses")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 2, 0, 2)
        self._labels: list[QLabel] = []

    def set_result(self, result: RunResult | None) -> None:
        """Show the causes of `result` (none: the view hides)."""
        for label in self._labels:
            label.setParent(None)  # gone from the view (and from findChildren) now, not at the next event loop
            label.deleteLater()
        self._labels = []
        if result is None:
            self.setVisible(False)
            return
        for cause in result.causes:
            self._add(cause_heading(cause), "fail" if not cause.explained else "ok", bold=True)
            self._add(cause_body(cause))
        ev = result.evidence
        if ev is not None and (ev.runs or ev.failures):
            lines = ["Evidence runs: " + ("; ".join(ev.runs) or "none")] + [f"not available: {f}" for f in ev.failures]
            self._add("\n".join(lines), muted=True)
        self.setVisible(bool(self._labels))

    def texts(self) -> list[str]:
        """The blocks' texts, in order (what a reader sees)."""
        return [label.text() for label in self._labels]

    def _add(self, text: str, state: str = "", *, bold: bool = False, muted: bool = False) -> None:
        if not text:
            return
        label = plain_label(text)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        style = f"color: {STATE_COLOURS[state]};" if state else "color: palette(mid);" if muted else ""
        label.setStyleSheet(style + (" font-weight: bold;" if bold else ""))
        self._layout.addWidget(label)
        self._labels.append(label)


def cause_heading(cause: Cause) -> str:
    """`Noise (explained): out['bk']: rounding noise of a cancellation at e59 reduce_sum (f.py:88)`."""
    between = "" if cause.between == "jit and eager" else f", between {cause.between}"
    mark = "explained" if cause.explained else "fails the run"
    return f"{cause.kind.capitalize()} ({mark}{between}): {cause.summary}"


def cause_body(cause: Cause) -> str:
    """The evidence, one line each, then the fix."""
    lines = [f"• {line}" for line in cause.evidence]
    if cause.sites and not any(where(cause.sites[0]) in line for line in cause.evidence):
        lines.append("• at " + ", ".join(where(s) for s in cause.sites[:4]))
    if cause.fix:
        lines.append(f"Fix: {cause.fix}")
    return "\n".join(lines)


def leaf_cause(result: RunResult, path: str) -> str:
    """The kind of the cause named for output `path` ("" when it is within tolerance)."""
    return next((c.kind for c in result.causes if path in c.outputs and c.between == "jit and eager"), "")
