"""The main window's worker jobs besides tracing: run jit vs eager, "would it retrace?", retrace with
an argument made static, and the device setup and the Python the worker starts with.

It reads the workbench (through the session), asks the controller, and shows in the panes it is
given, kept apart like `IrSide`: each job is a request to the worker and a pane that shows its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QSettings, QTimer
from PySide6.QtWidgets import QDockWidget, QInputDialog, QStatusBar, QWidget

from jaxscope.analysis.retrace import RetraceRequest, RetraceResult
from jaxscope.analysis.runs.verdicts import diverging
from jaxscope.qt.app.chrome import prefs
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.qt.panes.retrace_dialog import RetraceDialog
from jaxscope.qt.panes.run_panel import RunPanel
from jaxscope.runtime.devices import device_env
from jaxscope.runtime.interpreter import Interpreter, InterpreterError, check, foreign
from jaxscope.schema.codec import from_jsonable
from jaxscope.schema.run import RunRequest, RunResult, run_result_from_jsonable
from jaxscope.schema.trace import ErrorInfo
from jaxscope.targets.argspec import SpecError
from jaxscope.targets.static_fix import make_static, static_suggestion

DIVERGENCE_COLOURS = ("#d0453a", "#e59f2d")  # the most divergent equations, the rest that differ
X64_KEY = "worker/x64"  # JAX's 64-bit mode (JAX_ENABLE_X64) in the worker
PYTHON_KEY = "worker/python"
T = TypeVar("T")  # the interpreter that runs the user's code ("" = jaxscope's own)


def when_done(parent: QObject, then: Callable[[Future[T]], object], work: Callable[..., T], *args: Any) -> None:
    """Run `work(*args)` on a thread of its own and call `then(future)` on the GUI thread when it is
    done (polled by a timer of `parent`: a window closed meanwhile drops it)."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-apart")
    future = pool.submit(work, *args)
    pool.shutdown(wait=False)
    when_future(parent, future, then)


def when_future(parent: QObject, future: Future[T], then: Callable[[Future[T]], object]) -> None:
    """Call `then(future)` on the GUI thread once `future` (of any thread) is done."""
    timer = QTimer(parent)

    def poll() -> None:
        if future.done():
            timer.stop()
            timer.deleteLater()
            then(future)

    timer.timeout.connect(poll)
    timer.start(20)


def device_setup(settings: QSettings) -> dict[str, Any]:
    """The saved worker device setup; anything unreadable gives the default (1 CPU device, all backends)."""
    try:
        cpu_devices = prefs.read(settings, "run/cpuDevices", 1)
        platforms = prefs.read(settings, "run/backends", "")
        device_env(cpu_devices, platforms)  # validates
        return {"cpu_devices": cpu_devices, "platforms": platforms}
    except (TypeError, ValueError):
        return {"cpu_devices": 1, "platforms": ""}


def x64_setting(settings: QSettings) -> bool:
    return prefs.read(settings, X64_KEY, False)


def python_setting(settings: QSettings) -> str | None:
    """The saved interpreter (checked once the window is up: `Jobs.check_python`); None for jaxscope's own."""
    return prefs.read(settings, PYTHON_KEY, "") or None


@dataclass(frozen=True)
class JobParts:
    """What the jobs work with: the workbench (through `session`), the controller, the settings, the
    panes they read and show in, and the window's asks (the problem shown and how to show one, the IR
    side's resumption after a job, a comparison with another call)."""

    session: TraceSession
    controller: Controller
    settings: QSettings
    inputs: InputsPanel
    run_panel: RunPanel
    run_dock: QDockWidget
    graph: QtGraphView
    phase_label: Callable[[str], None]
    parent: QWidget
    status: QStatusBar
    problem: Callable[[], ErrorInfo | None]
    show_problem: Callable[..., None]  # (text, info=None)
    resume_ir: Callable[[], None]
    compare_with: Callable[[str, str], None]


