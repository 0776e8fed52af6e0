"""The real window with a real worker on an example: trace, link, collapse, search, export,
a failing trace that keeps the last good result, and re-trace on save."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import xml.etree.ElementTree as ET

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette

from jaxscope.render.styles import get_theme
from jaxscope.schema.flow import RECORDING_STOPPED
from tests.conftest import line_in
from tests.qt.conftest import TIMEOUT, open_and_wait

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASICS = ROOT / "examples" / "basics.py"


def line_of(path: pathlib.Path, text: str) -> int:
    return line_in(path, text)


def test_trace_links_source_graph_and_jaxpr(qtbot, window, tmp_path):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    graph = w.doc.graph
    # node count matches the jaxpr: every equation line of the printed jaxpr is a node of the graph
    text = w.doc.result.jaxpr_text
    eqn_lines = [ln for ln in text.splitlines() if re.match(r"^\s*(\S+:\S+ )+= [a-z_]", ln)]
    assert graph.top.total_eqns == len(eqn_lines) == 17
    # a source line selects its equations in the graph
    line = line_of(BASICS, 'out = h @ params["w2"]')
    w.source.line_clicked.emit(line)
    selected = w.graph.selected_paths()
    from jaxscope.schema.graph import resolve

    assert [resolve(graph, p)[1].label for p in selected] == ["dot_general"]
    # a node selects its line in the source and in the jaxpr pane
    w.graph.select_paths(selected)
    assert line in w.source.marked_lines()
    assert w.jaxpr.marked_lines()
    # search
    assert len(w.graph.search("dot_general")) == 2
    first = w.graph.next_match()
    assert w.graph.next_match() != first


def test_collapse_and_expand_a_cluster(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    owner = next(n.id for n in w.doc.graph.top.nodes if n.subgraphs)
    assert owner in w.doc.expanded and len(w.doc.layout.clusters) == 1
    before = w.doc.layout
    w.toggle_cluster(owner)
    qtbot.waitUntil(lambda: w.doc.layout is not before, timeout=TIMEOUT)
    assert owner not in w.doc.expanded and not w.doc.layout.clusters
    collapsed = w.doc.layout
    w.toggle_cluster(owner)
    qtbot.waitUntil(lambda: w.doc.layout is not collapsed, timeout=TIMEOUT)
    assert len(w.doc.layout.clusters) == 1


def answer_export_dialog(monkeypatch, path, **choices):
    """The Export Graph dialog, answered: the file, then theme / dpi / legend / collapse (a combo's data)."""
    from PySide6.QtWidgets import QDialog

    from jaxscope.qt.panes.export_options import ExportDialog

    def exec_(self):
        self.path.setText(str(path))
        for name, value in choices.items():
            widget = getattr(self, name)
            if name == "collapse":
                widget.setCurrentIndex(widget.findData(value))
            elif name == "theme":
                widget.setCurrentText(value)
            elif name == "dpi":
                widget.setValue(value)
            else:
                widget.setChecked(value)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", exec_)


def test_export_through_the_dialog(qtbot, window, tmp_path, monkeypatch):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    out = tmp_path / "g.svg"
    answer_export_dialog(monkeypatch, out)
    with qtbot.waitSignal(w.exports.finished, timeout=TIMEOUT) as done:  # written off the GUI thread
        w.graph_export.dialog()
    assert done.args == [str(out), "svg"] and "exported svg" in w.statusBar().currentMessage()
    root = ET.fromstring(out.read_text())
    assert "dot_general" in "".join(root.itertext())
    # the CLI's options: dark, a legend, every sub-graph collapsed (the window shows basics' jit open)
    collapsed = tmp_path / "collapsed.svg"
    answer_export_dialog(monkeypatch, collapsed, theme="dark", legend=True, collapse=0)
    with qtbot.waitSignal(w.exports.finished, timeout=TIMEOUT):
        w.graph_export.dialog()
    text = collapsed.read_text()
    assert "legend" in text.lower() and text.count("data-path=") < out.read_text().count("data-path=")
    assert get_theme("dark").background in text and get_theme("light").background not in text
    assert not w.graph_export.image().isNull()
    with qtbot.waitSignal(w.exports.failed, timeout=TIMEOUT):  # a folder that does not exist: said, nothing lost
        missing = str(tmp_path / "missing" / "g.png")
        w.exports.start(w.graph_export.request(missing), missing)
    assert "export to" in w.problem.text() and w.doc.layout is not None


def test_an_image_of_the_graph_draws_long_edges_as_the_view_does(qtbot, window, tmp_path, monkeypatch):
    """Export (dialog and `GraphExport.export`) and Copy Graph Image draw long edges whole or as their
    two ends, as the graph view shows them now."""
    from jaxscope import drawing
    from jaxscope.qt.graph.view import QtGraphView
    from jaxscope.render import svg

    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    asked: list[str] = []
    real = drawing.export  # every export goes through the drawing pipeline's writer
    monkeypatch.setattr(drawing, "export", lambda *a, **k: asked.append(k["long_edges"]) or real(*a, **k))
    w.graph_export.export(str(tmp_path / "a.svg"))  # a small graph: no long edges drawn as ends
    monkeypatch.setattr(QtGraphView, "long_edges_partial", property(lambda self: True))
    w.graph_export.export(str(tmp_path / "b.svg"))
    answer_export_dialog(monkeypatch, tmp_path / "c.png")
    with qtbot.waitSignal(w.exports.finished, timeout=TIMEOUT):
        w.graph_export.dialog()
    real_svg = svg.render_svg  # Copy Graph Image: the drawing's SVG, rasterised
    monkeypatch.setattr(svg, "render_svg", lambda *a, **k: asked.append(k["long_edges"]) or real_svg(*a, **k))
    assert not w.graph_export.image().isNull()
    assert asked == ["whole", "ends", "ends", "ends"]


def test_failing_trace_keeps_the_last_good_result(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    good = w.doc.result
    layout = w.doc.layout
    w.inputs.args.setText("{'w1': f32[4,8]}, f32[16,4]")  # params without b1: a KeyError in predict
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.stale, timeout=TIMEOUT)
    assert w.doc.result is good and w.doc.layout is layout
    assert w.stale_banner.isVisibleTo(w)
    assert "KeyError" in w.problem.text()
    assert w.inputs.args.text() == "{'w1': f32[4,8]}, f32[16,4]"  # the user's input is kept


def test_a_missing_argument_is_said_in_the_panel_before_any_trace(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    w.inputs.args.setText("f32[3]")  # predict(params, x, use_bias=True): x is missing
    assert not w.inputs.trace_button.isEnabled() and "Missing: x" in w.inputs.hint.text()
    w.inputs.args.setText("")
    assert "needs example inputs" in w.inputs.hint.text() and "Specs field" in w.inputs.hint.text()
    assert "--args" not in w.inputs.hint.text()  # the window's words, not the command line's


def test_bad_spec_is_flagged_inline(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    w.inputs.args.setText("f33[2]")
    assert "f33" in w.inputs.error.text() and not w.inputs.trace_button.isEnabled()


def test_retrace_on_save(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "model.py"
    path.write_text("import jax.numpy as jnp\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n\n\ndef f(x):\n    return jnp.sin(x)\n")
    open_and_wait(qtbot, w, f"{path}::f")
    assert w.doc.graph.top.n_eqns == 1
    w.graph.select_paths(["e0"])
    first = w.doc.result
    tmp = tmp_path / "model.py.tmp"  # save by rename, like many editors
    tmp.write_text("import jax.numpy as jnp\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n\n\ndef f(x):\n    return jnp.sin(x) * 2.0\n")
    os.replace(tmp, path)
    qtbot.waitUntil(lambda: w.doc.result is not first and w.doc.layout is not None and w.doc.graph.top.n_eqns == 2, timeout=TIMEOUT)
    assert w.graph.selected_paths() == ["e0"]  # selection kept where possible


def test_welcome_page_and_recent_files(qtbot, window, tmp_path):
    w = window
    assert w.stack.currentIndex() == 0
    shutil.copy(BASICS, tmp_path / "basics.py")
    open_and_wait(qtbot, w, f"{tmp_path / 'basics.py'}::predict")
    assert w.recent.items()[0].endswith("basics.py::predict")
    assert w.stack.currentIndex() == 1


def test_source_pane_marks_what_tracing_baked_in(qtbot, window, monkeypatch):
    w = window
    path = ROOT / "examples" / "control_flow.py"
    open_and_wait(qtbot, w, f"{path}::step")
    marks = w.source.flow_marks()
    loop = line_of(path, "for _ in range(n_layers)")
    body = line_of(path, "x = x * 0.9")
    cond = line_of(path, "x = lax.cond(")
    assert marks[loop].badge == "×3"
    assert marks[body].kind == "emitted"
    assert marks[cond].kind == "staged"
    assert "staged" in w.source.flow_tooltip(cond)
    assert "not taken" in w.flow_legend.text()
    w.inputs.args.setText("f32[4,8], f32[8,8], training=False, n_layers=2")
    first = w.doc.result
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.result is not first, timeout=TIMEOUT)
    marks = w.source.flow_marks()
    assert marks[body].kind == "not-taken" and marks[loop].badge == "×2"
    assert "`training` was False" in w.source.flow_tooltip(line_of(path, "if training:"))
    # a trace whose recording the worker gave up (too many calls): no marks, the legend says why
    gave_up = dataclasses.replace(w.doc.result, flow=None, warnings=(f"{RECORDING_STOPPED} after 1,500,000 Python calls",))
    w.display.show_flow(gave_up)
    assert w.source.flow_marks() == {} and "too many Python calls" in w.flow_legend.text()
    # and its next trace is not recorded (it would stop again); another function's is, as is any after a full recording
    asked = []
    monkeypatch.setattr(w.controller, "trace", lambda request, expanded=None, palette=(), grouping=True: asked.append(request.record_flow))
    function = w.doc.result.request.function.qualname
    w.trace_function(function, w.doc.args)
    w.doc.result = gave_up
    w.trace_function(function, w.doc.args)
    w.trace_function("another", w.doc.args)
    assert asked == [True, False, True]


def test_tracer_error_is_marked_at_its_line(qtbot, window):
    w = window
    case = ROOT / "tests" / "faults" / "cases" / "tracer_bool.py"
    assert w.open_target(f"{case}::f", "f32[3]")
    qtbot.waitUntil(lambda: bool(w.source.flow_marks()), timeout=TIMEOUT)
    line = line_of(case, "if x.sum() > 0:")
    mark = w.source.flow_marks()[line]
    assert mark.kind == "error"
    assert "TracerBoolConversionError" in mark.why and "lax.cond" in mark.why
    assert "tracer error" in w.problem.text()


def test_long_edges_switch_reaches_the_graph_and_is_remembered(window):
    from PySide6.QtGui import QAction

    action = window.findChild(QAction, "longEdgesAction")
    assert action is not None and action.isCheckable() and not action.isChecked()
    assert not window.graph.long_edges_whole
    action.trigger()
    assert window.graph.long_edges_whole
    assert QSettings().value("longEdgesWhole") in (True, "true")
    action.trigger()
    assert not window.graph.long_edges_whole


def test_theme_switch_recolours_without_relayout(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    layout, light = w.doc.layout, w.source.line_colours()
    from jaxscope.ir import linking

    nodes_light = w.graph.line_colours()  # given with the layout: each node its source line's colour
    assert nodes_light and nodes_light == linking.node_colours(w.doc.graph, w.doc.path, linking.PALETTE_LIGHT)
    w.set_theme("dark")
    assert w.doc.layout is layout
    assert set(w.source.line_colours()) == set(light)
    assert set(w.source.line_colours().values()) <= {c.lower() for c in linking.PALETTE_DARK}
    assert w.graph.line_colours() == linking.node_colours(w.doc.graph, w.doc.path, linking.PALETTE_DARK)
    w.toggle_cluster(next(iter(w.doc.expanded)) if w.doc.expanded else next(n.id for n in w.doc.graph.top.nodes if n.subgraphs))
    qtbot.waitUntil(lambda: w.doc.layout is not layout, timeout=TIMEOUT)
    assert w.graph.line_colours() == linking.node_colours(w.doc.graph, w.doc.path, linking.PALETTE_DARK)  # and after a re-layout
    text_views = (w.source, w.ir.jaxpr, *w.ir.views.values())  # the jaxpr pane once stayed light
    base = QPalette.ColorRole.Base
    assert all(v.theme == "dark" and v.palette().color(base).lightness() < 100 for v in text_views)
    w.set_theme("light")
    assert all(v.theme == "light" and v.palette().color(base).lightness() > 200 for v in text_views)


def test_expanding_a_cluster_of_a_big_graph_shows_its_part_first(qtbot, window, tmp_path):
    """Double-clicking a collapsed `jit` in a 2.4k-equation graph: the window asks for the part it
    shows ahead of the whole layout, shows it at once at the owner's place, then the whole."""
    src = tmp_path / "chain.py"
    src.write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef blk(x):\n    return jnp.exp(jnp.cos(x))\n\n\n"
        "def chain(x):\n    for _ in range(1200):\n        x = jnp.sin(x)\n    x = blk(x)\n"
        "    for _ in range(1200):\n        x = jnp.sin(x)\n    return x\n"
    )
    w = window
    assert w.open_target(f"{src}::chain", "f32[4]")
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    owner = next(n.id for n in w.doc.graph.top.nodes if n.subgraphs)
    assert owner not in w.doc.expanded and len(w.doc.layout.nodes) > 2000
    view = w.graph
    qtbot.wait(100)  # the window's second fit after an open
    view.zoom_by(1.0 / view.zoom(), view.viewport().rect().center())  # zoomed in, as a user would to click a box
    view.centre_at(view.scene_node_rect(owner).center())
    corner = view.mapFromScene(view.scene_node_rect(owner).topLeft())
    seen: list[bool] = []
    w.controller.layout_preview.connect(lambda *a: seen.append(view.previewing))
    before = w.doc.layout
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(view.scene_node_rect(owner).center()))
    qtbot.waitUntil(lambda: w.doc.layout is not before, timeout=TIMEOUT)
    assert seen == [True]  # the part was on screen before the whole came
    assert owner in w.doc.expanded and not view.previewing and view.node_count == len(w.doc.layout.nodes)
    cluster = next(c for c in w.doc.layout.clusters if c.path == f"{owner}:0")
    assert view.mapFromScene(cluster.x, cluster.y) == corner
    # a layout that fails after its part was shown: the window goes back to the drawing it had
    from jaxscope.layout.body import to_layout
    from jaxscope.layout.engine import compute_tenths
    from jaxscope.layout.preview import region_part
    from jaxscope.qt.app.prepared import PreparedLayout

    shown = w.doc.layout
    view.keep_place_of(owner)
    part = region_part(compute_tenths(w.doc.graph, ()), view.preview_region(owner))
    assert part is not None
    w.controller.layout_preview.emit(PreparedLayout(w.doc.graph, to_layout(part), frozenset()))
    assert view.previewing
    w.controller.layout_failed.emit("layout failed: the layout process died")
    assert not view.previewing and view.scenes.shown.layout is shown and "died" in w.problem.text()


def test_a_trace_is_prepared_off_the_gui_thread_with_the_collector_paused(qtbot, window, monkeypatch):
    """What the window walks every node of a new trace for (the clusters to open, the helper files
    to watch, the node sources, then the printed jaxpr's line map) is made on a worker thread, with
    the cyclic GC paused: a collection midway held the GIL for 46 ms at mlp-50k, a stall of the
    GUI thread. The window then uses what was made."""
    import gc
    import threading

    from jaxscope.ir import linking
    from jaxscope.qt.app import prepared
    from jaxscope.schema import expansion

    calls: list[tuple[str, bool, bool]] = []  # (name, on the GUI thread, collector on)
    gui = threading.current_thread()

    def spy(module, name):
        real = getattr(module, name)

        def wrapped(*args):
            calls.append((name, threading.current_thread() is gui, gc.isenabled()))
            return real(*args)

        monkeypatch.setattr(module, name, wrapped)

    spy(prepared, "first_open")
    spy(linking, "helper_files")
    spy(linking, "jaxpr_links")
    parsed: list[int] = []
    real_parse = linking.jaxpr_equations
    monkeypatch.setattr(linking, "jaxpr_equations", lambda text: parsed.append(len(text)) or real_parse(text))
    open_and_wait(qtbot, window, f"{BASICS}::predict")
    names = [name for name, _, _ in calls]
    assert {"first_open", "helper_files", "jaxpr_links"} <= set(names)
    assert names.count("jaxpr_links") == 2  # the node sources, then the printed jaxpr's lines
    assert [c for c in calls if c[1] or c[2]] == []
    assert window.doc.expanded == expansion.auto_expanded(window.doc.graph)
    assert [n for n in parsed if n] == []  # the worker sent the printed text's line map
    line = next(i for i, t in enumerate(window.doc.result.jaxpr_text.splitlines(), 1) if "dot_general[" in t)
    assert window.session.links.head_of(line + 1) == line  # and it maps the text


def test_a_failed_head_start_on_a_trace_costs_only_itself(qtbot, window, monkeypatch):
    """If making the trace's head start off the GUI thread raises, the window makes what it needs
    itself: the graph still opens, with the clusters a first layout opens."""
    from jaxscope.schema.expansion import auto_expanded

    def broken(graph):
        raise RuntimeError("boom")

    monkeypatch.setattr(window.graph, "prepare_graph", broken)
    open_and_wait(qtbot, window, f"{BASICS}::predict")
    assert window.doc.expanded == auto_expanded(window.doc.graph)
    assert window.doc.layout is not None and window.graph.selected_paths() == []


def test_state_of_another_function_does_not_survive_a_switch(qtbot, window):
    """Issue 37 (a newcomer's walk): after tracing another function the Run pane still showed the
    previous function's verdict, and a failed trace showed the previous *function's* graph as if it
    were this one's "previous result"."""
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    assert w.jobs.run_function()
    qtbot.waitUntil(lambda: w.run_panel.verdict_state != "", timeout=TIMEOUT)
    w.inputs.function.setCurrentIndex(w.inputs.function.findData("loss"))
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.result.request.function.qualname == "loss", timeout=TIMEOUT)
    assert w.run_panel.verdict_state == "" and w.run_panel.shown_result is None
    w.inputs.function.setCurrentIndex(w.inputs.function.findData("predict"))
    w.inputs.args.setText("{'w1': f32[4,8]}, f32[16,4]")  # a KeyError in predict
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.stale, timeout=TIMEOUT)
    assert "The trace of predict failed; the graph shown is loss's" in w.stale_banner.text()


