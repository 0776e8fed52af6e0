"""A model's structure in the real window (real worker, real layout process): a flax + optax train
step opens as its modules, forward and backward apart; a module group picked marks its equations'
lines and names its identical layers; whatever selects the program's equations (a source line, a
run row, a guide link) opens the groups that hide them; View -> Group by Module switches it off."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from jaxscope.ir.jaxpr_order import equations
from jaxscope.schema.graph import group_of, resolve
from tests.conftest import MODELS
from tests.qt.conftest import TIMEOUT, open_and_wait


def _drawn_groups(w) -> dict[str, str]:
    """Drawn top-level path -> label, of the module groups."""
    return {n.id: n.label for n in w.doc.shown.top.nodes if group_of(n) is not None}


def _model(w, pass_: str) -> str:
    """The drawn path of the model Deep's group in a pass: step / loss / Deep."""
    path, body = "", w.doc.shown.top
    for label in (f"adamw_step ({pass_})", "adamw_step.loss_fn", "Deep"):
        node = next(n for n in body.nodes if n.label == label)
        path, body = f"{path}{node.id}", w.doc.shown.bodies[node.subgraphs[0].body]
        path += ":0/" if label != "Deep" else ""
    return path


def _relaid(qtbot, w, start) -> None:
    before = w.doc.layout
    start()
    qtbot.waitUntil(lambda: w.doc.layout is not before, timeout=TIMEOUT)


def test_a_train_step_opens_as_its_modules_and_a_group_stands_for_its_equations(qtbot, window, monkeypatch):
    w = window
    open_and_wait(qtbot, w, f"{MODELS}::deep_step")
    assert w.doc.view is not None and w.doc.view.grouped and w.doc.shown is not w.doc.graph
    groups = _drawn_groups(w)
    assert {"adamw_step (forward)", "adamw_step (backward)", "params (inputs)"} <= set(groups.values())
    # opened to the model's blocks (the model inside the loss that applies it): boxes, not hundreds of equations
    assert len(w.doc.layout.nodes) < 120 < w.doc.graph.top.total_eqns
    forward, backward = _model(w, "forward"), _model(w, "backward")
    assert forward in w.doc.expanded and backward in w.doc.expanded
    # the backward pass is drawn apart: its clusters are tinted
    model = w.graph.model
    tint = dict(zip((c.path for c in model.clusters), model.cluster_pass))
    assert tint[f"{backward}:0"] == "backward" and tint[f"{forward}:0"] == "forward"

    # opened tall and narrow (the passes one under another): its width, from its top, readable
    content = model.content
    assert w.graph.zoom() >= 0.36 and w.graph.mapToScene(w.graph.viewport().rect()).boundingRect().top() <= content.top() + 1
    # fitted, the whole graph is on screen: no overview map; zoomed in to read it, the map shows
    # where the view is, and a click on it moves the view there
    overview = w.structure.overview
    w.graph.fit_all()
    qtbot.waitUntil(lambda: not overview.isVisible(), timeout=5000)  # at the view's next paint
    w.graph.zoom_to(1.0, content.center())
    qtbot.waitUntil(overview.isVisible, timeout=5000)
    qtbot.mouseClick(overview, Qt.MouseButton.LeftButton, pos=QPoint(overview.width() // 2, 2))
    centre = w.graph.mapToScene(w.graph.viewport().rect().center())
    assert centre.y() < content.height() * 0.25

    # a block of the backward pass picked: the Node pane says what it holds and names its twin
    body = w.doc.shown.bodies[resolve(w.doc.shown, backward)[1].subgraphs[0].body]
    block2 = next(f"{backward}:0/{n.id}" for n in body.nodes if n.label.startswith("block2"))
    w.graph.select_paths([block2])
    members = w.doc.to_real([block2])
    nodes = [resolve(w.doc.graph, p)[1] for p in members]
    eqns = [n for n in nodes if n.kind == "eqn"]
    assert len(eqns) > 20 and all("block2" in n.name_stack and n.name_stack.startswith("transpose(") for n in eqns)
    text = w.inspector.toPlainText()
    assert "module group" in text and "backward" in text and "identical layers" in text and "block3" in text
    assert w.source.marked_lines() and w.jaxpr.marked_lines()  # its equations' lines
    twins = w.doc.view.twins[block2]
    other = next(t for t in twins if t != block2)
    w.inspector.link_clicked.emit(f"show:{other}")
    assert w.graph.selected_paths() == [other]

    # open this one, close the others
    _relaid(qtbot, w, lambda: w.inspector.link_clicked.emit(f"only:{block2}"))
    assert block2 in w.doc.expanded and other not in w.doc.expanded

    # a backward dot of block3 (collapsed) selected by a program path: its groups open, it is selected
    dot = next(
        p
        for p, n in equations(w.doc.graph)
        if n.label == "dot_general" and n.name_stack.startswith("transpose(") and "block3" in n.name_stack
    )
    _relaid(qtbot, w, lambda: w.selection.show_nodes([dot]))
    qtbot.waitUntil(lambda: w.doc.to_real(w.graph.selected_paths()) == [dot], timeout=TIMEOUT)
    assert w.graph.selected_paths()[0].endswith("/" + dot) and w.inspector.toPlainText().startswith("dot_general")

    # View -> Group by Module off: the program as traced, every path its own, its view made off the GUI thread
    import threading

    from jaxscope.qt.app import trace_session

    made_on: list[bool] = []
    real_view = trace_session.for_window

    def spied(graph, grouping=True):
        made_on.append(threading.current_thread() is threading.main_thread())
        return real_view(graph, grouping)

    monkeypatch.setattr(trace_session, "for_window", spied)
    _relaid(qtbot, w, lambda: w.structure.action.setChecked(False))
    assert made_on == [False]
    assert not w.doc.view.grouped and w.doc.shown is w.doc.graph
    assert not any(group_of(n) for n in w.doc.shown.top.nodes)
    w.selection.show_nodes([dot])
    assert w.graph.selected_paths() == [dot]


def test_a_small_plain_function_is_drawn_as_it_is(qtbot, window):
    from jaxscope.about import EXAMPLES_DIR

    w = window
    open_and_wait(qtbot, w, f"{EXAMPLES_DIR}/basics.py::predict")
    assert w.doc.view is not None and not w.doc.view.grouped and w.doc.shown is w.doc.graph
