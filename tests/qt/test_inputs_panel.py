"""The inputs panel: the `--args` field, checked as it changes."""

from __future__ import annotations

from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.targets import argspec
from jaxscope.targets.discover import discover_source


def test_inputs_are_parsed_once_per_text(qtbot, monkeypatch):
    """Opening a function, then tracing it, checks the same inputs three times: one parse (a
    params pytree can take 80 ms to parse, on the GUI thread); an edit parses again."""
    parsed: list[str] = []
    real = argspec.parse_call
    monkeypatch.setattr(argspec, "parse_call", lambda text: parsed.append(text) or real(text))
    panel = InputsPanel()
    qtbot.addWidget(panel)
    module = discover_source("JAXSCOPE_ARGS = {'f': 'f32[3]'}\n\ndef f(x):\n    return x\n", "m.py")
    with qtbot.waitSignal(panel.trace_requested) as sent:
        panel.set_module(module, "f")
        panel.request_trace()
    assert sent.args == ["f", "f32[3]", ""] and parsed == ["f32[3]"]
    panel.args.setText("f33[3]")  # a bad spec is flagged at once, and stays flagged
    assert "f33" in panel.error.text() and not panel.trace_button.isEnabled()
    panel.request_trace()
    assert parsed == ["f32[3]", "f33[3]"] and not panel.trace_button.isEnabled()


def test_long_inputs_are_kept_whole(qtbot):
    """A params pytree written out runs past QLineEdit's default 32767 characters: kept whole, it
    parses (cut, it failed as "'[' is never closed")."""
    panel = InputsPanel()
    qtbot.addWidget(panel)
    module = discover_source("def f(params):\n    return params\n", "m.py")
    panel.set_module(module, "f")
    text = "[" + ", ".join(["{'w': f32[64,64], 'b': f32[64]}"] * 1500) + "]"
    assert len(text) > 40_000
    panel.args.setText(text)
    qtbot.waitUntil(lambda: panel.params.text().startswith("params: traced"))
    assert panel.args.text() == text and panel.error.text() == "" and panel.trace_button.isEnabled()


def test_long_inputs_are_checked_on_a_thread_and_a_trace_does_not_wait(qtbot, monkeypatch):
    """Inputs past `ASYNC_CHARS` (a 5000-array params pytree: ~130 ms to parse) are parsed apart
    (from a thread, in a child process): the panel answers at once, a trace goes ahead (the worker
    checks the text too), and the verdict shows when it comes, unless the text changed meanwhile."""
    import threading

    from jaxscope.qt.panes import inputs_panel
    from jaxscope.qt.panes.inputs_panel import ASYNC_CHARS, ASYNC_DELAY_S

    threads: list[str] = []  # from where each long text was parsed apart
    here: list[int] = []  # long texts parsed in this process
    real, real_apart = argspec.parse_call, inputs_panel.parse_call_apart
    monkeypatch.setattr(argspec, "parse_call", lambda text: (len(text) > ASYNC_CHARS and here.append(len(text))) or real(text))
    monkeypatch.setattr(inputs_panel, "parse_call_apart", lambda text: threads.append(threading.current_thread().name) or real_apart(text))
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.set_module(discover_source("def f(params):\n    return params\n", "m.py"), "f")
    good = "[" + ", ".join(["f32[16,16]"] * 1500) + "]"
    assert len(good) > ASYNC_CHARS
    with qtbot.waitSignal(panel.trace_requested, timeout=1000) as sent:
        panel.args.setText(good)
        assert panel.params.text() == "checking the inputs…" and panel.trace_button.isEnabled()
        panel.request_trace()
    assert sent.args == ["f", good, ""]
    qtbot.waitUntil(lambda: panel.params.text().startswith("params: traced [f32[16,16], "))
    assert len(threads) == 1 and threads[0].startswith("jaxscope-inputs")
    assert panel.parse(good) is panel.parse(good)  # remembered: no parse on the GUI thread
    bad = good[:-1]  # never closed
    panel.args.setText(bad)
    qtbot.waitUntil(lambda: "never closed" in panel.error.text())
    assert not panel.trace_button.isEnabled()
    with qtbot.assertNotEmitted(panel.trace_requested):
        panel.request_trace()
    panel.args.setText(good + " ")  # replaced before it is parsed: never parsed
    panel.args.setText("f33[1]")
    qtbot.wait(int(2 * ASYNC_DELAY_S * 1000) + 200)
    assert "f33" in panel.error.text() and not panel.trace_button.isEnabled()
    typed = [good + " " * k for k in range(2, 5)]  # typing in a long field: only the last text is parsed
    for text in typed:
        panel.args.setText(text)
    qtbot.waitUntil(lambda: panel.parse(typed[-1]) is not None and not panel.parsing)
    assert len(threads) == 3 and panel.error.text() == "" and panel.trace_button.isEnabled()
    assert here == []


def test_a_long_spec_is_cut_in_the_parameter_list(qtbot):
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.set_module(discover_source("def f(params, n):\n    return params\n", "m.py"), "f")
    panel.args.setText("[" + ", ".join(["f32[64,64]"] * 100) + "], n=3")
    first, second = panel.params.text().splitlines()
    assert first.startswith("params: traced [f32[64,64], ") and first.endswith("…") and len(first) <= 8 + 120
    assert second == "n: static 3"


def test_a_parameter_list_taller_than_its_room_scrolls_instead_of_being_cut(qtbot):
    """Squeezed by the docks below it, the parameter list showed its first and last lines cut in
    half: it now keeps its full height inside a scroll area, top-aligned."""
    panel = InputsPanel()
    qtbot.addWidget(panel)
    names = [f"p{i}" for i in range(12)]
    panel.set_module(discover_source(f"def f({', '.join(names)}):\n    return p0\n", "m.py"), "f")
    panel.args.setText(", ".join(f"f32[{i + 1}]" for i in range(12)))
    panel.resize(420, 160)
    panel.show()
    qtbot.waitExposed(panel)
    label, area = panel.params, panel.params_area
    assert label.text().count("\n") == 11 and area.widget() is label
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)  # less room than lines: it scrolls
    assert label.height() >= label.heightForWidth(label.width())  # every line whole
    area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
    assert label.visibleRegion().boundingRect().bottom() >= label.height() - 1  # the last line can be seen


def test_a_short_parameter_list_takes_the_height_of_its_lines(qtbot):
    """A scroll area's least height is its scroll bar's: a two-line list stood above a 40 px gap."""
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.set_module(discover_source("def f(x, w):\n    return x\n", "m.py"), "f")
    panel.args.setText("f32[4,4], f32[4,4]")
    panel.resize(460, 300)
    panel.show()
    qtbot.waitExposed(panel)
    label, area = panel.params, panel.params_area
    assert label.text().count("\n") == 1
    assert area.height() == label.heightForWidth(area.viewport().width()) + 2 * area.frameWidth()
    assert area.verticalScrollBar().maximum() == 0
