"""The Cost pane in the real window on the flax + optax train step (issue 34.4): the graph coloured
by a measure with its scale, the memory plot's peak selecting what is alive there, the costliest
equations selecting theirs."""

from __future__ import annotations

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
    first = panel.table.item(0, 0).text()
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
