"""Pick a function of the file and its inputs: a maker (the file's JAXSCOPE_INPUTS entry, or one in
another file or module) or argument specs typed here, validated as you type; after a trace, the
maker's pytree as a tree."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from jaxscope.qt.panes.inputs_tree import InputsTree
from jaxscope.runtime.parse_process import parse_call_apart
from jaxscope.schema.trace import FILE_INPUTS, TraceResult
from jaxscope.targets import argspec
from jaxscope.targets.discover import INPUTS_VAR, FunctionInfo, ModuleInfo, bind_call
from jaxscope.targets.target import TargetError, parse_target

MODES = {"file": "Maker in the file", "maker": "Maker elsewhere", "specs": "Specs typed here"}


def plain_label(text: str = "") -> QLabel:
    """A QLabel that never interprets user text as rich text."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


# QLineEdit cuts its text at 32767 characters by default: a params pytree written out (gpt_jit-50k's
# example: 43k) lost its end and failed to parse as "'[' is never closed".
ARGS_MAX_CHARS = 16 * 1024 * 1024
PARAM_CHARS = 120  # a parameter's line in the list is cut here
ASYNC_CHARS = 10_000  # longer inputs are parsed apart (a thread, a child process): mlp-50k's 52k characters took ~130 ms of the GUI thread
ASYNC_DELAY_S = 0.1  # ... once the GUI thread is through with what asked (opening a file: ~50 ms), not against it for the GIL


