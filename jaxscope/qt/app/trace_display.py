"""How a trace shows in the window's panes besides the graph: the colours that link source lines
to their nodes (per theme), the control-flow marks and their legend, the diagnostics, the banner
that says the graph is stale."""

from __future__ import annotations

import html
from collections.abc import Callable

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
from jaxscope.targets import argspec
from jaxscope.workbench import recording_gave_up


def palette_for(theme: str) -> list[str]:
    """The source-line colours of a theme (`linking`'s light or dark palette)."""
    return linking.PALETTE_DARK if theme == "dark" else linking.PALETTE_LIGHT


class TraceDisplay:
    """The panes a trace shows in besides the graph, and the banner over the graph: given them, the
    workbench they show (through `session`), and the theme they follow."""

    def __init__(
        self,
        session: TraceSession,
        theme: Callable[[], str],
        graph: QtGraphView,
        source: QtSourceView,
        source_frames: SourceFrames,
        inputs: InputsPanel,
        diagnostics: DiagnosticsPanel,
        guide: GuidePanel,
        run_panel: RunPanel,
        stale_banner: QLabel,
        docks: dict[str, QDockWidget],
        resize_docks: Callable[[list[QDockWidget], list[int], Qt.Orientation], None],
    ) -> None:
        self.session, self.theme, self.graph, self.source, self.source_frames = session, theme, graph, source, source_frames
        self.inputs, self.diagnostics, self.guide, self.run_panel = inputs, diagnostics, guide, run_panel
        self.stale_banner, self.docks, self.resize_docks = stale_banner, docks, resize_docks
        self.flow_legend = source_frames.legend
        session.traced.connect(lambda prepared, _previous: self.traced(prepared.result))

    def show_guide(self, docstring: str) -> None:
        """A tutorial's module docstring as its guide (shown, beside the jaxpr) when it has links or the
        tutorial headings; other files' docstrings are no guide."""
        guide = parse_guide(docstring) if docstring else None
        has_guide = guide is not None and bool(guide.links() or "What it teaches" in docstring)
        self.guide.set_guide(guide if has_guide else None, self.theme() == "dark")
        docks = self.docks
        if has_guide and not docks["guide"].isVisible():
            docks["guide"].show()
            self.resize_docks([docks["jaxpr"], docks["guide"]], [380, 420], Qt.Orientation.Vertical)
        docks["guide"].setVisible(has_guide)

    def mark_stale(self, why: str) -> None:
        """The graph shown is no longer what the file or the request gives: say so over it."""
        self.session.mark_stale(True)
        self.stale_banner.setText(why)
        self.stale_banner.show()

    def trace_failed(self, function: str) -> None:
        """A failed trace keeps the last good graph, said to be stale, and whose it is when it is of
        another function (a newcomer read loss's graph as predict's)."""
        result = self.session.doc.result
        if result is None:
            return
        shown = result.request.function.qualname
        if shown == function:
            self.mark_stale("The last trace failed; showing the previous result (stale). See Problems.")
        else:
            self.mark_stale(f"The trace of {function} failed; the graph shown is {shown}'s, from before (stale). See Problems.")

    def traced(self, result: TraceResult) -> None:
        """A new trace is shown: its inputs, its source's colours and flow marks, its diagnostics."""
        self.inputs.show_result(result)
        self.fresh(result)
        self.apply_source_colours()
        self.show_flow(result)
        self.show_diagnostics(result)

    def fresh(self, result: TraceResult) -> None:
        """A new result (nothing stale): a jit-vs-eager verdict of another function (or file) goes."""
        self.stale_banner.hide()
        self.source_frames.reset()
        run = self.run_panel.shown_result
        if run is not None and run.request.function != result.request.function:
            self.run_panel.clear()

    def palette(self) -> list[str]:
        return linking.PALETTE_DARK if self.theme() == "dark" else linking.PALETTE_LIGHT

    def apply_source_colours(self) -> None:
        """Line colours shared by source lines and their nodes; they follow the theme."""
        palette = self.palette()
        line_colours = linking.line_colours(self.session.doc.graph, self.session.doc.path) if self.session.doc.graph else {}
        self.source.set_line_colours({line: palette[i % len(palette)] for line, i in line_colours.items()})

    def apply_graph_colours(self) -> None:
        if self.session.doc.view is not None:
            self.graph.set_line_colours(self.session.colours())

    def show_flow(self, result: TraceResult) -> None:
        """Source-pane marks of what tracing baked in (when the recorder ran)."""
        file_flow = result.flow.file(self.session.doc.path) if result.flow is not None else None
        if file_flow is None:
            self.source.set_flow_marks({})
            note = ""
            if recording_gave_up(result):
                note = "control-flow marks are off: this program makes too many Python calls while it is traced"
            self.flow_legend.setText(html.escape(note))
            return
        fn = self.inputs.current()
        call = self.inputs.parse(result.request.args)  # parsed already when the trace was asked for
        statics = static_values(fn, call) if fn is not None and not isinstance(call, argspec.SpecError) else {}
        self.source.set_flow_marks(line_marks(file_flow, result.graph, self.session.doc.path, statics, source=self.source.toPlainText()))
        swatch = '<span style="color:{0}">{2}</span>&nbsp;{1}'
        items = [swatch.format(colour or "#8e5ad6", html.escape(text), glyph) for colour, text, glyph in legend_items(self.theme())]
        self.flow_legend.setText("&nbsp;&nbsp; ".join(items))

    def show_diagnostics(self, result: TraceResult) -> None:
        self.diagnostics.set_diagnostics(result.diagnostics, self.session.doc.path)
        count = len(result.diagnostics)
        self.docks["diagnostics"].setWindowTitle(f"Diagnostics ({count})" if count else "Diagnostics")
        if any(d.severity != "info" for d in result.diagnostics):
            self.docks["diagnostics"].raise_()
