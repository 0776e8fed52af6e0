"""The targets opened last (``file.py`` or ``file.py::function``), newest first: kept in the
settings, listed in File → Open Recent and on the welcome page."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu

from jaxscope.qt.app import prefs
from jaxscope.qt.app.welcome import WelcomePage

MAX_RECENT = 10


class RecentTargets:
    def __init__(self, settings: QSettings, menu: QMenu, welcome: WelcomePage, open_target: Callable[[str], object]) -> None:
        self.settings, self.menu, self.welcome, self.open_target = settings, menu, welcome, open_target
        self.welcome.set_recent(self.items())
        self._refresh_menu()

    def items(self) -> list[str]:
        """The recent targets whose file still exists (the settings file is the user's: read defensively)."""
        items = prefs.read_strings(self.settings, "recent")
        return [v for v in items if os.path.exists(v.rpartition("::")[0] or v)][:MAX_RECENT]

    def remember(self, target: str) -> bool:
        """Put `target` first; False when the settings could not be written."""
        saved = prefs.update_strings(self.settings, "recent", lambda items: [target, *(t for t in items if t != target)][:MAX_RECENT])
        self.welcome.set_recent(self.items())
        self._refresh_menu()
        return saved

    def _refresh_menu(self) -> None:
        self.menu.clear()
        for target in self.items():
            action = self.menu.addAction(target)
            action.triggered.connect(lambda checked=False, t=target: self.open_target(t))
