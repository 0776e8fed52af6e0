"""Saved traces and comparisons in the real window (issue 36): save the trace shown, delete its file,
open the saved trace (answered with no worker), compare with other inputs side by side with one
selection, and "would it retrace?" showing the difference."""

from __future__ import annotations

import textwrap

from jaxscope.schema.trace import TraceRequest
from tests.qt.conftest import TIMEOUT, open_and_wait

LAYER = textwrap.dedent("""
    import jax.numpy as jnp


    def layer(x, w, use_gelu=False):
        h = x @ w
        if use_gelu:
            h = 0.5 * h * (1 + jnp.tanh(0.79788456 * (h + 0.044715 * h ** 3)))
        else:
            h = jnp.maximum(h, 0.0)
        return jnp.sum(h * h)


    JAXSCOPE_ARGS = {"layer": "f32[4,8], f32[8,16], use_gelu=False"}
""")


def test_save_then_open_the_trace_without_its_file(qtbot, window, tmp_path) -> None:
    source = tmp_path / "layer.py"
    source.write_text(LAYER)
    open_and_wait(qtbot, window, f"{source}::layer")
    qtbot.waitUntil(lambda: "compiled" in window.ir_side.results, timeout=TIMEOUT)
    live = window.doc.result
    saved = tmp_path / "layer.jaxscope"
    window.trace_files.save(str(saved))
    qtbot.waitUntil(saved.exists, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "saved the trace" in window.statusBar().currentMessage(), timeout=TIMEOUT)
    source.unlink()

    window.doc.layout = None
    drop(window, saved)  # as File → Open: open_target
    qtbot.waitUntil(lambda: window.doc.layout is not None and "compiled" in window.ir_side.results, timeout=TIMEOUT)
    shown = window.doc.result
    assert window.controller.saved is not None and shown.graph is window.controller.saved.doc.trace.graph
    assert shown.graph == live.graph and shown.jaxpr_text == live.jaxpr_text
    assert "if use_gelu:" in window.source.toPlainText()
    assert "(saved trace of layer)" in window.windowTitle()
    assert window.ir_side.results["compiled"].text.startswith("HloModule")
    assert window.files.files() == []  # nothing watched: the saved copy is what is shown

    panel = window.cost_panel  # measured time: a saved trace holds no profiled run, and the scale says so
    panel.measure.setCurrentIndex(panel.measure.findData("time"))
    qtbot.waitUntil(lambda: "holds no profiled run" in panel.scale.text(), timeout=TIMEOUT)
    panel.measure.setCurrentIndex(0)

    window.controller.trace(TraceRequest(shown.request.function, args="f32[2,8], f32[8,16]"))  # F5 with other inputs
    qtbot.waitUntil(lambda: "holds no code to trace other inputs" in window.problem.text(), timeout=TIMEOUT)
    assert window.doc.result is shown  # the document and its graph stay

    damaged = tmp_path / "damaged.jaxscope"  # dropped on the window: refused in a sentence, nothing else moves
    damaged.write_bytes(saved.read_bytes()[:200])
    drop(window, damaged)
    qtbot.waitUntil(lambda: "damaged.jaxscope" in window.problem.text(), timeout=TIMEOUT)
    assert "damaged" in window.problem.text() and window.doc.result is shown
    assert "(saved trace of layer)" in window.windowTitle()


def drop(window, path) -> None:
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))


def test_compare_with_other_inputs_side_by_side(qtbot, window, tmp_path) -> None:
    source = tmp_path / "layer.py"
    source.write_text(LAYER)
    open_and_wait(qtbot, window, f"{source}::layer")
    dialog = window.jobs.retrace_dialog()
    assert dialog is not None and not dialog.difference.isEnabled()
    dialog.after.setText("f32[4,8], f32[8,16], use_gelu=True")
    dialog.check.click()
    qtbot.waitUntil(dialog.difference.isEnabled, timeout=TIMEOUT)
    assert "RETRACE" in dialog.answer.toPlainText()
    dialog.difference.click()
    qtbot.waitUntil(lambda: bool(window.compare.windows), timeout=TIMEOUT)
    compared = window.compare.windows[-1]
    qtbot.addWidget(compared)
    assert "matched 2, added 8, removed 1, changed 1" in compared.summary.text()
    qtbot.waitUntil(lambda: compared.a.widget.has_content() and compared.b.widget.has_content(), timeout=TIMEOUT)
    assert compared.changes.count() == 10
    # one selection: the changed `mul` picked on B selects its match on A
    (change,) = compared.diff.changed
    compared.b.select([change.b])
    assert compared.a.widget.selected_paths() == compared.a.shown([change.a])
    fills = compared.b.widget.fills()
    assert sum(colour == "#8fd694" for colour in fills.values()) == 8  # every added equation green
    assert set(fills) >= set(compared.b.widget.model.by_base)  # the rest grey, as the key's "same", not family colours
    assert fills[compared.diff.b_of["e0"]] == "#eef0f3"  # x @ w: the same on both sides
    compared.mode.setCurrentIndex(1)  # overlay: one graph
    qtbot.waitUntil(compared.overlay.widget.has_content, timeout=TIMEOUT)
    assert not compared.a.widget.isVisible() and compared.overlay.widget.node_count > compared.b.widget.node_count


