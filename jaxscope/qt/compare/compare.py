"""View → Compare with…: the trace shown (B) against another (A): the previous trace of this
function (before the last edit or other inputs), another function or other inputs traced by the
worker, or a saved trace. The diff is computed apart from the GUI thread and shown in a
`CompareWindow`; a trace that cannot be had is said in the Problems pane."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QStatusBar,
    QWidget,
)

from jaxscope.analysis.trace_diff import GraphDiff, diff
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.jobs import when_done, when_future
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.compare.compare_window import CompareWindow
from jaxscope.schema.trace import FILE_INPUTS, TraceRequest, TraceResult, result_from_jsonable
from jaxscope.schema.trace_file import SUFFIX, DocumentError, TraceDocument, read

PREVIOUS = "The previous trace of this function"
OTHER = "Another function, file or inputs (traced now)"
SAVED = "A saved trace (.jaxscope)"


def describe(result: TraceResult) -> str:
    request = result.request
    name = os.path.basename(request.function.path) + "::" if request.function.path else ""
    maker = "its file's inputs" if request.inputs == FILE_INPUTS else os.path.basename(request.inputs)
    with_ = f"({request.args})" if request.args else f" with {maker}" if request.inputs else "()"
    return f"{name}{request.function.qualname}{with_}"


class CompareDialog(QDialog):
    """What to compare the trace shown with."""

    def __init__(self, parent: QWidget, target: str, args: str, has_previous: bool, inputs: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare with")
        self.kind = QComboBox()
        self.kind.addItems([*([PREVIOUS] if has_previous else []), OTHER, SAVED])
        self.target = QLineEdit(target)
        self.target.setPlaceholderText("path/to/file.py::function, or NAME.jaxscope")
        self.args = QLineEdit(args)
        self.args.setPlaceholderText("arguments, e.g. f32[8,128], training=False (empty: the file's inputs)")
        self.inputs = QLineEdit(inputs)
        self.inputs.setObjectName("compareInputs")
        self.inputs.setPlaceholderText("or a maker: make_inputs, or other.py::make (as the CLI's --inputs)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.target, 1)
        row.addWidget(browse)
        form = QFormLayout(self)
        form.addRow("Compare with", self.kind)
        form.addRow("Target", row)
        form.addRow("Arguments", self.args)
        form.addRow("Inputs", self.inputs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.kind.currentTextChanged.connect(self._kind_changed)
        self._kind_changed(self.kind.currentText())
        self.resize(640, 160)

    def _kind_changed(self, kind: str) -> None:
        self.target.setEnabled(kind != PREVIOUS)
        self.args.setEnabled(kind == OTHER)
        self.inputs.setEnabled(kind == OTHER)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Compare with", os.path.dirname(self.target.text().partition("::")[0]), f"Python or saved trace (*.py *{SUFFIX})"
        )
        if path:
            self.target.setText(path)
            self.kind.setCurrentText(SAVED if path.endswith(SUFFIX) else OTHER)


class Compare:
    """View -> Compare With: the trace shown (read from the workbench through `session`) against
    another, traced by the controller's worker, opened in a window of its own over `parent`."""

    def __init__(
        self,
        session: TraceSession,
        controller: Controller,
        theme: Callable[[], str],
        parent: QWidget,
        status: QStatusBar,
        phase_label: Callable[[str], None],
        show_problem: Callable[..., None],  # (text, info=None)
    ) -> None:
        self.session, self.controller, self.theme, self.parent = session, controller, theme, parent
        self.status, self.phase_label, self.show_problem = status, phase_label, show_problem
        self.previous: TraceResult | None = None  # the trace before the one shown (of the same function)
        self.windows: list[CompareWindow] = []
        session.traced.connect(lambda prepared, previous: self.remember(previous, prepared.result))

    def remember(self, previous: TraceResult | None, current: TraceResult) -> None:
        """Keep the trace a new one replaces, when it is of the same function (an edit, other inputs)."""
        if previous is not None and previous is not current and previous.request.function == current.request.function:
            self.previous = previous

    def dialog(self) -> None:
        result = self.session.doc.result
        if result is None:
            self.show_problem("Nothing to compare yet: trace a function first.")
            return
        ref = result.request.function
        dialog = CompareDialog(self.parent, f"{ref.path}::{ref.qualname}", result.request.args, self.previous is not None)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        kind, target, args = dialog.kind.currentText(), dialog.target.text().strip(), dialog.args.text().strip()
        maker = dialog.inputs.text().strip()
        if kind == PREVIOUS and self.previous is not None:
            self.show(self.previous, result)
        elif kind == SAVED or target.endswith(SUFFIX):
            self.with_document(target)
        elif args and maker:
            self.show_problem("Compare with: give arguments or a maker, not both (a maker makes the arguments)")
        else:
            self.with_target(target, args or None, maker or None)

    def with_document(self, path: str) -> None:
        def read_done(done: Future[TraceDocument]) -> None:
            try:
                doc = done.result()
            except DocumentError as exc:
                self.show_problem(str(exc))
                return
            if self.session.doc.result is not None:
                self.show(doc.trace, self.session.doc.result, os.path.basename(path))

        when_done(self.parent, read_done, read, path)

    def with_target(self, target: str, args: str | None, inputs: str | None = None, after: bool = False) -> None:
        """Trace `target` in the worker (the window's trace stays), then compare: it is A, the trace
        shown B; `after` (other inputs of "would it retrace?"): the trace shown is A, it B."""
        from jaxscope.session import SessionError, resolve_call

        try:
            ref, call, maker = resolve_call(target, args, inputs)
        except SessionError as exc:
            self.show_problem(f"Compare with {target}: {exc}")
            return
        self.phase_label(f"tracing {ref.qualname} to compare…")
        request = TraceRequest(ref, args=call, jaxpr_text=False, record_flow=False, diagnose=False, inputs=maker)
        future = self.controller.worker.submit("trace", request, result_from_jsonable)

        def traced(done: Future[TraceResult]) -> None:
            self.phase_label("")
            try:
                other = done.result()
            except Exception as exc:
                info = getattr(exc, "info", None)
                self.show_problem(f"Compare with {target}: {info.summary() if info is not None else exc}", info)
                return
            current = self.session.doc.result
            if current is not None:
                self.show(*((current, other) if after else (other, current)))

        when_future(self.parent, future, traced)

    def show(self, a: TraceResult, b: TraceResult, a_name: str = "") -> None:
        """Diff `a` against `b` apart from the GUI thread, then open the comparison."""

        def done(found: Future[GraphDiff]) -> None:
            window = CompareWindow(
                a.graph,
                b.graph,
                found.result(),
                (a_name or describe(a), describe(b)),
                self.controller.layouts,
                self.theme(),
                self.parent,
            )
            self.windows = [w for w in self.windows if w.isVisible()] + [window]
            window.show()
            self.status.showMessage(f"compared: {found.result().summary()}", 8000)

        when_done(self.parent, done, diff, a.graph, b.graph)
