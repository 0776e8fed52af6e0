"""The window's size and dock arrangement: restored from the settings, or laid out afresh."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow

from jaxscope.qt.app import prefs

STATE_VERSION = 3  # bump when docks change: an old saved state would misplace the new ones


def restore(window: QMainWindow, settings: QSettings, docks: dict[str, QDockWidget]) -> None:
    geometry = prefs.read(settings, "geometry", QByteArray())
    state = prefs.read(settings, "state", QByteArray())
    if not geometry.isEmpty():
        window.restoreGeometry(geometry)
    else:
        window.resize(1400, 900)
    if not state.isEmpty() and window.restoreState(state, STATE_VERSION):
        return
    QTimer.singleShot(0, window, lambda: default_sizes(window, docks))  # sizes apply once the window is laid out


def default_sizes(window: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """Graph first: the side columns take a fifth of the width each at most, the graph over 60 %."""
    width = max(window.width(), 800)
    window.resizeDocks([docks["inputs"], docks["source"]], [300, 580], Qt.Orientation.Vertical)
    window.resizeDocks([docks["source"], docks["jaxpr"]], [max(260, width // 5), max(240, width * 9 // 50)], Qt.Orientation.Horizontal)
    window.resizeDocks([docks["problems"]], [120], Qt.Orientation.Vertical)


def save(window: QMainWindow, settings: QSettings) -> None:
    settings.setValue("geometry", window.saveGeometry())
    settings.setValue("state", window.saveState(STATE_VERSION))
