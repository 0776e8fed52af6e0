"""Answers about the latest graph asked of, kept for the next question: the window asks the same
walk of one trace again and again (a click's source line, the line colours, the IR's colours; a
cost's rows, then its total), from the result's, the IR parser's and the GUI's threads. One memo
per question, the graph compared by identity (an equal graph of another trace is another
question), each lookup and store under its lock; a new graph drops the last one's answers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class LatestGraph(Generic[T]):
    """`get(graph, key, make)`: the answer made for `key` of this very graph, else `make()`'s, kept.
    Do not mutate what it returns: every caller of that graph shares it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._graph: object = None
        self._answers: dict[Hashable, T] = {}

    def get(self, graph: object, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if self._graph is graph and key in self._answers:
                return self._answers[key]
        made = make()  # outside the lock: a walk of 50k equations takes a while, and may ask another memo
        with self._lock:
            if self._graph is not graph:
                self._graph, self._answers = graph, {}
            return self._answers.setdefault(key, made)
