"""The Run pane on saved results of the real CLI (tests/fixtures/run_*.json), headless; no worker."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from jaxscope.analysis.runs.verdicts import fmt_float, fmt_seconds
from jaxscope.qt.panes.run_panel import COLUMNS, STATE_COLOURS, RunPanel
from jaxscope.schema.run import DeviceInfo, InputLeaf, NanOrigin, RunResult

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def load(name: str) -> RunResult:
    """exact: pytree_out (3 leaves, bitwise equal); fma: x*y+z (FMA, allclose); nan: log_neg (log of negatives)."""
    return RunResult.from_json((FIXTURES / f"run_{name}.json").read_text(encoding="utf-8"))


@pytest.fixture
def panel(qtbot):
    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(760, 620)
    return p


def row(p: RunPanel, r: int) -> list[str]:
    return [p.leaves.item(r, c).text() for c in range(p.leaves.columnCount())]


def test_exact_result_rows_and_green_verdict(panel):
    result = load("exact")
    panel.set_result(result)
    assert panel.verdict_state == "ok"
    assert panel.verdict.text() == "OK: jit and eager agree exactly on all 3 output arrays"
    assert STATE_COLOURS["ok"] in panel.verdict.styleSheet()
    assert [panel.leaves.horizontalHeaderItem(c).text() for c in range(len(COLUMNS))] == COLUMNS
    assert panel.leaves.rowCount() == 3
    assert row(panel, 0) == ["out['h']", "[2, 4]", "float32", "0", "0", "0", "0/8", "-", "-", "yes", "-", ""]
    assert row(panel, 1)[:2] == ["out['stats'][0]", "[]"]
    tip = panel.leaves.item(0, 3).toolTip()
    h = result.leaves[0]
    assert f"jit:   [{', '.join(h.jit_preview)}]" in tip and f"eager: [{', '.join(h.eager_preview)}]" in tip
    assert f"rtol {fmt_float(h.rtol)}, atol {fmt_float(h.atol)}" in tip
    assert panel.nan_button.isHidden() and panel.nan_label.isHidden() and panel.explanation.isHidden()
    assert "pytree_out" in panel.context.text() and "cpu:0" in panel.context.text()
    # the inputs: collapsed until asked for
    assert panel.inputs.isHidden() and panel.inputs_toggle.text().startswith("Inputs (3, seed 0)")
    panel.inputs_toggle.setChecked(True)
    assert not panel.inputs.isHidden()
    assert [panel.inputs.item(0, c).text() for c in range(3)] == ["x", "f32[2,3]", "[" + ", ".join(result.inputs[0].preview) + "]"]
    assert panel.inputs.item(2, 2).text().endswith(", …]")  # params['w'] has 12 values, 6 shown


def test_fma_result_is_close_amber_with_explanation_and_times(panel):
    result = load("fma")
    panel.set_result(result)
    assert panel.verdict_state == "close"
    assert STATE_COLOURS["close"] in panel.verdict.styleSheet()
    leaf = result.leaves[0]
    assert leaf.n_diff > 0 and leaf.allclose
    cells = row(panel, 0)
    assert cells[3:7] == [fmt_float(leaf.max_abs), fmt_float(leaf.max_rel), str(leaf.max_ulp), f"{leaf.n_diff}/4096"]
    assert cells[9] == "yes"
    assert not panel.explanation.isHidden() and "FMA" in panel.explanation.text()
    times = panel.times.text()
    for seconds in (
        result.trace_s,
        result.lower_s,
        result.compile_s,
        result.first_call_s,
        result.steady_s,
        result.eager_s,
        result.eager_first_s,
    ):
        assert fmt_seconds(seconds) in times
    assert "median of 3" in times and f"{result.eager_s / result.steady_s:.1f}×" in times


def test_nan_result_is_red_and_show_in_graph_emits_the_node(qtbot, panel):
    result = load("nan")
    panel.set_result(result)
    assert panel.verdict_state == "fail"
    assert panel.verdict.text().startswith("FAIL: ") and "NaN in outputs" in panel.verdict.text()
    assert STATE_COLOURS["fail"] in panel.verdict.styleSheet()
    assert row(panel, 0)[7:] == ["8 NaN", "8 NaN", "yes", "-", ""]
    assert panel.leaves.item(0, 7).foreground().color().name() == STATE_COLOURS["fail"]
    text = panel.nan_label.text()
    assert "e1 log at tests/worker/corpus/run_cases.py:26" in text and "(8 NaN in f32[16])" in text
    assert not panel.nan_button.isHidden()
    with qtbot.waitSignal(panel.node_requested, timeout=1000) as blocker:
        qtbot.mouseClick(panel.nan_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["e1"]


def test_nan_searched_but_none_found_says_so_without_a_button(panel):
    panel.set_result(dataclasses.replace(load("exact"), nan_searched=True))
    assert not panel.nan_label.isHidden() and "no equation produced NaN/Inf" in panel.nan_label.text()
    assert panel.nan_button.isHidden()


def test_a_differing_leaf_fails_red(panel):
    result = load("fma")
    leaf = dataclasses.replace(result.leaves[0], allclose=False, rtol=0.0, atol=0.0)
    panel.set_result(dataclasses.replace(result, leaves=(leaf,), ok=False, verdict="jit and eager DIFFER"))
    assert panel.verdict_state == "fail" and row(panel, 0)[9] == "NO"
    assert panel.leaves.item(0, 9).foreground().color().name() == STATE_COLOURS["fail"]


CPU0 = DeviceInfo(name="cpu:0", platform="cpu", id=0, kind="cpu", default=True)
CPU1 = DeviceInfo(name="cpu:1", platform="cpu", id=1, kind="cpu")
GPU0 = DeviceInfo(name="gpu:0", platform="gpu", id=0, kind="NVIDIA H200", bytes_limit=139 * 2**30)


def test_device_combo_lists_devices_and_selects_current_or_default(panel):
    panel.set_devices([CPU0, CPU1, GPU0])
    texts = [panel.device.itemText(i) for i in range(panel.device.count())]
    assert texts == [
        "JAX's default (cpu:0; a mesh program: its devices)",
        "cpu:0 — cpu (default)",
        "cpu:1 — cpu",
        "gpu:0 — NVIDIA H200, 139.0 GiB",
    ]
    assert panel.device.currentData() == ""  # the inputs go where the program puts them
    panel.set_devices([CPU0, CPU1, GPU0], current="gpu:0")
    assert panel.device.currentData() == "gpu:0"
    panel.set_devices([CPU1, GPU0], current="tpu:3")  # gone: JAX's default again
    assert panel.device.currentData() == ""
    panel.set_devices([])
    assert panel.options()["device"] == ""  # JAX's default device
    assert panel.device.placeholderText() == "starting the worker…"


def test_device_setup_asks_for_a_restart_only_when_the_user_changes_it(qtbot, panel):
    with qtbot.assertNotEmitted(panel.setup_requested):
        panel.set_setup(4, "cpu")
    assert (panel.cpu_devices.value(), panel.backends.currentData()) == (4, "cpu")
    with qtbot.waitSignal(panel.setup_requested) as blocker:
        panel.cpu_devices.setValue(2)
    assert blocker.args == [2, "cpu"]
    with qtbot.waitSignal(panel.setup_requested) as blocker:
        panel.backends.setCurrentIndex(panel.backends.findData(""))
    assert blocker.args == [2, ""]


def test_run_requested_payload(qtbot, panel):
    panel.set_devices([CPU0, GPU0], current="gpu:0")
    assert panel.rtol.placeholderText() == panel.atol.placeholderText() == "default by dtype"
    with qtbot.waitSignal(panel.run_requested, timeout=1000) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [
        {"device": "gpu:0", "seed": 0, "repeats": 10, "rtol": None, "atol": None, "find_nan": False, "per_equation": False}
        | {"reference": "", "precision": "", "evidence": True}
    ]
    panel.seed.setValue(7)
    panel.repeats.setValue(3)
    panel.rtol.setText("1e-3")
    panel.atol.setText(" 0 ")
    panel.find_nan.setChecked(True)
    panel.per_equation.setChecked(True)
    with qtbot.waitSignal(panel.run_requested, timeout=1000) as blocker:
        qtbot.keyClick(panel.rtol, Qt.Key.Key_Return)
    assert blocker.args == [
        {"device": "gpu:0", "seed": 7, "repeats": 3, "rtol": 1e-3, "atol": 0.0, "find_nan": True, "per_equation": True}
        | {"reference": "", "precision": "", "evidence": True}
    ]
    assert [panel.reference.itemData(i) for i in range(panel.reference.count())] == ["", "f64", "cpu:0", "gpu:0"]
    panel.reference.setCurrentIndex(panel.reference.findData("f64"))
    panel.precision.setCurrentIndex(panel.precision.findData("highest"))
    panel.evidence.setChecked(False)
    options = panel.options()
    assert options is not None and (options["reference"], options["precision"], options["evidence"]) == ("f64", "highest", False)
    panel.set_devices([CPU0, GPU0], current="gpu:0")  # the worker restarted: the reference chosen stays
    assert panel.reference.currentData() == "f64"


@pytest.mark.parametrize("bad", ["abc", "-1", "inf", "nan", "1e400"])
def test_bad_tolerance_shows_an_error_and_does_not_emit(qtbot, panel, bad):
    panel.atol.setText(bad)
    assert not panel.error.isHidden() and "atol must be a number ≥ 0" in panel.error.text()
    with qtbot.assertNotEmitted(panel.run_requested):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    panel.atol.setText("")
    assert panel.error.isHidden()
    with qtbot.waitSignal(panel.run_requested, timeout=1000):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)


def test_running_disables_run_and_a_result_or_error_ends_it(qtbot, panel):
    panel.set_running(True)
    assert not panel.run_button.isEnabled() and panel.status.text().startswith("running…")
    with qtbot.assertNotEmitted(panel.run_requested):
        qtbot.keyClick(panel.rtol, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.status.text().endswith(" s"), timeout=2000)  # elapsed time ticks
    panel.set_result(load("exact"))
    assert panel.run_button.isEnabled() and panel.status.text() == ""
    panel.set_running(True)
    panel.set_error("device out of memory: RESOURCE_EXHAUSTED")
    assert panel.run_button.isEnabled()
    assert panel.verdict_state == "fail" and panel.verdict.text() == "device out of memory: RESOURCE_EXHAUSTED"
    assert panel.leaves.isHidden() and panel.times.isHidden() and panel.inputs_toggle.isHidden()
    panel.clear()
    assert panel.verdict_state == "" and panel.verdict.isHidden()


def test_hostile_strings_show_literally(panel):
    result = load("nan")
    hostile = "<b>x</b>"
    leaf = dataclasses.replace(result.leaves[0], path=f"['{hostile}']", note=hostile)
    origin = dataclasses.replace(result.first_nan, path="e1", detail=hostile)
    assert isinstance(origin, NanOrigin)
    panel.set_result(dataclasses.replace(
        result, leaves=(leaf,), first_nan=origin, verdict=hostile, explanation=hostile, warnings=(hostile,),
        inputs=(InputLeaf(path=hostile, aval="static", preview=("'<i>y</i>'",)),), input_source=hostile,
    ))  # fmt: skip
    assert panel.leaves.item(0, 0).text() == f"out['{hostile}']"
    tip = panel.leaves.item(0, 0).toolTip()
    assert hostile not in tip and "&lt;b&gt;x&lt;/b&gt;" in tip
    assert [panel.inputs.item(0, c).text() for c in range(3)] == [hostile, "static", "'<i>y</i>'"]
    assert "<i>" not in panel.inputs.item(0, 2).toolTip()
    labels = [panel.verdict, panel.context, panel.nan_label, panel.explanation, panel.warnings]
    for label in labels:
        assert label.textFormat() == Qt.TextFormat.PlainText
        assert hostile in label.text()
    assert panel.verdict.text() == f"FAIL: {hostile}"
    assert panel.inputs_toggle.text() == f"Inputs (1, {hostile})"  # a button's text is never rich


def test_many_outputs_scroll_inside_the_table_and_a_narrow_pane_still_wraps(qtbot, panel):
    result = load("exact")
    leaves = tuple(dataclasses.replace(result.leaves[0], path=f"['layer_{i}']['kernel']") for i in range(40))
    panel.resize(420, 600)
    panel.show()
    panel.set_result(dataclasses.replace(result, leaves=leaves))
    qtbot.waitUntil(lambda: panel.leaves.isVisible())
    assert panel.leaves.rowCount() == 40
    assert panel.leaves.height() < 14 * panel.leaves.rowHeight(0) + 2 * panel.leaves.horizontalHeader().height()
    assert panel.body.width() <= panel.width()  # the table scrolls sideways, not the pane: labels wrap to it
    assert panel.leaves.horizontalScrollBar().maximum() > 0
    panel.resize(1200, 600)
    qtbot.waitUntil(lambda: panel.leaves.horizontalScrollBar().maximum() == 0)


def test_clicking_a_compared_node_shows_its_jitted_and_eager_values(panel):
    from jaxscope.schema.graph import SourceLoc
    from jaxscope.schema.run import EqnDivergence

    same = EqnDivergence("e0", "exp", None, "f32[3]", 0.0, 0.0, 0, ("1", "2.71828", "7.38906"), ("1", "2.71828", "7.38906"))
    drift = EqnDivergence("e1", "log", SourceLoc("f.py", 21), "f32[3]", 1e-7, 2e-7, 0, ("0", "1", "2"), ("0", "1", "2.0000002"))
    panel.set_result(dataclasses.replace(load("fma"), divergence=(same, drift)))
    assert panel.values.text() == "Click a node to see its jitted and eager values."
    assert panel.show_values("e1")
    lines = panel.values.text().splitlines()
    assert lines[0].startswith("e1 log, f.py:21: f32[3], max abs 1e-07")
    assert lines[1].split() == ["jit", "0", "1", "2"] and lines[2].split() == ["eager", "0", "1", "2.0000002"]
    assert panel.show_values("e0") and "max abs 0," in panel.values.text()
    assert not panel.show_values("e9")  # not compared: the hint again
    panel.clear()
    assert not panel.show_values("e1") and panel.values.isHidden()


def test_causes_are_shown_above_the_table_and_the_options_fold_away(qtbot, panel):
    """The real CLI's results (tests/fixtures/run_noise.json: an Adam step's exactly-zero key-bias
    gradient; run_tracetime.json: a counter read at trace time) in a Run dock of a 1280x800 window."""
    panel.resize(760, 380)
    panel.show()
    assert not panel.form_box.isHidden() and panel.options_toggle.text() == "Options"
    noise = load("noise")
    panel.set_result(noise)
    assert panel.verdict_state == "close" and "explained as noise" in panel.verdict.text()
    heading, body, runs = panel.causes.texts()
    assert heading.startswith("Noise (explained): out[0]['bk']: rounding noise of a cancellation at") and "reduce_sum" in heading
    assert "digits cancel" in body and body.splitlines()[-1].startswith("Fix: ")
    assert runs.startswith("Evidence runs: ") and "float64" in runs
    bk = next(r for r in range(panel.leaves.rowCount()) if panel.leaves.item(r, 0).text() == "out[0]['bk']")
    assert row(panel, bk)[9:] == ["NO", row(panel, bk)[10], "noise"] and " / " in row(panel, bk)[10]
    # the options folded: the verdict, the causes and the table's first rows are in view without scrolling
    assert panel.form_box.isHidden() and panel.options_toggle.text().startswith("Options (")
    qtbot.waitUntil(lambda: panel.leaves.height() > 0)
    top = panel.leaves.mapTo(panel, panel.leaves.rect().topLeft()).y()
    assert top + panel.leaves.horizontalHeader().height() + panel.leaves.rowHeight(0) < panel.height()
    panel.options_toggle.setChecked(True)
    assert not panel.form_box.isHidden()

    panel.set_result(load("tracetime"))
    assert panel.verdict_state == "fail"
    heading, body, _ = panel.causes.texts()
    assert heading.startswith("Trace-time (fails the run): out: a value read at trace time at e0 mul (run_cases.py:")
    assert "a literal read at trace time changed" in body and STATE_COLOURS["fail"] in panel.causes.findChildren(QLabel)[0].styleSheet()
    assert row(panel, 0)[-1] == "trace-time"
