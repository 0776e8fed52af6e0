"""Faults through the real window: whatever the user's code does, the app keeps running, keeps the
user's work and last good result, says what happened, and the next request works.

The realistic flow: a file traces fine (graph shown, with an input spec the user typed), then a
save turns it into the faulty version (live reload re-traces), then a save fixes it again.
"""

from __future__ import annotations

import os
import pathlib
import struct
import sys
import time

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractButton, QLabel, QTreeWidget, QWidget

from jaxscope.runtime.worker_client import CRASH_LIMIT
from tests.conftest import line_in
from tests.qt.conftest import TIMEOUT, open_and_wait

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "faults" / "cases"
ARGS = "f32[5]"  # typed by the user (the file's own example is f32[3]): must survive every fault
GOOD = "import jax.numpy as jnp\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n\n\ndef f(x):\n    return jnp.sin(x) * 2.0\n"
FIXED = GOOD.replace("jnp.sin(x) * 2.0", "jnp.cos(x) + 3.0")
PRINTS_10MB = "import jax.numpy as jnp\n\n\ndef f(x):\n    for _ in range(100_000):\n        print('y' * 99)\n    return jnp.tan(x)\n"


MAX_FREEZE_S = 5.0  # generous: a healthy loop ticks every 10-100 ms even on a loaded 2-core machine


class Ticker:
    """Counts the ticks of a 10 ms timer on the GUI thread: a blocked event loop stops counting."""

    def __init__(self) -> None:
        self.count = 0
        self.started = self.last = time.monotonic()
        self.longest_gap = 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.monotonic()
        self.count += 1
        self.longest_gap = max(self.longest_gap, now - self.last)
        self.last = now

    def check(self) -> None:
        """At least one tick per second of elapsed time, and no freeze of MAX_FREEZE_S (an average
        alone hides a long freeze: 10 MB of prints once stopped the loop for 6.5 s)."""
        self.timer.stop()
        elapsed = time.monotonic() - self.started
        self.longest_gap = max(self.longest_gap, time.monotonic() - self.last)
        said = f"the GUI loop ticked {self.count} times in {elapsed:.1f} s, longest gap {self.longest_gap:.2f} s"
        assert self.count >= max(1, int(elapsed)), said
        assert self.longest_gap < MAX_FREEZE_S, said


def eqn_labels(w) -> list[str]:
    return [n.label for n in w.doc.graph.top.nodes if n.kind == "eqn"]


def line_of(text: str, fragment: str) -> int:
    return line_in(text, fragment)


def save(path: pathlib.Path, text: str) -> None:
    """Write like an editor; the mtime moves on even on a coarse-clock filesystem."""
    previous = path.stat().st_mtime if path.exists() else 0.0
    path.write_text(text)
    if path.stat().st_mtime <= previous:
        os.utime(path, (previous + 1, previous + 1))


def wait_idle_with_ir(qtbot, w) -> None:
    """The trace, its layout and the StableHLO lowering that follows it have all come back."""
    qtbot.waitUntil(lambda: w.doc.layout is not None and bool(w.ir.views["stablehlo"].toPlainText()), timeout=TIMEOUT)


@pytest.fixture
def traced(qtbot, window, tmp_path):
    """A user file traced fine with a hand-typed spec: the state every fault must leave intact."""
    w = window
    w.auto_compile.setChecked(False)  # lowering only: fewer worker jobs on a 2-core machine
    path = tmp_path / "model.py"
    save(path, GOOD)
    assert w.open_target(f"{path}::f", ARGS)
    wait_idle_with_ir(qtbot, w)
    assert eqn_labels(w) == ["sin", "mul"] and w.graph.node_count > 0
    return w, path


