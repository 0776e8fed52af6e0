"""The real main window (real worker, offscreen) for window tests, with settings in a temp dir."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QSettings

TIMEOUT = 90_000


@pytest.fixture
def window(qtbot, tmp_path):
    QCoreApplication.setOrganizationName("jaxscope-tests")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    from jaxscope.qt.app.window import MainWindow

    w = MainWindow(theme="light")
    w.confirm_run = lambda path: True  # the run-this-file question (tested on its own)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.close()


def open_and_wait(qtbot, w, target: str) -> None:
    """Open `target` and wait for its graph on screen and its printed jaxpr (which follows the graph)."""
    w.doc.layout = None
    assert w.open_target(target)
    qtbot.waitUntil(lambda: w.doc.layout is not None and bool(w.doc.result and w.doc.result.jaxpr_text), timeout=TIMEOUT)