def test_the_graph_gets_most_of_a_fresh_window(qtbot, window):
    """Graph first: at 1600 x 1000 with no saved arrangement, the graph view is over 60 % of the width."""
    from jaxscope.qt.app.chrome import prefs

    window.resize(1600, 1000)
    qtbot.wait(50)
    prefs.default_sizes(window, window.docks)
    qtbot.waitUntil(lambda: window.centralWidget().width() >= 0.6 * window.width(), timeout=3000)  # the graph fills it
    assert window.docks["source"].width() >= 260 and window.docks["jaxpr"].width() >= 240  # the side panes stay usable


def test_switching_function_fits_the_new_graph(qtbot, window):
    """A re-trace of the same function keeps the view; another function's graph is fitted afresh (as a
    new graph opens: whole, or a tall narrow one at its width from its top, readable)."""
    w = window
    open_and_wait(qtbot, w, f"{BASICS}::predict")
    for _ in range(6):
        w.graph.zoom_in()
    zoomed = w.graph.zoom()
    w.inputs.function.setCurrentIndex(w.inputs.function.findData("loss"))
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.result.request.function.qualname == "loss" and not w.doc.refit, timeout=TIMEOUT)
    qtbot.wait(100)
    shown = w.graph.zoom()
    w.graph.fit_readable()
    assert shown != zoomed and abs(shown - w.graph.zoom()) < 1e-6


def test_the_window_exports_an_html_page_through_the_drawing_pipeline(qtbot, window, tmp_path):
    """Issue 50.2/51: File → Export Graph writes what the CLI writes (`jaxscope.drawing`), an HTML
    page too: the view drawn, the jaxpr lines and the source the window shows."""
    import json
    import re

    from tests.conftest import MODELS as MODELS_FILE

    w = window
    open_and_wait(qtbot, w, f"{MODELS_FILE}::deep_step")
    out = tmp_path / "step.html"
    assert w.graph_export.export(str(out)) == "html"
    data = json.loads(re.search(r'id="jaxscope-data">(.*?)</script>', out.read_text(encoding="utf-8"), re.S).group(1))
    top = {row[9] for row in data["bodies"][data["root"]]["nodes"]}  # each box's label (as `strings` indices)
    labels = {data["strings"][i] for i in top}
    assert "adamw_step (forward)" in labels  # the grouped view the window shows
    assert data["stages"]["jaxpr"]["lines"] and any(f.endswith("models.py") for f in data["sources"])