def assert_kept(w, path: pathlib.Path, good, layout) -> None:
    """The document, the user's spec and the last good graph survived (marked stale)."""
    assert w.doc.path == str(path) and w.doc.function == "f" and w.doc.args == ARGS
    assert w.inputs.current_args() == ARGS and w.inputs.function.currentData() == "f"
    assert w.doc.result is good and w.doc.layout is layout and w.graph.node_count > 0
    assert w.doc.stale and w.stale_banner.isVisibleTo(w)
    assert w.stack.currentIndex() == 1  # still the workspace, not the welcome page


def assert_next_request_works(qtbot, w, path: pathlib.Path, good) -> None:
    save(path, FIXED)
    qtbot.waitUntil(lambda: w.doc.result is not good and not w.doc.stale, timeout=TIMEOUT)
    qtbot.waitUntil(
        lambda: w.doc.layout is not None and w.doc.layout.nodes and w.doc.graph is not None and eqn_labels(w) == ["cos", "add"],
        timeout=TIMEOUT,
    )
    assert w.doc.result.request.args == ARGS
    assert w.problem.text() == "No problems." and not w.stale_banner.isVisibleTo(w)
    assert not w.problems.restart.isVisibleTo(w) and not w.problems.output.isVisibleTo(w)


# case file, what the Problems pane must say, the user line it must name (a fragment of it) or None
FAULTS = [
    ("syntax_error.py", ["syntax error", "expected ':'"], "def f(x)"),
    ("nul_bytes.py", ["syntax error", "not a Python source file: binary data (a NUL byte on line 2)"], None),
    (
        "import_error.py",
        ["import error during load", "No module named 'a_module_that", sys.executable],
        "import a_module",
    ),  # the worker's interpreter
    ("raises_in_call.py", ["user-code error", "ValueError: user bug: bad value"], 'raise ValueError("user bug'),
    ("tracer_bool.py", ["tracer error", "TracerBoolConversionError", "lax.cond"], "if x.sum() > 0:"),
    ("sys_exit.py", ["exit error", "user code called sys.exit(3)"], None),
    ("os_exit.py", ["crash error", "worker exited with code 7 during the trace phase"], None),
    ("segfault.py", ["crash error", "SIGSEGV"], None),
    ("recursion.py", ["user-code error", "RecursionError"], "return f(x) + 1"),
]


@pytest.mark.parametrize(("case", "says", "line_text"), FAULTS, ids=[c[0].removesuffix(".py") for c in FAULTS])
def test_fault_on_save_keeps_the_last_good_result(qtbot, traced, case, says, line_text):
    w, path = traced
    good, layout = w.doc.result, w.doc.layout
    faulty = (CASES / case).read_text()
    ticker = Ticker()
    save(path, faulty)
    qtbot.waitUntil(lambda: w.doc.stale and says[0] in w.problem.text(), timeout=TIMEOUT)
    ticker.check()
    text = w.problem.text()
    assert all(s in text for s in says), text
    if line_text is not None:
        line = line_of(faulty, line_text)
        assert f"{path}:{line}" in text, text
        assert w.problem_goto.isVisibleTo(w)
        assert w.source.flow_marks()[line].kind == "error"  # the line is marked in the source pane
    if case == "segfault.py":  # the worker died: faulthandler's report on its stderr is the clue
        assert w.problems.output.isVisibleTo(w) and "Segmentation fault" in w.problems.output.toPlainText()
        qtbot.waitUntil(lambda: "Segmentation fault" in w.log.toPlainText(), timeout=TIMEOUT)
    elif case == "os_exit.py":  # os._exit leaves no trace: the box says so rather than vanish
        assert w.problems.output.toPlainText() == "(the worker wrote nothing to stderr)"
    else:  # not a crash: no output box
        assert not w.problems.output.isVisibleTo(w)
    assert not w.problems.restart.isVisibleTo(w)  # one crash is not a crash loop: the client restarts by itself
    assert w.docks["problems"].isVisibleTo(w)
    assert_kept(w, path, good, layout)
    assert_next_request_works(qtbot, w, path, good)


