"""Which answers are still wanted, and whether the window is busy: the workbench's jobs in plain
Python (issue 61.1).

Every request the window sends (a trace, a run, a layout, the printed jaxpr or the HLO) gets a
ticket in its lane; a newer ticket in the same lane makes the older one's answer moot (the latest
request wins), whatever thread that answer arrives on. Traces and the jobs the user asks for
("retrace", "run") share a lane, as the worker runs one at a time; layouts have theirs, and the IR
texts, which are not a busy state, theirs. The Qt side (`qt.app.controller.Controller`) holds the
futures and asks the ledger which of them to pass on; nothing here imports Qt, so the rule is
tested on its own.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Lane = Literal["user", "layout", "ir"]
BUSY_LANES: frozenset[Lane] = frozenset({"user", "layout"})  # the window is busy while one of these runs


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request: its lane and its place in the order of all requests."""

    lane: Lane
    number: int


class JobLedger:
    """The latest ticket of each lane, and the busy state; safe to ask from any thread."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self._latest: dict[Lane, int] = {}
        self._lock = threading.Lock()
        self._busy = False
        self._listeners: list[Callable[[bool], None]] = []

    def on_busy(self, listener: Callable[[bool], None]) -> None:
        """`listener(busy)` on each change of the busy state (on the thread that started or finished)."""
        self._listeners.append(listener)

    @property
    def busy(self) -> bool:
        return self._busy

    def start(self, lane: Lane) -> Ticket:
        """A new request in `lane`: the answers to the lane's earlier ones are moot from now on."""
        with self._lock:
            ticket = Ticket(lane, next(self._numbers))
            self._latest[lane] = ticket.number
        if lane in BUSY_LANES:
            self._set_busy(True)
        return ticket

    def current(self, ticket: Ticket) -> bool:
        """Whether `ticket` is still the latest of its lane (its answer is wanted)."""
        with self._lock:
            return self._latest.get(ticket.lane) == ticket.number

    def finish(self, ticket: Ticket, more_to_come: bool = False) -> bool:
        """`ticket`'s answer has come: True when it is wanted; then the busy state ends, unless
        `more_to_come` (a trace whose layout follows)."""
        if not self.current(ticket):
            return False
        if ticket.lane in BUSY_LANES and not more_to_come:
            self._set_busy(False)
        return True

    def drop(self, lane: Lane) -> None:
        """No answer in `lane` is wanted any more (the window closes)."""
        with self._lock:
            self._latest[lane] = next(self._numbers)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            for listener in list(self._listeners):
                listener(busy)