class Jobs:
    """The window's worker jobs besides tracing (see the module docstring)."""

    def __init__(self, parts: JobParts) -> None:
        self.parts = parts
        self.retrace: RetraceDialog | None = None  # the open "would it retrace?" dialog
        self.last_run: RunResult | None = None  # what the Run pane shows (File -> Save Trace keeps it)

    def retrace_static(self, value: str | None = None) -> bool:
        """Make the argument a tracer error depends on static (asking for its value) and retrace."""
        info, fn = self.parts.problem(), self.parts.inputs.current()
        if info is None or not info.argument or fn is None:
            return False
        args = self.parts.inputs.current_args()
        suggestion = static_suggestion(fn, args, info.argument)
        if suggestion is None:
            return False
        if value is None:
            value, ok = QInputDialog.getText(
                self.parts.parent, "Make argument static", f"Python value for `{info.argument}` (baked in at trace time):", text=suggestion
            )
            if not ok:
                return False
        try:
            new_args = make_static(fn, args, info.argument, value)
        except SpecError as exc:
            self.parts.show_problem(f"not a Python value for {info.argument}: {exc.message}", info)
            return False
        self.parts.inputs.set_args(new_args)
        self.parts.inputs.request_trace()
        return True

    def run_function(self, options: dict[str, Any] | None = None) -> bool:
        """Run the traced function jitted and eagerly in the worker (Run pane options) and compare."""
        result = self.parts.session.doc.result
        options = options if options is not None else self.parts.run_panel.options()
        if result is None or options is None:
            if result is None:
                self.parts.run_panel.set_error("Trace a function first: the run uses its inputs.")
            return False
        request = RunRequest(result.request.function, result.request.args, inputs=result.request.inputs, **options)
        self.parts.run_dock.raise_()
        self.parts.run_panel.set_running(True)
        self.parts.controller.submit("run", request, run_result_from_jsonable)
        return True

    def set_device_setup(self, cpu_devices: int, platforms: str = "") -> None:
        """Restart the worker with this many simulated CPU devices and these backends; remembered."""
        self.parts.controller.set_device_setup(cpu_devices, platforms)
        self.parts.settings.setValue("run/cpuDevices", cpu_devices)
        self.parts.settings.setValue("run/backends", platforms)
        self.parts.run_panel.set_setup(cpu_devices, platforms)
        self.parts.status.showMessage(f"Restarting the worker with {cpu_devices} CPU device(s)…", 5000)

    def on_job_finished(self, op: str, result: object) -> None:
        if op == "retrace" and self.retrace is not None and isinstance(result, RetraceResult):
            self.retrace.show_result(result)
        elif op == "run" and isinstance(result, RunResult):
            self.last_run = result
            self.parts.run_panel.set_devices(list(result.devices), result.device.name if result.device else "")
            self.parts.run_panel.set_result(result)
            where = f" on {result.device.name}" if result.device else ""
            self.parts.phase_label(f"{result.request.function.qualname}: jit vs eager {'OK' if result.ok else 'FAIL'}{where}")
            if result.divergence:  # colour where jit and eager part; the next layout restores line colours
                found = diverging(result)
                worst = max((d.max_rel for d in found), default=0.0)
                drawn = self.parts.session.doc.to_shown([d.path for d in found])
                self.parts.graph.set_line_colours(
                    {p: DIVERGENCE_COLOURS[0 if d.nonfinite_mismatch or d.max_rel >= worst / 2 else 1] for p, d in zip(drawn, found)}
                )
        self.parts.resume_ir()

    def on_job_failed(self, op: str, info: ErrorInfo) -> None:
        if op == "retrace" and self.retrace is not None:
            self.retrace.show_error(info)
        elif op == "run":
            self.parts.run_panel.set_error(info.summary())
            self.parts.phase_label(f"jit vs eager: {info.kind} error")
        self.parts.resume_ir()

    def retrace_dialog(self) -> RetraceDialog | None:
        """Open the "would jit retrace?" comparison for the traced function and inputs."""
        result = self.parts.session.doc.result
        if result is None:
            self.parts.show_problem("Trace a function first: the comparison starts from the inputs it was traced with.")
            return None
        if self.retrace is not None:
            self.retrace.close()
        dialog = self.retrace = RetraceDialog(result.request.function.qualname, result.request.args, self.parts.parent)
        dialog.check_requested.connect(
            lambda before, after: self.parts.controller.submit(
                "retrace", RetraceRequest(result.request.function, before, after), lambda d: from_jsonable(RetraceResult, d)
            )
        )
        ref = result.request.function
        dialog.diff_requested.connect(lambda after: self.parts.compare_with(f"{ref.path}::{ref.qualname}", after))
        dialog.show()
        return dialog

    # ------------------------------------------------------------------ the Python that runs the user's code

    def x64_setting(self) -> bool:
        return x64_setting(self.parts.settings)

    def set_x64(self, on: bool) -> None:
        """JAX's 64-bit mode in the worker (restarted), remembered; the function is traced again."""
        self.parts.settings.setValue(X64_KEY, bool(on))
        self.parts.controller.set_x64(bool(on))
        self.parts.status.showMessage(f"64-bit mode {'on' if on else 'off'}: restarting the worker…", 5000)
        if self.parts.session.doc.path and self.parts.inputs.current() is not None:
            self.parts.inputs.request_trace()

    def python_setting(self) -> str | None:
        return python_setting(self.parts.settings)

    def choose_python(self) -> None:
        """Ask for the interpreter of the user's project environment (as Jupyter's kernel)."""
        text, ok = QInputDialog.getText(
            self.parts.parent,
            "Python for your code",
            "The Python that runs your code, e.g. your project's .venv/bin/python\n"
            "(it needs jax; nothing of jaxscope). Empty: jaxscope's own Python.",
            text=self.python_setting() or "",
        )
        if ok:
            self.check_python(text.strip(), remember=True)

    def check_python(self, python: str | None, remember: bool = False) -> None:
        """Check `python` off the GUI thread (it imports jax: seconds), then run the worker in it;
        a failure is said in the Problems pane and the worker stays where it is."""
        if not foreign(python):
            self._use_python(None, None, remember)
            return
        assert python is not None
        self.parts.status.showMessage(f"Checking {python}…")

        def checked(future: Future[Interpreter]) -> None:
            try:
                self._use_python(python, future.result(), remember)
            except InterpreterError as exc:
                self.parts.status.clearMessage()
                self.parts.show_problem(f"{exc}. Your code still runs in jaxscope's own Python (Trace → Python for Your Code…).")

        when_done(self.parts.parent, checked, check, python)

    def _use_python(self, python: str | None, info: Interpreter | None, remember: bool) -> None:
        self.parts.controller.set_python(python)
        if remember:
            self.parts.settings.setValue(PYTHON_KEY, python or "")
        where = f"{python} (Python {info.python}, jax {info.jax})" if info is not None else "jaxscope's own Python"
        self.parts.status.showMessage(f"Your code runs in {where}", 8000)
        if remember and self.parts.session.doc.path and self.parts.inputs.current() is not None:
            self.parts.inputs.request_trace()
