"""The Run pane: options for a jit-vs-eager run, and its result (verdict, causes, per-output errors,
times, first NaN). After a run the options fold away, so the verdict, the causes and the table are
what the pane shows (a 1280×800 window included); the Options button opens them again.

Strings from the user's code (output and input paths, previews, notes, details) go into plain-text labels
and table items; tooltips are rich text whenever they look like HTML, so theirs are escaped.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)  # fmt: skip

from jaxscope.analysis.runs.verdicts import device_line, diverging, fmt_float, fmt_seconds, nan_line, nonfinite_text, short_loc
from jaxscope.qt.panes.inputs_panel import plain_label
from jaxscope.qt.panes.run_widgets import STATE_COLOURS, CausesView, FitTable, leaf_cause, named, say, tip_html
from jaxscope.runtime.devices import MAX_CPU_DEVICES
from jaxscope.schema.run import F64, PRECISIONS, DeviceInfo, LeafComparison, RunResult

__all__ = ["COLUMNS", "STATE_COLOURS", "RunPanel"]
_HEADERS = {
    "Output": "Output leaf (jax.tree_util.keystr of its path)", "Shape": "", "Dtype": "Dtype of the jitted output",
    "Max abs": "Largest |jit - eager| over positions finite in both", "Max rel": "Largest |jit - eager| / |eager|",
    "ULP": "Largest distance in units in the last place (float dtypes)", "# diff": "Elements that differ bitwise (NaN equals NaN)",
    "NaN/Inf jit": "NaN / +Inf / -Inf counts in the jitted output", "NaN/Inf eager": "NaN / +Inf / -Inf counts in the eager output",
    "allclose": "allclose(jit, eager) with the tolerances shown in the row's tooltip",
    "vs float64": "RMSE of jit / eager from the float64 reference, where one ran (the nearer is the more accurate)",
    "Cause": "Why the output differs beyond tolerance (see the causes above the table)",
}  # fmt: skip
COLUMNS = list(_HEADERS)


def result_state(result: RunResult) -> str:
    """ "fail" (beyond tolerance or NaN), "close" (allclose but not bitwise, or Inf), "ok" (bitwise equal)."""
    if not result.ok:
        return "fail"
    return "ok" if all(lf.exact and not lf.nonfinite for lf in result.leaves) else "close"


def device_text(dev: DeviceInfo) -> str:
    """What the device picker shows: `cpu:0 — cpu (default)`, with memory where known."""
    text = f"{dev.name} — {dev.kind or dev.platform}"
    if dev.bytes_limit:
        text += f", {dev.bytes_limit / 2**30:.1f} GiB"
    return text + (" (default)" if dev.default else "")


FIELD_W = 220  # px, the widest an option field grows


class RunPanel(QWidget):
    """Device, seed, repeats, tolerances and the Run button; below, the comparison of the last run."""

    _result: RunResult | None  # the run shown (`set_result`), None after `clear`

    run_requested = Signal(object)  # dict: device, seed, repeats, rtol, atol, find_nan, per_equation
    node_requested = Signal(str)  # graph node path of the first NaN/Inf equation
    result_shown = Signal()  # a run's result fills the pane (the window gives it room)
    setup_requested = Signal(int, str)  # simulated CPU device count, backends ("" all, "cpu"): restarts the worker

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = ""
        self._nan_path = ""
        self._make_fields()
        buttons = self._options_form()
        scroll = self._result_body()
        layout = QVBoxLayout(self)
        layout.addWidget(self.form_box)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        layout.addWidget(scroll, 1)

        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(200)
        self._ticker.timeout.connect(lambda: self.status.setText(f"running… {self._clock.elapsed() / 1000:.1f} s"))
        self.run_button.clicked.connect(self.request_run)
        self.nan_button.clicked.connect(lambda: self.node_requested.emit(self._nan_path))
        self.divergence.cellClicked.connect(lambda row, _col: self._divergence_clicked(row))
        self.inputs_toggle.toggled.connect(self._show_inputs)
        self.cpu_devices.valueChanged.connect(self._setup_changed)
        self.backends.currentIndexChanged.connect(self._setup_changed)
        self.options()
        self.clear()
        self._show_options(True)

    def _make_fields(self) -> None:
        """The run's options: device, setup, seed, repeats, tolerances, reference, precision, checks."""
        self.device = named(QComboBox(), "runDevice", "Device the jitted function runs on; eager runs on the same device")
        self.device.setPlaceholderText("JAX's default device")
        self.cpu_devices = named(
            QSpinBox(),
            "runCpuDevices",
            "Simulated CPU devices (XLA's --xla_force_host_platform_device_count); changing it restarts the worker",
        )
        self.cpu_devices.setRange(1, MAX_CPU_DEVICES)
        self.cpu_devices.setKeyboardTracking(False)  # one restart when the number is typed, not one per digit
        self.backends = named(QComboBox(), "runBackends", "Backends the worker starts (JAX_PLATFORMS); changing it restarts the worker")
        self.backends.addItem("All backends", "")
        self.backends.addItem("CPU only", "cpu")
        self.seed = named(QSpinBox(), "runSeed", "Seed of the generated inputs (the same seed gives the same inputs)")
        self.seed.setRange(0, 2**31 - 1)
        self.repeats = named(QSpinBox(), "runRepeats", "Steady-state jitted runs after the first call; the median is shown")
        self.repeats.setRange(0, 100_000)
        self.repeats.setValue(10)
        self.rtol = named(QLineEdit(), "runRtol", "rtol of allclose for every output; empty: by dtype (float32 1e-5, ints exact)")
        self.atol = named(QLineEdit(), "runAtol", "atol of allclose for every output; empty: by dtype (float32 1e-6, ints exact)")
        for edit in (self.rtol, self.atol):
            edit.setPlaceholderText("default by dtype")
            edit.textChanged.connect(self.options)
            edit.returnPressed.connect(self.request_run)
        self.per_equation = named(
            QCheckBox("Per equation"), "runPerEquation", "Compare every intermediate, jit vs eager, and colour the graph where they differ"
        )
        self.find_nan = named(
            QCheckBox("Find first NaN"), "runFindNan", "Look for the first equation making NaN/Inf even when the outputs are finite"
        )
        self.reference = named(
            QComboBox(), "runReference", "A reference run: the traced program in float64 on the CPU, or jit on another device"
        )
        self.precision = named(QComboBox(), "runPrecision", "Matmul and convolution precision for both runs (jax.default_matmul_precision)")
        self.precision.addItem("JAX's default", "")
        for name in PRECISIONS:
            self.precision.addItem(name, name)
        self.evidence = named(
            QCheckBox("Explain differences"),
            "runEvidence",
            "On a difference beyond tolerance, run what names its cause: a replay, a second trace, float64, precision highest",
        )
        self.evidence.setChecked(True)
        self.run_button = named(QPushButton("Run"), "runButton", "Run jitted on the device and eagerly with the same inputs; compare")
        self.status = named(plain_label(), "runStatus")
        self.error = named(plain_label(), "runOptionsError")
        self.error.setStyleSheet(f"color: {STATE_COLOURS['fail']};")

    def _options_form(self) -> QHBoxLayout:
        """The options laid out in a grid that folds away (`options_toggle`); returns the row of
        the toggle, the status and the Run button."""
        form = QGridLayout()
        form.addWidget(plain_label("Device"), 0, 0)
        form.addWidget(self.device, 0, 1, 1, 3)
        self.device.setMaximumWidth(2 * FIELD_W + 120)
        rows = (
            (("CPU devices", self.cpu_devices), ("Backends", self.backends)),
            (("Seed", self.seed), ("Repeats", self.repeats)),
            (("rtol", self.rtol), ("atol", self.atol)),
            (("Reference", self.reference), ("Precision", self.precision)),
        )
        for row, pairs in enumerate(rows, 1):
            for col, (text, field) in enumerate(pairs):
                form.addWidget(plain_label(text), row, 2 * col)
                form.addWidget(field, row, 2 * col + 1)
                field.setMaximumWidth(FIELD_W)  # a number or a short name: a wide pane leaves the rest empty
                form.setColumnStretch(2 * col + 1, 1)
        form.setColumnStretch(4, 3)
        self.form_box = QWidget()
        form_box = QVBoxLayout(self.form_box)
        form_box.setContentsMargins(0, 0, 0, 0)
        form_box.addLayout(form)
        checks = QHBoxLayout()
        for check in (self.find_nan, self.per_equation, self.evidence):
            checks.addWidget(check)
        checks.addStretch(1)
        form_box.addLayout(checks)
        self.options_toggle = named(QToolButton(), "runOptionsToggle", "Show or hide the run's options")
        self.options_toggle.setCheckable(True)
        self.options_toggle.setChecked(True)
        self.options_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.options_toggle.setAutoRaise(True)
        self.options_toggle.toggled.connect(self._show_options)
        buttons = QHBoxLayout()
        buttons.addWidget(self.options_toggle)
        buttons.addWidget(self.status, 1, Qt.AlignmentFlag.AlignRight)
        buttons.addWidget(self.run_button)
        return buttons

    def _result_body(self) -> QScrollArea:
        """The comparison of the last run (verdict, causes, leaves, the first NaN, divergence,
        values, times, inputs), scrolled."""
        self.verdict = named(plain_label(), "runVerdict")
        self.causes = CausesView()
        self.context = named(plain_label(), "runContext")
        self.leaves = named(FitTable(COLUMNS, stretch_last=False), "runLeaves")
        for column, tip in enumerate(_HEADERS.values()):
            if (header := self.leaves.horizontalHeaderItem(column)) is not None:
                header.setToolTip(tip)
        self.nan_label = named(plain_label(), "runFirstNan")
        self.nan_button = named(QPushButton("Show in graph"), "runShowNan", "Select the first equation that made NaN/Inf in the graph")
        columns = ["Equation", "Primitive", "Source", "Max abs", "Max rel", "Evidence"]
        self.divergence = named(FitTable(columns, stretch_last=False), "runDivergence")
        self.divergence.setToolTip("Equations whose jitted and eager outputs differ (click: select in the graph)")
        self.values = named(plain_label(), "runValues")
        self.values.setFont(QFont("DejaVu Sans Mono", 9))
        self.explanation = named(plain_label(), "runExplanation")
        self.warnings = named(plain_label(), "runWarnings")
        self.warnings.setStyleSheet(f"color: {STATE_COLOURS['close']};")
        self.times = named(plain_label(), "runTimes")
        self.times.setFont(QFont("DejaVu Sans Mono", 9))
        self.inputs_toggle = named(QToolButton(), "runInputsToggle", "Show the inputs both runs used")
        self.inputs_toggle.setCheckable(True)
        self.inputs_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.inputs_toggle.setAutoRaise(True)
        self.inputs = named(FitTable(["Input", "Aval", "Values (first few)"], stretch_last=True), "runInputs")
        nan_row = QHBoxLayout()
        nan_row.addWidget(self.nan_label, 1)
        nan_row.addWidget(self.nan_button, 0, Qt.AlignmentFlag.AlignTop)
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.verdict)
        body.addWidget(self.causes)
        body.addWidget(self.context)
        body.addWidget(self.leaves, 0, Qt.AlignmentFlag.AlignLeft)
        body.addLayout(nan_row)
        divergence_row = QHBoxLayout()  # the table, and beside it the values of the node clicked
        divergence_row.addWidget(self.divergence, 0, Qt.AlignmentFlag.AlignTop)
        divergence_row.addWidget(self.values, 1, Qt.AlignmentFlag.AlignTop)
        body.addLayout(divergence_row)
        for w in (self.explanation, self.warnings, self.times, self.inputs_toggle, self.inputs):
            body.addWidget(w)
        body.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.body)
        return scroll

    @property
    def verdict_state(self) -> str:
        """ "ok", "close" or "fail" for the shown result (an error is "fail"); "" when nothing is shown."""
        return self._state

    def set_setup(self, cpu_devices: int, platforms: str) -> None:
        """Show the worker's device setup without asking for a restart."""
        for widget in (self.cpu_devices, self.backends):
            widget.blockSignals(True)
        self.cpu_devices.setValue(cpu_devices)
        self.backends.setCurrentIndex(max(self.backends.findData(platforms), 0))
        for widget in (self.cpu_devices, self.backends):
            widget.blockSignals(False)

    def _setup_changed(self) -> None:
        self.setup_requested.emit(self.cpu_devices.value(), self.backends.currentData() or "")

    def set_devices(self, devices: list[DeviceInfo] | tuple[DeviceInfo, ...], current: str = "") -> None:
        """Fill the picker; select `current` ("cpu:0"), else the first entry: JAX's default, where the
        inputs go where the program puts them (a program on a mesh: over its devices). No devices:
        the worker is (re)starting."""
        self.device.setPlaceholderText("JAX's default device" if devices else "starting the worker…")
        self.device.clear()
        if devices:
            default = next((d.name for d in devices if d.default), "")
            self.device.addItem(f"JAX's default ({default}; a mesh program: its devices)", "")
        for dev in devices:
            self.device.addItem(device_text(dev), dev.name)
        index = self.device.findData(current) if current else -1
        self.device.setCurrentIndex(max(index, 0) if devices else -1)
        chosen = self.reference.currentData() or ""
        self.reference.clear()
        self.reference.addItem("None", "")
        self.reference.addItem("float64 on the CPU", F64)
        for dev in devices:
            self.reference.addItem(f"jit on {dev.name} too", dev.name)
        self.reference.setCurrentIndex(max(self.reference.findData(chosen), 0))

    def options(self) -> dict[str, Any] | None:
        """The run options, or None (with an inline error) when a tolerance is not a finite number >= 0."""
        tols: dict[str, float | None] = {}
        problems = []
        for name, edit in (("rtol", self.rtol), ("atol", self.atol)):
            text = edit.text().strip()
            try:
                tols[name] = float(text) if text else None
            except ValueError:
                tols[name] = math.nan
            value = tols[name]
            if value is not None and not (math.isfinite(value) and value >= 0):
                problems.append(f"{name} must be a number ≥ 0 (empty: default by dtype)")
        say(self.error, "\n".join(problems))
        if problems:
            return None
        return {
            "device": self.device.currentData() or "", "seed": self.seed.value(), "repeats": self.repeats.value(),
            "rtol": tols["rtol"], "atol": tols["atol"], "find_nan": self.find_nan.isChecked(),
            "per_equation": self.per_equation.isChecked(), "reference": self.reference.currentData() or "",
            "precision": self.precision.currentData() or "", "evidence": self.evidence.isChecked(),
        }  # fmt: skip

    def request_run(self) -> None:
        """Emit run_requested with the options, unless a run is in flight or a tolerance is invalid."""
        options = self.options()
        if options is not None and self.run_button.isEnabled():
            self.run_requested.emit(options)

    def set_running(self, running: bool) -> None:
        """While a run is in flight: Run disabled, elapsed time shown."""
        self.run_button.setEnabled(not running)
        self.status.setText("running…" if running else "")
        if running:
            self._clock.start()
            self._ticker.start()
        else:
            self._ticker.stop()

    def _divergence_clicked(self, row: int) -> None:
        if (item := self.divergence.item(row, 0)) is not None:
            self.node_requested.emit(item.text())

    def set_result(self, result: RunResult) -> None:
        """Show a finished run (and end the running state)."""
        self.set_running(False)
        self.clear()
        self._result = result
        self._set_verdict(result_state(result), ("OK: " if result.ok else "FAIL: ") + (result.verdict or "no outputs"))
        self.causes.set_result(result)
        self.options_toggle.setChecked(False)  # the result is what the pane is for now
        dev = device_line(result.device) if result.device else result.request.device or "default device"
        source = result.input_source or f"seed {result.request.seed}"
        made = f", {result.inputs_made}" if result.inputs_made else ""
        say(self.context, f"{result.request.function.display()} on {dev}, inputs from {source}{made}")
        self.leaves.setRowCount(len(result.leaves))
        for row, leaf in enumerate(result.leaves):
            self._fill_leaf(row, leaf, leaf_cause(result, leaf.path))
        self.leaves.fit()
        self.leaves.setVisible(bool(result.leaves))
        origin = result.first_nan
        if origin is not None:
            counts = nonfinite_text(origin.nan, origin.posinf, origin.neginf)
            say(self.nan_label, f"First NaN/Inf: {nan_line(result)} ({counts} in {origin.out_aval or 'its output'})")
            self._nan_path = origin.path
        elif result.nan_searched:
            say(self.nan_label, "First NaN/Inf: no equation produced NaN/Inf when evaluated one by one")
        self.nan_button.setVisible(origin is not None)
        found = diverging(result)
        self.divergence.setRowCount(len(found))
        for row, d in enumerate(found):
            cells = (d.path, d.primitive, short_loc(d.source), fmt_float(d.max_abs), fmt_float(d.max_rel), d.note)
            for column, text in enumerate(cells):
                self.divergence.setItem(row, column, QTableWidgetItem(text))
        self.divergence.fit()
        self.divergence.setVisible(bool(found))
        self.show_values("")
        say(self.explanation, result.explanation)
        say(self.warnings, "\n".join(f"warning: {w}" for w in result.warnings))
        say(self.times, _times(result))
        self.inputs.setRowCount(len(result.inputs))
        for row, inp in enumerate(result.inputs):
            more = ", …" if inp.size > len(inp.preview) else ""
            values = "".join(inp.preview) if inp.aval == "static" else f"[{', '.join(inp.preview)}{more}]"
            for column, text in enumerate((inp.path, inp.aval, values)):
                item = QTableWidgetItem(text)
                item.setToolTip(tip_html(f"{inp.path}: {inp.aval}, {inp.size} elements\n{values}"))
                self.inputs.setItem(row, column, item)
        self.inputs.fit()
        self.inputs_toggle.setText(f"Inputs ({len(result.inputs)}, {source})")
        self.inputs_toggle.setVisible(True)
        self._show_inputs(self.inputs_toggle.isChecked())
        self.result_shown.emit()

    def set_error(self, text: str) -> None:
        """The run failed (compile error, out of memory, timeout…): say so in red in place of a result."""
        self.set_running(False)
        self.clear()
        self._set_verdict("fail", text)

    @property
    def shown_result(self) -> RunResult | None:
        return self._result

    def clear(self) -> None:
        """Forget the shown result (the options stay)."""
        self._state = ""
        self._nan_path = ""
        self._result = None
        self.causes.set_result(None)
        for label in (self.verdict, self.context, self.nan_label, self.values, self.explanation, self.warnings, self.times):
            say(label, "")
        self.leaves.setRowCount(0)
        self.inputs.setRowCount(0)
        self.divergence.setRowCount(0)
        for w in (self.leaves, self.nan_button, self.inputs_toggle, self.inputs, self.divergence):
            w.setVisible(False)

    def show_values(self, path: str) -> bool:
        """The jitted and eager values of graph node `path` from the last per-equation run; False when
        it has none (not compared, or not a floating equation)."""
        found = next((d for d in self._result.divergence if d.path == path), None) if self._result else None
        if found is None:
            say(self.values, "Click a node to see its jitted and eager values." if self._result and self._result.divergence else "")
            return False
        line = f", {short_loc(found.source)}" if found.source else ""
        width = max((len(v) for v in found.jit_preview + found.eager_preview), default=0)
        rows = [
            f"{found.path} {found.primitive}{line}: {found.aval}, max abs {fmt_float(found.max_abs)}, max rel {fmt_float(found.max_rel)}",
            "  jit   " + "  ".join(v.rjust(width) for v in found.jit_preview),
            "  eager " + "  ".join(v.rjust(width) for v in found.eager_preview),
        ]
        say(self.values, "\n".join(rows))
        return True

    def _set_verdict(self, state: str, text: str) -> None:
        self._state = state
        self.verdict.setStyleSheet(f"color: {STATE_COLOURS[state]}; font-weight: bold;")
        say(self.verdict, text)

    def _fill_leaf(self, row: int, lf: LeafComparison, cause: str) -> None:
        verdict = "yes" if lf.allclose else "NO"
        ref = lf.reference
        vs64 = "-" if ref is None else f"{fmt_float(ref.jit_rmse)} / {fmt_float(ref.eager_rmse)}"
        if lf.kind != "array":
            cells = ["out" + lf.path, "-", lf.dtype or lf.kind, "-", "-", "-", "-", "-", "-", verdict, vs64, cause]
        else:
            cells = [
                "out" + lf.path, str(list(lf.shape)), lf.dtype, fmt_float(lf.max_abs), fmt_float(lf.max_rel),
                "-" if lf.max_ulp is None else str(lf.max_ulp), f"{lf.n_diff}/{lf.size}",
                nonfinite_text(lf.jit_nan, lf.jit_posinf, lf.jit_neginf),
                nonfinite_text(lf.eager_nan, lf.eager_posinf, lf.eager_neginf), verdict, vs64, cause,
            ]  # fmt: skip
        tip = [f"out{lf.path}: {lf.kind} {lf.dtype}{list(lf.shape) if lf.kind == 'array' else ''}"]
        if lf.jit_preview or lf.eager_preview:
            tip += [f"jit:   [{', '.join(lf.jit_preview)}]", f"eager: [{', '.join(lf.eager_preview)}]"]
        if lf.worst_index:
            tip.append(f"largest difference at index {lf.worst_index}")
        tip.append(f"allclose with rtol {fmt_float(lf.rtol)}, atol {fmt_float(lf.atol)}")
        if lf.nonfinite_mismatch:
            tip.append(f"{lf.nonfinite_mismatch} positions NaN/Inf in only one of them")
        tip += [lf.note] if lf.note else []
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(tip_html("\n".join(tip)))
            if 3 <= column <= 10:
                align = Qt.AlignmentFlag.AlignHCenter if column == 9 else Qt.AlignmentFlag.AlignRight
                item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
            if (column in (7, 8) and text != "-") or text == "NO" or (column == 11 and cause and not _accepted(self._result, lf.path)):
                item.setForeground(QBrush(QColor(STATE_COLOURS["fail"])))
            self.leaves.setItem(row, column, item)

    def _show_options(self, shown: bool) -> None:
        self.options_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.form_box.setVisible(shown)
        options = self.options() or {}
        summary = ", ".join(
            f"{k} {v}" for k, v in (("device", self.device.currentText().split(" — ")[0] if options.get("device") else ""),
                                    ("seed", options.get("seed")), ("reference", options.get("reference")),
                                    ("precision", options.get("precision"))) if v not in ("", None)
        )  # fmt: skip
        self.options_toggle.setText("Options" if shown else f"Options ({summary})")

    def _show_inputs(self, shown: bool) -> None:
        self.inputs_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.inputs.setVisible(shown and not self.inputs_toggle.isHidden())


def _accepted(result: RunResult | None, path: str) -> bool:
    return result is not None and any(c.explained and path in c.outputs for c in result.causes)


def _times(result: RunResult) -> str:
    """Jit phases, eager times and the speed-up, in a few aligned lines."""
    steady = f"{fmt_seconds(result.steady_s)} (median of {len(result.steady_runs)})" if result.steady_runs else "-"
    lines = [
        f"jit    trace {fmt_seconds(result.trace_s)} · lower {fmt_seconds(result.lower_s)} · compile {fmt_seconds(result.compile_s)}",
        f"       first call {fmt_seconds(result.first_call_s)} · steady {steady}",
        f"eager  warm {fmt_seconds(result.eager_s)} · first run {fmt_seconds(result.eager_first_s)} (compiling each primitive)",
    ]
    if result.eager_s and result.steady_s:
        lines.append(f"speed-up of jit over eager (steady against steady): {result.eager_s / result.steady_s:.1f}×")
    return "\n".join(lines)


def scrolled(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that follows its size."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    return area
