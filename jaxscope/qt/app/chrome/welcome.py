"""The page the window shows before a file is open (Open File…, Open Example…, the recent files), and
the recent targets themselves: kept in the settings, listed in File → Open Recent and on that page."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QMenu, QPushButton, QVBoxLayout, QWidget

from jaxscope.qt.app.chrome import prefs
from jaxscope.qt.panes.inputs_panel import plain_label


class WelcomePage(QWidget):
    def __init__(self, open_file: Callable[[], None], open_example: Callable[[], None], open_target: Callable[[str], object]) -> None:
        super().__init__()
        title = QLabel("jaxscope")
        title.setStyleSheet("font-size: 28px; font-weight: 600;")
        subtitle = plain_label("See what jax.jit sees: open a Python file and trace one of its functions.")
        file_button = QPushButton("Open File…")
        file_button.clicked.connect(open_file)
        example_button = QPushButton("Open Example…")
        example_button.clicked.connect(open_example)
        self.recent = QListWidget()
        self.recent.setObjectName("recentList")
        self.recent.itemActivated.connect(lambda item: open_target(item.text()))
        buttons = QHBoxLayout()
        buttons.addWidget(file_button)
        buttons.addWidget(example_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 40, 48, 40)
        layout.addWidget(title)
        layout.addWidget(subtitle)
        layout.addSpacing(16)
        layout.addLayout(buttons)
        layout.addSpacing(16)
        layout.addWidget(plain_label("Recent"))
        layout.addWidget(self.recent, 1)

    def set_recent(self, items: list[str]) -> None:
        self.recent.clear()
        self.recent.addItems(items)


MAX_RECENT = 10


class RecentTargets:
    """The targets opened last (``file.py``, ``file.py::function`` or a saved trace), newest first."""

    def __init__(self, settings: QSettings, menu: QMenu, welcome: WelcomePage, open_target: Callable[[str], object]) -> None:
        self.settings, self.menu, self.welcome, self.open_target = settings, menu, welcome, open_target
        self.paused = False  # while a saved trace is shown: the file it names is a label, not something the user opened
        self.welcome.set_recent(self.items())
        self._refresh_menu()

    def items(self) -> list[str]:
        """The recent targets whose file still exists (the settings file is the user's: read defensively)."""
        items = prefs.read_strings(self.settings, "recent")
        return [v for v in items if os.path.exists(v.rpartition("::")[0] or v)][:MAX_RECENT]

    def remember(self, target: str) -> bool:
        """Put `target` first; False when the settings could not be written."""
        if self.paused:
            return True
        saved = prefs.update_strings(self.settings, "recent", lambda items: [target, *(t for t in items if t != target)][:MAX_RECENT])
        self.welcome.set_recent(self.items())
        self._refresh_menu()
        return saved

    def _refresh_menu(self) -> None:
        self.menu.clear()
        for target in self.items():
            action = self.menu.addAction(target)
            action.triggered.connect(lambda checked=False, t=target: self.open_target(t))
