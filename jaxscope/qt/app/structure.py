"""The model's structure in the window: its modules drawn as groups or not (View -> Group by
Module), a group picked in the graph (the Node pane says what it holds), its identical layers
(show another instance; open this one and close the others), the overview map of a big graph;
and what it costs (`ModelCost`: the Cost pane, and the graph coloured by a measure)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMenu, QStatusBar

from jaxscope.analysis import cost as costs
from jaxscope.analysis import measures
from jaxscope.analysis.liveness import Liveness, liveness
from jaxscope.analysis.partition import notes_of
from jaxscope.analysis.scope_view import ScopedGraph
from jaxscope.drawing import Decorations, Measured
from jaxscope.qt.app.chrome import prefs
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.overview import OverviewMap
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.cost_panel import CostPanel, CostView
from jaxscope.qt.panes.node_inspector import NodeInspector
from jaxscope.render.overlay import human
from jaxscope.schema.graph import Graph, resolve
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.schema.trace import ErrorInfo, TraceResult, same_call


@dataclass(frozen=True)
class StructureParts:
    """What the model's structure and cost work with: the workbench (through `session`), the
    controller's answers, their own panes and the graph, and two asks of other collaborators
    (`show_nodes`: select and reveal; `request_profile`: a profiled compiled run, True when asked)."""

    session: TraceSession
    controller: Controller
    graph: QtGraphView
    inspector: NodeInspector
    cost_panel: CostPanel
    cost_dock: QDockWidget
    settings: QSettings
    status: QStatusBar
    show_nodes: Callable[[list[str]], None]
    request_profile: Callable[[int], bool]


class ModelStructure:
    def __init__(self, parts: StructureParts) -> None:
        self.parts = parts
        parts.session.bench.grouping = prefs.read(parts.settings, "groupByModule", True)
        parts.inspector.link_clicked.connect(self.link)
        self.action: QAction | None = None
        self.partition_action: QAction | None = None
        self._compiled: HloResult | None = None  # the last compiled HLO (View -> Show Partitioning)
        self._notes_made: tuple[HloResult, Graph, tuple[dict[str, str], int]] | None = None  # `notes` of that program
        parts.controller.hlo_finished.connect(lambda result, _made: self._hlo(result))
        self.overview = OverviewMap(parts.graph)
        self.cost = ModelCost(parts)
        parts.session.regrouped.connect(self.cost.colour)  # the measure's colours, by the new view's paths

    def add_action(self, menu: QMenu) -> None:
        action = self.action = QAction("&Group by Module", menu)
        action.setObjectName("groupAction")
        action.setCheckable(True)
        action.setChecked(self.parts.session.bench.grouping)
        action.setToolTip("Draw a model's modules (flax, named scopes, library calls) as groups, forward and backward apart")
        action.toggled.connect(self.set_grouping)
        menu.addAction(action)
        parts = self.partition_action = QAction("Show &Partitioning", menu)
        parts.setObjectName("partitionAction")
        parts.setCheckable(True)
        parts.setToolTip(
            "On a program compiled for several devices: each argument's sharding, each value's part per device "
            "and the collectives XLA inserted, on the boxes (needs the compiled HLO)"
        )
        parts.toggled.connect(lambda _on: self.redraw())
        menu.addAction(parts)

    def set_grouping(self, on: bool) -> None:
        """Group by module or not, from now on; the graph shown is drawn again the new way."""
        self.parts.settings.setValue("groupByModule", bool(on))
        self.parts.session.set_grouping(on, self._notes)  # (the measure's colours follow: `regrouped`)

    def notes(self) -> tuple[dict[str, str], int]:
        """What the partitioner did, by program path, and how many collectives, when View -> Show
        Partitioning is on and the compiled HLO of the trace shown is at hand (`partition.notes_of`)."""
        doc = self.parts.session.doc
        compiled = self._compiled
        if doc.result is None or not (self.partition_action and self.partition_action.isChecked()) or compiled is None:
            return {}, 0
        if compiled.exact is None or not same_call(compiled.request, doc.result.request):
            return {}, 0
        made = self._notes_made
        if made is None or made[0] is not compiled or made[1] is not doc.result.graph:
            # read off the compiled text (several passes over megabytes): once, not at every layout and export
            made = self._notes_made = (compiled, doc.result.graph, notes_of(doc.result.graph, compiled))
        return made[2]

    def _notes(self, view: ScopedGraph | None) -> list[tuple[str, str]]:
        """`notes` by drawn path, for the layout; the status line says how many collectives."""
        notes, count = self.notes()
        if notes:
            self.parts.status.showMessage(f"partitioning: {count} collective{'s' if count != 1 else ''} in the compiled program", 5000)
        return Decorations(notes=notes).annotations(view) if view is not None else sorted(notes.items())

    def _hlo(self, result: HloResult) -> None:
        if result.request.stage == "compiled":
            self._compiled = result
            if self.partition_action is not None and self.partition_action.isChecked():
                QTimer.singleShot(0, self.redraw)  # after the IR side has shown it

    def redraw(self) -> None:
        """Draw the graph shown again with what the partitioner did on its boxes, or without."""
        doc, parts = self.parts.session.doc, self.parts
        if doc.result is None:
            return
        if self.partition_action is not None and self.partition_action.isChecked() and self._compiled is None:
            parts.status.showMessage("Show Partitioning needs the compiled HLO: Trace -> Compile HLO Now", 6000)
        parts.session.annotate(self._notes(doc.view))

    def show_group(self, shown: str, paths: list[str]) -> None:
        """A group picked in the graph (`shown`, its path there; `paths`, its equations)."""
        doc, inspector = self.parts.session.doc, self.parts.inspector
        try:
            node = resolve(doc.shown, shown)[1] if doc.shown is not None else None
        except (KeyError, IndexError, ValueError):
            node = None
        if node is None or doc.view is None:
            inspector.show_nothing()
            return
        links = self.parts.session.links
        lines = {"jaxpr": sorted({ln for p in paths for ln in links.all_lines_for_node(p)})} if links else {}
        twins = [(p, resolve(doc.view.graph, p)[1].name_stack.rsplit("/", 1)[-1]) for p in doc.view.twins.get(shown, ())]
        inspector.show_group(shown, node, lines, twins)

    def link(self, href: str) -> None:
        """The Node pane's links: "show:PATH" selects that instance, "only:PATH" opens it alone."""
        kind, _, path = href.partition(":")
        doc = self.parts.session.doc
        if doc.view is None or doc.shown is None:
            return
        if kind == "show":
            self.parts.graph.select_paths([path])
        elif kind == "only":
            others = [t for t in doc.view.twins.get(path, ()) if t != path]
            keep = {e for e in doc.expanded if not any(e == t or e.startswith(t + ":") for t in others)}
            self.parts.graph.keep_place_of(path)
            self.parts.session.relayout(keep | {path}, region=self.parts.graph.preview_region(path))
            self.parts.status.showMessage(f"opened {path}; closed {len(others)} identical layer(s)", 4000)