@pytest.mark.parametrize(
    ("case", "phase", "how"),
    [
        ("infinite_loop.py", "trace", "timeout"),
        ("loop_at_import.py", "load", "timeout"),
        ("infinite_loop.py", "trace", "cancel"),
    ],
)
def test_hang_times_out_or_is_cancelled(qtbot, traced, case, phase, how):
    w, path = traced
    good, layout = w.doc.result, w.doc.layout
    w.controller.worker.timeouts[phase] = 3 if how == "timeout" else 600
    faulty = (CASES / case).read_text()
    stuck = line_of(faulty, "while True")
    ticker = Ticker()
    save(path, faulty)
    if how == "cancel":
        qtbot.waitUntil(lambda: w.status.phase == phase and w.cancel_button.isVisible(), timeout=TIMEOUT)
        qtbot.mouseClick(w.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.doc.stale, timeout=10_000)
        assert f"cancelled error during {phase}" in w.problem.text()
    else:
        qtbot.waitUntil(lambda: w.doc.stale, timeout=TIMEOUT)
        text = w.problem.text()
        assert f"timeout error during {phase}" in text and f"the {phase} phase ran past its 3 s limit" in text, text
        assert any(f"(it was running {path}:{n})" in text for n in (stuck, stuck + 1)), text  # where it was stuck
    ticker.check()
    assert not w.cancel_button.isVisible()
    assert_kept(w, path, good, layout)
    assert_next_request_works(qtbot, w, path, good)


def test_ten_megabytes_of_prints(qtbot, traced):
    w, path = traced
    good = w.doc.result
    ticker = Ticker()
    save(path, PRINTS_10MB)
    qtbot.waitUntil(lambda: w.doc.result is not good and w.doc.layout is not None and eqn_labels(w) == ["tan"], timeout=TIMEOUT)
    ticker.check()
    assert not w.doc.stale and w.problem.text() == "No problems."
    assert [d.kind for d in w.diagnostics.diagnostics()] == ["trace-print"]
    qtbot.waitUntil(lambda: "y" * 99 in w.log.toPlainText()[-10_000:], timeout=TIMEOUT)  # drained to the Log pane ...
    assert w.log.document().blockCount() <= w.log.maximumBlockCount()  # ... and capped there
    assert w.inputs.current_args() == ARGS
    assert_next_request_works(qtbot, w, path, w.doc.result)


