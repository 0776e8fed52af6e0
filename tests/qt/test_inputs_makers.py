"""The window on real models with makers: the inputs tree, the choice of source kept per file, and
which function a file opens on (never one without inputs)."""

from __future__ import annotations

import pathlib

from tests.qt.conftest import TIMEOUT, open_and_wait

MODELS = pathlib.Path(__file__).resolve().parents[1] / "worker" / "corpus" / "models.py"


def _tree_rows(tree) -> dict[str, str]:
    rows: dict[str, str] = {}

    def visit(item, prefix: str) -> None:
        path = prefix + item.text(0)
        rows[path] = item.text(1)
        for i in range(item.childCount()):
            visit(item.child(i), path)

    for i in range(tree.topLevelItemCount()):
        visit(tree.topLevelItem(i), "")
    return rows


def test_train_step_opens_from_its_maker_and_lists_its_inputs(qtbot, window):
    w = window
    open_and_wait(qtbot, w, f"{MODELS}::train_step")
    panel = w.inputs
    assert panel.mode() == "file" and "make_train_inputs" in panel.source.currentText()
    assert not panel.args.isVisibleTo(panel) and panel.tree.isVisibleTo(panel)
    rows = _tree_rows(panel.tree)
    assert rows["params['params']['block1']['kernel']"] == "f32[4,16]"
    assert rows["opt_state[1][0].count"] == "i32[]"
    assert rows["params"] == "4 traced"
    assert "JAXSCOPE_INPUTS['train_step'] in models.py" in panel.hint.text()
    assert w.doc.result is not None and w.doc.result.request.inputs == "@file"


def test_a_maker_elsewhere_and_the_choice_kept_per_file(qtbot, window, tmp_path):
    w = window
    assert w.open_target(f"{MODELS}::eqx_predict")  # no maker in the file for it, no specs: nothing traced
    panel = w.inputs
    assert w.doc.result is None and panel.mode() == "specs" and "needs example inputs" in panel.hint.text()
    panel.source.setCurrentIndex(panel.source.findData("maker"))
    panel.maker.setText(f"{MODELS}::make_eqx_inputs")
    assert panel.trace_button.isEnabled()
    with qtbot.waitSignal(w.controller.trace_finished, timeout=TIMEOUT):
        panel.request_trace()
    rows = _tree_rows(panel.tree)
    assert rows["model.activation"].startswith("static = <function gelu")
    assert rows["xs"] == "f32[5,3]"
    # the choice is remembered for this file: a new window opens eqx_predict with the same maker
    from jaxscope.qt.app.chrome import prefs

    assert prefs.read_choices(w.settings, str(MODELS))["eqx_predict"] == ["maker", f"{MODELS}::make_eqx_inputs"]


def test_opening_a_file_picks_the_first_function_with_inputs(qtbot, window, tmp_path):
    source = tmp_path / "steps.py"
    source.write_text(
        "import jax.numpy as jnp\n\n"
        "def init(key):\n    return key\n\n"
        "def step(params, batch):\n    return params * batch\n\n"
        "def make():\n    return jnp.ones(3), jnp.ones(3)\n\n"
        "JAXSCOPE_INPUTS = {'step': make}\n"
    )
    w = window
    open_and_wait(qtbot, w, str(source))
    assert w.inputs.current().name == "step" and w.doc.result.request.inputs == "@file"

    bare = tmp_path / "bare.py"
    bare.write_text("def init(key):\n    return key\n\ndef step(params, batch):\n    return params\n")
    with qtbot.assertNotEmitted(w.controller.busy_changed, wait=300):  # never traced
        assert w.open_target(str(bare))
    assert w.inputs.current().name == "init"
    assert "init(key) needs example inputs" in w.problem.text() and "--args" not in w.problem.text()


def test_64_bit_mode_in_the_window(qtbot, window, tmp_path):
    """Issue 37.9: the narrowing is said at the inputs; Trace → 64-bit Mode keeps f64 (restarted worker)."""
    source = tmp_path / "wide.py"
    source.write_text("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.cos(x)\n\nJAXSCOPE_ARGS = {'f': 'f64[3]'}\n")
    w = window
    open_and_wait(qtbot, w, str(source))
    assert "float64 -> float32" in w.inputs.hint.text() and "64-bit Mode" in w.inputs.hint.text()
    assert "f32[3]" in w.doc.result.jaxpr_text or "a:f32[3]" in w.jaxpr.toPlainText()
    w.doc.layout = None
    w.x64.trigger()
    qtbot.waitUntil(lambda: w.doc.result is not None and "f64[3]" in w.doc.result.jaxpr_text, timeout=TIMEOUT)
    assert w.jobs.x64_setting() and "float64 -> float32" not in w.inputs.hint.text()
