"""The model's structure in the window: its modules drawn as groups or not (View -> Group by
Module), a group picked in the graph (the Node pane says what it holds), its identical layers
(show another instance; open this one and close the others), and the overview map of a big graph."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStatusBar

from jaxscope.analysis.scope_view import first_open, for_window
from jaxscope.ir import linking
from jaxscope.qt.app import prefs
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.document import Document
from jaxscope.qt.graph.overview import OverviewMap
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.node_inspector import NodeInspector
from jaxscope.schema.graph import resolve


class StructureHost(Protocol):
    doc: Document
    controller: Controller
    graph: QtGraphView
    inspector: NodeInspector
    settings: QSettings
    jaxpr_links: linking.JaxprLinks | None

    def statusBar(self) -> QStatusBar: ...


class ModelStructure:
    def __init__(self, host: StructureHost) -> None:
        self.host = host
        host.controller.grouping = prefs.read(host.settings, "groupByModule", True)
        host.inspector.link_clicked.connect(self.link)
        self.action: QAction | None = None
        self.overview = OverviewMap(host.graph)

    def add_action(self, menu: QMenu) -> None:
        action = self.action = QAction("&Group by Module", menu)
        action.setObjectName("groupAction")
        action.setCheckable(True)
        action.setChecked(self.host.controller.grouping)
        action.setToolTip("Draw a model's modules (flax, named scopes, library calls) as groups, forward and backward apart")
        action.toggled.connect(self.set_grouping)
        menu.addAction(action)

    def set_grouping(self, on: bool) -> None:
        """Group by module or not, from now on; the graph shown is drawn again the new way."""
        host, doc = self.host, self.host.doc
        host.controller.grouping = bool(on)
        host.settings.setValue("groupByModule", bool(on))
        if doc.result is None:
            return
        view = for_window(doc.result.graph, bool(on))
        if view.graph is doc.shown or (not view.grouped and doc.view is not None and not doc.view.grouped):
            return
        host.controller.adopt_view(doc.result, view)
        doc.view, doc.expanded, doc.refit, doc.user_toggled = view, first_open(view.graph), True, False
        host.controller.layout(view.graph, doc.expanded)

    def show_group(self, shown: str, paths: list[str]) -> None:
        """A group picked in the graph (`shown`, its path there; `paths`, its equations)."""
        doc, inspector = self.host.doc, self.host.inspector
        try:
            node = resolve(doc.shown, shown)[1] if doc.shown is not None else None
        except (KeyError, IndexError, ValueError):
            node = None
        if node is None or doc.view is None:
            inspector.show_nothing()
            return
        links = self.host.jaxpr_links
        lines = {"jaxpr": sorted({ln for p in paths for ln in links.all_lines_for_node(p)})} if links else {}
        twins = [(p, resolve(doc.view.graph, p)[1].name_stack.rsplit("/", 1)[-1]) for p in doc.view.twins.get(shown, ())]
        inspector.show_group(shown, node, lines, twins)

    def link(self, href: str) -> None:
        """The Node pane's links: "show:PATH" selects that instance, "only:PATH" opens it alone."""
        kind, _, path = href.partition(":")
        doc = self.host.doc
        if doc.view is None or doc.shown is None:
            return
        if kind == "show":
            self.host.graph.select_paths([path])
        elif kind == "only":
            others = [t for t in doc.view.twins.get(path, ()) if t != path]
            keep = {e for e in doc.expanded if not any(e == t or e.startswith(t + ":") for t in others)}
            doc.user_toggled = True
            self.host.graph.keep_place_of(path)
            self.host.controller.layout(doc.shown, frozenset(keep | {path}), region=self.host.graph.preview_region(path))
            self.host.statusBar().showMessage(f"opened {path}; closed {len(others)} identical layer(s)", 4000)
