"""The window's side of the workbench (`jaxscope.workbench.Workbench`, the one owner of the trace
shown): it sends the requests the model asks for to the controller, hands the controller's answers
to the model, and turns the model's events into Qt signals, emitted once the model's state is whole
(no pane depends on another's slot order). Panes read `doc`, `links` and `palette` from here and
never write them.

A trace's way through the window goes one way: `trace` asks the controller; the controller hands
back a `PreparedTrace` made off the GUI thread; the model takes it (`Traced`, signal `traced`) and
asks for its layout; the controller hands back a `PreparedLayout`; the model takes it (`LaidOut`,
signal `laid_out`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QObject, Qt, Signal, Slot

from jaxscope.analysis.scope_view import ScopedGraph, for_window
from jaxscope.ir import linking
from jaxscope.layout.preview import Region
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace
from jaxscope.runtime.saved_worker import SavedWorker
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Annotations
from jaxscope.schema.trace import ErrorInfo
from jaxscope.schema.trace_file import TraceDocument
from jaxscope.workbench import Document, Event, Failed, Grouped, LaidOut, LayoutAsk, Saved, Stale, Traced, Workbench


class TraceSession(QObject):
    traced = Signal(object, object)  # PreparedTrace now shown, the TraceResult shown before it (or None)
    laid_out = Signal(object, bool)  # PreparedLayout now shown; keep: the view keeps its place (else it fits)
    previewed = Signal(object)  # PreparedLayout: the part of the coming layout the view shows
    failed = Signal(object)  # ErrorInfo: a request of the document failed (what was shown stays)
    stale_changed = Signal(bool)  # the graph shown is (or is no longer) behind the file or the last request
    grouping_changed = Signal(bool)  # modules are drawn as groups (or not) from now on
    regrouped = Signal()  # the trace shown has another view now (grouped or not): what is keyed by drawn path follows
    _view_made = Signal(object, bool, object, object)  # graph, grouping, Future[ScopedGraph], notes: to the GUI thread

    def __init__(self, controller: Controller, parent: QObject | None = None, bench: Workbench | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.bench = bench or Workbench(jobs=controller.jobs)  # the controller's futures answer to the model's ledger
        self.bench.subscribe(self._event)
        controller.trace_finished.connect(self._traced)
        controller.layout_finished.connect(self._laid_out)
        controller.layout_preview.connect(self._previewed)
        self._views = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-view")
        self._view_made.connect(self._regrouped, Qt.ConnectionType.QueuedConnection)

    @property
    def doc(self) -> Document:
        return self.bench.doc

    @property
    def links(self) -> linking.JaxprLinks | None:
        """The graph's node sources, and jaxpr lines once printed."""
        return self.bench.links

    @property
    def palette(self) -> tuple[str, ...]:
        return self.bench.palette

    def _event(self, event: Event) -> None:
        if isinstance(event, Traced):
            self.traced.emit(event.made, event.previous)
        elif isinstance(event, LaidOut):
            self.laid_out.emit(event.made, event.keep)
        elif isinstance(event, Failed):
            self.failed.emit(event.info)
        elif isinstance(event, Stale):
            self.stale_changed.emit(event.stale)
        elif isinstance(event, Grouped):
            self.grouping_changed.emit(event.on)
        elif isinstance(event, Saved):  # it answers the window's requests in the worker's place (None: the worker again)
            self.controller.saved = SavedWorker(event.document, os.path.basename(event.path)) if event.document is not None else None

    # ------------------------------------------------------------------ asking

    def open_file(self, path: str) -> bool:
        """`path` is the file shown from now on; True when it is another file (a new document)."""
        return self.bench.open_file(path)

    def trace(self, function: str, args: str, inputs: str = "") -> None:
        """Trace `function` of the file shown with specs `args` (or the maker `inputs`), laid out as
        the reply arrives with the clusters the model will ask for open."""
        request, expanded = self.bench.trace_request(function, args, inputs)
        self.controller.trace(request, expanded, self.palette, self.bench.grouping)

    def toggle(self, owner: str, region: Region | None = None) -> None:
        """Open or close the cluster of `owner` (a drawn path)."""
        self._layout(self.bench.toggle(owner), region)

    def relayout(self, expanded: Collection[str], region: Region | None = None) -> None:
        """Draw the graph shown with `expanded` open, as the user asked: kept across re-traces."""
        self._layout(self.bench.relayout(expanded), region)

    def show_view(self, view: ScopedGraph, fresh: bool, annotations: Annotations = ()) -> None:
        """Draw `view` of the trace (grouped otherwise), with `annotations` on its boxes: `fresh`,
        opened and fitted as a new graph; else with the clusters open as they are."""
        self._layout(self.bench.show_view(view, fresh, annotations))

    def annotate(self, annotations: Annotations) -> None:
        """Draw the graph shown again with `annotations` (drawn path, text) on its boxes."""
        self._layout(self.bench.annotate(annotations))

    def set_grouping(self, on: bool, notes: Callable[[ScopedGraph], Annotations] = lambda _view: ()) -> None:
        """Group by module or not, from now on; the graph shown is drawn again the new way (`notes`:
        what goes on the new view's boxes), its view made off the GUI thread."""
        graph = self.bench.set_grouping(on)
        if graph is None:
            return
        future = self._views.submit(_view_of, graph, bool(on))
        future.add_done_callback(lambda f: self._view_made.emit(graph, bool(on), f, notes))

    @Slot(object, bool, object, object)
    def _regrouped(self, graph: Graph, on: bool, future: Future[ScopedGraph], notes: Callable[[ScopedGraph], Annotations]) -> None:
        if future.exception() is not None:
            return  # (the view shown stays)
        ask = self.bench.take_grouped(graph, on, future.result(), notes)
        if ask is not None:
            self.regrouped.emit()
            self._layout(ask)

    def _layout(self, ask: LayoutAsk | None, region: Region | None = None) -> None:
        if ask is None:
            return
        notes = {"annotations": ask.annotations} if ask.annotations else {}
        self.controller.layout(ask.graph, ask.expanded, region=region, colours=self.colours(), **notes)

    # ------------------------------------------------------------------ told

    def printed(self, text: str, links: linking.JaxprLinks) -> None:
        """The printed jaxpr of the trace shown has come, and its lines' links."""
        self.bench.printed(text, links)

    def mark_stale(self, stale: bool) -> None:
        self.bench.mark_stale(stale)

    def fail(self, info: ErrorInfo) -> None:
        self.bench.fail(info)

    def stand_in(self, document: TraceDocument | None, path: str = "") -> None:
        """The saved trace at `path` answers in the worker's place from now on (None: the worker again)."""
        self.bench.stand_in(document, path)

    def set_palette(self, palette: list[str]) -> None:
        self.bench.set_palette(palette)

    def colours(self) -> dict[str, str]:
        """Drawn node path -> the colour of its source line (`Workbench.colours`)."""
        return self.bench.colours()

    # ------------------------------------------------------------------ handed back

    @Slot(object)
    def _traced(self, prepared: PreparedTrace) -> None:
        made = (prepared.palette, prepared.colours)
        self._layout(self.bench.take_trace(prepared.result, prepared.view, prepared.links, prepared.expanded, made, prepared))

    @Slot(object)
    def _laid_out(self, prepared: PreparedLayout) -> None:
        self.bench.take_layout(prepared.graph, prepared.layout, prepared.expanded, prepared)

    @Slot(object)
    def _previewed(self, prepared: PreparedLayout) -> None:
        """The part of a big re-layout the view shows, ahead of the whole (its first paint at once)."""
        if self.doc.shown is prepared.graph and self.doc.layout is not None:
            self.previewed.emit(prepared)


def _view_of(graph: Graph, grouping: bool) -> ScopedGraph:
    """The view of `graph` drawn with `grouping`, off the GUI thread (the collector paused, as for a
    new trace's: `prepared.prepare_trace`)."""
    with gc_paused(freeze=graph):
        return for_window(graph, grouping)