def test_a_saved_trace_naming_your_files_reads_none_of_them(qtbot, window, tmp_path) -> None:
    """Issue 46, 1: a crafted document whose equations, call chains and flow name the user's files
    (and a FIFO) is opened and saved again: the window reads none of them, the new file carries none."""
    import gzip
    import json
    import os

    from jaxscope.schema.graph import SourceLoc
    from jaxscope.schema.trace_file import decode, encode
    from tests.schema.test_document import _doc

    secrets = [tmp_path / "id_rsa", tmp_path / "bashrc", tmp_path / "model.py"]
    for k, path in enumerate(secrets):
        path.write_text(f"SECRET-{k} = 1\n")
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    data = json.loads(gzip.decompress(encode(_doc())))
    graph = data["trace"]["graph"]
    graph["sources"] = [[str(p), 1, 0, 1, 5, "f", ""] for p in (*secrets, fifo)]
    graph["chains"] = [[0, 1, 3]]
    for body in graph["bodies"].values():
        for node in body["nodes"]:
            if node[1] == "eqn":
                node[6], node[10] = 2, 0
    data["trace"]["request"]["function"]["path"] = str(secrets[2])
    data["trace"]["flow"] = {"files": [{"path": str(secrets[1])}]}
    data["sources"] = {}
    crafted = tmp_path / "crafted.jaxscope"
    crafted.write_bytes(gzip.compress(json.dumps(data).encode()))

    window.doc.layout = None
    assert window.open_target(str(crafted))
    qtbot.waitUntil(lambda: window.doc.layout is not None, timeout=TIMEOUT)
    assert "SECRET" not in window.source.toPlainText()
    assert window.source_frames.open_location(SourceLoc(str(fifo), 1)) is False  # a FIFO frame: said, not read (no hang)
    assert "not saved in crafted.jaxscope" in window.source_frames.other_title.text()
    assert window.source_frames.open_location(SourceLoc(str(secrets[0]), 1)) is False
    assert not any(str(p) in item for item in window.recent.items() for p in secrets)  # the document is recent, not its files

    resaved = tmp_path / "resaved.jaxscope"
    window.trace_files.save(str(resaved))
    qtbot.waitUntil(lambda: "saved the trace" in window.statusBar().currentMessage(), timeout=TIMEOUT)
    doc = decode(resaved.read_bytes())
    assert doc.sources == {}
    assert b"SECRET" not in gzip.decompress(resaved.read_bytes())


def test_hostile_documents_are_refused_in_a_sentence_and_the_shown_trace_stays(qtbot, window, tmp_path) -> None:
    """Issue 46, 3/4/7: a sub-graph cycle, a gzip bomb and a wrong field type, opened in the window:
    one Problems line each, no traceback, the trace shown before stays on screen."""
    import gzip
    import json

    from jaxscope.schema.trace_file import encode
    from tests.faults.hostile_documents import bomb, with_cycle, write_json
    from tests.schema.test_document import _doc

    good = tmp_path / "good.jaxscope"
    good.write_bytes(encode(_doc()))
    window.doc.layout = None
    assert window.open_target(str(good))
    qtbot.waitUntil(lambda: window.doc.layout is not None, timeout=TIMEOUT)
    shown = window.doc.result
    data = json.loads(gzip.decompress(good.read_bytes()))
    typed = json.loads(json.dumps(data))
    typed["trace"]["graph"]["bodies"]["b0"]["nodes"][0][2] = 5
    cases = {
        write_json(with_cycle(data), tmp_path / "cycle.jaxscope"): "contains it again (a cycle:",
        bomb(tmp_path / "bomb.jaxscope", 300): "inflates to more than 256 MB",
        write_json(typed, tmp_path / "typed.jaxscope"): "trace.graph.bodies['b0'].nodes[0][2]: expected text, got an integer 5",
    }
    for path, said in cases.items():
        drop(window, path)
        qtbot.waitUntil(lambda said=said: said in window.problem.text(), timeout=TIMEOUT)
        assert window.doc.result is shown and "(saved trace of f)" in window.windowTitle()


def test_the_compare_window_fits_1280_px_and_its_dialog_takes_a_maker(qtbot, window, tmp_path) -> None:
    """Issue 60.3: the Compare window's header wraps (one line of two long targets made it 1832 px
    at least); each side opens readable at its top, as the window does (a CNN step of 97 boxes was
    fitted whole, its labels gone); the dialog takes a maker (the CLI has --inputs-b)."""
    from jaxscope.qt.compare.compare import OTHER, CompareDialog
    from jaxscope.qt.graph.zoom_pan import READABLE
    from tests.conftest import CORPUS

    target = f"{CORPUS / 'nnx_cnn_blocks.py'}::train_step"
    open_and_wait(qtbot, window, target)
    window.compare.with_target(target, None, after=True)  # the file's own maker
    qtbot.waitUntil(lambda: bool(window.compare.windows), timeout=TIMEOUT)
    compared = window.compare.windows[-1]
    qtbot.addWidget(compared)
    assert compared.minimumSizeHint().width() <= 1280, compared.minimumSizeHint()
    qtbot.waitUntil(lambda: compared.a.widget.has_content() and compared.b.widget.has_content(), timeout=TIMEOUT)
    assert all(side.widget.transform().m11() >= READABLE - 1e-6 for side in (compared.a, compared.b))  # labels read
    dialog = CompareDialog(window, target, "", False, "make")
    qtbot.addWidget(dialog)
    dialog.kind.setCurrentText(OTHER)
    assert dialog.inputs.text() == "make" and dialog.inputs.isEnabled() and dialog.args.isEnabled()
