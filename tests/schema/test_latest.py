"""The latest graph's answers (`schema.latest`): kept for that very graph, by key; dropped for a new
one; made once however many threads ask at once."""

from __future__ import annotations

import threading
import time

from jaxscope.schema.latest import LatestGraph


def test_answers_are_kept_for_that_graph_by_key_and_dropped_for_a_new_one():
    memo: LatestGraph[list[str]] = LatestGraph()
    a, b = object(), object()
    made: list[str] = []

    def make(tag: str) -> list[str]:
        made.append(tag)
        return [tag]

    first = memo.get(a, "f.py", lambda: make("a/f"))
    assert memo.get(a, "f.py", lambda: make("again")) is first and made == ["a/f"]
    assert memo.get(a, "g.py", lambda: make("a/g")) == ["a/g"]  # another key of the same graph
    assert memo.get(b, "f.py", lambda: make("b/f")) == ["b/f"]  # a new graph: asked anew
    assert memo.get(a, "f.py", lambda: make("a/f2")) == ["a/f2"]  # its answers went with it
    assert made == ["a/f", "a/g", "b/f", "a/f2"]


def test_threads_asking_at_once_share_one_answer():
    memo: LatestGraph[list[int]] = LatestGraph()
    graph = object()
    got: list[list[int]] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait()
        got.append(memo.get(graph, 1, lambda: time.sleep(0.01) or [1]))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(answer is got[0] for answer in got)  # the first stored is everyone's
