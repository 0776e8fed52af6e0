"""Diagnostics pane and the "retrace with this argument static" fix, through the real window."""

from __future__ import annotations

import pathlib

import pytest

from tests.conftest import line_in
from tests.qt.conftest import TIMEOUT, open_and_wait

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "worker" / "corpus" / "purity_cases.py"


def line_of(path: pathlib.Path, marker: str) -> int:
    return line_in(path, f"# {marker}", ending=True)


def test_diagnostics_are_listed_and_link_to_lines_and_nodes(qtbot, window):
    w = window
    w.doc.layout = None
    assert w.open_target(f"{CASES}::key_reuse", "key[], f32[3]")
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    diags = w.diagnostics.diagnostics()
    assert [d.kind for d in diags] == ["key-reuse"]
    assert w.docks["diagnostics"].windowTitle() == "Diagnostics (1)"
    tree = w.diagnostics.tree
    item = tree.topLevelItem(0)
    assert item.text(0) == "warning" and "`key`" in item.text(1)
    assert item.text(2) == f"line {line_of(CASES, 'use-1')}, line {line_of(CASES, 'use-2')}"
    tree.itemClicked.emit(item, 1)
    assert w.source.marked_lines() == [line_of(CASES, "use-1"), line_of(CASES, "use-2")]
    # both uses are selected: the call nodes, or what is drawn inside them when they are expanded
    selected = w.graph.selected_paths()
    assert {p.split(":")[0] for p in selected} == set(diags[0].nodes) == {"e0", "e1"}


def test_clean_function_says_so(qtbot, window):
    w = window
    w.doc.layout = None
    assert w.open_target(f"{CASES}::clean", "f32[2,3], f32[3,4]")
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    assert w.diagnostics.diagnostics() == []
    assert "No diagnostics" in w.diagnostics.tree.topLevelItem(0).text(1)


def test_retrace_with_the_argument_static(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "loop.py"
    path.write_text("import jax.numpy as jnp\n\n\ndef f(x, n):\n    for _ in range(n):\n        x = jnp.sin(x)\n    return x\n")
    assert w.open_target(f"{path}::f", "f32[3], i32[]")
    qtbot.waitUntil(lambda: "tracer error" in w.problem.text(), timeout=TIMEOUT)
    assert w.problem_static.isVisibleTo(w) and "`n`" in w.problem_static.text()
    assert w.jobs.retrace_static("4")
    assert w.inputs.current_args() == "f32[3], 4"
    qtbot.waitUntil(lambda: w.doc.result is not None and w.doc.layout is not None, timeout=TIMEOUT)
    assert [n.label for n in w.doc.graph.top.nodes if n.kind == "eqn"] == ["sin"] * 4
    assert not w.problem_static.isVisibleTo(w)


def test_would_it_retrace_dialog(qtbot, window):
    w = window
    basics = ROOT / "examples" / "basics.py"
    open_and_wait(qtbot, w, f"{basics}::predict")
    dialog = w.jobs.retrace_dialog()
    assert dialog is not None and dialog.after.text() == w.doc.result.request.args
    dialog.after.setText(dialog.after.text().replace("f32[16,4]", "f32[8,4]"))
    dialog.check.click()
    qtbot.waitUntil(lambda: "jit would" in dialog.answer.toPlainText(), timeout=TIMEOUT)
    text = dialog.answer.toPlainText()
    assert text.startswith("jit would RETRACE") and "`x`: shape changed: f32[16,4] → f32[8,4]" in text
    dialog.after.setText("f32[")
    dialog.check.click()
    assert dialog.error.text()  # a bad spec is flagged in the dialog, nothing is sent
    assert w.doc.layout is not None and not w.doc.stale  # the traced document is untouched


def test_the_example_picker_lists_each_tutorial_with_what_it_teaches(qtbot, window):
    from jaxscope.qt.app.chrome.dialogs import ExamplePicker

    examples = window.examples()
    picker = ExamplePicker(window, examples)
    qtbot.addWidget(picker)
    assert picker.list.count() == len(examples) >= 8
    first = picker.list.item(0).text()
    assert first.startswith(examples[0].title) and "basics.py" in first and examples[0].summary in first
    assert picker.width() < 900  # a list, not a 1460 px combo box
    picker.list.setCurrentRow(2)
    assert picker.chosen() == examples[2].path


def test_open_every_example_from_the_menu_with_its_guide(qtbot, window, monkeypatch):
    from jaxscope.qt.app.chrome import dialogs

    w = window
    examples = w.examples()
    assert [e.name for e in examples][:2] == ["basics", "jit_tracing"]
    for example in examples:
        monkeypatch.setattr(dialogs, "ask_example", lambda _parent, _items, example=example: example.path)
        w.doc.layout = None
        w.open_example_dialog()
        qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
        assert w.doc.path == example.path
        assert w.docks["guide"].isVisibleTo(w) and w.guide.guide is not None
        assert w.guide.browser.toPlainText().startswith(example.title)
        text, query = w.guide.guide.links()[0]
        assert w.selection.show_query(query), (example.name, text, query)
    # a link to a node inside a collapsed sub-graph expands it and selects the node
    w.doc.layout = None
    assert w.open_target(str(ROOT / "examples" / "prng.py"))
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    layout = w.doc.layout
    paths = w.selection.show_query("random_bits")
    assert paths and all("/" in p for p in paths)  # only inside library sub-graphs
    qtbot.waitUntil(lambda: w.doc.layout is not layout, timeout=TIMEOUT)
    assert set(w.graph.selected_paths()) == set(paths)


def test_a_file_runs_only_after_the_user_says_so_and_the_answer_is_remembered(qtbot, window, tmp_path):
    w = window
    asked: list[str] = []
    answer = [False]
    w.confirm_run = lambda path: asked.append(path) or answer[0]
    path = tmp_path / "untrusted.py"
    path.write_text("import jax.numpy as jnp\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n\n\ndef f(x):\n    return jnp.sin(x)\n")
    assert w.open_target(f"{path}::f")
    assert asked == [str(path)] and w.doc.result is None
    assert "View only" in w.problem.text() and "sin" in w.source.toPlainText()  # the source is shown, not run
    answer[0] = True
    w.inputs.request_trace()
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    assert len(asked) == 2
    w.doc.layout = None
    assert w.open_target(f"{path}::f")
    qtbot.waitUntil(lambda: w.doc.layout is not None, timeout=TIMEOUT)
    assert len(asked) == 2  # remembered
    examples = [e.path for e in w.examples()]
    w.confirm_run = lambda path: pytest.fail("tutorials are trusted")
    assert w.opening.may_run(examples[0])
