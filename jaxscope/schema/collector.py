"""The one rule for Python's cyclic garbage collector around big data: pause it while a graph, a
layout or a scene is built or decoded, and freeze what was built when the graph is big.

Why: a graph of 10k equations is ~500k small acyclic containers (frozen dataclasses, tuples). The
collector would rescan the heap again and again while they are made (1.5-4x slower at 20-50k
nodes), and every full collection afterwards rescanned all of them for ~100 ms (~0.5 s at 50k): a
freeze of whichever thread triggered it, the GUI's included. Reference counting still frees them.
"""

from __future__ import annotations

import gc
import threading
from typing import Protocol

FREEZE_MIN_NODES = 5000  # graphs with this many nodes (`Graph.node_total`) are frozen once built


class Sized(Protocol):
    """What `gc_paused(freeze=...)` measures: a `Graph` (its `node_total`)."""

    @property
    def node_total(self) -> int: ...


_pause_lock = threading.Lock()
_pauses = 0  # gc_paused regions open now, in every thread
_resume = False  # whether the collector was on when the first of them began


class gc_paused:  # noqa: N801 - used like a function: `with gc_paused(): ...`
    """Pause the cyclic GC for the block; with `freeze`, a graph the block built (or built things
    of: its layout, scene, IR links), move everything alive into the permanent generation at the
    end of the block, while still paused, when that graph has `FREEZE_MIN_NODES` nodes or more.

    Nests, also across threads: the collector runs again when the last region open in any thread
    ends (the reader, IR and scene threads pause it at once; one thread's region ending must not
    let a collection into another's). A class rather than a generator for its low cost."""

    __slots__ = ("_freeze",)

    def __init__(self, freeze: Sized | None = None) -> None:
        self._freeze = freeze

    def freeze_at_end(self, graph: Sized | None) -> None:
        """Freeze for `graph` at the end of the block: for a graph only decoded inside it."""
        self._freeze = graph

    def __enter__(self) -> gc_paused:
        global _pauses, _resume
        with _pause_lock:
            if _pauses == 0:
                _resume = gc.isenabled()
                gc.disable()
            _pauses += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _pauses
        if self._freeze is not None and exc[0] is None and self._freeze.node_total >= FREEZE_MIN_NODES:
            gc.freeze()
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