def test_crash_loop_offers_a_restart(qtbot, window, tmp_path):
    """After CRASH_LIMIT crashes in a row the client stops restarting the worker: the window shows
    the last stderr and a Restart Worker button, which restarts it and traces again."""
    w = window
    w.auto_compile.setChecked(False)
    crasher = tmp_path / "segfault.py"
    save(crasher, (CASES / "segfault.py").read_text())
    failures: list = []
    w.controller.trace_failed.connect(failures.append)
    ticker = Ticker()
    for attempt in range(CRASH_LIMIT):
        if attempt == 0:
            assert w.open_target(f"{crasher}::f", "f32[3]")
        else:
            w.inputs.request_trace()
        qtbot.waitUntil(lambda n=attempt + 1: len(failures) == n, timeout=TIMEOUT)
        assert "SIGSEGV" in w.problem.text()
        assert not w.problems.restart.isVisibleTo(w)  # the client still restarts the worker by itself
    ok = CASES / "ok.py"
    assert w.open_target(f"{ok}::f", "f32[3]")
    qtbot.waitUntil(lambda: len(failures) == CRASH_LIMIT + 1, timeout=TIMEOUT)
    ticker.check()
    assert f"crashed {CRASH_LIMIT} times" in w.problem.text() and "not restarting" in w.problem.text()
    assert w.problems.restart.isVisibleTo(w)
    assert "Segmentation fault" in w.problems.output.toPlainText()  # the last crash's stderr
    restart = next(a for a in w.actions() if a.objectName() == "restartWorkerAction")
    assert restart.isEnabled()
    w.doc.layout = None
    qtbot.mouseClick(w.problems.restart, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    assert eqn_labels(w) == ["sin", "mul"] and w.doc.path == str(ok)
    assert not w.problems.restart.isVisibleTo(w) and w.problem.text() == "No problems."


def test_xla_compile_error_stays_in_the_ir_pane(qtbot, window):
    """Traces and lowers fine, XLA refuses to compile: the graph and StableHLO are the good result."""
    w = window
    w.auto_compile.setChecked(True)
    ticker = Ticker()
    assert w.open_target(f"{CASES / 'xla_compile_error.py'}::f", "f32[3]")
    qtbot.waitUntil(lambda: "compiled failed" in w.ir.status.text() and w.doc.layout is not None, timeout=TIMEOUT)
    ticker.check()
    status = w.ir.status.text()
    assert "error during compile" in status and "XLA could not compile the program" in status, status
    assert "No FFI handler registered for jaxscope_no_such_target" in status
    assert w.ir.status.textFormat() == Qt.TextFormat.PlainText and not w.ir.compile_button.isHidden()  # can retry
    assert w.doc.layout is not None and eqn_labels(w) == ["ffi_call"] and not w.doc.stale
    assert "jaxscope_no_such_target" in w.ir.views["stablehlo"].toPlainText()
    assert w.problem.text() == "No problems."


# ---------------------------------------------------------------------------- corrupt settings

GARBAGE_INI = r"""[General]
theme=1, 2, 3
recent=@Variant(\0\0\0\x7f\0\0\0\x18PySide::PyObjectWrapper\0\0\0\0\x01X)
trustedFiles=@Size(1 2)
geometry=not a byte array
state=@ByteArray(\x1\x2garbage)
autoCompile=@Rect(1 2 3 4)
zzz=@Variant(truncated
[run]
cpuDevices=-12
backends=<b>tpu</b>
"""


@pytest.mark.parametrize("variant", ["garbage", "wrong-types"])
def test_corrupt_settings_give_defaults(qtbot, tmp_path, variant):
    QCoreApplication.setOrganizationName("jaxscope-tests")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    ini = pathlib.Path(QSettings().fileName())
    ini.parent.mkdir(parents=True, exist_ok=True)
    if variant == "garbage":
        ini.write_text(GARBAGE_INI, encoding="utf-8")
    else:  # readable values, each of the wrong type or out of range
        s = QSettings()
        for key, value in {
            "theme": ["dark"],
            "recent": 42,
            "trustedFiles": {"a": 1},
            "geometry": 3.5,
            "state": "x",
            "autoCompile": "maybe",
            "run/cpuDevices": ["1", "2"],
            "run/backends": 7,
        }.items():
            s.setValue(key, value)
        s.sync()
        del s
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.confirm_run = lambda path: True
    qtbot.addWidget(w)
    w.show()
    assert w.theme == "light" and w.recent.items() == [] and w.auto_compile.isChecked()
    assert w.controller.device_setup == {"cpu_devices": 1, "platforms": ""}
    assert w.docks["problems"].isVisibleTo(w) and w.docks["inputs"].isVisibleTo(w)  # the default dock layout
    w.auto_compile.setChecked(False)
    w.doc.layout = None
    assert w.open_target(f"{CASES / 'ok.py'}::f", "f32[3]")
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    assert eqn_labels(w) == ["sin", "mul"]
    assert w.recent.items() == [f"{CASES / 'ok.py'}::f"]  # rewritten cleanly
    w.close()


# ---------------------------------------------------------------------------- hostile strings

LONG = "函" * 200  # (not "ℓ": Python NFKC-normalises identifiers, so `def f_ℓ` defines `f_l`)
HOSTILE_SRC = f'''"""<b>bold doc</b> <img src="x"> <a href="show:add">a link</a>"""
import jax
import jax.numpy as jnp

SCOPE = "<b>scope</b><img src=x>\\u202eevil\\x01\\x00 &amp; " + "S" * 300
JAXSCOPE_ARGS = {{"f_{LONG}": "{{'<b>k</b>\\\\u202e': f32[2], '\\\\x00nul': f32[2]}}, mode='<i>static</i>'"}}


def f_{LONG}(tree, mode, 参数_{LONG}=None):
    print("<b>printed at trace time</b><img src=x>")
    with jax.named_scope(SCOPE):
        out = {{k: jnp.sin(v) for k, v in tree.items()}}
    with jax.named_scope(mode):
        return out, jnp.cos(out[sorted(out)[0]])


def broken(x):
    raise ValueError("<b>bold</b><img src=x> \\u202eevil\\x01 " + "E" * 3000)
'''
MARKUP = ("<b>", "<img", "<i>")  # user markup that must never reach a rich-text widget unescaped


def rich_text_leaks(root: QWidget) -> list[str]:
    """Widgets that would render user markup: rich-text labels, button texts and tooltips with raw tags."""
    leaks = []
    for widget in [root, *root.findChildren(QWidget)]:
        texts = [("tooltip", widget.toolTip())]
        if isinstance(widget, QLabel) and widget.textFormat() != Qt.TextFormat.PlainText:
            texts.append(("label", widget.text()))
        if isinstance(widget, QAbstractButton):
            texts.append(("button", widget.text()))
        if isinstance(widget, QTreeWidget):
            for i in range(widget.topLevelItemCount()):
                item = widget.topLevelItem(i)
                texts += [("item tooltip", item.toolTip(c)) for c in range(widget.columnCount())]
        leaks += [
            f"{type(widget).__name__}#{widget.objectName()} {what}: {text[:80]!r}" for what, text in texts if any(m in text for m in MARKUP)
        ]
    return leaks


def test_hostile_strings_stay_literal(qtbot, window, tmp_path):
    w = window
    w.auto_compile.setChecked(False)
    path = tmp_path / "hostile.py"
    save(path, HOSTILE_SRC)
    w.doc.layout = None
    assert w.open_target(str(path))  # the first function, with the file's own (hostile) example inputs
    qtbot.waitUntil(lambda: w.doc.layout is not None or "error" in w.problem.text(), timeout=TIMEOUT)
    assert w.doc.layout is not None, w.problem.text()
    graph = w.doc.graph
    assert graph.function == f"f_{LONG}"
    # inputs panel: the long names and the spec are shown as written
    assert w.inputs.function.currentText() == f"f_{LONG}"
    assert w.inputs.params.textFormat() == Qt.TextFormat.PlainText and f"参数_{LONG}" in w.inputs.params.text()
    assert "<i>static</i>" in w.inputs.args.text()
    assert w.phase_label.textFormat() == Qt.TextFormat.PlainText and LONG in w.phase_label.text()
    # diagnostics pane: the trace-time print, its markup escaped in the (rich-text) tooltip
    diags = w.diagnostics.diagnostics()
    assert any("printed at trace time" in d.summary() for d in diags), diags
    # graph: the named scope reaches the tooltip as text; what Qt shows is escaped
    from jaxscope.qt.graph.tooltips import tooltip_html

    scoped = next(n for n in graph.top.nodes if n.kind == "eqn" and "<b>scope</b>" in n.name_stack)
    rect = w.graph.scene_node_rect(w.doc.to_shown([scoped.id])[0])  # inside its scope's group, drawn open
    assert rect is not None
    w.graph.centerOn(rect.center())
    tip = w.graph.tooltip_at(w.graph.mapFromScene(rect.center()))
    assert "<b>scope</b>" in tip and "<b>" not in tooltip_html(tip) and "&lt;b&gt;scope" in tooltip_html(tip)
    assert rich_text_leaks(w) == []
    # PNG export of that graph
    out = tmp_path / "hostile.png"
    assert w.graph_export.export(str(out)) == "png"
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 0 and height > 0 and not QImage(str(out)).isNull()
    # an error message full of markup, in the Problems pane
    qtbot.waitUntil(lambda: bool(w.doc.result.jaxpr_text), timeout=TIMEOUT)  # the printed jaxpr joins the result
    good = w.doc.result
    w.inputs.function.setCurrentIndex(w.inputs.function.findData("broken"))
    w.inputs.args.setText("f32[2]")
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.stale, timeout=TIMEOUT)
    assert w.problem.textFormat() == Qt.TextFormat.PlainText
    assert "ValueError: <b>bold</b><img src=x>" in w.problem.text()
    assert w.doc.result is good
    assert rich_text_leaks(w) == []


