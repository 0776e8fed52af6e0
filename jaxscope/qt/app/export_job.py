"""Graph export on a background thread: an SVG of 10k nodes takes about a second to write, a PNG
more, and the window must keep painting meanwhile (the exporter is plain Python and QImage
painting, both fine off the GUI thread)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal

from jaxscope.exporter import export
from jaxscope.layout.engine import compute_layout
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout


class ExportJobs(QObject):
    """One export at a time, in order; `finished(path, format)` or `failed(path, message)` on the GUI thread."""

    finished = Signal(str, str)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-export")

    def start(
        self,
        graph: Graph,
        layout: Layout,
        path: str,
        theme: str,
        long_edges: str = "auto",
        links: dict[str, Any] | None = None,
        *,
        dpi: int = 96,
        legend: bool = False,
        expanded: frozenset[str] | None = None,
    ) -> Future[str]:
        """Write `graph` to `path` (its format from the extension), off the GUI thread; laid out
        again with `expanded` open when given (another collapse level than the window's)."""

        def job() -> str:
            drawn = layout if expanded is None else compute_layout(graph, expanded)
            return export(graph, drawn, path, theme=theme, long_edges=long_edges, links=links, dpi=dpi, legend=legend)

        future = self._pool.submit(job)
        future.add_done_callback(lambda f: self._done(path, f))
        return future

    def _done(self, path: str, future: Future[str]) -> None:
        exc = future.exception()
        if exc is None:
            self.finished.emit(path, future.result())  # queued: emitted from the export thread
        else:
            self.failed.emit(path, f"{type(exc).__name__}: {exc}" if not isinstance(exc, (OSError, ValueError)) else str(exc))
