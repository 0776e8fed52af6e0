"""What the window keeps between runs: typed reads of QSettings that never raise (the ini file is the
user's: hand-edited, synced, corrupt), and the window's size and dock arrangement, restored from
them or laid out afresh.

PySide stores Python objects as pickles in `@Variant(...)` values and raises on a broken one, at
the first read of *any* key; a value of another type converts to something odd (a list to "",
"garbage" to a str where bytes were expected). Each read here gives the default instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow

from jaxscope.qt.app.chrome.dock_fit import DockFit

T = TypeVar("T")


def read(settings: QSettings, key: str, default: T) -> T:
    """`key` converted to the type of `default`, or `default` when missing, unreadable or of another type."""
    kind = type(default)
    try:
        raw = settings.value(key)
        value = settings.value(key, default, type=kind)
    except Exception:
        return default
    if kind is bool and not (isinstance(raw, bool) or raw in ("true", "false")):
        return default  # the bool conversion turns anything (a rect, "maybe") into True or False
    return value if isinstance(value, kind) else default


def read_strings(settings: QSettings, key: str) -> list[str]:
    """A list of strings (paths, targets); other items are dropped."""
    values: list[object] = read(settings, key, [])
    return [v for v in values if isinstance(v, str)]


def update_strings(settings: QSettings, key: str, update: Callable[[list[str]], list[str]]) -> bool:
    """Read-modify-write a list of strings, merged with what another window wrote meanwhile (its
    own copy of the settings would otherwise overwrite this one's when it closes, and the other
    way round). False when the settings could not be written (a read-only file, a folder in its
    place): the caller says so, once."""
    settings.sync()  # another window's writes, read now
    settings.setValue(key, update(read_strings(settings, key)))
    settings.sync()
    return settings.status() == QSettings.Status.NoError


CHOICES_KEY = "inputChoices"  # file -> function -> [inputs source, maker elsewhere] (InputsPanel.choices)
CHOICES_FILES = 200


def read_choices(settings: QSettings, path: str) -> dict[str, list[str]]:
    """The inputs chosen per function of `path`; anything malformed is dropped."""
    entry = _read_json(settings, CHOICES_KEY).get(path)
    if not isinstance(entry, dict):
        return {}
    return {k: [str(v[0]), str(v[1])] for k, v in entry.items() if isinstance(v, list) and len(v) == 2}


def update_choices(settings: QSettings, path: str, choices: dict[str, list[str]]) -> bool:
    """Remember `choices` for `path` (the newest files kept), merged as `update_strings` does."""
    settings.sync()
    table = _read_json(settings, CHOICES_KEY)
    table.pop(path, None)
    table[path] = choices
    settings.setValue(CHOICES_KEY, json.dumps(dict(list(table.items())[-CHOICES_FILES:])))
    settings.sync()
    return settings.status() == QSettings.Status.NoError


def _read_json(settings: QSettings, key: str) -> dict[str, object]:
    try:
        value = json.loads(read(settings, key, "") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


STATE_VERSION = 3  # bump when docks change: an old saved state would misplace the new ones


def restore(window: QMainWindow, settings: QSettings, docks: dict[str, QDockWidget]) -> None:
    geometry = read(settings, "geometry", QByteArray())
    state = read(settings, "state", QByteArray())
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
    fit = window.findChild(DockFit)
    if fit is not None:
        fit.apply_defaults()  # a narrow window: Source and IR share a column; the empty bottom folds


def save(window: QMainWindow, settings: QSettings) -> None:
    settings.setValue("geometry", window.saveGeometry())
    settings.setValue("state", window.saveState(STATE_VERSION))
