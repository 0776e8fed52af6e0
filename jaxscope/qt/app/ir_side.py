"""The main window's IR side: lowering and compiling each trace, and linking the IR tabs.

It reads the workbench (through the session), asks the controller, and shows in the panes it is
given; kept apart because it is its own idea: what XLA gets and makes, next to the jaxpr graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QSettings
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QInputDialog, QStatusBar, QWidget

from jaxscope.analysis.hlo_cost import merged_links
from jaxscope.ir import linking
from jaxscope.ir.hlo_links import FusionInfo, IrLinks, fusions, hlo_links, stablehlo_links
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.linked_selection import LinkedSelection
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.ir_tabs import IrTabs
from jaxscope.qt.panes.jaxpr_view import QtJaxprView
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.hlo import HloRequest, HloResult, Stage
from jaxscope.schema.trace import ErrorInfo, JaxprText, TraceRequest, TraceResult, same_call

AUTO_COMPILE_MAX_EQNS = 3000  # XLA:CPU needs ~0.5 s at 1k unrolled equations, ~20 s at 13k: ask first above this


class IrSide:
    """The window's IR side (see the module docstring); `links`: stage -> the links of the IR text shown."""

    def __init__(
        self,
        session: TraceSession,
        controller: Controller,
        ir: IrTabs,
        jaxpr: QtJaxprView,
        graph: QtGraphView,
        source: QtSourceView,
        selection: LinkedSelection,
        settings: QSettings,
        auto_compile: Callable[[], bool],
        palette: Callable[[], list[str]],
        parent: QWidget,
        status: QStatusBar,
    ) -> None:
        self.session, self.controller, self.ir, self.jaxpr, self.graph, self.source = session, controller, ir, jaxpr, graph, source
        self.selection, self.settings, self.auto_compile, self.palette = selection, settings, auto_compile, palette
        self.parent, self.status = parent, status
        self.links: dict[str, IrLinks] = {}  # stage -> links of the IR text now shown
        self.results: dict[str, HloResult] = {}  # stage -> the IR text now shown (File -> Save Trace keeps them)
        self.text_query = ""  # the last Find in IR Text query
        session.traced.connect(lambda prepared, _previous: self.start(prepared.result))

    def start(self, result: TraceResult) -> None:
        """After a trace: the printed jaxpr, then StableHLO (then compiled HLO), each from the worker
        with its linking done off the GUI thread; the graph and the source links (the session's,
        made off the GUI thread too) are usable meanwhile."""
        graph = result.graph
        self.links, self.results = {}, {}
        self.jaxpr.set_text("")
        self.ir.clear("printing the jaxpr…")
        make = self.jaxpr.document_maker()

        def parse(printed: JaxprText) -> tuple[linking.JaxprLinks, QTextDocument]:
            with gc_paused(freeze=graph):  # a line map per equation: as for `prepared.prepare_trace`
                links = linking.jaxpr_links(graph, printed.text, printed.equations)
            return links, make(printed.text)

        self.controller.jaxpr(replace(result.request, jaxpr_text=False), parse)

    def on_jaxpr_finished(self, printed: JaxprText, made: tuple[linking.JaxprLinks, QTextDocument]) -> None:
        current = self.session.doc.result
        if current is None or (printed.request.function, printed.request.args) != (current.request.function, current.request.args):
            return
        links, document = made
        self.session.printed(printed.text, links)
        self.jaxpr.set_text(printed.text, document)
        self.selection.graph_selected(self.graph.selected_paths())  # mark the selection's jaxpr lines
        if not self.controller.worker.busy:  # never preempt a job the user asked for: _resume_ir follows it
            self._request_hlo("stablehlo")

    def on_jaxpr_failed(self, request: TraceRequest, info: ErrorInfo) -> None:
        current = self.session.doc.result
        if info.kind != "cancelled" and current is not None and request.function == current.request.function:
            self.ir.set_status(f"printing the jaxpr failed: {info.summary()}")

    def resume(self) -> None:
        """Pick the IR up again after a job the user asked for took the worker (one job at a time)."""
        result = self.session.doc.result
        if result is None or self.controller.worker.busy:
            return
        if not result.jaxpr_text:
            self.start(result)
        elif "stablehlo" not in self.links:
            self._request_hlo("stablehlo")

    def _request_hlo(self, stage: Stage, profile: int = 0) -> None:
        result = self.session.doc.result
        if result is None:
            return
        if stage == "stablehlo":
            self.links = {}
            self.ir.clear("lowering to StableHLO…")
        graph, file = result.graph, self.session.doc.path
        make = self.ir.views[stage].document_maker()

        def parse(done: HloResult) -> tuple[IrLinks, list[FusionInfo], QTextDocument]:
            with gc_paused(freeze=graph):  # an op map per line: as for the jaxpr's
                if stage == "stablehlo":
                    links, found = stablehlo_links(graph, done.text, done.ops, done.exact), []
                else:  # the fusions too: on the GUI thread they took 50-70 ms at 1k equations
                    # every dot and convolution linked to the equation it computes (`merged_links`)
                    links, fused = hlo_links(
                        graph, done.text, done.ops, done.exact, lambda got: merged_links(done.text, got, done.priced, graph)
                    )
                    found = fusions(fused, links, file)
                links.colour_index(file)
            return links, found, make(done.text)

        request = HloRequest(result.request.function, result.request.args, stage, inputs=result.request.inputs, profile=profile)
        self.controller.hlo(request, parse)

    def request_compile(self) -> None:
        """Compile the traced program with XLA now (also when automatic compiling is off)."""
        if self.session.doc.result is not None and "stablehlo" in self.links:
            self.ir.set_status("compiling with XLA…", compiling=True)
            self._request_hlo("compiled")

    def request_profile(self, runs: int) -> bool:
        """Compile the traced program and run it `runs` times under the profiler (the Cost pane's
        measured time); False until its StableHLO is here (the compile follows it)."""
        result, lowered = self.session.doc.result, self.results.get("stablehlo")
        if result is None or lowered is None or "stablehlo" not in self.links:
            return False
        if not same_call(lowered.request, result.request):
            return False  # the last trace's, not yet this one's
        self.ir.set_status(f"compiling with XLA, then {runs} runs under the profiler…", compiling=True)
        self._request_hlo("compiled", profile=runs)
        return True

    def toggle_auto_compile(self, on: bool) -> None:
        self.settings.setValue("autoCompile", bool(on))

    def on_hlo_phase(self, phase: str) -> None:
        if phase == "compile":
            self.ir.set_status("compiling with XLA… (Cancel or Esc stops it; the graph stays usable)", compiling=True)

    def on_hlo_finished(self, result: HloResult, made: tuple[IrLinks, list[FusionInfo], QTextDocument]) -> None:
        current = self.session.doc.result
        if current is None or not same_call(result.request, current.request):
            self.ir.set_status("")  # of a program no longer shown: nothing runs now, no Cancel left showing
            return
        stage = result.request.stage
        links, found, document = made
        self.links[stage], self.results[stage] = links, result
        self.ir.set_text(stage, result.text, document)
        self.apply_colours()
        if stage == "stablehlo":
            big = current.graph.top.total_eqns > AUTO_COMPILE_MAX_EQNS
            busy = self.controller.worker.busy  # the user asked for something else meanwhile: never preempt it
            if self.auto_compile() and not big and not busy:
                self.request_compile()
            else:
                why = f"over {AUTO_COMPILE_MAX_EQNS} equations" if big else ("the worker is busy" if busy else "automatic compiling is off")
                self.ir.set_status(f"StableHLO ready; not compiled ({why}).", can_compile=True)
            return
        self.ir.set_fusions(found)
        self.ir.set_status(result.summary())

    def on_hlo_failed(self, request: HloRequest, info: ErrorInfo) -> None:
        if info.kind == "cancelled":
            self.ir.set_status(f"{request.stage} cancelled.", can_compile=request.stage == "compiled")
        else:
            self.ir.set_status(f"{request.stage} failed: {info.summary()}", can_compile=request.stage == "compiled")

    def apply_colours(self) -> None:
        palette = self.palette()
        for stage, links in self.links.items():
            self.ir.views[stage].set_line_colour_indices(links.colour_index(self.session.doc.path), palette)

    def ir_line_clicked(self, stage: str, line: int) -> None:
        links = self.links.get(stage)
        if links is None or self.session.links is None:
            return
        paths = links.nodes_for_line(line)
        self.selection.select_nodes(paths)
        self.selection.mark(paths)
        self.ir.views[stage].mark_lines([line], scroll=False)

    def fusion_selected(self, fusion: FusionInfo) -> None:
        self.selection.select_nodes(list(fusion.nodes))
        self.selection.mark(list(fusion.nodes))
        self.source.mark_lines(list(fusion.source_lines))
        self.ir.views["compiled"].mark_lines([fusion.line])

    def find_text_dialog(self) -> None:
        text, ok = QInputDialog.getText(
            self.parent, "Find in IR Text", "Text in the shown tab (jaxpr, StableHLO or HLO):", text=self.text_query
        )
        if ok and text:
            self.find_text(text)

    def find_text(self, text: str | None = None, backward: bool = False) -> bool:
        """Find in the IR tab on screen, wrapping around; Ctrl+G / Ctrl+Shift+G repeat the last query."""
        if text is not None:
            self.text_query = text
        views = [self.jaxpr, self.ir.views["stablehlo"], self.ir.views["compiled"]]
        index = self.ir.currentIndex()
        view = views[index] if index < len(views) else self.jaxpr
        found = bool(self.text_query) and view.find(self.text_query, backward=backward)
        if self.text_query and not found:
            self.status.showMessage(f"{self.text_query!r} not found in this tab", 4000)
        return found
