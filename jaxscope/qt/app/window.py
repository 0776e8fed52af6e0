"""The main window: composition. Its panes, docks and menus, wired to the trace session (the trace
shown, `TraceSession`), the controller (the worker and layout processes) and the collaborators
that hold each concern (opening files, the IR side, jobs, structure, saved traces, exports)."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMenu, QStackedWidget, QVBoxLayout, QWidget

from jaxscope.about import EXAMPLES_DIR
from jaxscope.analysis.flow_marks import LineMark
from jaxscope.analysis.guide import Example, list_examples
from jaxscope.ir import linking
from jaxscope.qt.app.chrome import dialogs, prefs
from jaxscope.qt.app.chrome import theme as themes
from jaxscope.qt.app.chrome.dock_fit import FOLDED_PX, DockFit
from jaxscope.qt.app.chrome.menus import build_menus
from jaxscope.qt.app.chrome.status_line import StatusLine
from jaxscope.qt.app.chrome.welcome import RecentTargets, WelcomePage
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.export_job import ExportJobs
from jaxscope.qt.app.file_opening import FileOpening, OpeningParts
from jaxscope.qt.app.file_watch import FileWatch
from jaxscope.qt.app.graph_export import GraphExport
from jaxscope.qt.app.ir_side import IrSide
from jaxscope.qt.app.jobs import JobParts, Jobs, device_setup, x64_setting
from jaxscope.qt.app.linked_selection import LinkedSelection
from jaxscope.qt.app.prepared import PreparedLayout
from jaxscope.qt.app.structure import ModelStructure, StructureParts
from jaxscope.qt.app.trace_display import TraceDisplay, palette_for
from jaxscope.qt.app.trace_files import TraceFiles, TraceFilesParts, droppable
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.compare.compare import Compare
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.cost_panel import CostPanel
from jaxscope.qt.panes.diagnostics_panel import DiagnosticsPanel
from jaxscope.qt.panes.guide_panel import GuidePanel
from jaxscope.qt.panes.inputs_panel import InputsPanel, plain_label
from jaxscope.qt.panes.ir_tabs import IrTabs
from jaxscope.qt.panes.jaxpr_view import QtJaxprView
from jaxscope.qt.panes.log_pane import LogPane
from jaxscope.qt.panes.node_inspector import NodeInspector
from jaxscope.qt.panes.problems_panel import ProblemsPanel
from jaxscope.qt.panes.run_panel import RunPanel, scrolled
from jaxscope.qt.panes.search_bar import SearchBar
from jaxscope.qt.panes.source_frames import SourceFrames
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.trace import ErrorInfo
from jaxscope.targets.static_fix import static_suggestion
from jaxscope.workbench import Document


class MainWindow(QMainWindow):
    structure: ModelStructure  # (made after the selection that shows its groups)
    ir_side: IrSide  # (made after the selection it marks)
    jobs: Jobs  # (made after the panes it shows in)
    compare: Compare
    trace_files: TraceFiles  # (made after the file watch it pauses)
    opening: FileOpening
    # made by `menus.build_menus`
    recent_menu: QMenu
    x64: QAction
    auto_compile: QAction
    long_edges_whole: QAction

    def __init__(self, controller: Controller | None = None, theme: str = "system", python: str | None = None) -> None:
        super().__init__()
        self.setWindowTitle("jaxscope")
        self.setAcceptDrops(True)
        self.settings = QSettings()
        self.exports = ExportJobs(self)
        self.graph = QtGraphView()
        self.graph.setObjectName("graphView")
        self.controller = controller or Controller(
            parent=self, **device_setup(self.settings), python=python, x64=x64_setting(self.settings), scenes=self.graph
        )
        self.session = TraceSession(self.controller, self)  # the trace shown: its one owner
        self.theme = themes.resolve(prefs.read(self.settings, "theme", theme) or theme)
        self.session.set_palette(palette_for(self.theme))
        self.problem_info: ErrorInfo | None = None

        self._build_workspace()
        self._build_panes()
        self._build_view_side()
        self._build_jobs()
        self._build_files()

        build_menus(self)
        self._connect()
        self._apply_theme()
        self.recent = RecentTargets(self.settings, self.recent_menu, self.welcome, self.open_target)
        prefs.restore(self, self.settings, self.docks)
        if controller is None and python is None and self.jobs.python_setting():  # the saved Python for user code, checked first
            self.jobs.check_python(self.jobs.python_setting())

    # ------------------------------------------------------------------ construction

    def _build_workspace(self) -> None:
        """The middle: the welcome page, or the graph under its stale banner and search bar."""
        self.stale_banner = plain_label()
        self.stale_banner.setObjectName("staleBanner")
        self.stale_banner.setStyleSheet("background: #f6c343; color: #1d2330; padding: 4px 8px;")
        self.stale_banner.hide()
        workspace = QWidget()
        wl = QVBoxLayout(workspace)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(0)
        wl.addWidget(self.stale_banner)
        self.search_bar = SearchBar(self.graph)
        wl.addWidget(self.search_bar)
        wl.addWidget(self.graph, 1)
        self.welcome = WelcomePage(self.open_file_dialog, self.open_example_dialog, self.open_target)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(workspace)
        self.setCentralWidget(self.stack)

    def _build_panes(self) -> None:
        """The docked panes, tabbed where they share an area, each as big as what it shows."""
        self.inputs = InputsPanel()
        self.source = QtSourceView()
        self.source.setObjectName("sourceView")
        self.jaxpr = QtJaxprView()
        self.jaxpr.setObjectName("jaxprView")
        self.log = LogPane()
        self.problems = ProblemsPanel()
        self.problem, self.problem_goto, self.problem_static = self.problems.label, self.problems.goto, self.problems.static
        self.docks: dict[str, QDockWidget] = {}
        self._dock("inputs", "Function", self.inputs, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.source_frames = SourceFrames(self.source, lambda path: self.trace_files.frame_text(path))
        self.flow_legend = self.source_frames.legend
        self._dock("source", "Source", self.source_frames, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.ir = IrTabs(self.jaxpr)
        self._dock("jaxpr", "IR", self.ir, Qt.DockWidgetArea.RightDockWidgetArea)
        self.guide = GuidePanel()
        self._dock("guide", "Guide", self.guide, Qt.DockWidgetArea.RightDockWidgetArea)
        self.docks["guide"].hide()  # shown for files that carry a guide (tutorials)
        self.diagnostics = DiagnosticsPanel()
        self._dock("problems", "Problems", self.problems, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._dock("diagnostics", "Diagnostics", self.diagnostics, Qt.DockWidgetArea.BottomDockWidgetArea, tab_with="problems")
        self._dock("log", "Log", self.log, Qt.DockWidgetArea.BottomDockWidgetArea, tab_with="problems")
        self.inspector = NodeInspector()
        self._dock("node", "Node", self.inspector, Qt.DockWidgetArea.BottomDockWidgetArea, tab_with="problems")
        self.run_panel = RunPanel()
        # scrolled: its options form would otherwise set the height of the whole bottom dock area
        self._dock("run", "Run: jit vs eager", scrolled(self.run_panel), Qt.DockWidgetArea.BottomDockWidgetArea, tab_with="problems")
        self.cost_panel = CostPanel()
        self._dock("cost", "Cost", scrolled(self.cost_panel), Qt.DockWidgetArea.BottomDockWidgetArea, tab_with="problems")
        self.docks["problems"].raise_()
        self.dock_fit = DockFit(self, self.docks, self.problems)  # docks as big as what they show
        self.dock_fit.room["run"] = lambda: self.height() * 9 // 20 if self.run_panel.shown_result is not None else 0
        self.dock_fit.room["cost"] = lambda: self.height() * 2 // 5  # its table and memory plot, not a strip of them

    def _build_view_side(self) -> None:
        """The collaborators of what is shown: the linked selection, the IR texts, the trace's
        display, the model's structure and cost, the graph's exports."""
        self.selection = LinkedSelection(
            session=self.session,
            graph=self.graph,
            source=self.source,
            source_frames=self.source_frames,
            inspector=self.inspector,
            jaxpr=self.jaxpr,
            ir=self.ir,
            ir_links=lambda: self.ir_side.links,
            run_panel=self.run_panel,
            show_group=lambda shown, paths: self.structure.show_group(shown, paths),
            status=self.statusBar(),
        )
        self.ir_side = IrSide(
            session=self.session,
            controller=self.controller,
            ir=self.ir,
            jaxpr=self.jaxpr,
            graph=self.graph,
            source=self.source,
            selection=self.selection,
            settings=self.settings,
            auto_compile=lambda: self.auto_compile.isChecked(),
            palette=lambda: palette_for(self.theme),
            parent=self,
            status=self.statusBar(),
        )
        self.display = TraceDisplay(
            session=self.session,
            theme=lambda: self.theme,
            graph=self.graph,
            source=self.source,
            source_frames=self.source_frames,
            inputs=self.inputs,
            diagnostics=self.diagnostics,
            guide=self.guide,
            run_panel=self.run_panel,
            stale_banner=self.stale_banner,
            docks=self.docks,
            resize_docks=self.resizeDocks,
        )
        self.structure = ModelStructure(
            StructureParts(
                session=self.session,
                controller=self.controller,
                graph=self.graph,
                inspector=self.inspector,
                cost_panel=self.cost_panel,
                cost_dock=self.docks["cost"],
                settings=self.settings,
                status=self.statusBar(),
                show_nodes=self.selection.show_nodes,
                request_profile=lambda runs: self.ir_side.request_profile(runs),
            )
        )
        self.graph_export = GraphExport(
            session=self.session,
            graph=self.graph,
            ir=self.ir,
            ir_links=lambda: self.ir_side.links,
            exports=self.exports,
            fill=lambda: self.structure.cost.fill,
            notes=lambda: self.structure.notes()[0],
            theme=lambda: self.theme,
            parent=self,
            status=self.statusBar(),
        )

    def _build_jobs(self) -> None:
        """The status line and the worker jobs the user asks for: runs, retraces, a comparison."""
        self.status = StatusLine(self.statusBar())
        self.phase_label, self.cancel_button = self.status.phase_label, self.status.cancel_button
        self.compare = Compare(
            session=self.session,
            controller=self.controller,
            theme=lambda: self.theme,
            parent=self,
            status=self.statusBar(),
            phase_label=self.phase_label.setText,
            show_problem=self.show_problem,
        )
        self.jobs = Jobs(
            JobParts(
                session=self.session,
                controller=self.controller,
                settings=self.settings,
                inputs=self.inputs,
                run_panel=self.run_panel,
                run_dock=self.docks["run"],
                graph=self.graph,
                phase_label=self.phase_label.setText,
                parent=self,
                status=self.statusBar(),
                problem=lambda: self.problem_info,
                show_problem=self.show_problem,
                resume_ir=lambda: self.ir_side.resume(),
                compare_with=lambda target, args: self.compare.with_target(target, args, after=True),
            )
        )

    def _build_files(self) -> None:
        """The file watch, the saved traces and the opening of files and targets."""
        self.files = FileWatch(self)
        self.trace_files = TraceFiles(
            TraceFilesParts(
                session=self.session,
                parent=self,
                status=self.statusBar(),
                phase_label=self.phase_label.setText,
                show_problem=self.show_problem,
                files=self.files,
                recent=lambda: self.recent,
                opening=lambda: self.opening,
                trace_function=self.trace_function,
                set_title=self.setWindowTitle,
                source_dock=self.docks["source"],
                last_run=lambda: self.jobs.last_run,
                ir_results=lambda: self.ir_side.results,
            )
        )
        self.opening = FileOpening(
            OpeningParts(
                session=self.session,
                settings=self.settings,
                source=self.source,
                inputs=self.inputs,
                log=self.log,
                stack=self.stack,
                source_dock=self.docks["source"],
                display=self.display,
                files=self.files,
                trace_files=self.trace_files,
                recent=lambda: self.recent,
                show_problem=self.show_problem,
                show_trace_failure=self.show_trace_failure,
                confirm_run=lambda path: self.confirm_run(path),
                set_title=self.setWindowTitle,
                phase_label=self.phase_label.setText,
                status=self.statusBar(),
            ),
            self,
        )

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea, tab_with: str = "") -> None:
        """Add a dock, or tab it with another. Only one tab group: in Qt 6.11 a second group tabified
        before the window is shown leaves a stray copy of its tab bar on screen."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{name}Dock")  # saveState needs object names
        if area == Qt.DockWidgetArea.BottomDockWidgetArea:
            widget.setMinimumHeight(FOLDED_PX)  # (a text view's own minimum, 70 px, kept the group from folding)
        dock.setWidget(widget)
        if tab_with:
            self.tabifyDockWidget(self.docks[tab_with], dock)
        else:
            self.addDockWidget(area, dock)
        self.docks[name] = dock

    def _connect(self) -> None:
        c = self.controller
        c.phase_changed.connect(self.status.set_phase)
        self.session.traced.connect(lambda _prepared, _previous: self.show_problem(""))  # each pane takes a trace itself
        self.session.laid_out.connect(self._laid_out)
        self.session.previewed.connect(lambda p: self.graph.show_preview(p.graph, p.layout, p.model))
        c.trace_failed.connect(self.show_trace_failure)
        c.layout_failed.connect(self._on_layout_failed)
        c.output.connect(lambda _stream, text: self.log.append_text(text))
        c.busy_changed.connect(lambda busy: self.status.set_busy(busy, lambda: self.controller.worker.busy))
        c.hlo_finished.connect(self.ir_side.on_hlo_finished)
        c.hlo_failed.connect(self.ir_side.on_hlo_failed)
        c.hlo_phase.connect(self.ir_side.on_hlo_phase)
        c.jaxpr_finished.connect(self.ir_side.on_jaxpr_finished)
        c.jaxpr_failed.connect(self.ir_side.on_jaxpr_failed)
        self.ir.ir_line_clicked.connect(self.ir_side.ir_line_clicked)
        self.ir.fusion_selected.connect(self.ir_side.fusion_selected)
        self.ir.compile_requested.connect(self.ir_side.request_compile)
        self.ir.cancel_requested.connect(c.cancel)
        c.job_finished.connect(self.jobs.on_job_finished)
        c.job_failed.connect(self.jobs.on_job_failed)
        self.run_panel.run_requested.connect(self.jobs.run_function)
        self.run_panel.node_requested.connect(lambda path: self.selection.show_nodes([path]))
        self.run_panel.setup_requested.connect(self.jobs.set_device_setup)
        self.run_panel.result_shown.connect(self.dock_fit.later)
        self.exports.finished.connect(lambda path, fmt: self.statusBar().showMessage(f"exported {fmt} to {path}", 5000))
        self.exports.failed.connect(lambda path, message: self.show_problem(f"export to {path} failed: {message}"))
        self.run_panel.set_setup(**c.device_setup)
        c.devices_changed.connect(lambda devices: self.run_panel.set_devices(devices, self.run_panel.device.currentData() or ""))
        self.run_panel.set_devices(c.devices)
        self.cancel_button.clicked.connect(c.cancel)
        self.inputs.trace_requested.connect(self.trace_function)
        self.inputs.choice_changed.connect(self.opening.remember_inputs)
        self.graph.selection_changed.connect(self.selection.graph_selected)
        self.graph.selection_changed.connect(self.dock_fit.selected)
        self.graph.toggle_cluster_requested.connect(self.toggle_cluster)
        self.source.line_clicked.connect(self.selection.source_line_clicked)
        self.source_frames.other_line_clicked.connect(self.selection.frame_line_clicked)
        self.source_frames.pair_clicked.connect(lambda path: self.selection.show_nodes([path]))
        self.jaxpr.line_clicked.connect(self.selection.jaxpr_line_clicked)
        self.problem_goto.clicked.connect(self._goto_problem)
        self.problem_static.clicked.connect(self.jobs.retrace_static)
        self.problems.restart_requested.connect(self.restart_worker)
        self.diagnostics.activated.connect(self.selection.show_diagnostic)
        self.guide.show_requested.connect(self.selection.show_query)
        self.files.changed.connect(self.opening.file_changed)
        self.files.vanished.connect(self.opening.file_vanished)

    # ------------------------------------------------------------------ documents

    def open_target(self, target: str, args: str | None = None, inputs: str | None = None) -> bool:
        """Open `file.py`, `file.py::function` or a saved trace (`FileOpening.open_target`)."""
        return self.opening.open_target(target, args, inputs)

    def confirm_run(self, path: str) -> bool:
        """The question itself (tests replace it)."""
        return dialogs.confirm_run(self, path)

    def trace_function(self, function: str, args: str, inputs: str = "") -> None:
        if self.controller.saved is None and not self.opening.may_run(self.doc.path):
            self.show_problem(f"View only: {os.path.basename(self.doc.path)} was not run. Trace (F5) to be asked again.")
            return
        self.session.trace(function, args, inputs)  # the printed jaxpr follows (IrSide.start)

    @property
    def doc(self) -> Document:
        """The document shown (`TraceSession` owns it: read here, written there)."""
        return self.session.doc

    @Slot(str)
    def _on_layout_failed(self, message: str) -> None:
        self.graph.end_preview()
        self.show_problem(message)

    def _laid_out(self, prepared: PreparedLayout, keep: bool) -> None:
        """A layout is shown: in place (`keep`, a toggle or a re-trace), else fitted."""
        graph, layout = prepared.graph, prepared.layout
        selected = self.graph.selected_paths() if keep else []
        colours = self.session.colours()
        self.graph.set_graph(graph, layout, self.theme, keep_view=keep, model=prepared.model, line_colours=colours)
        if not keep:
            self.graph.fit_readable()
            QTimer.singleShot(0, self.graph, self.graph.fit_readable)  # again once pending dock/geometry changes settle
        if selected:
            self.graph.select_paths(selected, center=False)
        self.selection.show_pending()
        self.search_bar.refresh()  # the query stays, over what is drawn now
        eqns = graph.top.total_eqns
        self.phase_label.setText(f"{graph.function}: {eqns} equations, {len(layout.nodes)} nodes drawn ({layout.engine})")
        for note in layout.notes:
            self.log.append_text(f"layout: {note}\n")

    @Slot(object)
    def show_trace_failure(self, info: ErrorInfo) -> None:
        """The trace asked for failed: said in Problems and on its line; the last good graph stays, stale."""
        self.session.fail(info)
        self.display.trace_failed(self.doc.function)
        self.show_problem(info.summary(), info)
        loc = info.location
        if loc is not None and self.doc.path and linking.same_file(loc.file, self.doc.path):
            why = f"{info.exc_type or info.kind}: {info.message.splitlines()[0] if info.message else ''}"
            if info.hint:
                why += f"\nfix: {info.hint}"
            self.source.set_flow_marks({loc.line: LineMark(loc.line, "error", why=why)})
            self.source.scroll_to_line(loc.line)
            QTimer.singleShot(0, self.source, lambda: self.source.scroll_to_line(loc.line))  # again once the docks have their size
        if info.stderr_tail:
            self.log.append_text(info.stderr_tail[-4000:])
        self.phase_label.setText(f"{info.kind} error")

    def toggle_cluster(self, owner: str) -> None:
        self.session.toggle(owner, region=self.graph.preview_region(owner))

    # ------------------------------------------------------------------ status, problems, log

    def _toggle_long_edges(self, on: bool) -> None:
        self.graph.set_long_edges_whole(bool(on))
        self.settings.setValue("longEdgesWhole", bool(on))

    def show_problem(self, text: str, info: ErrorInfo | None = None) -> None:
        self.problems.show_problem(text, info)
        self.problem_info = info
        self.problem_goto.setVisible(bool(info and info.location))
        fn = self.inputs.current()
        suggestion = static_suggestion(fn, self.inputs.current_args(), info.argument) if (info and info.argument and fn) else None
        self.problem_static.setVisible(suggestion is not None)
        if info is not None and suggestion is not None:
            self.problem_static.setText(f"Retrace with `{info.argument}` static…")
            self.problem_static.setToolTip(
                f"Pass a Python value for {info.argument} instead of an array spec: jit bakes it in "
                "(like static_argnums) and retraces when it changes."
            )
        if text:
            self.docks["problems"].raise_()

    def restart_worker(self) -> None:
        """Fresh workers (after a crash loop the client no longer restarts them itself), then trace again."""
        self.controller.worker.restart()
        self.show_problem("")
        if self.doc.path and self.inputs.current() is not None:
            self.inputs.request_trace()

    def _goto_problem(self) -> None:
        info = self.problem_info
        if info is not None and info.location is not None and linking.same_file(info.location.file, self.doc.path):
            self.source.mark_lines([info.location.line])

    # ------------------------------------------------------------------ dialogs

    def open_file_dialog(self) -> None:
        if path := dialogs.ask_python_file(self):
            self.open_target(path)

    def examples(self) -> list[Example]:
        return list_examples(EXAMPLES_DIR)

    def open_example_dialog(self) -> None:
        if path := dialogs.ask_example(self, self.examples()):
            self.open_target(path)

    def show_shortcuts(self) -> None:
        dialogs.show_shortcuts(self, self.actions())

    def show_about(self) -> None:
        dialogs.show_about(self, str(self.controller.worker.worker_info().get("jax_version", "?")))

    # ------------------------------------------------------------------ theme, settings, events

    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        self.settings.setValue("theme", name)
        self.theme = themes.apply(app, name)
        self.session.set_palette(self.display.palette())
        self._apply_theme()
        if self.doc.result is not None:  # colours only: no re-trace, no re-layout
            self.display.apply_source_colours()
            self.display.apply_graph_colours()
            self.ir_side.apply_colours()
            self.display.show_flow(self.doc.result)

    def _apply_theme(self) -> None:
        if self.guide.guide is not None:
            self.guide.set_guide(self.guide.guide, self.theme == "dark")
        self.source.set_theme(self.theme)
        self.ir.set_theme(self.theme)
        self.graph.set_theme(self.theme)

    def closeEvent(self, event: QCloseEvent) -> None:
        prefs.save(self, self.settings)
        self.controller.close()
        self.exports.close()
        super().closeEvent(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if droppable(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        if found := droppable(event.mimeData().urls()):
            self.open_target(found)
