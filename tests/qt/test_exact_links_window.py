"""Exact links in the real window on a flax + optax train step with three identical blocks: a
backward op marks only its own jaxpr, StableHLO and HLO lines; its call chain opens flax's file
read-only, whose lines select the equations that came through them."""

from __future__ import annotations

from jaxscope.ir.jaxpr_order import equations
from tests.conftest import MODELS
from tests.qt.conftest import TIMEOUT, open_and_wait


def test_a_backward_op_marks_only_its_lines_and_its_frames_open_the_library(qtbot, window, tmp_path):
    w = window
    open_and_wait(qtbot, w, f"{MODELS}::deep_step")
    qtbot.waitUntil(lambda: "compiled" in w.ir_side.links, timeout=TIMEOUT)
    eqns = dict(equations(w.doc.graph))
    dots = {p: n for p, n in eqns.items() if n.label == "dot_general"}
    backward = next(p for p, n in dots.items() if n.name_stack.startswith("transpose(") and "block2" in n.name_stack)
    w.selection.select_nodes([backward])
    w.selection.mark([backward])

    def own(view, lines_of) -> set[int]:
        marked = set(view.marked_lines())
        assert marked, view.objectName()
        for other in dots:
            if other != backward:
                assert not marked & set(lines_of(other)), (view.objectName(), other)
        return marked

    jaxpr_lines = own(w.jaxpr, w.session.links.lines_for_node)
    assert any("dot_general" in w.jaxpr.toPlainText().splitlines()[n - 1] for n in jaxpr_lines)
    stable = w.ir_side.links["stablehlo"]
    stable_lines = own(w.ir.views["stablehlo"], lambda p: stable.lines_for_nodes([p]))
    text = w.ir.views["stablehlo"].toPlainText().splitlines()
    assert all("dot_general" in text[n - 1] for n in stable_lines)
    compiled = w.ir_side.links["compiled"]
    if compiled.lines_for_nodes([backward]):
        own(w.ir.views["compiled"], lambda p: compiled.lines_for_nodes([p]) if dots[p].name_stack != dots[backward].name_stack else [])
    else:  # XLA merged it into another equation's instruction: the window says so
        assert "XLA removed it or merged it" in w.statusBar().currentMessage()

    # File -> Export Graph as JSON carries the same links, with the texts shown
    import json

    w.graph_export.export(str(tmp_path / "g.json"))
    links = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["links"]
    assert set(links) == {"jaxpr", "stablehlo", "compiled"}
    # JSON keeps the program's own structure, as `jaxscope export` writes it: the equation by its own path
    assert w.doc.to_shown([backward])[0] != backward  # (drawn inside its module's group)
    assert set(links["jaxpr"]["lines"][backward]) == jaxpr_lines and set(links["stablehlo"]["lines"][backward]) == stable_lines
    assert links["stablehlo"]["text"] == w.ir.views["stablehlo"].toPlainText()

    # the Node pane: all of it in one place
    shown = w.inspector.toPlainText()
    assert shown.startswith("dot_general") and "Deep/block2/proj · backward" in shown and "linear.py:287" in shown
    rows = shown.splitlines()
    assert rows[rows.index("stablehlo lines") + 1] == ", ".join(map(str, sorted(stable_lines)))  # a label, then its value
    # its call chain: the user's frames, then flax's Dense under them; its scope, pass and forward twin
    frames = w.source_frames
    assert frames.bar.isVisible() and "linear.py" in frames.bar.text() and "deep_step" in frames.bar.text()
    assert "Deep/block2/proj · backward" in frames.bar.text() and "its forward:" in frames.bar.text()
    twin = frames.bar.text().split('href="pair:', 1)[1].split('"', 1)[0]
    assert dots.get(twin) is not None and dots[twin].name_stack == "jvp(Deep)/block2/proj"
    frames.bar.linkActivated.emit(f"pair:{twin}")  # its group opens (a re-layout), then it is selected
    qtbot.waitUntil(lambda: w.doc.to_real(w.graph.selected_paths()) == [twin], timeout=TIMEOUT)
    w.selection.select_nodes([backward])
    w.selection.mark([backward])
    dense = len(dots[backward].frames) - 1
    assert dots[backward].frames[dense].library == "flax"
    assert frames.open_frame(dense) and frames.showing_other()
    assert frames.other.path.endswith("linear.py") and frames.other.marked_lines() == [dots[backward].frames[dense].line]
    assert "read-only" in frames.other_title.text()
    # a line of flax's file selects every equation that came through it: each Dense's forward and backward dots
    frames.other_line_clicked.emit(frames.other.path, dots[backward].frames[dense].line)
    selected = set(w.doc.to_real(w.graph.selected_paths()))
    assert {p for p, n in dots.items() if n.frames and n.frames[-1] == dots[backward].frames[dense]} <= selected
    assert len(selected) >= 6
    frames.other_title.linkActivated.emit("back")
    assert not frames.showing_other()

    # the user's call line with no equation of its own (deep_step's `return adamw_step(...)`) selects what is under it
    call = dots[backward].frames[0]
    assert call.function == "deep_step"
    w.source.line_clicked.emit(call.line)
    assert len(w.doc.to_real(w.graph.selected_paths())) > 50
