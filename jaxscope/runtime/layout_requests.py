"""One layout asked of the layout process (`LayoutRequest`: the graph, what is open, its options
and budget, and for a trace reply still arriving its lines), and the caller's handle on a streamed
one (`LayoutStream`). Held apart from `layout_client`, which queues and answers them."""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

from jaxscope.layout.preview import Region
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout


class LayoutRequest:
    __slots__ = (
        "future",
        "graph",
        "expanded",
        "opts",
        "budget",
        "cancelled",
        "lines",
        "streamed",
        "bound",
        "region",
        "on_preview",
        "scopes",
    )

    def __init__(
        self,
        future: concurrent.futures.Future[Layout],
        graph: Graph | None,
        expanded: list[str] | None,
        opts: dict[str, Any],
        budget: float,
        lines: queue.Queue[bytes | None] | None = None,
        region: Region | None = None,
        on_preview: Callable[[Layout], None] | None = None,
    ) -> None:
        self.future = future
        self.graph = graph  # None for a stream until `LayoutStream.bind`
        self.expanded = expanded  # None: the layout process picks (`scope_view.first_open`) and says which
        self.opts = opts
        self.budget = budget
        self.cancelled = False
        self.lines: queue.Queue[bytes | None] | None = lines  # a stream's trace reply, as it arrives
        self.streamed = False
        self.bound = threading.Event()  # set by `LayoutStream.bind` (and by a cancel, to wake a waiter)
        self.region: Region | None = region
        self.on_preview: Callable[[Layout], None] | None = on_preview
        self.scopes = False  # a stream: lay out `scope_view.for_window` of the trace's graph, as the GUI draws it


class LayoutStream:
    """A layout of the graph in a trace reply that is still arriving (`LayoutClient.stream`).

    `feed` is a `WorkerClient` tap: the worker's reply lines go on to the layout process as they
    come, so it decodes the graph while the GUI process decodes the same lines, and nobody
    re-encodes it. Once the GUI has its own copy, `bind` says which Graph object it is, so later
    layouts of it (expanding a cluster) are not sent again."""

    def __init__(self, request: LayoutRequest) -> None:
        self._request = request

    @property
    def future(self) -> concurrent.futures.Future[Layout]:
        return self._request.future

    @property
    def graph(self) -> Graph | None:
        return self._request.graph

    @property
    def expanded(self) -> frozenset[str] | None:
        """The clusters the layout has open; None until it arrives."""
        e = self._request.expanded
        return frozenset(e) if e is not None and self._request.future.done() else None

    def feed(self, line: bytes | None) -> None:
        lines = self._request.lines
        assert lines is not None
        lines.put(line)

    def bind(self, graph: Graph) -> None:
        self._request.graph = graph
        self._request.bound.set()
