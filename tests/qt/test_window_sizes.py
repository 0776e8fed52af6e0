"""Issue 49.5: a graph-first window at 1280x800 and 1600x1000. Under 1800 px the IR tabs with the
Source in one readable column; the bottom group folds while it only says "No problems." and opens
when a problem arrives; the graph takes most of the window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QSettings

from tests.conftest import MODELS
from tests.qt.conftest import open_and_wait


def _window(qtbot, tmp_path, width: int, height: int):
    QCoreApplication.setOrganizationName("jaxscope-tests")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.confirm_run = lambda path: True
    qtbot.addWidget(w)
    w.resize(width, height)  # before the event loop runs: the first layout's default sizes see it
    w.show()
    qtbot.waitUntil(lambda: w.docks["problems"].height() > 0, timeout=5000)
    return w


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (1600, 1000)])
def test_a_small_window_is_graph_first(qtbot, tmp_path, width: int, height: int) -> None:
    w = _window(qtbot, tmp_path, width, height)
    try:
        open_and_wait(qtbot, w, f"{MODELS}::deep_step")
        assert w.docks["jaxpr"] in w.tabifiedDockWidgets(w.docks["source"])  # one column for the code
        assert w.docks["source"].width() >= 380  # about 60 columns of code, not 30
        folded = w.docks["problems"].height()
        assert folded < 110, folded  # "No problems." takes a line, not 200 px
        view = w.graph.viewport()
        assert view.width() * view.height() >= 0.45 * width * height  # the graph has most of the window
        w.show_problem("the trace failed: something to read")
        qtbot.waitUntil(lambda: w.docks["problems"].height() >= 150, timeout=5000)  # (the tab bar takes its share of 200)
        w.show_problem("")
        qtbot.waitUntil(lambda: w.docks["problems"].height() <= folded + 2, timeout=5000)
    finally:
        w.close()


def test_a_wide_window_keeps_the_ir_beside_the_graph(qtbot, tmp_path) -> None:
    w = _window(qtbot, tmp_path, 1900, 1100)
    try:
        assert w.docks["jaxpr"] not in w.tabifiedDockWidgets(w.docks["source"])
    finally:
        w.close()