Figures = tuple[list[costs.CostRow], costs.Cost, Liveness, list[tuple[costs.CostRow, str]]]
DEAREST = 30  # the Cost pane's table: the costliest equations


def figures(graph: Graph) -> Figures:
    """Off the GUI thread: every equation's cost, the total, the liveness (0.6 + 0.4 s at 50k), and
    the dearest equations with their modules (named as `jaxscope cost --by scope` names them)."""
    found = costs.rows(graph)
    dear = sorted((r for r in found if r.runs), key=lambda r: -(r.cost.flops + r.cost.transcendentals))[:DEAREST]
    name = costs.namer("scope", 0, graph)
    return found, costs.total(graph, found), liveness(graph), [(r, name(r)) for r in dear]


class ModelCost(QObject):
    """The Cost pane fed from the document's trace (computed off the GUI thread, once the pane is
    shown or a measure picked), and the graph coloured by the measure picked there."""

    _computed = Signal(object, object)  # TraceResult, Figures

    def __init__(self, parts: StructureParts) -> None:
        super().__init__()
        self.parts = parts
        self.measure = ""
        self.figures: tuple[TraceResult, Figures] | None = None
        self._asked: TraceResult | None = None
        # a measure that needs a profile (measured time): the profiled compiled run of that trace
        self.profiled: tuple[TraceResult, HloResult] | None = None
        self.fill: Measured | None = None  # the measure the graph is coloured by, as an export draws it
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-cost")
        panel = parts.cost_panel
        panel.measure_changed.connect(self.set_measure)
        panel.node_requested.connect(lambda path: parts.show_nodes([path]))
        panel.plot_picked.connect(self._plot_picked)
        panel.peak_requested.connect(self._peak)
        parts.cost_dock.visibilityChanged.connect(self._shown)
        self._computed.connect(self._arrived, Qt.ConnectionType.QueuedConnection)
        parts.session.traced.connect(lambda _prepared, _previous: self._traced())
        parts.controller.hlo_finished.connect(lambda result, _made: self.compiled(result))
        parts.controller.hlo_failed.connect(self._not_profiled)

    def _shown(self, shown: bool) -> None:
        if shown:
            self.need()

    def _profiling(self) -> bool:
        """Whether the measure picked needs a profiled compiled run (`Measure.needs`)."""
        return bool(self.measure) and measures.MEASURES[self.measure].needs == "profile"

    def _traced(self) -> None:
        if self._profiling():  # asked for once the new trace's StableHLO is here (`compiled`)
            self._waiting()
        if self.measure or self.parts.cost_dock.isVisible():
            self.need()

    def need(self) -> None:
        """The figures of the document's trace: at hand, or on their way."""
        result = self.parts.session.doc.result
        if result is None or (self.figures is not None and self.figures[0] is result) or self._asked is result:
            return
        self._asked = result
        future = self._pool.submit(figures, result.graph)
        future.add_done_callback(lambda f: self._computed.emit(result, f))

    def _arrived(self, result: TraceResult, future: Future[Figures]) -> None:
        if result is not self.parts.session.doc.result or future.exception() is not None:
            return
        data = future.result()
        self.figures = (result, data)
        found, total, live, dear = data
        top = [
            (
                r.path,
                module,
                r.node.label,
                r.cost.flops + r.cost.transcendentals,
                r.cost.bytes,
                f"{r.node.source.file.rsplit('/', 1)[-1]}:{r.node.source.line}" if r.node.source else "",
            )
            for r, module in dear
        ]
        totals = (
            f"jaxscope's count, per primitive of the jaxpr, every equation unfused: {human(total.flops)} FLOPs, "
            f"{human(total.transcendentals)} transcendentals, {human(total.bytes)}B read and written (XLA's count of "
            f"the compiled program, fused and simplified, heads the Compiled tab; `jaxscope cost` sets them side by side). Peak "
            f"{human(float(live.peak))}B in use, arguments {human(float(live.start))}B; residuals: {len(live.residuals)} "
            f"values, {human(float(live.residual_bytes))}B."
        )
        unpriced = sum(r.note == costs.UNREAD for r in found)
        if unpriced:
            totals += f" {unpriced} equations are not priced: this JAX gave their params in a form jaxscope does not read."
        self.parts.cost_panel.show_cost(CostView(totals, live.in_use, live.peak_at, top))
        self.colour()

    def set_measure(self, name: str) -> None:
        self.measure = name
        if self._profiling():
            self._profile()
        elif name:
            self.need()
        self.colour()

    def _profile(self) -> None:
        """Ask for a profiled compiled run of the trace shown, unless its times are here: now, or
        once its StableHLO has come (`compiled` asks again then)."""
        result = self.parts.session.doc.result
        if result is None or (self.profiled is not None and self.profiled[0] is result):
            return
        # said at once (the FLOPs' scale over a grey graph read as a stale answer), before the request:
        # a saved trace's answer (none held) comes back within it
        text = f"measured time: compiling the program and running it {measures.PROFILE_RUNS} times under the profiler…"
        self.parts.cost_panel.show_scale(text, 0.0, 0.0)
        if not self.parts.request_profile(measures.PROFILE_RUNS):
            self._waiting()

    def _waiting(self) -> None:
        """The scale says the profiled run comes once the StableHLO of the trace shown is here."""
        text = f"measured time: compiling and {measures.PROFILE_RUNS} profiled runs follow the StableHLO…"
        self.parts.cost_panel.show_scale(text, 0.0, 0.0)

    def _not_profiled(self, request: HloRequest, info: ErrorInfo) -> None:
        """A profiled run asked for failed (a saved trace holds none, the profiler failed): the scale says why."""
        if request.profile and self._profiling() and info.kind != "cancelled":
            self.parts.cost_panel.show_scale(f"measured time: {info.summary()}", 0.0, 0.0)

    def compiled(self, compiled: HloResult) -> None:
        """An IR text of the trace shown has come: after its StableHLO, the profiled run "time" waits
        for; a profiled compiled run's times."""
        result = self.parts.session.doc.result
        if result is None or not same_call(compiled.request, result.request) or not self._profiling():
            return
        if compiled.request.stage == "stablehlo":
            QTimer.singleShot(0, self._profile)  # after the IR side's own compile request: this one supersedes it
            return
        if compiled.request.profile:
            self.profiled = (result, compiled)
            self.colour()

    def colour(self) -> None:
        """Fill the boxes by the measure (by the drawn paths: groups and owners by what they hold)."""
        panel, view = self.parts.cost_panel, self.parts.session.doc.view
        result = self.parts.session.doc.result
        data = None
        if self._profiling() and self.profiled is not None and self.profiled[0] is result:
            data = measures.MeasureData(compiled=self.profiled[1])
        elif self.measure and not self._profiling() and self.figures is not None and result is not None and self.figures[0] is result:
            found, _total, live, _dear = self.figures[1]
            data = measures.MeasureData(found=found, live=live)
        self.fill = None
        if data is None:
            self.parts.graph.set_fills({})
            if not self._profiling():  # the profiled run on its way says so
                panel.show_scale("", 0.0, 0.0)
            return
        wanted = measures.MEASURES[self.measure]
        try:
            values, caption = wanted.values(data)
        except ValueError as exc:
            self.parts.graph.set_fills({})
            panel.show_scale(f"{wanted.title}: {exc}", 0.0, 0.0)
            return
        self.fill = Measured(self.measure, values, caption)
        overlay = self.fill.overlay(view)
        self.parts.graph.set_fills({p: c for p in overlay.values if (c := overlay.colour(p)) is not None})
        panel.show_scale(overlay.caption, overlay.low, overlay.high)

    def _plot_picked(self, index: int) -> None:
        if self.figures is not None:
            self.parts.show_nodes([self.figures[1][2].order[index]])

    def _peak(self) -> None:
        """Select the equations whose values are alive at the peak (the arguments are not equations)."""
        if self.figures is None:
            return
        live = self.figures[1][2]
        eqns = set(live.order)
        made = {node_id for (node_id, _port), _size in live.alive_at_peak if node_id in eqns}
        self.parts.show_nodes(sorted(made))
        self.parts.status.showMessage(f"{len(made)} equations' values alive at the memory peak", 4000)
