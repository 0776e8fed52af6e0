"""Trace → Python for Your Code: the interpreter is checked off the GUI thread, then the workers run in it."""

from __future__ import annotations

import pathlib
import sys

from tests.qt.conftest import TIMEOUT, open_and_wait

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_choosing_the_python_for_user_code(qtbot, window, tmp_path):
    w = window
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    w.jobs.check_python(str(tmp_path / "missing-python"), remember=True)
    qtbot.waitUntil(lambda: "no such interpreter" in w.problem.text(), timeout=TIMEOUT)
    assert w.controller.worker.python is None and w.jobs.python_setting() is None

    w.jobs.check_python(str(python), remember=True)
    qtbot.waitUntil(lambda: w.controller.worker.python == str(python), timeout=TIMEOUT)
    assert w.jobs.python_setting() == str(python) and "Your code runs in" in w.statusBar().currentMessage()
    open_and_wait(qtbot, w, f"{ROOT / 'examples' / 'basics.py'}::predict")  # traced in that interpreter
    assert w.controller.worker.worker_info().get("pid")