class _LinesArea(QScrollArea):
    """The parameter list's scroll area: never taller than its lines. A scroll area's least height
    is its scroll bar's (~70 px, four lines), and layouts take that as its height too: a gap under
    a two-line list. A longer list keeps those four lines when squeezed, and scrolls."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        inside = self.widget()
        lines = inside.sizeHint().height() + 2 * self.frameWidth() if inside is not None else hint.height()
        return QSize(hint.width(), min(hint.height(), lines))


class InputsPanel(QWidget):
    """Function picker, the inputs' source (a maker or specs), the spec field with inline errors and
    its parameter list, the maker's inputs tree, and the Trace button."""

    trace_requested = Signal(str, str, str)  # qualname, args text, maker ("" for specs)
    choice_changed = Signal()  # the user picked another source or maker: the window remembers it per file
    _checked = Signal(str, object)  # a long text, its CallSpec or SpecError (from the parsing thread)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._module: ModuleInfo | None = None
        self._edited: dict[str, str] = {}
        self._modes: dict[str, str] = {}  # function -> "file", "maker" or "specs", as the user chose
        self._makers: dict[str, str] = {}  # function -> a maker elsewhere, as typed
        self._parsed: tuple[str, argspec.CallSpec | argspec.SpecError] | None = None
        self._pending: dict[str, Future[argspec.CallSpec | argspec.SpecError | None]] = {}  # the long text being parsed
        self._pool: ThreadPoolExecutor | None = None
        self._checked.connect(self._on_checked)
        self._described: tuple[FunctionInfo, argspec.CallSpec] | None = None  # what the parameter list shows
        self.function = QComboBox()
        self.function.setObjectName("functionCombo")
        self.params = plain_label()
        self.params.setObjectName("paramsLabel")
        self.params.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # A long parameter list scrolls: squeezed by the docks below it, the label showed its first
        # and last lines cut in half.
        self.params_area = _LinesArea()
        self.params_area.setObjectName("paramsArea")
        self.params_area.setWidget(self.params)
        self.params_area.setWidgetResizable(True)
        self.params_area.setFrameShape(QFrame.Shape.NoFrame)
        self.params_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.params_area.viewport().setAutoFillBackground(False)
        self.params_area.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)  # as tall as its lines
        self.params.setAutoFillBackground(False)
        self.args = QLineEdit()
        self.args.setMaxLength(ARGS_MAX_CHARS)
        self.args.setObjectName("argsEdit")
        self.args.setPlaceholderText("f32[8,128], {'b': f32[128]}, training=True")
        self.args.setFont(QFont("DejaVu Sans Mono", 10))
        self.error = plain_label()
        self.error.setObjectName("argsError")
        self.error.setStyleSheet("color: #c0392b;")
        self.source = QComboBox()
        self.source.setObjectName("inputsSource")
        self.source.setToolTip(
            "Where the example inputs come from: a maker (a function that returns them: any "
            "pytree, array leaves traced, the rest static) or specs typed here"
        )
        self.maker = QLineEdit()
        self.maker.setObjectName("makerEdit")
        self.maker.setPlaceholderText("path/to/file.py::make_inputs  or  package.module:make_inputs")
        self.hint = plain_label()
        self.hint.setObjectName("inputsHint")
        self.tree = InputsTree()
        self.tree.setVisible(False)
        self.trace_button = QPushButton("Trace")
        self.trace_button.setObjectName("traceButton")
        self.trace_button.setToolTip("Trace the function with these inputs (Enter, F5)")
        self.form = form = QFormLayout()
        form.addRow("Function", self.function)
        form.addRow("Inputs", self.source)
        form.addRow("Maker", self.maker)
        form.addRow("Parameters", self.params_area)
        form.addRow("Specs", self.args)
        self._layout = layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.hint)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.trace_button)
        layout.addStretch(1)  # takes the spare height, unless the tree shows (`show_result`)
        self.function.currentIndexChanged.connect(self._function_changed)
        self.source.currentIndexChanged.connect(self._source_changed)
        self.args.textChanged.connect(self._validate)
        self.args.returnPressed.connect(self.request_trace)
        self.maker.textChanged.connect(self._maker_edited)
        self.maker.returnPressed.connect(self.request_trace)
        self.trace_button.clicked.connect(self.request_trace)

    def _show_params(self, text: str) -> None:
        self.params.setText(text)
        self.params_area.updateGeometry()  # its least height follows its lines: the form asks again

    def set_module(self, module: ModuleInfo, select: str | None = None, args: str | None = None, inputs: str | None = None) -> None:
        """Show the file's functions; keep what the user typed and chose per function across reloads of
        one file. `args` (specs) or `inputs` (a maker, "@file" for the file's) are `select`'s inputs."""
        if self._module is not None and self._module.path != module.path:
            for memory in (self._edited, self._modes, self._makers):
                memory.clear()  # another file's `forward` is not this one's
        self._module = module
        self.function.blockSignals(True)
        self.function.clear()
        for fn in module.functions:
            self.function.addItem(fn.name, fn.name)
        self.function.blockSignals(False)
        if select and args is not None:
            self._edited[select], self._modes[select] = args, "specs"
        if select and inputs:
            self._modes[select] = "file" if inputs == FILE_INPUTS else "maker"
            if inputs != FILE_INPUTS:
                self._makers[select] = inputs
        index = self.function.findData(select) if select else 0
        self.function.setCurrentIndex(max(index, 0))
        self._function_changed()

    def choices(self) -> dict[str, list[str]]:
        """What the user chose per function: {name: [mode, maker elsewhere]} (the window keeps it per file)."""
        return {name: [mode, self._makers.get(name, "")] for name, mode in self._modes.items()}

    def set_choices(self, choices: dict[str, list[str]]) -> None:
        """Restore `choices` (read back from the settings) before `set_module`."""
        for name, (mode, maker) in choices.items():
            if mode in MODES:
                self._modes[name] = mode
                if maker:
                    self._makers[name] = maker

    def mode(self) -> str:
        return str(self.source.currentData() or "specs")

    def current_inputs(self) -> str:
        """The maker the next trace uses ("" for specs)."""
        mode = self.mode()
        return FILE_INPUTS if mode == "file" else self.maker.text().strip() if mode == "maker" else ""

    def show_result(self, result: TraceResult | None) -> None:
        """A maker's inputs, once traced, as a tree (specs are listed under Parameters instead)."""
        leaves = result.inputs if result is not None else ()
        self.tree.setVisible(bool(leaves))
        self._layout.setStretch(self._layout.count() - 1, 0 if leaves else 1)
        if leaves:
            self.tree.show_leaves(leaves)
        said = [w for w in (result.warnings if result is not None else ()) if "64-bit" in w]  # narrowed inputs
        if result is not None and result.input_source:
            said.insert(0, f"Inputs from {result.input_source}: array leaves traced, the rest static.")
        if said:
            self.hint.setText("\n".join(said))

    def current(self) -> FunctionInfo | None:
        name = self.function.currentData()
        return self._module.get(name) if (self._module and name) else None

    def current_args(self) -> str:
        return self.args.text()

    def set_args(self, text: str) -> None:
        """Replace the inputs (remembered for this function, like typing them)."""
        self.args.setText(text)

    def _function_changed(self) -> None:
        fn = self.current()
        self.tree.setVisible(False)
        self.source.blockSignals(True)
        self.source.clear()
        if fn is None:
            self.source.blockSignals(False)
            self._show_params("")
            self._described = None
            self.args.setText("")
            return
        in_file = fn.maker is not None or (self._module is not None and self._module.inputs_table and not self._module.makers)
        for mode, text in MODES.items():
            if mode == "file":
                if not in_file:
                    continue
                text = f"Maker in the file: {fn.maker}" if fn.maker else f"Maker in the file ({INPUTS_VAR})"
            self.source.addItem(text, mode)
        default = "file" if in_file else "specs"
        mode = self._modes.get(fn.name, default)
        self.source.setCurrentIndex(max(self.source.findData(mode), self.source.findData(default), 0))
        self.source.blockSignals(False)
        self.maker.blockSignals(True)
        self.maker.setText(self._makers.get(fn.name, ""))
        self.maker.blockSignals(False)
        self.args.setText(self._edited.get(fn.name, fn.example_args or ""))
        self._source_changed(remember=False)

    def _source_changed(self, _index: int = 0, remember: bool = True) -> None:
        fn, mode = self.current(), self.mode()
        if fn is not None and remember:
            self._modes[fn.name] = mode
            self.choice_changed.emit()
        self.form.setRowVisible(self.maker, mode == "maker")
        self.form.setRowVisible(self.args, mode == "specs")
        self.form.setRowVisible(self.params_area, mode == "specs")
        self.tree.setVisible(False)
        self._validate()

    def _maker_edited(self, text: str) -> None:
        fn = self.current()
        if fn is not None:
            self._makers[fn.name] = text.strip()
            self.choice_changed.emit()
        self._validate()

    @property
    def parsing(self) -> bool:
        """Whether a long text is being parsed on the parsing thread now."""
        return bool(self._pending)

    def parse(self, text: str) -> argspec.CallSpec | argspec.SpecError:
        """`argspec.parse_call(text)` or its error, remembered for the last text: opening a
        function, then tracing it, validated the same text three times (a 43 kB params pytree:
        80 ms each, on the GUI thread). A long text already being parsed on the thread is waited for."""
        if self._parsed is None or self._parsed[0] != text:
            pending = self._pending.get(text)
            got = pending.result() if pending is not None else None
            self._parsed = (text, got if got is not None else _parse(text))
        return self._parsed[1]

    def _parse_soon(self, text: str) -> argspec.CallSpec | argspec.SpecError | None:
        """`parse(text)` when known or quick; else None, and the text is parsed on a thread (its
        result comes back through `_checked`)."""
        if (self._parsed is not None and self._parsed[0] == text) or len(text) < ASYNC_CHARS:
            self._pending = {}  # a long text waiting to be parsed is not wanted now
            return self.parse(text)
        if text not in self._pending:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-inputs")
            future = self._pool.submit(self._parse_later, text)
            self._pending = {text: future}  # an older text's verdict no longer matters
            future.add_done_callback(lambda done: self._report(text, done))
        return None

    def _parse_later(self, text: str) -> argspec.CallSpec | argspec.SpecError | None:
        """On the parsing thread, `ASYNC_DELAY_S` after it was asked for: the parse of `text`, or None
        when another text replaced it meanwhile (typing in a long field parses the last text only)."""
        time.sleep(ASYNC_DELAY_S)
        return _parse(text, apart=True) if text in self._pending else None

    def _report(self, text: str, done: Future[argspec.CallSpec | argspec.SpecError | None]) -> None:
        """On the parsing thread: hand the verdict to the GUI thread (queued)."""
        call = done.result()
        if call is None:
            return
        try:
            self._checked.emit(text, call)
        except RuntimeError:  # the panel was deleted meanwhile
            pass

    def _on_checked(self, text: str, call: argspec.CallSpec | argspec.SpecError) -> None:
        self._pending.pop(text, None)
        if text == self.args.text():
            self._parsed = (text, call)
            self._show(call)

    def _validate(self) -> bool:
        """Check the inputs; True unless they are known to be wrong (a long text still being
        parsed goes to the worker as it is: it parses the text too, and says what is wrong)."""
        fn = self.current()
        if self.mode() != "specs":
            return self._check_maker(fn)
        if fn is not None:
            self._edited[fn.name] = self.args.text()
        call = self._parse_soon(self.args.text())
        if call is not None:
            return self._show(call)
        self.error.setText("")
        self.trace_button.setEnabled(fn is not None)
        self._show_params("checking the inputs…")  # the list shown is of another text
        self._described = None
        return True

    def _show(self, call: argspec.CallSpec | argspec.SpecError) -> bool:
        """The verdict on the current inputs: the error, or the parameter list; False on an error."""
        fn = self.current()
        if isinstance(call, argspec.SpecError):
            where = f" (at column {call.offset + 1})" if call.offset is not None else ""
            self.error.setText(f"{call.message}{where}")
            self.trace_button.setEnabled(False)
            return False
        self.error.setText("")
        self.trace_button.setEnabled(fn is not None)
        if fn is not None and self._described != (fn, call):
            self._show_params(describe_params(fn, call))
            self._described = (fn, call)
        missing = [name for name in fn.required if name not in bind_call(fn, call)] if fn is not None else []
        if fn is not None and missing:
            given = bool(call.args or call.kwargs)
            self.hint.setText(f"Missing: {', '.join(missing)} (one spec per parameter)." if given else needs_inputs(fn))
            self.trace_button.setEnabled(False)
            return False
        self.hint.setText("")
        return True

    def _check_maker(self, fn: FunctionInfo | None) -> bool:
        """A maker source: the file's entry is there; a maker elsewhere must be named as a target."""
        self.error.setText("")
        ok = fn is not None
        if fn is not None and self.mode() == "maker":
            text = self.maker.text().strip()
            try:
                parse_target(text)
            except TargetError as exc:
                ok = False
                self.error.setText(f"Maker: {exc}" if text else "")
        self.hint.setText(
            "The maker runs in the worker when you trace: its inputs are listed here then."
            if ok
            else "Name the maker: a function that returns the inputs, as path/to/file.py::NAME or package.module:NAME."
        )
        self.trace_button.setEnabled(ok)
        return ok

    def ready(self) -> bool:
        """Inputs are given (the window traces a function on opening only then)."""
        return self._validate() and self.trace_button.isEnabled()

    def request_trace(self) -> None:
        fn = self.current()
        if fn is not None and self._validate():
            args = self.args.text() if self.mode() == "specs" else ""
            self.trace_requested.emit(fn.name, args, self.current_inputs())


