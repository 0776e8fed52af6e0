"""What the window's collaborators (`IrSide`, `Jobs`) use of it: a typed seam instead of mixins that
reach into the window's private state. `MainWindow` satisfies it."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QLabel, QStatusBar, QWidget

from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.linked_selection import LinkedSelection
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.qt.panes.ir_tabs import IrTabs
from jaxscope.qt.panes.jaxpr_view import QtJaxprView
from jaxscope.qt.panes.run_panel import RunPanel
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.trace import ErrorInfo


class WindowHost(Protocol):
    session: TraceSession
    settings: QSettings
    controller: Controller
    graph: QtGraphView
    source: QtSourceView
    jaxpr: QtJaxprView
    ir: IrTabs
    inputs: InputsPanel
    run_panel: RunPanel
    docks: dict[str, QDockWidget]
    phase_label: QLabel
    auto_compile: QAction
    problem_info: ErrorInfo | None  # the failure shown in Problems
    selection: LinkedSelection
    theme: str  # "light" or "dark"

    def window(self) -> QWidget: ...  # the parent of the dialogs a collaborator opens

    def statusBar(self) -> QStatusBar: ...

    def palette_colours(self) -> list[str]: ...

    def show_problem(self, text: str, info: ErrorInfo | None = None) -> None: ...

    def resume_ir(self) -> None: ...  # after a job: pick the IR up again (`IrSide.resume`)

    def compare_with(self, target: str, args: str) -> None: ...  # the trace shown (A) against `target` with `args` (B)
