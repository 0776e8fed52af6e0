"""The status bar's Cancel button: for the job it was started for, while it runs."""

from __future__ import annotations

from PySide6.QtWidgets import QStatusBar

from jaxscope.qt.app.chrome.status_line import StatusLine


def test_cancel_does_not_show_after_its_job_ended_while_the_worker_works_on(qtbot) -> None:
    """A re-trace of 0.4 s ended before Cancel's half second, while the worker went on with the IR
    texts: the button showed then and stayed, next to a frozen clock (a walk of the window saw it)."""
    bar = QStatusBar()
    qtbot.addWidget(bar)
    bar.show()
    line = StatusLine(bar)
    line.set_busy(True, lambda: True)
    line.set_busy(False, lambda: True)  # ended at once; the worker is still busy with other work
    qtbot.wait(700)
    assert not line.cancel_button.isVisible()
    line.set_busy(True, lambda: True)  # a long job: Cancel shows after half a second
    qtbot.waitUntil(line.cancel_button.isVisible, timeout=2000)
    line.set_busy(False, lambda: True)
    assert not line.cancel_button.isVisible()
