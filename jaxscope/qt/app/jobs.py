"""The main window's worker jobs besides tracing: run jit vs eager, "would it retrace?", retrace with
an argument made static, and the device setup the worker starts with.

A mixin of `MainWindow` (it uses the window's document, controller, panes and problem display),
kept apart like `IrMixin`: each job is a request to the worker and a pane that shows its answer.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QInputDialog

from jaxscope.analysis.retrace import RetraceRequest, RetraceResult
from jaxscope.analysis.verdicts import diverging
from jaxscope.qt.app import prefs
from jaxscope.qt.panes.retrace_dialog import RetraceDialog
from jaxscope.runtime.devices import device_env
from jaxscope.schema.codec import from_jsonable
from jaxscope.schema.run import RunRequest, RunResult, run_result_from_jsonable
from jaxscope.schema.trace import ErrorInfo
from jaxscope.spec.argspec import SpecError
from jaxscope.spec.static_fix import make_static, static_suggestion

DIVERGENCE_COLOURS = ("#d0453a", "#e59f2d")  # the most divergent equations, the rest that differ


class JobsMixin:
    """Needs from the window: doc, controller, docks, graph, inputs, phase_label, run_panel, settings, statusBar(),
    _problem_info, _retrace, _show_problem(), _resume_ir()."""

    doc: Any
    controller: Any
    docks: Any
    phase_label: Any
    graph: Any
    inputs: Any
    run_panel: Any
    settings: Any
    _problem_info: ErrorInfo | None
    _retrace: RetraceDialog | None

    def retrace_static(self, value: str | None = None) -> bool:
        """Make the argument a tracer error depends on static (asking for its value) and retrace."""
        info, fn = self._problem_info, self.inputs.current()
        if info is None or not info.argument or fn is None:
            return False
        args = self.inputs.current_args()
        suggestion = static_suggestion(fn, args, info.argument)
        if suggestion is None:
            return False
        if value is None:
            value, ok = QInputDialog.getText(
                self, "Make argument static", f"Python value for `{info.argument}` (baked in at trace time):", text=suggestion
            )
            if not ok:
                return False
        try:
            new_args = make_static(fn, args, info.argument, value)
        except SpecError as exc:
            self._show_problem(f"not a Python value for {info.argument}: {exc.message}", info)
            return False
        self.inputs.set_args(new_args)
        self.inputs.request_trace()
        return True

    def run_function(self, options: dict[str, Any] | None = None) -> bool:
        """Run the traced function jitted and eagerly in the worker (Run pane options) and compare."""
        result = self.doc.result
        options = options if options is not None else self.run_panel.options()
        if result is None or options is None:
            if result is None:
                self.run_panel.set_error("Trace a function first: the run uses its inputs.")
            return False
        request = RunRequest(result.request.function, result.request.args, **options)
        self.docks["run"].raise_()
        self.run_panel.set_running(True)
        self.controller.submit("run", request, run_result_from_jsonable)
        return True

    def _device_setup(self) -> dict[str, Any]:
        """The saved worker device setup; anything unreadable gives the default (1 CPU device, all backends)."""
        try:
            setup = {"cpu_devices": prefs.read(self.settings, "run/cpuDevices", 1), "platforms": prefs.read(self.settings, "run/backends", "")}
            device_env(**setup)  # validates
            return setup
        except (TypeError, ValueError):
            return {"cpu_devices": 1, "platforms": ""}

    def set_device_setup(self, cpu_devices: int, platforms: str = "") -> None:
        """Restart the worker with this many simulated CPU devices and these backends; remembered."""
        self.controller.set_device_setup(cpu_devices, platforms)
        self.settings.setValue("run/cpuDevices", cpu_devices)
        self.settings.setValue("run/backends", platforms)
        self.run_panel.set_setup(cpu_devices, platforms)
        self.statusBar().showMessage(f"Restarting the worker with {cpu_devices} CPU device(s)…", 5000)

    def _on_job_finished(self, op: str, result: object) -> None:
        if op == "retrace" and self._retrace is not None and isinstance(result, RetraceResult):
            self._retrace.show_result(result)
        elif op == "run" and isinstance(result, RunResult):
            self.run_panel.set_devices(list(result.devices), result.device)
            self.run_panel.set_result(result)
            where = f" on {result.device.name}" if result.device else ""
            self.phase_label.setText(f"{result.request.function.qualname}: jit vs eager {'OK' if result.ok else 'FAIL'}{where}")
            if result.divergence:  # colour where jit and eager part; the next layout restores line colours
                found = diverging(result)
                worst = max((d.max_rel for d in found), default=0.0)
                self.graph.set_line_colours({d.path: DIVERGENCE_COLOURS[0 if d.nonfinite_mismatch or d.max_rel >= worst / 2 else 1]
                                             for d in found})
        self._resume_ir()

    def _on_job_failed(self, op: str, info: ErrorInfo) -> None:
        if op == "retrace" and self._retrace is not None:
            self._retrace.show_error(info)
        elif op == "run":
            self.run_panel.set_error(info.summary())
            self.phase_label.setText(f"jit vs eager: {info.kind} error")
        self._resume_ir()

    def retrace_dialog(self) -> RetraceDialog | None:
        """Open the "would jit retrace?" comparison for the traced function and inputs."""
        result = self.doc.result
        if result is None:
            self._show_problem("Trace a function first: the comparison starts from the inputs it was traced with.")
            return None
        if self._retrace is not None:
            self._retrace.close()
        dialog = self._retrace = RetraceDialog(result.request.function.qualname, result.request.args, self)
        dialog.check_requested.connect(
            lambda before, after: self.controller.submit(
                "retrace", RetraceRequest(result.request.function, before, after), lambda d: from_jsonable(RetraceResult, d)
            )
        )
        dialog.show()
        return dialog
