"""The window's pictures of the graph: File → Export Graph (any format, an HTML page too, with the
CLI's options, a drawing request to the one drawer, on a thread: `ExportJobs`), `export` (the same,
synchronously) and Copy Graph Image. Each is what the window shows: its view and layout, long edges
drawn as the view draws them now, the measure it is coloured by and what the partitioner did; JSON
keeps the program's own structure, as the CLI writes it. Every raster goes through
`raster.svg_to_image` (fonts narrowed, size capped) as the PNG export does, so the copied image and
the exported PNG match."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QDialog, QStatusBar, QWidget

from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.drawing import Decorations, Drawing, DrawOptions, DrawRequest, Grouping, Measured
from jaxscope.ir.hlo_links import IrLinks
from jaxscope.ir.link_tables import export_entry, ir_lines, jaxpr_lines
from jaxscope.qt.app.export_job import ExportJobs
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph import raster
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.export_options import ExportDialog, ExportOptions
from jaxscope.qt.panes.ir_tabs import IrTabs
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
    it draws long edges), the IR texts shown and their links, the measure the graph is coloured by
    (`fill`) and the partitioner's notes by program path (`notes`), and writes through `exports`."""

    def __init__(
        self,
        session: TraceSession,
        graph: QtGraphView,
        ir: IrTabs,
        ir_links: Callable[[], dict[str, IrLinks]],
        exports: ExportJobs,
        fill: Callable[[], Measured | None],
        notes: Callable[[], dict[str, str]],
        theme: Callable[[], str],
        parent: QWidget,
        status: QStatusBar,
    ) -> None:
        self.session, self.graph, self.ir, self.ir_links, self.exports = session, graph, ir, ir_links, exports
        self.fill, self.notes, self.theme, self.parent, self.status = fill, notes, theme, parent, status

    def long_edges(self) -> str:
        """How the graph view draws long edges now: an image of the graph draws them the same way."""
        return "ends" if self.graph.long_edges_partial else "whole"

    def request(self, path: str = "", theme: str = "", dpi: int = 96, legend: bool = False, collapse: int | None = None) -> DrawRequest:
        """What the window shows, asked of the drawer for `path`'s format: the view and its layout
        (laid out again when `collapse` opens another depth), the fill and the notes shown; JSON and
        HTML carry the texts shown and their links. JSON draws the program as it is (`grouping_for`)."""
        doc = self.session.doc
        if doc.shown is None or doc.layout is None or doc.graph is None:
            raise ValueError("nothing to export yet: trace a function first")
        lower = path.lower()
        json, page = lower.endswith(".json"), lower.endswith((".html", ".htm"))
        view = doc.view if doc.view is not None else ScopedGraph(doc.shown, {}, doc.graph)
        flat = json and view.grouped
        if flat:
            view = ScopedGraph(doc.graph, {}, doc.graph)
        grouping: Grouping = "flat" if flat else "auto"
        look = DrawOptions(theme or self.theme(), long_edges=self.long_edges(), dpi=dpi, legend=legend)
        options = replace(look, collapse=collapse, grouping=grouping).check()
        decorations = Decorations(fill=self.fill(), notes=self.notes(), links=self.links() if json or page else {})
        same = collapse is None and not flat
        return DrawRequest(view, options, decorations, layout=doc.layout if same else None, page=page)

    def drawing(self) -> Drawing:
        """What the window shows, as it is laid out (no layout process asked)."""
        request = self.request()
        assert request.layout is not None  # (the layout shown)
        return Drawing.of(request, request.layout)

    def export(self, path: str) -> str:
        """Write the current graph as the CLI writes it, synchronously; returns the format written."""
        return self.exports.write(self.request(path), path, self.sources)

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
        """For a JSON export or a page: the texts shown (jaxpr, StableHLO, compiled HLO, those there
        are) and each equation's own lines in them, by program path, as `jaxscope export --links`
        writes them."""
        doc, out = self.session.doc, {}
        if doc.graph is None:
            return {}
        if doc.result is not None and doc.result.jaxpr_text and self.session.links is not None:
            out["jaxpr"] = export_entry(doc.result.jaxpr_text, jaxpr_lines(doc.graph, self.session.links))
        for stage, links in self.ir_links().items():
            if links.exact is not None:
                out[stage] = export_entry(self.ir.views[stage].toPlainText(), ir_lines(links.exact))
        return out

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
        self.exports.start(self.request(opts.path, opts.theme, opts.dpi, opts.legend, opts.collapse), opts.path, self.sources)

    def image(self, scale: float = 1.0) -> QImage:
        """The graph as the PNG export draws it, `scale` pixels per px."""
        return raster.svg_to_image(self.drawing().svg(), dpi=round(96 * scale))

    def copy_image(self) -> None:
        doc = self.session.doc
        if doc.shown is not None and doc.layout is not None:
            QApplication.clipboard().setImage(self.image(2.0))
            self.status.showMessage("graph image copied", 3000)
