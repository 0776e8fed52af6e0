"""How a trace shows in the window's panes besides the graph: the colours that link source lines
to their nodes (per theme), the control-flow marks and their legend, the diagnostics, the banner
that says the graph is stale."""

from __future__ import annotations

import html
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel

from jaxscope.analysis.flow_marks import line_marks, static_values
from jaxscope.analysis.guide import parse_guide
from jaxscope.ir import linking
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.diagnostics_panel import DiagnosticsPanel
from jaxscope.qt.panes.flow_paint import legend_items
from jaxscope.qt.panes.guide_panel import GuidePanel
from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.qt.panes.run_panel import RunPanel
from jaxscope.qt.panes.source_frames import SourceFrames
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.trace import TraceResult
from jaxscope.spec import argspec
from jaxscope.workbench import recording_gave_up


class DisplayHost(Protocol):
    session: TraceSession
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
        self.host.session.mark_stale(True)
        self.host.stale_banner.setText(why)
        self.host.stale_banner.show()

    def trace_failed(self, function: str) -> None:
        """A failed trace keeps the last good graph, said to be stale, and whose it is when it is of
        another function (a newcomer read loss's graph as predict's)."""
        result = self.host.session.doc.result
        if result is None:
            return
        shown = result.request.function.qualname
        if shown == function:
            self.mark_stale("The last trace failed; showing the previous result (stale). See Problems.")
        else:
            self.mark_stale(f"The trace of {function} failed; the graph shown is {shown}'s, from before (stale). See Problems.")

    def fresh(self, result: TraceResult) -> None:
        """A new result (nothing stale): a jit-vs-eager verdict of another function (or file) goes."""
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
        line_colours = linking.line_colours(self.host.session.doc.graph, self.host.session.doc.path) if self.host.session.doc.graph else {}
        self.host.source.set_line_colours({line: palette[i % len(palette)] for line, i in line_colours.items()})

    def apply_graph_colours(self) -> None:
        if self.host.session.doc.view is not None:
            self.host.graph.set_line_colours(self.host.session.colours())

    def show_flow(self, result: TraceResult) -> None:
        """Source-pane marks of what tracing baked in (when the recorder ran)."""
        file_flow = result.flow.file(self.host.session.doc.path) if result.flow is not None else None
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
            line_marks(file_flow, result.graph, self.host.session.doc.path, statics, source=self.host.source.toPlainText())
        )
        swatch = '<span style="color:{0}">{2}</span>&nbsp;{1}'
        items = [swatch.format(colour or "#8e5ad6", html.escape(text), glyph) for colour, text, glyph in legend_items(self.host.theme)]
        self.host.flow_legend.setText("&nbsp;&nbsp; ".join(items))

    def show_diagnostics(self, result: TraceResult) -> None:
        self.host.diagnostics.set_diagnostics(result.diagnostics, self.host.session.doc.path)
        count = len(result.diagnostics)
        self.host.docks["diagnostics"].setWindowTitle(f"Diagnostics ({count})" if count else "Diagnostics")
        if any(d.severity != "info" for d in result.diagnostics):
            self.host.docks["diagnostics"].raise_()
