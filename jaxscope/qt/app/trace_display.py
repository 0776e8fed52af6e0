"""How a trace shows in the window's panes besides the graph: the colours that link source lines
to their nodes (per theme), the control-flow marks and their legend, the diagnostics; and what a
trace needs made off the GUI thread (`trace_prep`)."""

from __future__ import annotations

import html
from typing import NamedTuple, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel

from jaxscope.analysis.flow_marks import line_marks, static_values
from jaxscope.analysis.guide import parse_guide
from jaxscope.analysis.scope_view import ScopedGraph, first_open
from jaxscope.ir import linking
from jaxscope.qt.app.shown_trace import Document
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.diagnostics_panel import DiagnosticsPanel
from jaxscope.qt.panes.flow_paint import legend_items
from jaxscope.qt.panes.guide_panel import GuidePanel
from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.qt.panes.run_panel import RunPanel
from jaxscope.qt.panes.source_frames import SourceFrames
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.flow import recording_stopped
from jaxscope.schema.graph import Graph
from jaxscope.schema.trace import TraceResult
from jaxscope.spec import argspec


class TracePrep(NamedTuple):
    """What `MainWindow._prepare_trace` makes of a trace for the GUI thread."""

    links: linking.JaxprLinks  # the node sources (the jaxpr lines come with the printed jaxpr)
    expanded: frozenset[str]  # `first_open`: the clusters a first layout opens
    helpers: set[str]  # `linking.helper_files`: the other user files to watch
    view: ScopedGraph  # what the graph pane draws (`expanded` is of its paths)


def trace_prep(result: TraceResult, view: ScopedGraph) -> TracePrep:
    """What the window walks a new trace's every node for (see `MainWindow._prepare_trace`)."""
    graph = result.graph
    helpers = linking.helper_files(graph, result.request.function.path or "")
    return TracePrep(linking.jaxpr_links(graph, ""), first_open(view.graph), helpers, view)


def recording_gave_up(result: TraceResult) -> bool:
    """Whether the worker's control-flow recorder gave up on this trace (a program too big for it:
    past its call budget, under Python's trace hook ~2.5x the trace time before 3.12). Then the
    next trace of that function is not recorded: it would cost as much and stop again."""
    return result.flow is None and recording_stopped(result.warnings) is not None


class DisplayHost(Protocol):
    doc: Document
    theme: str
    graph: QtGraphView
    source: QtSourceView
    source_frames: SourceFrames
    inputs: InputsPanel
    diagnostics: DiagnosticsPanel
    docks: dict[str, QDockWidget]
    flow_legend: QLabel
    stale_banner: QLabel
    run_panel: RunPanel
    guide: GuidePanel

    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation) -> None: ...


class TraceDisplay:
    def __init__(self, host: DisplayHost) -> None:
        self.host = host
        self._node_colours: tuple[Graph, str, str, dict[str, str]] | None = None  # (graph, file, theme, colours)

    def show_guide(self, docstring: str) -> None:
        """A tutorial's module docstring as its guide (shown, beside the jaxpr) when it has links or the
        tutorial headings; other files' docstrings are no guide."""
        guide = parse_guide(docstring) if docstring else None
        has_guide = guide is not None and bool(guide.links() or "What it teaches" in docstring)
        self.host.guide.set_guide(guide if has_guide else None, self.host.theme == "dark")
        docks = self.host.docks
        if has_guide and not docks["guide"].isVisible():
            docks["guide"].show()
            self.host.resizeDocks([docks["jaxpr"], docks["guide"]], [380, 420], Qt.Orientation.Vertical)
        docks["guide"].setVisible(has_guide)

    def mark_stale(self, why: str) -> None:
        """The graph shown is no longer what the file or the request gives: say so over it."""
        self.host.doc.stale = True
        self.host.stale_banner.setText(why)
        self.host.stale_banner.show()

    def trace_failed(self, function: str) -> None:
        """A failed trace keeps the last good graph, said to be stale, and whose it is when it is of
        another function (a newcomer read loss's graph as predict's)."""
        result = self.host.doc.result
        if result is None:
            return
        shown = result.request.function.qualname
        if shown == function:
            self.mark_stale("The last trace failed; showing the previous result (stale). See Problems.")
        else:
            self.mark_stale(f"The trace of {function} failed; the graph shown is {shown}'s, from before (stale). See Problems.")

    def fresh(self, result: TraceResult) -> None:
        """A new result: nothing stale; a jit-vs-eager verdict of another function (or file) goes."""
        self.host.doc.stale = False
        self.host.stale_banner.hide()
        self.host.source_frames.reset()
        run = self.host.run_panel.shown_result
        if run is not None and run.request.function != result.request.function:
            self.host.run_panel.clear()

    def palette(self) -> list[str]:
        return linking.PALETTE_DARK if self.host.theme == "dark" else linking.PALETTE_LIGHT

    def apply_source_colours(self) -> None:
        """Line colours shared by source lines and their nodes; they follow the theme."""
        palette = self.palette()
        line_colours = linking.line_colours(self.host.doc.graph, self.host.doc.path) if self.host.doc.graph else {}
        self.host.source.set_line_colours({line: palette[i % len(palette)] for line, i in line_colours.items()})

    def graph_colours(self, view: ScopedGraph | None = None) -> dict[str, str]:
        """Drawn node path -> the colour of its source line, made once per trace and theme (every
        layout of the trace shows them); of the document's view by default. From any thread."""
        view = view or self.host.doc.view
        if view is None:
            return {}
        made = self._node_colours
        if made is None or made[0] is not view.graph or made[1:3] != (self.host.doc.path, self.host.theme):
            colours = linking.node_colours(view.real, self.host.doc.path, self.palette())
            if view.grouped:
                colours = {view.to_view(p): c for p, c in colours.items()}
            made = self._node_colours = (view.graph, self.host.doc.path, self.host.theme, colours)
        return made[3]

    def apply_graph_colours(self) -> None:
        if self.host.doc.view is not None:
            self.host.graph.set_line_colours(self.graph_colours())

    def show_flow(self, result: TraceResult) -> None:
        """Source-pane marks of what tracing baked in (when the recorder ran)."""
        file_flow = result.flow.file(self.host.doc.path) if result.flow is not None else None
        if file_flow is None:
            self.host.source.set_flow_marks({})
            note = ""
            if recording_gave_up(result):
                note = "control-flow marks are off: this program makes too many Python calls while it is traced"
            self.host.flow_legend.setText(html.escape(note))
            return
        fn = self.host.inputs.current()
        call = self.host.inputs.parse(result.request.args)  # parsed already when the trace was asked for
        statics = static_values(fn, call) if fn is not None and not isinstance(call, argspec.SpecError) else {}
        self.host.source.set_flow_marks(
            line_marks(file_flow, result.graph, self.host.doc.path, statics, source=self.host.source.toPlainText())
        )
        swatch = '<span style="color:{0}">{2}</span>&nbsp;{1}'
        items = [swatch.format(colour or "#8e5ad6", html.escape(text), glyph) for colour, text, glyph in legend_items(self.host.theme)]
        self.host.flow_legend.setText("&nbsp;&nbsp; ".join(items))

    def show_diagnostics(self, result: TraceResult) -> None:
        self.host.diagnostics.set_diagnostics(result.diagnostics, self.host.doc.path)
        count = len(result.diagnostics)
        self.host.docks["diagnostics"].setWindowTitle(f"Diagnostics ({count})" if count else "Diagnostics")
        if any(d.severity != "info" for d in result.diagnostics):
            self.host.docks["diagnostics"].raise_()
