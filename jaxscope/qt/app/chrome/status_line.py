"""The status bar's own widgets: what the worker (or the layout process) is doing, for how long,
and a Cancel button that shows once a job has run half a second."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPushButton, QStatusBar

from jaxscope.qt.panes.inputs_panel import plain_label

PHASE_TEXT = {  # the status bar while the worker (or the layout process) works
    "startup": "starting the worker (importing jax)…", "load": "running the file…", "trace": "tracing…",
    "graph": "building the graph…", "layout": "laying out…", "inputs": "making the inputs…",
    "compile": "compiling with XLA…", "run": "running jitted…", "eager": "running eagerly…", "compare": "comparing…",
    "nan": "looking for the first NaN…", "divergence": "comparing every equation…",
}  # fmt: skip


class StatusLine:
    def __init__(self, bar: QStatusBar) -> None:
        self.phase = ""  # the worker's phase now ("" before the first)
        self._started = 0.0
        self._busy = False
        self.phase_label = plain_label("starting the worker…")
        self.elapsed_label = plain_label("")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.hide()
        bar.addWidget(self.phase_label, 1)
        bar.addPermanentWidget(self.elapsed_label)
        bar.addPermanentWidget(self.cancel_button)
        self._tick = QTimer(bar)
        self._tick.setInterval(100)
        self._tick.timeout.connect(lambda: self.elapsed_label.setText(f"{time.monotonic() - self._started:.1f} s"))

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.phase_label.setText(PHASE_TEXT.get(phase, phase))

    def set_busy(self, busy: bool, still_busy: Callable[[], bool]) -> None:
        """A job started (the clock runs; Cancel shows after 0.5 s if `still_busy()`) or ended."""
        self._busy = busy
        if busy:
            started = self._started = time.monotonic()
            self._tick.start()

            def show() -> None:  # only for the job it was started for, while it runs (the worker may be busy with the IR since)
                self.cancel_button.setVisible(self._busy and self._started == started and still_busy())

            # with the button as the timer's context: a window closed meanwhile cancels it (it raised in CI)
            QTimer.singleShot(500, self.cancel_button, show)
        else:
            self._tick.stop()
            self.cancel_button.hide()
            self.elapsed_label.setText(f"{time.monotonic() - self._started:.2f} s")
