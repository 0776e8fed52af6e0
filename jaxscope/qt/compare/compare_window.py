"""Two traces side by side (View → Compare with…): A's graph on the left, B's on the right, each
box coloured by the diff (removed in A, added in B, changed in both), a list of the differences,
and one selection: a box picked on either side selects its match on the other. "Overlay" draws
both as one graph instead (B's, with A's removed equations put back, as `jaxscope diff -o`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from jaxscope.analysis.diff_view import COLOURS, Union, removed_path, shown_status, union
from jaxscope.analysis.scope_view import ScopedGraph, first_open, for_window
from jaxscope.analysis.trace_diff import GraphDiff
from jaxscope.qt.app.jobs import when_future
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.schema.graph import Graph, resolve
from jaxscope.schema.layout import Layout
from jaxscope.workbench import nearest_visible

MODES = ("Side by side", "Overlay")


class _Side:
    """One graph of the comparison: its drawn view, what is open, its colours, its view widget."""

    def __init__(self, graph: Graph, status: dict[str, str], scoped: bool) -> None:
        self.view: ScopedGraph | None = for_window(graph) if scoped else None
        self.graph = self.view.graph if self.view is not None else graph
        self.widget = QtGraphView()
        self.expanded = first_open(self.graph)
        self.fills = self._fills(status)

    def _fills(self, status: dict[str, str]) -> dict[str, str]:
        return {path: COLOURS[what] for path, what in shown_status(status, self.view).items()}

    def real(self, paths: list[str]) -> list[str]:
        return self.view.real_paths(paths) if self.view is not None else paths

    def shown(self, paths: list[str]) -> list[str]:
        return self.view.view_paths(paths) if self.view is not None else paths

    def select(self, real: list[str]) -> None:
        """Select the boxes drawn for these program paths (a collapsed group or owner: it)."""
        model = self.widget.model
        drawn = set(model.by_base) if model is not None else set()
        self.widget.select_paths([v for p in self.shown(real) if (v := nearest_visible(p, drawn)) is not None])


class CompareWindow(QWidget):
    def __init__(
        self,
        a: Graph,
        b: Graph,
        found: GraphDiff,
        names: tuple[str, str],
        layouts: LayoutClient,
        theme: str = "light",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle(f"Compare — A (before): {names[0]}  ·  B (now): {names[1]}")
        self.diff, self.layouts, self.theme = found, layouts, theme
        self.a = _Side(a, found.status_a(), scoped=True)
        self.b = _Side(b, found.status_b(), scoped=True)
        both: Union = union(a, b, found)
        self.overlay = _Side(both.graph, both.status, scoped=False)
        self.overlay.fills = {p: COLOURS[s] for p, s in both.status.items()}
        self._syncing = False

        self.summary = QLabel(f"<b>{found.summary()}</b><br>A (before): {names[0]} &nbsp;·&nbsp; B (now): {names[1]}")
        self.summary.setObjectName("compareSummary")
        self.summary.setWordWrap(True)  # long targets wrap: the window fits a 1280 px screen (one line took 1832 px)
        self.summary.setMinimumWidth(200)
        self.mode = QComboBox()
        self.mode.addItems(MODES)
        self.mode.currentIndexChanged.connect(self._show_mode)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        for what, colour in COLOURS.items():  # the key: each swatch before its word
            swatch = QLabel()
            swatch.setPixmap(_swatch(colour).pixmap(12, 12))
            top.addWidget(swatch)
            top.addWidget(QLabel(what))
            top.addSpacing(8)
        top.addWidget(self.mode)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for side in (self.a, self.b, self.overlay):
            self.split.addWidget(side.widget)
        self.overlay.widget.hide()
        self.changes = QListWidget()
        self.changes.setObjectName("compareChanges")
        self.changes.setFont(QFont("DejaVu Sans Mono", 9))  # the rows' columns line up
        self._fill_changes(a, b)
        self.changes.currentItemChanged.connect(self._change_picked)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.split)
        body.addWidget(self.changes)
        body.setSizes([700, 160])
        outer = QVBoxLayout(self)
        outer.addLayout(top)
        outer.addWidget(body, 1)
        self.a.widget.selection_changed.connect(lambda paths: self._sync(self.a, self.b, paths, found.b_of))
        self.b.widget.selection_changed.connect(lambda paths: self._sync(self.b, self.a, paths, found.a_of))
        for side in (self.a, self.b, self.overlay):
            side.widget.toggle_cluster_requested.connect(lambda owner, s=side: self._toggle(s, owner))
        room = self.screen().availableGeometry()  # a 1280 x 800 screen holds the whole window
        self.resize(min(1500, room.width() - 40), min(900, room.height() - 40))
        for side in (self.a, self.b):
            self._lay_out(side)

    def _lay_out(self, side: _Side) -> None:
        future = self.layouts.submit(side.graph, side.expanded)
        when_future(self, future, lambda done: self._draw(side, done.result()) if done.exception() is None else None)

    def _draw(self, side: _Side, layout: Layout) -> None:
        keep = side.widget.has_content()
        side.widget.set_graph(side.graph, layout, self.theme, keep_view=keep)
        if not keep:  # as the window opens a graph: its top, readable, not the whole zoomed past reading
            side.widget.fit_readable()
        model = side.widget.model  # what is not coloured is the same: grey, as the key says, not its family's colour
        same = dict.fromkeys(model.by_base if model is not None else (), COLOURS["same"])
        side.widget.set_fills({**same, **side.fills})

    def _toggle(self, side: _Side, owner: str) -> None:
        side.expanded = side.expanded ^ {owner}
        self._lay_out(side)

    def _show_mode(self, index: int) -> None:
        overlay = MODES[index] == "Overlay"
        self.a.widget.setVisible(not overlay)
        self.b.widget.setVisible(not overlay)
        self.overlay.widget.setVisible(overlay)
        if overlay and not self.overlay.widget.has_content():
            self._lay_out(self.overlay)

    def _sync(self, source: _Side, target: _Side, paths: list[str], match: dict[str, str]) -> None:
        """A selection on one side selects what it matched on the other (a group: its members')."""
        if self._syncing:
            return
        self._syncing = True
        try:
            target.select([match[p] for p in source.real(paths) if p in match])
        finally:
            self._syncing = False

    def _fill_changes(self, a: Graph, b: Graph) -> None:
        d = self.diff
        rows = [
            *(("removed", p, "", a, p, "only in A") for p in d.removed),
            *(("added", "", p, b, p, "only in B") for p in d.added),
            *(("changed", c.a, c.b, b, c.b, "; ".join(c.what)) for c in d.changed),
        ]
        icons = {what: _swatch(colour) for what, colour in COLOURS.items()}  # a swatch, not a row fill: readable in either theme
        for what, pa, pb, graph, path, text in rows:
            _, node = resolve(graph, path)
            where = f"{node.source.file.rsplit('/', 1)[-1]}:{node.source.line}" if node.source is not None else ""
            avals = ", ".join(node.avals)
            item = QListWidgetItem(f"{what:<8}  {node.label:<16} {avals:<14} {node.name_stack or '(top)'}  {where}   {text}")
            item.setData(Qt.ItemDataRole.UserRole, (pa, pb))
            item.setIcon(icons[what])
            self.changes.addItem(item)

    def _change_picked(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        pa, pb = item.data(Qt.ItemDataRole.UserRole)
        self._syncing = True
        try:
            for side, path in ((self.a, pa), (self.b, pb)):
                side.select([path] if path else [])
            if self.overlay.widget.isVisible():
                self.overlay.widget.select_paths([pb or removed_path(self.diff, pa)])
        finally:
            self._syncing = False


def _swatch(colour: str) -> QIcon:
    """A filled square with a grey edge: "same" is nearly the window's grey and would vanish."""
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor("#7d838c"))
    painter = QPainter(pixmap)
    painter.fillRect(1, 1, 10, 10, QColor(colour))
    painter.end()
    return QIcon(pixmap)
