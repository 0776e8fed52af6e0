"""The window's pictures of the graph: File → Export Graph (any format, an HTML page too, with the
CLI's options and through its drawing pipeline, on a thread: `ExportJobs`),
`export` (the same, synchronously) and Copy Graph Image. Each draws long edges as the view does
now, and every raster goes through `raster.svg_to_image` (fonts narrowed, size capped) as the PNG
export does, so the copied image and the exported PNG match."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialog, QStatusBar, QWidget

from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.drawing import Drawing, DrawOptions
from jaxscope.ir.hlo_links import IrLinks
from jaxscope.ir.link_tables import export_entry, ir_lines, jaxpr_lines
from jaxscope.qt.app.export_job import ExportJobs
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph import raster
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.export_options import ExportDialog, ExportOptions
from jaxscope.qt.panes.ir_tabs import IrTabs
from jaxscope.render.svg import render_svg
from jaxscope.schema.expansion import expanded_to_depth
from jaxscope.schema.graph import Graph


def nesting_depth(graph: Graph, cap: int = 8) -> int:
    """How many levels of sub-graphs nest in `graph` (up to `cap`)."""
    depth = 0
    while depth < cap and expanded_to_depth(graph, depth + 1) != expanded_to_depth(graph, depth):
        depth += 1
    return depth


class GraphExport:
    """Exports of the graph shown. It reads the workbench (through `session`), the graph view (how
    it draws long edges), the IR texts shown and their links, and writes through `exports`."""

    def __init__(
        self,
        session: TraceSession,
        graph: QtGraphView,
        ir: IrTabs,
        ir_links: Callable[[], dict[str, IrLinks]],
        exports: ExportJobs,
        theme: Callable[[], str],
        parent: QWidget,
        status: QStatusBar,
    ) -> None:
        self.session, self.graph, self.ir, self.ir_links, self.exports = session, graph, ir, ir_links, exports
        self.theme, self.parent, self.status = theme, parent, status

    def long_edges(self) -> str:
        """How the graph view draws long edges now: an image of the graph draws them the same way."""
        return "ends" if self.graph.long_edges_partial else "whole"

    def drawing(self, theme: str = "", dpi: int = 96, legend: bool = False) -> Drawing:
        """What the window shows as the drawing pipeline writes it (`jaxscope.drawing`)."""
        doc = self.session.doc
        if doc.shown is None or doc.layout is None or doc.graph is None:
            raise ValueError("nothing to export yet: trace a function first")
        view = doc.view if doc.view is not None else ScopedGraph(doc.shown, {}, doc.graph)
        options = DrawOptions(theme=theme or self.theme(), long_edges=self.long_edges(), dpi=dpi, legend=legend).check()
        return Drawing(view, doc.layout, options, frozenset())

    def export(self, path: str) -> str:
        """Write the current graph as the CLI writes it, synchronously; returns the format written."""
        return self.drawing().write(path, links=self.links(), sources=self.sources())

    def sources(self) -> dict[str, str]:
        """For an HTML page's panel: the source texts the window may show (a saved trace's own
        copies; a live trace's files while they are as traced: `saved_traces.snapshot`)."""
        from jaxscope.saved_traces import snapshot

        saved = self.session.bench.saved
        if saved is not None:
            return dict(saved.sources)
        result = self.session.doc.result
        return snapshot(result, lambda _note: None) if result is not None else {}

    def links(self) -> dict[str, Any]:
        """For a JSON export: the texts shown (jaxpr, StableHLO, compiled HLO, those there are) and
        each equation's own lines in them, as `jaxscope export --links` writes them (by the paths
        of the graph drawn: inside its module groups)."""
        doc, out = self.session.doc, {}
        if doc.graph is None:
            return {}
        if doc.result is not None and doc.result.jaxpr_text and self.session.links is not None:
            out["jaxpr"] = export_entry(doc.result.jaxpr_text, self._drawn(jaxpr_lines(doc.graph, self.session.links)))
        for stage, links in self.ir_links().items():
            if links.exact is not None:
                out[stage] = export_entry(self.ir.views[stage].toPlainText(), self._drawn(ir_lines(links.exact)))
        return out

    def _drawn(self, lines: dict[str, list[int]]) -> dict[str, list[int]]:
        view = self.session.doc.view
        return view.drawn(lines) if view is not None else lines

    def dialog(self) -> None:
        """The Export Graph dialog (file and the CLI's options), then the export off the GUI thread."""
        doc = self.session.doc
        if doc.shown is None or doc.layout is None:
            return
        default = os.path.splitext(doc.path)[0] + f"_{doc.function}.svg"
        asked = ExportDialog(self.parent, default, self.theme(), nesting_depth(doc.shown))
        if asked.exec() == QDialog.DialogCode.Accepted and asked.options().path:
            self.start(asked.options())

    def start(self, opts: ExportOptions) -> None:
        doc = self.session.doc
        if doc.shown is None or doc.layout is None:
            return
        self.status.showMessage(f"exporting to {opts.path}…")
        page = opts.path.lower().endswith((".html", ".htm"))
        links = self.links() if opts.path.lower().endswith(".json") or page else None
        expanded = None if opts.collapse is None else expanded_to_depth(doc.shown, opts.collapse)
        drawing = self.drawing(opts.theme, opts.dpi, opts.legend)
        self.exports.start(drawing, opts.path, links, expanded=expanded, sources=self.sources if page else None)

    def image(self, scale: float = 1.0) -> QImage:
        """The graph as the PNG export draws it, `scale` pixels per px."""
        doc = self.session.doc
        assert doc.shown is not None and doc.layout is not None
        svg = render_svg(doc.shown, doc.layout, theme=self.theme(), long_edges=self.long_edges())
        return raster.svg_to_image(svg, dpi=round(96 * scale))

    def copy_image(self) -> None:
        doc = self.session.doc
        if doc.shown is not None and doc.layout is not None:
            QApplication.clipboard().setImage(self.image(2.0))
            self.status.showMessage("graph image copied", 3000)
