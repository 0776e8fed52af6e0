"""The trace the window shows, and its one owner: the document (file, function, inputs, last good
result, the view drawn of it, its layout and open clusters), the links of its nodes to the jaxpr,
the colours of its source lines. Nothing else writes these; the panes learn of a change from its
signals, each emitted once the session's state is whole (no pane depends on another's slot order).

A trace's way through the window goes one way: `trace` asks the controller; the controller hands
back a `PreparedTrace` made off the GUI thread; the session takes it (`traced`) and asks for its
layout; the controller hands back a `PreparedLayout`; the session takes it (`laid_out`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from PySide6.QtCore import QObject, Signal, Slot

from jaxscope.analysis.scope_view import ScopedGraph, first_open
from jaxscope.ir import linking
from jaxscope.layout.preview import Region
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace, view_colours
from jaxscope.qt.app.shown_trace import Document
from jaxscope.schema.flow import recording_stopped
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Annotations
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult, same_call


class TraceSession(QObject):
    traced = Signal(object, object)  # PreparedTrace now shown, the TraceResult shown before it (or None)
    laid_out = Signal(object, bool)  # PreparedLayout now shown; keep: the view keeps its place (else it fits)
    previewed = Signal(object)  # PreparedLayout: the part of the coming layout the view shows

    def __init__(self, controller: Controller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.doc = Document()
        self.links: linking.JaxprLinks | None = None  # the graph's node sources, and jaxpr lines once printed
        self.palette: tuple[str, ...] = ()  # the source-line colours (`set_palette`: they follow the theme)
        self._colours: tuple[Graph, str, tuple[str, ...], dict[str, str]] | None = None
        controller.trace_finished.connect(self._traced)
        controller.layout_finished.connect(self._laid_out)
        controller.layout_preview.connect(self._previewed)

    # ------------------------------------------------------------------ asking

    def open_file(self, path: str) -> bool:
        """`path` is the file shown from now on; True when it is another file (a new document)."""
        new = bool(self.doc.path) and self.doc.path != path
        if new:
            self.doc, self.links, self._colours = Document(), None, None
        self.doc.path = path
        return new

    def trace(self, function: str, args: str, inputs: str = "") -> None:
        """Trace `function` of the file shown with specs `args` (or the maker `inputs`)."""
        doc = self.doc
        if doc.function != function:
            doc.user_toggled = False
        doc.function, doc.args, doc.inputs = function, args, inputs
        previous = doc.result
        record = previous is None or previous.request.function.qualname != function or not recording_gave_up(previous)
        request = TraceRequest(
            FunctionRef(qualname=function, path=doc.path), args=args, jaxpr_text=False, record_flow=record, inputs=inputs
        )
        # laid out as the reply arrives, with the clusters `_traced` will ask for open
        keep = self._keeps_expanded(request.function)
        self.controller.trace(request, doc.expanded if keep else None, self.palette)

    def toggle(self, owner: str, region: Region | None = None) -> None:
        """Open or close the cluster of `owner` (a drawn path)."""
        self.relayout(set(self.doc.expanded) ^ {owner}, region)

    def relayout(self, expanded: Collection[str], region: Region | None = None) -> None:
        """Draw the graph shown with `expanded` open, as the user asked: kept across re-traces."""
        graph = self.doc.shown
        if graph is None:
            return
        self.doc.user_toggled = True
        self._layout(graph, expanded, region)

    def show_view(self, view: ScopedGraph, fresh: bool, annotations: Annotations = ()) -> None:
        """Draw `view` of the trace (grouped otherwise), with `annotations` on its boxes: `fresh`,
        opened and fitted as a new graph; else with the clusters open as they are."""
        doc = self.doc
        doc.view, doc.annotations = view, tuple(annotations)
        if fresh:
            doc.expanded, doc.refit, doc.user_toggled = first_open(view.graph), True, False
        self._layout(view.graph, doc.expanded)

    def annotate(self, annotations: Annotations) -> None:
        """Draw the graph shown again with `annotations` (drawn path, text) on its boxes (what the
        partitioner did); the graph and its view stay as they are: they are drawn, not changed."""
        self.doc.annotations = tuple(annotations)
        if self.doc.shown is not None:
            self._layout(self.doc.shown, self.doc.expanded)

    def _layout(self, graph: Graph, expanded: Collection[str], region: Region | None = None) -> None:
        notes = {"annotations": self.doc.annotations} if self.doc.annotations else {}
        self.controller.layout(graph, frozenset(expanded), region=region, colours=self.colours(), **notes)

    # ------------------------------------------------------------------ told

    def printed(self, text: str, links: linking.JaxprLinks) -> None:
        """The printed jaxpr of the trace shown has come, and its lines' links."""
        if self.doc.result is not None:
            self.doc.result = replace(self.doc.result, jaxpr_text=text)
        self.links = links

    def mark_stale(self, stale: bool) -> None:
        """The graph shown is (or is no longer) behind the file or the last request."""
        self.doc.stale = stale

    def set_palette(self, palette: list[str]) -> None:
        self.palette = tuple(palette)

    def colours(self) -> dict[str, str]:
        """Drawn node path -> the colour of its source line: made once per view and palette (every
        layout of the trace shows them), the first time off the GUI thread (`PreparedTrace`)."""
        view = self.doc.view
        if view is None:
            return {}
        made = self._colours
        if made is None or made[0] is not view.graph or made[1:3] != (self.doc.path, self.palette):
            made = self._colours = (view.graph, self.doc.path, self.palette, view_colours(view, self.doc.path, self.palette))
        return made[3]

    # ------------------------------------------------------------------ handed back

    def _keeps_expanded(self, function: FunctionRef) -> bool:
        """A re-trace of the function shown, whose clusters the user toggled, keeps them open."""
        previous = self.doc.result
        return self.doc.user_toggled and previous is not None and previous.request.function == function

    @Slot(object)
    def _traced(self, prepared: PreparedTrace) -> None:
        result, doc = prepared.result, self.doc
        keep = self._keeps_expanded(result.request.function)
        previous = doc.result
        doc.refit = previous is None or not same_call(previous.request, result.request)
        doc.result, doc.view, doc.stale, doc.annotations = result, prepared.view, False, ()
        if not keep:
            doc.expanded = prepared.expanded
        self.links = prepared.links
        if (result.request.function.path or "") == doc.path:  # what they were made for (a saved trace may name none)
            self._colours = (prepared.view.graph, doc.path, prepared.palette, prepared.colours)
        self.traced.emit(prepared, previous)
        self._layout(prepared.view.graph, doc.expanded)

    @Slot(object)
    def _laid_out(self, prepared: PreparedLayout) -> None:
        doc = self.doc
        if doc.shown is not prepared.graph:
            return
        keep = doc.layout is not None and doc.result is not None and doc.layout is not prepared.layout and not doc.refit
        doc.refit = False
        doc.layout, doc.expanded = prepared.layout, prepared.expanded
        self.laid_out.emit(prepared, keep)

    @Slot(object)
    def _previewed(self, prepared: PreparedLayout) -> None:
        """The part of a big re-layout the view shows, ahead of the whole (its first paint at once)."""
        if self.doc.shown is prepared.graph and self.doc.layout is not None:
            self.previewed.emit(prepared)


def recording_gave_up(result: TraceResult) -> bool:
    """Whether the worker's control-flow recorder gave up on this trace (a program too big for it:
    past its call budget, under Python's trace hook ~2.5x the trace time before 3.12). Then the
    next trace of that function is not recorded: it would cost as much and stop again."""
    return result.flow is None and recording_stopped(result.warnings) is not None
