"""The inputs panel: the `--args` field, checked as it changes."""

from __future__ import annotations

from jaxscope.core import argspec
from jaxscope.core.discover import discover_source
from jaxscope.qt.inputs_panel import InputsPanel


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
    assert sent.args == ["f", "f32[3]"] and parsed == ["f32[3]"]
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
    assert panel.args.text() == text and panel.error.text() == "" and panel.trace_button.isEnabled()


def test_a_long_spec_is_cut_in_the_parameter_list(qtbot):
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.set_module(discover_source("def f(params, n):\n    return params\n", "m.py"), "f")
    panel.args.setText("[" + ", ".join(["f32[64,64]"] * 100) + "], n=3")
    first, second = panel.params.text().splitlines()
    assert first.startswith("params: traced [f32[64,64], ") and first.endswith("…") and len(first) <= 8 + 120
    assert second == "n: static 3"
