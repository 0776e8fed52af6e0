"""StableHLO and compiled HLO panes in the real window: linked highlighting, fusions, cancel."""

from __future__ import annotations

import pathlib
import time

from tests.conftest import line_in
from tests.qt.conftest import TIMEOUT, open_and_wait

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "worker" / "corpus" / "hlo_cases.py"
RUN_CASES = ROOT / "tests" / "worker" / "corpus" / "run_cases.py"


def open_traced(qtbot, w, target: str, args: str) -> None:
    """Open `target` with `args` and wait for its graph (not for the printed jaxpr that follows)."""
    w.doc.layout = None
    assert w.open_target(target, args)
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)


def line_of(marker: str) -> int:
    return line_in(CASES, f"# {marker}", ending=True)


def test_ir_panes_link_both_ways_and_show_fusions(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{CASES}::fusable")
    qtbot.waitUntil(lambda: "compiled" in w.ir_side.links, timeout=TIMEOUT)
    assert "flops" in w.ir.status.text()
    stable, compiled = w.ir.views["stablehlo"], w.ir.views["compiled"]
    assert "stablehlo.sine" in stable.toPlainText() and compiled.toPlainText().startswith("HloModule")
    # source line -> IR lines in both panes
    w.source.line_clicked.emit(line_of("fused-line"))
    assert stable.marked_lines() and compiled.marked_lines()
    sine = next(i for i, t in enumerate(stable.toPlainText().splitlines(), 1) if "stablehlo.sine" in t)
    assert sine in stable.marked_lines()
    # IR line -> node and source line
    w.ir.ir_line_clicked.emit("stablehlo", sine)
    (selected,) = w.graph.selected_paths()
    assert w.doc.graph.top.nodes[[n.id for n in w.doc.graph.top.nodes].index(selected)].label == "sin"
    assert w.source.marked_lines() == [line_of("fused-line")]
    # the one fusion groups the line's three equations
    (fusion,) = w.ir.fusion_list()
    assert w.ir.fusions.topLevelItem(0).text(2) == str(fusion.n_ops)
    w.ir.fusions.itemClicked.emit(w.ir.fusions.topLevelItem(0), 0)
    assert sorted(w.graph.selected_paths()) == ["e0", "e1", "e2"]
    # shared colours: the IR lines carry the source line's colour
    assert set(compiled.line_colours().values()) == set(w.source.line_colours().values())


def test_the_ir_is_parsed_and_its_fusions_found_off_the_gui_thread(qtbot, window, monkeypatch):
    """Linking the StableHLO and HLO lines, finding the fusions (50-70 ms of the GUI thread at 1k
    equations when it ran in the window's slot) and colouring the lines by source line happen on
    the IR thread, with the cyclic GC paused; the window shows what was found."""
    import gc
    import threading

    from jaxscope.ir.hlo_links import IrLinks
    from jaxscope.qt.app import ir_side as ir_mixin

    calls: list[tuple[str, bool, bool]] = []  # (name, on the GUI thread, collector on)
    gui = threading.current_thread()
    for name in ("stablehlo_links", "hlo_links", "fusions"):
        real = getattr(ir_mixin, name)

        def spy(*args, _real=real, _name=name):
            calls.append((_name, threading.current_thread() is gui, gc.isenabled()))
            return _real(*args)

        monkeypatch.setattr(ir_mixin, name, spy)
    from jaxscope.ir import hlo_links

    parsed: list[str] = []  # IR texts parsed in this process
    for name in ("stablehlo_ops", "hlo_ops"):
        real_ops = getattr(hlo_links, name)
        monkeypatch.setattr(hlo_links, name, lambda graph, text, _n=name, _r=real_ops: parsed.append(_n) or _r(graph, text))
    coloured: list[bool] = []  # on the GUI thread?
    real_colours = IrLinks.line_colours
    monkeypatch.setattr(
        IrLinks, "line_colours", lambda self, *a: coloured.append(threading.current_thread() is gui) or real_colours(self, *a)
    )
    open_and_wait(qtbot, window, f"{CASES}::fusable")
    qtbot.waitUntil(lambda: "compiled" in window.ir_side.links and bool(window.ir.fusion_list()), timeout=TIMEOUT)
    assert [name for name, _, _ in calls] == ["stablehlo_links", "hlo_links", "fusions"]
    assert [c for c in calls if c[1] or c[2]] == []
    assert len(window.ir.fusion_list()) == 1
    assert parsed == []  # the worker sent each text's op map (and the HLO's fusions) with it
    window.set_theme("dark")  # recoloured from what the IR thread made
    assert coloured == [False, False]
    assert window.ir.views["compiled"].line_colours()


def test_cancelling_a_long_compile_keeps_the_app_usable(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "deep.py"
    path.write_text(
        "import jax.numpy as jnp\n\n\ndef deep(x, w):\n    for _ in range(1100):\n        x = jnp.tanh(x @ w + 1.0)\n    return x\n\n\n"
        "JAXSCOPE_ARGS = {'deep': 'f32[8,16], f32[16,16]'}\n"
    )
    open_and_wait(qtbot, w, f"{path}::deep")
    qtbot.waitUntil(lambda: "stablehlo" in w.ir_side.links, timeout=TIMEOUT)
    assert not w.ir.compile_button.isHidden()  # too big to compile without asking
    w.ir_side.request_compile()
    qtbot.waitUntil(lambda: "compiling with XLA… (Cancel" in w.ir.status.text(), timeout=TIMEOUT)
    ticks = []
    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(10)
    w.ir.cancel_button.click()
    qtbot.waitUntil(lambda: "cancelled" in w.ir.status.text(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: len(ticks) >= 3, timeout=10_000)  # the event loop runs on
    timer.stop()
    assert w.doc.result is not None and w.doc.layout is not None and not w.doc.stale
    open_and_wait(qtbot, w, f"{CASES}::fusable")  # the next request works
    assert w.doc.graph.top.total_eqns == 3


def test_run_pane_compares_jit_and_eager_and_shows_the_first_nan(qtbot, window):
    w = window
    open_traced(qtbot, w, f"{RUN_CASES}::log_neg", "f32[16]")
    w.run_panel.seed.setValue(3)
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    assert w.run_panel.verdict_state == "fail" and "NaN" in w.run_panel.verdict.text()
    assert w.run_panel.device.count() >= 2 and "cpu:0" in w.run_panel.device.currentText()
    assert w.run_panel.leaves.rowCount() == 1
    w.run_panel.nan_button.click()
    (selected,) = w.graph.selected_paths()
    assert w.doc.graph.top.nodes[[n.id for n in w.doc.graph.top.nodes].index(selected)].label == "log"


def test_per_equation_divergence_colours_the_graph(qtbot, window):
    from jaxscope.analysis.runs.verdicts import diverging

    w = window
    open_traced(qtbot, w, f"{RUN_CASES}::log_exp", "f32[64]")
    w.run_panel.per_equation.setChecked(True)
    results = []
    w.controller.job_finished.connect(lambda op, r: results.append(r))
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: bool(results), timeout=TIMEOUT)
    (result,) = results
    assert [d.primitive for d in result.divergence] == ["exp", "log"]
    found = diverging(result)
    assert w.run_panel.divergence.rowCount() == len(found)
    if found:
        assert set(w.graph.line_colours()) == {d.path for d in found}
        w.run_panel.divergence.cellClicked.emit(0, 0)
        assert w.graph.selected_paths() == [found[0].path]
    w.selection.show_nodes(["e0"])  # any compared node, diverging or not: its values
    assert w.run_panel.values.text().startswith("e0 exp") and "eager" in w.run_panel.values.text()


def test_device_setup_restarts_the_worker_and_the_run_uses_the_chosen_device(qtbot, window):
    w = window
    qtbot.waitUntil(lambda: w.run_panel.device.count() == 2, timeout=TIMEOUT)  # listed before any run: default, cpu:0
    w.run_panel.cpu_devices.setValue(2)
    qtbot.waitUntil(lambda: w.run_panel.device.count() == 3, timeout=TIMEOUT)
    assert w.settings.value("run/cpuDevices", type=int) == 2
    open_traced(qtbot, w, f"{RUN_CASES}::add", "f32[4], f32[4]")
    w.run_panel.device.setCurrentIndex(w.run_panel.device.findData("cpu:1"))
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    assert w.run_panel.verdict_state == "ok" and "cpu:1" in w.run_panel.context.text()
    assert w.phase_label.text() == "add: jit vs eager OK on cpu:1"


def test_find_in_the_ir_text_of_the_shown_tab(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{CASES}::fusable")
    qtbot.waitUntil(lambda: "compiled" in w.ir_side.links, timeout=TIMEOUT)
    w.ir.setCurrentIndex(1)  # StableHLO
    assert w.ir_side.find_text("stablehlo.sine")
    assert "stablehlo.sine" in w.ir.views["stablehlo"].textCursor().block().text()
    w.ir.setCurrentIndex(2)  # compiled HLO: the same query, repeated with Ctrl+G
    assert not w.ir_side.find_text()
    assert w.ir_side.find_text("fusion") and w.ir_side.find_text() and w.ir_side.find_text(backward=True)


def test_a_run_right_after_the_trace_does_not_lose_the_ir(qtbot, window):
    w = window
    w.doc.layout = None
    seen: dict = {}

    def run_at_once(result) -> None:  # right after the window's own handler asked for the jaxpr
        seen["jaxpr_text"] = w.doc.result.jaxpr_text
        seen["ran"] = w.jobs.run_function()  # takes the worker from the jaxpr job (one job at a time)

    w.controller.trace_finished.connect(run_at_once)
    assert w.open_target(f"{RUN_CASES}::add", "f32[4], f32[4]")
    qtbot.waitUntil(lambda: "ran" in seen, timeout=TIMEOUT)
    w.controller.trace_finished.disconnect(run_at_once)
    assert not seen["jaxpr_text"] and seen["ran"]  # the graph comes first, the printed jaxpr after it
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    assert w.run_panel.verdict_state == "ok"  # the IR steps never preempt it
    qtbot.waitUntil(lambda: bool(w.doc.result.jaxpr_text) and "stablehlo" in w.ir_side.links, timeout=TIMEOUT)
    assert "add" in w.jaxpr.toPlainText()


def test_device_out_of_memory_in_the_run_pane_keeps_the_document(qtbot, window, tmp_path):
    w = window
    case = tmp_path / "oom.py"
    case.write_text("import jax.numpy as jnp\n\n\ndef big(x):\n    return jnp.zeros((2**40,), jnp.float32) + x\n")
    open_traced(qtbot, w, f"{case}::big", "f32[]")
    qtbot.waitUntil(lambda: bool(w.doc.result.jaxpr_text), timeout=TIMEOUT)  # the printed jaxpr joins the result
    good, layout = w.doc.result, w.doc.layout
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    text = w.run_panel.verdict.text()
    assert w.run_panel.verdict_state == "fail" and "memory" in text and "RESOURCE_EXHAUSTED" in text, text
    assert w.doc.result is good and w.doc.layout is layout and not w.doc.stale  # the trace is still the good result
    assert w.run_panel.run_button.isEnabled()  # and the next run can start
