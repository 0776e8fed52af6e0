"""Controller edge cases that the window tests reach only by timing (fake worker, no processes)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from jaxscope.qt.controller import Controller


class _ResolvedWorker:
    """Answers every job at once with its request; enough for the IR path."""

    def submit(self, op: str, request: Any, decode: Any, on_phase: Any = None) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(request)
        return future

    def close(self) -> None:
        pass


class _Layouts:
    def close(self) -> None:
        pass


def test_close_with_a_parse_queued_reports_nothing(qtbot):
    """close() cancels queued IR parses; their cancelled futures must not reach the slot as failures
    (CI saw CancelledError raised in the Qt event loop at teardown)."""
    controller = Controller(worker=_ResolvedWorker(), layouts=_Layouts())  # type: ignore[arg-type]
    release = threading.Event()
    finished: list[Any] = []
    failed: list[Any] = []
    controller.jaxpr_finished.connect(lambda *a: finished.append(a))
    controller.jaxpr_failed.connect(lambda *a: failed.append(a))
    controller.jaxpr("first", lambda r: release.wait(10))  # type: ignore[arg-type]  # holds the parse thread
    controller.jaxpr("second", lambda r: r)  # type: ignore[arg-type]  # queued behind it
    controller.close()  # cancels "second"
    release.set()
    qtbot.wait(50)
    assert failed == [] and finished == []
