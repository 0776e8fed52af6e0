"""The Problems pane: what failed and where, the worker's last output when it died, and the fixes on offer.

Everything shown here can come from user code (exception messages, stderr), so it is plain text only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from jaxscope.qt.panes.inputs_panel import plain_label
from jaxscope.schema.trace import ErrorInfo

OUTPUT_LINES = 40  # of a dead worker's stderr: faulthandler's stack fits; the Log pane has all of it


def crash_looping(info: ErrorInfo | None) -> bool:
    """The client gave up restarting a worker that keeps dying, so only the user can restart it.

    ErrorInfo has no flag for this: `WorkerClient.submit` says it in its message."""
    return info is not None and info.kind == "crash" and "not restarting" in info.message


class ProblemsPanel(QWidget):
    """The error text, "Show line" / "make static" / "Restart Worker" buttons, and a crash's stderr tail."""

    restart_requested = Signal()
    shown = Signal(bool)  # a problem is shown (True) or the pane says "No problems." (False)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = plain_label()
        self.label.setObjectName("problemLabel")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.goto = QPushButton("Show line")
        self.goto.hide()
        self.static = QPushButton()
        self.static.setObjectName("makeStaticButton")
        self.static.hide()
        self.restart = QPushButton("Restart Worker")
        self.restart.setObjectName("restartWorkerButton")
        self.restart.setToolTip("Start a fresh worker process and trace again")
        self.restart.hide()
        self.restart.clicked.connect(self.restart_requested)
        self.output = QPlainTextEdit()  # plain text by construction
        self.output.setObjectName("problemOutput")
        self.output.setReadOnly(True)
        self.output.hide()
        buttons = QHBoxLayout()
        for button in (self.goto, self.static, self.restart):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addLayout(buttons)
        layout.addWidget(self.output, 1)
        layout.addStretch(0)

    def show_problem(self, text: str, info: ErrorInfo | None = None) -> None:
        """Say what failed; under a crash, the worker's last stderr lines (where the cause usually is)."""
        self.label.setText(text or "No problems.")
        crashed = info is not None and info.kind == "crash"
        tail = "\n".join(info.stderr_tail.strip().splitlines()[-OUTPUT_LINES:]) if info is not None and crashed else ""
        self.output.setPlainText(tail or "(the worker wrote nothing to stderr)")
        self.output.setVisible(crashed)
        self.restart.setVisible(crash_looping(info))
        self.shown.emit(bool(text))
