"""The page the window shows before a file is open: Open File…, Open Example…, the recent files."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget

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
