"""The window's pictures of the graph: File → Export Graph (any format, an HTML page too, with the
CLI's options and through its drawing pipeline, on a thread: `ExportJobs`),
`export` (the same, synchronously) and Copy Graph Image. Each draws long edges as the view does
now, and every raster goes through `raster.svg_to_image` (fonts narrowed, size capped) as the PNG
export does, so the copied image and the exported PNG match."""

from __future__ import annotations

import os
from typing import Any, Protocol

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialog, QStatusBar, QWidget

from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.drawing import Drawing, DrawOptions
from jaxscope.ir.hlo_links import IrLinks
from jaxscope.ir.link_tables import export_entry, ir_lines, jaxpr_lines
from jaxscope.qt.app.export_job import ExportJobs
from jaxscope.qt.app.trace_files import TraceFiles
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


class ExportHost(Protocol):
    session: TraceSession
    theme: str
    graph: QtGraphView
    exports: ExportJobs
    ir: IrTabs
    trace_files: TraceFiles

    @property
    def ir_links(self) -> dict[str, IrLinks]: ...

    def window(self) -> QWidget: ...

    def statusBar(self) -> QStatusBar: ...


class GraphExport:
    def __init__(self, host: ExportHost) -> None:
        self.host = host

    def long_edges(self) -> str:
        """How the graph view draws long edges now: an image of the graph draws them the same way."""
        return "ends" if self.host.graph.long_edges_partial else "whole"

    def drawing(self, theme: str = "", dpi: int = 96, legend: bool = False) -> Drawing:
        """What the window shows as the drawing pipeline writes it (`jaxscope.drawing`)."""
        doc = self.host.session.doc
        if doc.shown is None or doc.layout is None or doc.graph is None:
            raise ValueError("nothing to export yet: trace a function first")
        view = doc.view if doc.view is not None else ScopedGraph(doc.shown, {}, doc.graph)
        options = DrawOptions(theme=theme or self.host.theme, long_edges=self.long_edges(), dpi=dpi, legend=legend).check()
        return Drawing(view, doc.layout, options, frozenset())

    def export(self, path: str) -> str:
        """Write the current graph as the CLI writes it, synchronously; returns the format written."""
        return self.drawing().write(path, links=self.links(), sources=self.sources())

    def sources(self) -> dict[str, str]:
        """For an HTML page's panel: the source texts the window may show (a saved trace's own
        copies; a live trace's files while they are as traced: `saved_traces.snapshot`)."""
        from jaxscope.saved_traces import snapshot

        saved = self.host.trace_files.doc
        if saved is not None:
            return dict(saved.sources)
        result = self.host.session.doc.result
        return snapshot(result, lambda _note: None) if result is not None else {}

    def links(self) -> dict[str, Any]:
        """For a JSON export: the texts shown (jaxpr, StableHLO, compiled HLO, those there are) and
        each equation's own lines in them, as `jaxscope export --links` writes them (by the paths
        of the graph drawn: inside its module groups)."""
        doc, out = self.host.session.doc, {}
        if doc.graph is None:
            return {}
        if doc.result is not None and doc.result.jaxpr_text and self.host.session.links is not None:
            out["jaxpr"] = export_entry(doc.result.jaxpr_text, self._drawn(jaxpr_lines(doc.graph, self.host.session.links)))
        for stage, links in self.host.ir_links.items():
            if links.exact is not None:
                out[stage] = export_entry(self.host.ir.views[stage].toPlainText(), self._drawn(ir_lines(links.exact)))
        return out

    def _drawn(self, lines: dict[str, list[int]]) -> dict[str, list[int]]:
        view = self.host.session.doc.view
        return {view.to_view(p): v for p, v in lines.items()} if view is not None and view.grouped else lines

    def dialog(self) -> None:
        """The Export Graph dialog (file and the CLI's options), then the export off the GUI thread."""
        doc = self.host.session.doc
        if doc.shown is None or doc.layout is None:
            return
        default = os.path.splitext(doc.path)[0] + f"_{doc.function}.svg"
        asked = ExportDialog(self.host.window(), default, self.host.theme, nesting_depth(doc.shown))
        if asked.exec() == QDialog.DialogCode.Accepted and asked.options().path:
            self.start(asked.options())

    def start(self, opts: ExportOptions) -> None:
        doc = self.host.session.doc
        if doc.shown is None or doc.layout is None:
            return
        self.host.statusBar().showMessage(f"exporting to {opts.path}…")
        page = opts.path.lower().endswith((".html", ".htm"))
        links = self.links() if opts.path.lower().endswith(".json") or page else None
        expanded = None if opts.collapse is None else expanded_to_depth(doc.shown, opts.collapse)
        drawing = self.drawing(opts.theme, opts.dpi, opts.legend)
        self.host.exports.start(drawing, opts.path, links, expanded=expanded, sources=self.sources if page else None)

    def image(self, scale: float = 1.0) -> QImage:
        """The graph as the PNG export draws it, `scale` pixels per px."""
        doc = self.host.session.doc
        assert doc.shown is not None and doc.layout is not None
        svg = render_svg(doc.shown, doc.layout, theme=self.host.theme, long_edges=self.long_edges())
        return raster.svg_to_image(svg, dpi=round(96 * scale))

    def copy_image(self) -> None:
        doc = self.host.session.doc
        if doc.shown is not None and doc.layout is not None:
            QApplication.clipboard().setImage(self.image(2.0))
            self.host.statusBar().showMessage("graph image copied", 3000)