def test_saving_a_helper_module_retraces(qtbot, window, tmp_path):
    w = window
    w.auto_compile.setChecked(False)
    helper = tmp_path / "helper_ops.py"
    save(helper, "import jax.numpy as jnp\n\n\ndef act(x):\n    return jnp.sin(x)\n")
    main = tmp_path / "model.py"
    save(main, "import helper_ops\n\n\ndef f(x):\n    return helper_ops.act(x) * 2.0\n")
    assert w.open_target(f"{main}::f", ARGS)
    wait_idle_with_ir(qtbot, w)
    assert eqn_labels(w) == ["sin", "mul"] and str(helper) in w.files.files()
    first = w.doc.result
    save(helper, "import jax.numpy as jnp\n\n\ndef act(x):\n    return jnp.cos(x)\n")  # only the helper changes
    qtbot.waitUntil(lambda: w.doc.result is not first and w.doc.layout is not None and eqn_labels(w) == ["cos", "mul"], timeout=TIMEOUT)
    assert w.inputs.current_args() == ARGS and w.doc.path == str(main)


def test_a_window_closed_right_after_a_request_leaves_no_timer_behind(qtbot, tmp_path):
    """The busy state's delayed "show Cancel" timer must die with the window (CI once saw it fire
    on a deleted button during the next test)."""
    QCoreApplication.setOrganizationName("jaxscope-tests")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.status.set_busy(True, lambda: w.controller.worker.busy)  # what a trace request does first
    w.controller.close()
    w.deleteLater()
    qtbot.wait(700)  # past the 500 ms timer: it would raise on the deleted button


