"""The workbench: what the window shows and works on, in plain Python (issue 61.1). The document
(file, function, inputs, the last good trace, the view drawn of it, its layout and open clusters),
the links of its nodes to the jaxpr, the source-line colours, whether modules are drawn as groups,
the failure shown, the saved trace standing in for the worker, which answers are still wanted
(`jobs`, a `job_ledger.JobLedger`): one owner for all of them, whose
changes are typed events (`Traced`, `LaidOut`, `Failed`, `Stale`, `Grouped`, `Saved`).

The window's side (`qt.app.trace_session.TraceSession`) adapts these events to Qt signals and
sends the requests the model asks for; panes read the model and never write it. Nothing here
imports Qt or runs jax, so the model is tested on its own, and a command line or a script could
drive it the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from jaxscope.analysis.scope_view import ScopedGraph, first_open
from jaxscope.ir import linking
from jaxscope.job_ledger import JobLedger
from jaxscope.schema.flow import recording_stopped
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Annotations, Layout
from jaxscope.schema.layout_tables import node_paths
from jaxscope.schema.trace import ErrorInfo, FunctionRef, TraceRequest, TraceResult, same_call
from jaxscope.schema.trace_file import TraceDocument


@dataclass
class Document:
    """The open document: what survives any worker failure (file, function, specs, last good result)."""

    path: str = ""
    function: str = ""
    args: str = ""
    inputs: str = ""  # a maker instead of `args` (TraceRequest.inputs)
    result: TraceResult | None = None  # the last good trace
    view: ScopedGraph | None = None  # what the graph pane draws of `result.graph` (its modules as groups)
    layout: Layout | None = None
    expanded: frozenset[str] = field(default_factory=frozenset)
    stale: bool = False  # the last trace failed; `result` is from an earlier one
    user_toggled: bool = False  # the user expanded/collapsed by hand: keep it across re-traces
    refit: bool = False  # another function (or other inputs) was traced: its first layout is fitted, not kept in view
    annotations: tuple[tuple[str, str], ...] = ()  # (drawn path, text) on the boxes: View -> Show Partitioning

    @property
    def graph(self) -> Graph | None:
        """The traced program: what links, sources and run results name nodes of."""
        return self.result.graph if self.result else None

    @property
    def shown(self) -> Graph | None:
        """The graph drawn (`layout`, `expanded` and the graph pane's paths are of this one)."""
        return self.view.graph if self.view is not None else self.graph

    def to_real(self, paths: list[str]) -> list[str]:
        """Drawn paths -> the program's (a group: its every equation)."""
        return self.view.real_paths(paths) if self.view is not None else paths

    def to_shown(self, paths: list[str]) -> list[str]:
        return self.view.view_paths(paths) if self.view is not None else paths

    def visible_paths(self) -> set[str]:
        return {path.split("#", 1)[0] for path in node_paths(self.layout.nodes)} if self.layout else set()


def nearest_visible(path: str, visible: set[str]) -> str | None:
    """The node itself if drawn, else the collapsed owner that contains it."""
    parts = path.split("/")
    while parts:
        candidate = "/".join(parts)
        if candidate in visible:
            return candidate
        parts = parts[:-1]
        if parts:
            parts[-1] = parts[-1].split(":", 1)[0]  # "e4:1" -> owner "e4"
    return None


def view_colours(view: ScopedGraph, path: str, palette: Sequence[str]) -> dict[str, str]:
    """Drawn node path -> the colour of its source line in `path` (groups by what they hold)."""
    return view.drawn(linking.node_colours(view.real, path, list(palette)))


# ---------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Traced:
    """A trace is shown now (`previous`: the one shown before it); `made` is what the side that made
    it ready handed over with it (the window's prepared trace), passed on untouched."""

    result: TraceResult
    view: ScopedGraph
    previous: TraceResult | None
    made: object = None


@dataclass(frozen=True, slots=True)
class LaidOut:
    """The graph shown has a layout now; `keep`: the view keeps its place (else it is fitted)."""

    layout: Layout
    expanded: frozenset[str]
    keep: bool
    made: object = None


@dataclass(frozen=True, slots=True)
class Failed:
    """A request of the document failed; what was shown stays (marked stale when it was a trace)."""

    info: ErrorInfo


@dataclass(frozen=True, slots=True)
class Stale:
    """The graph shown is (or is no longer) behind the file or the last request."""

    stale: bool


@dataclass(frozen=True, slots=True)
class Grouped:
    """Modules are drawn as groups (or not) from now on."""

    on: bool


@dataclass(frozen=True, slots=True)
class Saved:
    """A saved trace stands in for the worker (None: the live file answers again)."""

    document: TraceDocument | None
    path: str = ""


Event = Traced | LaidOut | Failed | Stale | Grouped | Saved


@dataclass(frozen=True, slots=True)
class LayoutAsk:
    """A layout the model needs: `graph` drawn with `expanded` open (and `annotations` on its boxes)."""

    graph: Graph
    expanded: frozenset[str]
    annotations: Annotations = ()


# ---------------------------------------------------------------------- the model


class Workbench:
    """The one owner of what is shown (see the module docstring). Its methods change it and say so
    through the listeners; those that need a layout return what to lay out."""

    def __init__(self, grouping: bool = True, jobs: JobLedger | None = None) -> None:
        self.doc = Document()
        self.jobs = jobs or JobLedger()  # which answers are wanted, and whether the window is busy
        self.links: linking.JaxprLinks | None = None  # the graph's node sources, and jaxpr lines once printed
        self.palette: tuple[str, ...] = ()  # the source-line colours (they follow the theme)
        self.grouping = grouping  # draw a model's modules as groups (`scope_view.for_window`)
        self.failure: ErrorInfo | None = None  # the last failure, shown until a trace succeeds
        self.saved: TraceDocument | None = None  # a saved trace answering in the worker's place
        self.saved_path = ""
        self._colours: tuple[Graph, str, tuple[str, ...], dict[str, str]] | None = None
        self._listeners: list[Callable[[Event], None]] = []

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.append(listener)

    def _say(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)

    # ------------------------------------------------------------------ asking

    def open_file(self, path: str) -> bool:
        """`path` is the file shown from now on; True when it is another file (a new document)."""
        new = bool(self.doc.path) and self.doc.path != path
        if new:
            self.doc, self.links, self._colours = Document(), None, None
        self.doc.path = path
        return new

    def trace_request(self, function: str, args: str, inputs: str = "") -> tuple[TraceRequest, frozenset[str] | None]:
        """The request that traces `function` of the file shown with specs `args` (or the maker
        `inputs`), and the clusters its layout opens (None: the layout's own first pick)."""
        doc = self.doc
        if doc.function != function:
            doc.user_toggled = False
        doc.function, doc.args, doc.inputs = function, args, inputs
        previous = doc.result
        record = previous is None or previous.request.function.qualname != function or not recording_gave_up(previous)
        request = TraceRequest(
            FunctionRef(qualname=function, path=doc.path), args=args, jaxpr_text=False, record_flow=record, inputs=inputs
        )
        return request, doc.expanded if self._keeps_expanded(request.function) else None

    def toggle(self, owner: str) -> LayoutAsk | None:
        """Open or close the cluster of `owner` (a drawn path)."""
        return self.relayout(set(self.doc.expanded) ^ {owner})

    def relayout(self, expanded: Collection[str]) -> LayoutAsk | None:
        """The graph shown drawn with `expanded` open, as the user asked: kept across re-traces."""
        if self.doc.shown is None:
            return None
        self.doc.user_toggled = True
        return self._ask(self.doc.shown, expanded)

    def show_view(self, view: ScopedGraph, fresh: bool, annotations: Annotations = ()) -> LayoutAsk:
        """Draw `view` of the trace (grouped otherwise), with `annotations` on its boxes: `fresh`,
        opened and fitted as a new graph; else with the clusters open as they are."""
        doc = self.doc
        doc.view, doc.annotations = view, tuple(annotations)
        if fresh:
            doc.expanded, doc.refit, doc.user_toggled = first_open(view.graph), True, False
        return self._ask(view.graph, doc.expanded)

    def annotate(self, annotations: Annotations) -> LayoutAsk | None:
        """Draw the graph shown again with `annotations` (drawn path, text) on its boxes (what the
        partitioner did); the graph and its view stay as they are: they are drawn, not changed."""
        self.doc.annotations = tuple(annotations)
        return self._ask(self.doc.shown, self.doc.expanded) if self.doc.shown is not None else None

    def set_grouping(self, on: bool) -> Graph | None:
        """Group by module or not, from now on; returns the program whose view is to be made anew
        for it (`scope_view.for_window`: 0.3-0.5 s at 50k equations, made where the caller likes,
        then `take_grouped`), or None when nothing is shown."""
        self.grouping = bool(on)
        self._say(Grouped(self.grouping))
        return self.doc.result.graph if self.doc.result is not None else None

    def take_grouped(
        self, graph: Graph, on: bool, view: ScopedGraph, notes: Callable[[ScopedGraph], Annotations] = lambda _view: ()
    ) -> LayoutAsk | None:
        """The view of `graph` made for grouping `on`: drawn anew with the `notes` of that view on its
        boxes; None when another trace or grouping was asked for meanwhile, or it draws the same."""
        doc = self.doc
        if doc.result is None or doc.result.graph is not graph or on != self.grouping:
            return None
        if view.graph is doc.shown or (not view.grouped and doc.view is not None and not doc.view.grouped):
            return None
        return self.show_view(view, True, notes(view))

    def _ask(self, graph: Graph, expanded: Collection[str]) -> LayoutAsk:
        return LayoutAsk(graph, frozenset(expanded), self.doc.annotations)

    # ------------------------------------------------------------------ told

    def printed(self, text: str, links: linking.JaxprLinks) -> None:
        """The printed jaxpr of the trace shown has come, and its lines' links."""
        if self.doc.result is not None:
            self.doc.result = replace(self.doc.result, jaxpr_text=text)
        self.links = links

    def mark_stale(self, stale: bool) -> None:
        """The graph shown is (or is no longer) behind the file or the last request."""
        if self.doc.stale != stale:
            self.doc.stale = stale
            self._say(Stale(stale))

    def fail(self, info: ErrorInfo) -> None:
        """A request failed: said, and kept until a trace succeeds; the document shown stays."""
        self.failure = info
        self._say(Failed(info))

    def set_palette(self, palette: Sequence[str]) -> None:
        self.palette = tuple(palette)

    def stand_in(self, document: TraceDocument | None, path: str = "") -> None:
        """A saved trace answers in the worker's place from now on (None: the live file again)."""
        self.saved, self.saved_path = document, path if document is not None else ""
        self._say(Saved(document, self.saved_path))

    def colours(self) -> dict[str, str]:
        """Drawn node path -> the colour of its source line: made once per view and palette (every
        layout of the trace shows them), the first time where the trace was made ready."""
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

    def take_trace(
        self,
        result: TraceResult,
        view: ScopedGraph,
        links: linking.JaxprLinks,
        expanded: frozenset[str],
        colours: tuple[tuple[str, ...], dict[str, str]] | None = None,
        made: object = None,
    ) -> LayoutAsk:
        """A trace is shown now (its view, node links, first open clusters, and the source-line
        colours made for `colours[0]` when made already); returns its layout to ask for."""
        doc = self.doc
        keep = self._keeps_expanded(result.request.function)
        previous = doc.result
        doc.refit = previous is None or not same_call(previous.request, result.request)
        doc.result, doc.view, doc.stale, doc.annotations = result, view, False, ()
        self.failure = None
        if not keep:
            doc.expanded = expanded
        self.links = links
        if colours is not None and (result.request.function.path or "") == doc.path:  # what they were made for
            self._colours = (view.graph, doc.path, colours[0], colours[1])
        self._say(Traced(result, view, previous, made))
        return self._ask(view.graph, doc.expanded)

    def take_layout(self, graph: Graph, layout: Layout, expanded: frozenset[str], made: object = None) -> bool:
        """A layout has come: shown when it is of the graph shown (True), else dropped (False)."""
        doc = self.doc
        if doc.shown is not graph:
            return False
        keep = doc.layout is not None and doc.result is not None and doc.layout is not layout and not doc.refit
        doc.refit = False
        doc.layout, doc.expanded = layout, expanded
        self._say(LaidOut(layout, expanded, keep, made))
        return True


def recording_gave_up(result: TraceResult) -> bool:
    """Whether the worker's control-flow recorder gave up on this trace (a program too big for it:
    past its call budget, under Python's trace hook ~2.5x the trace time before 3.12). Then the
    next trace of that function is not recorded: it would cost as much and stop again."""
    return result.flow is None and recording_stopped(result.warnings) is not None