def _parse(text: str, apart: bool = False) -> argspec.CallSpec | argspec.SpecError:
    """The parse of `text` or its error; `apart`: in a child process (`parse_apart`: a long
    text's `ast.parse` held the GIL, and the GUI thread, 30-230 ms at mlp-50k)."""
    try:
        return parse_call_apart(text) if apart else argspec.parse_call(text)
    except argspec.SpecError as exc:
        return exc


def needs_inputs(fn: FunctionInfo) -> str:
    """What to do for a function nobody gave inputs for, in the window's words."""
    call = f"{fn.name}({', '.join(p.name for p in fn.params)})"
    return (
        f"{call} needs example inputs: type their specs in the Specs field (e.g. f32[8,128] for an array, "
        f"3 for a static value), pick a maker under Inputs, or add a maker to the file: "
        f"{INPUTS_VAR} = {{{fn.name!r}: make_inputs}}, a function that returns the arguments."
    )


def describe_params(fn: FunctionInfo, call: argspec.CallSpec) -> str:
    """One line per parameter: traced (with its spec) or static (with its value), or its default."""
    given = bind_call(fn, call)
    lines = []
    for param in fn.params:
        spec = given.get(param.name)
        if spec is None:
            state = f"default {param.default}" if param.default is not None else "missing"
        elif argspec.is_static(spec):
            state = f"static {argspec.format_spec(spec)}"
        else:
            state = f"traced {argspec.format_spec(spec)}"
        if len(state) > PARAM_CHARS:  # a params pytree written out: its start says what it is
            state = state[: PARAM_CHARS - 1] + "…"
        lines.append(f"{param.name}: {state}")
    return "\n".join(lines) or "(no parameters)"