def test_a_file_deleted_and_created_again_is_traced_again(qtbot, window, tmp_path):
    """An editor that deletes and recreates on save (or a checkout): the graph shown is marked
    stale while the file is gone, and traced again when it is back."""
    w = window
    w.auto_compile.setChecked(False)
    main = tmp_path / "model.py"
    save(main, "import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sin(x)\n")
    assert w.open_target(f"{main}::f", ARGS)
    wait_idle_with_ir(qtbot, w)
    first = w.doc.result
    main.unlink()
    qtbot.waitUntil(lambda: w.doc.stale and w.stale_banner.isVisible(), timeout=TIMEOUT)
    assert "deleted or moved" in w.stale_banner.text() and "is gone" in w.problem.text()
    assert w.doc.result is first and eqn_labels(w) == ["sin"]
    save(main, "import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.cos(x)\n")
    qtbot.waitUntil(lambda: w.doc.result is not first and w.doc.layout is not None and eqn_labels(w) == ["cos"], timeout=TIMEOUT)
    assert not w.doc.stale and not w.stale_banner.isVisible()


def test_two_windows_merge_their_recent_and_trusted_files(qtbot, tmp_path):
    """Each window holds its own copy of the settings: the second to write must not drop what the
    first wrote (it did: the trusted and recent files of the first window to close were lost)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMenu

    from jaxscope.qt.app.chrome import prefs
    from jaxscope.qt.app.chrome.welcome import RecentTargets, WelcomePage

    ini = str(tmp_path / "shared.ini")
    first, second = QSettings(ini, QSettings.Format.IniFormat), QSettings(ini, QSettings.Format.IniFormat)
    second.value("recent")  # the second window has read the file before the first writes
    targets = [tmp_path / "a.py", tmp_path / "b.py"]
    for target in targets:
        target.write_text("")
    for settings, target in zip((first, second), targets):
        recent = RecentTargets(settings, QMenu(), WelcomePage(lambda: None, lambda: None, lambda t: None), lambda t: None)
        assert recent.remember(str(target))
        assert prefs.update_strings(settings, "trustedFiles", lambda items, t=target: [*items, str(t)])
    first.sync()  # the windows close, the first one first
    second.sync()
    fresh = QSettings(ini, QSettings.Format.IniFormat)
    assert prefs.read_strings(fresh, "recent") == [str(targets[1]), str(targets[0])]
    assert prefs.read_strings(fresh, "trustedFiles") == [str(targets[0]), str(targets[1])]


def test_settings_that_cannot_be_written_are_reported_once(qtbot, window):
    w = window
    path = w.settings.fileName()
    if os.path.exists(path):
        os.remove(path)
    os.makedirs(path)  # a folder where the ini file should be
    open_and_wait(qtbot, w, f"{ROOT / 'examples' / 'basics.py'}::predict")
    w.log.flush()
    assert w.log.toPlainText().count("the settings cannot be saved") == 1


DEEP = "import jax.numpy as jnp\n\n\ndef f(x):\n    return " + " + ".join(["x"] * 30_000) + "\n"  # no Python compiles it


def test_code_nested_too_deeply_is_the_users_fault(qtbot, traced):
    """A 30,000-term sum: RecursionError in the parser raised out of the file watcher (stderr only,
    the old graph not marked stale); now it is a syntax problem at its line, the last good graph kept."""
    w, path = traced
    good, layout = w.doc.result, w.doc.layout
    save(path, DEEP)
    qtbot.waitUntil(lambda: w.doc.stale and "nested too deeply" in w.problem.text(), timeout=TIMEOUT)
    assert f"{path}:5" in w.problem.text() and "jaxscope bug" not in w.problem.text()
    assert_kept(w, path, good, layout)
    assert_next_request_works(qtbot, w, path, good)


def test_a_big_file_is_read_apart_and_then_traced(qtbot, window, tmp_path):
    """Issue 37.10: a 50k-line file blocked the window 1.9 s on open, most of it `ast.parse` (which
    holds the GIL, so a thread does not help): a file over BIG_SOURCE is read in a child process,
    open_target returns at once, and the function is traced when the reading comes back."""
    from jaxscope.runtime.parse_process import BIG_SOURCE

    lines = ["import jax.numpy as jnp", "", "", "def f(x):", "    return jnp.sin(x) * 2.0", ""]
    for i in range(500):
        lines += [f"def g{i}(a, b=1):", *(f"    a = a + {j}  # step {j}" for j in range(98)), "    return a", ""]
    path = tmp_path / "big.py"
    save(path, "\n".join(lines) + "\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n")
    assert path.stat().st_size > BIG_SOURCE
    w = window
    assert w.open_target(f"{path}::f")
    assert w.inputs.current() is None and w.doc.path != str(path)  # not read yet: the GUI thread went on
    qtbot.waitUntil(lambda: w.doc.result is not None and eqn_labels(w) == ["sin", "mul"], timeout=TIMEOUT)
    assert w.inputs.current().name == "f" and w.doc.path == str(path)

    broken = tmp_path / "broken_big.py"
    save(broken, "\n".join(lines) + "\ndef h(:\n")
    assert w.open_target(f"{broken}::f")  # its syntax error comes back from the child too
    qtbot.waitUntil(lambda: "syntax error" in w.problem.text(), timeout=TIMEOUT)
