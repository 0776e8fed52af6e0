"""View -> Show Partitioning in the real window, on the sharding tutorial compiled for 4 simulated
CPU devices (issue 35.2/35.3): the mesh's all-reduce and each argument's sharding on the boxes."""

from __future__ import annotations

from jaxscope.about import EXAMPLES_DIR
from tests.qt.conftest import TIMEOUT, open_and_wait


def test_show_partitioning_puts_the_collectives_xla_inserted_on_their_equations(qtbot, window):
    w = window
    w.controller.set_device_setup(4)  # a fresh worker with 4 CPU devices: the tutorial's mesh is 4 wide
    open_and_wait(qtbot, w, f"{EXAMPLES_DIR}/sharding.py::data_parallel")
    qtbot.waitUntil(lambda: "compiled" in w.ir_side.links, timeout=TIMEOUT)
    before, shown = w.doc.layout, w.doc.shown
    w.structure.partition_action.setChecked(True)
    qtbot.waitUntil(lambda: w.doc.layout is not before, timeout=TIMEOUT)
    assert w.doc.shown is shown  # the graph drawn is not changed: the notes are drawn on it
    on_box = dict(w.doc.layout.annotations)
    notes = {n.label: on_box.get(n.id, "") for n in w.doc.shown.top.nodes}
    assert notes["reduce_sum"].startswith("all-reduce") and "=4" in notes["reduce_sum"], notes  # XLA names the axes axis_0, ...
    assert any(note.startswith("tiled 4×1") for note in notes.values()), notes  # x, split over the batch
    assert any("per device" in note for note in notes.values())
    # drawn as the last line of the reduction's box, made room for
    box = next(i for i, rec in enumerate(w.graph.model.nodes) if rec.node is not None and rec.node.label == "reduce_sum")
    assert w.graph.model.nodes[box].text_lines()[-1].startswith("⇄ all-reduce")
    before = w.doc.layout
    w.structure.partition_action.setChecked(False)
    qtbot.waitUntil(lambda: w.doc.layout is not before, timeout=TIMEOUT)
    assert w.doc.layout.annotations == () and w.doc.shown is shown
    # and the Run pane runs it on the mesh (its inputs follow the program's shardings)
    qtbot.waitUntil(lambda: w.run_panel.device.count() == 5, timeout=TIMEOUT)  # JAX's default + 4 CPU devices
    assert w.run_panel.device.currentData() == ""
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    assert w.run_panel.verdict_state == "ok", w.run_panel.verdict.text()
