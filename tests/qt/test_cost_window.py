"""The Cost pane in the real window on the flax + optax train step (issue 34.4): the graph coloured
by a measure with its scale, the memory plot's peak selecting what is alive there, the costliest
equations selecting theirs."""

from __future__ import annotations

import pathlib
import re

from PySide6.QtCore import Qt

from jaxscope.schema.graph import group_of, resolve
from tests.conftest import MODELS
from tests.qt.conftest import TIMEOUT, open_and_wait


def test_the_graph_is_coloured_by_flops_and_the_memory_peak_selects_what_is_alive(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{MODELS}::deep_step")
    panel, cost = w.cost_panel, w.structure.cost
    w.docks["cost"].raise_()
    panel.measure.setCurrentIndex(panel.measure.findData("flops"))
    qtbot.waitUntil(lambda: cost.figures is not None and bool(w.graph.view_state.fills), timeout=TIMEOUT)
    assert "FLOPs" in panel.scale.text() and "FLOPs" in panel.totals.text()
    # the module groups drawn collapsed are coloured by what they hold
    drawn = {w.graph.model.nodes[i].base for i in w.graph.view_state.fills}
    groups = {p for p in drawn if group_of(resolve(w.doc.shown, p)[1])}
    assert groups, drawn
    # the costliest equation: a dot_general, selected from the table
    assert panel.table.rowCount() >= 10 and panel.table.item(0, 1).text() == "dot_general"
    first = panel.table.item(0, 0).data(Qt.ItemDataRole.UserRole)
    assert "· forward" in panel.table.item(0, 0).text() or "· backward" in panel.table.item(0, 0).text()  # named by module and pass
    panel.table.cellClicked.emit(0, 0)
    qtbot.waitUntil(lambda: w.doc.to_real(w.graph.selected_paths()) == [first], timeout=TIMEOUT)
    # the memory peak: the equations whose values are alive there
    panel.peak_requested.emit()
    live = cost.figures[1][2]
    alive = {node_id for (node_id, _), _s in live.alive_at_peak if node_id in set(live.order)}
    qtbot.waitUntil(lambda: set(w.doc.to_real(w.graph.selected_paths())) >= alive, timeout=TIMEOUT)
    assert max(live.in_use) == live.peak and panel.plot.peak_at == live.peak_at
    # no measure: the families' colours again
    panel.measure.setCurrentIndex(0)
    assert not w.graph.view_state.fills and panel.scale.text() == ""


def test_the_graph_is_coloured_by_measured_time_from_a_profiled_compiled_run(qtbot, window):
    """Picking "measured time" compiles the program and runs it under the profiler (after its
    StableHLO), then colours the boxes by each equation's share of the measured seconds; the
    compiled tab shows that program; a new trace of another function asks again."""
    w = window
    open_and_wait(qtbot, w, f"{MODELS}::deep_step")
    panel, cost = w.cost_panel, w.structure.cost
    w.docks["cost"].raise_()
    panel.measure.setCurrentIndex(panel.measure.findData("time"))
    assert "profiled runs" in panel.measure.currentText()
    assert panel.scale.text().startswith("<small>measured time: compiling")  # said at once, not the old scale over grey
    qtbot.waitUntil(lambda: cost.profiled is not None and bool(w.graph.view_state.fills), timeout=4 * TIMEOUT)
    assert cost.profiled[0] is w.doc.result and cost.profiled[1].run_s > 0
    said = re.search(r"measured seconds per run.*, XLA ops busy ([\d.]+) % of [\d.]+ ms \((host|device)-bound\)", panel.scale.text())
    assert said and (said.group(2) == "host") == (float(said.group(1)) < 50), panel.scale.text()
    compiled = w.ir_side.results["compiled"]
    assert compiled.request.profile and compiled.op_times  # the compiled tab shows the program that was timed
    # back to FLOPs: no profile needed, and the times stay for this trace
    panel.measure.setCurrentIndex(panel.measure.findData("flops"))
    qtbot.waitUntil(lambda: "FLOPs" in panel.scale.text(), timeout=TIMEOUT)
    assert cost.profiled is not None
    # a re-trace with time picked: times again, for the new trace, once its own StableHLO is here
    panel.measure.setCurrentIndex(panel.measure.findData("time"))
    before = w.doc.result
    w.inputs.request_trace()
    qtbot.waitUntil(
        lambda: w.doc.result is not before and cost.profiled is not None and cost.profiled[0] is w.doc.result, timeout=4 * TIMEOUT
    )
    assert w.doc.result.jaxpr_text and "measured seconds per run" in panel.scale.text()


def test_a_trace_saved_on_a_tpu_is_coloured_by_the_tpus_measured_time(qtbot, window):
    """Issue 58: a trace saved with `save --time` on a TPU v5e opens here, without the chip, and its
    measured time is the device's own: the scale says the chip and how busy the step kept it."""
    w = window
    saved = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "vit_step.jaxscope"
    open_and_wait(qtbot, w, str(saved))
    panel, cost = w.cost_panel, w.structure.cost
    w.docks["cost"].raise_()
    panel.measure.setCurrentIndex(panel.measure.findData("time"))
    qtbot.waitUntil(lambda: cost.profiled is not None and bool(w.graph.view_state.fills), timeout=4 * TIMEOUT)
    assert re.search(r"on TPU v5 lite, device busy [\d.]+ % of [\d.]+ ms \(host-bound\)", panel.scale.text()), panel.scale.text()
