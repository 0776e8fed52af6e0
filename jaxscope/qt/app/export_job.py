"""Graph export on a background thread: an SVG of 10k nodes takes about a second to write, a PNG
more, an HTML page lays out every group ahead, and the window must keep painting meanwhile (the
drawing pipeline is plain Python and QImage painting, both fine off the GUI thread). Another
collapse level than the window's is laid out by a layout process of the exports' own (dot holds
the GIL for seconds: it never runs in the GUI's process), with the window's direction and notes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from jaxscope.drawing import Drawing
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.schema.layout import Layout


class ExportJobs(QObject):
    """One export at a time, in order; `finished(path, format)` or `failed(path, message)` on the GUI thread."""

    finished = Signal(str, str)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-export")
        self._layouts: LayoutClient | None = None  # started with the first export that needs its own layout

    def _layout(self, drawing: Drawing, expanded: frozenset[str]) -> Layout:
        """`drawing`'s view laid out again with `expanded` open, as the window laid it out."""
        if self._layouts is None:
            self._layouts = LayoutClient(budget_s=drawing.options.layout_budget)
        notes = {"annotations": drawing.layout.annotations} if drawing.layout.annotations else {}
        return self._layouts.layout(drawing.graph, expanded, direction=drawing.options.direction, **notes)

    def close(self) -> None:
        """Stop the exports' layout process, if one was started."""
        if self._layouts is not None:
            self._layouts.close()
            self._layouts = None

    def start(
        self,
        drawing: Drawing,
        path: str,
        links: dict[str, Any] | None = None,
        *,
        expanded: frozenset[str] | None = None,
        sources: Callable[[], dict[str, str]] | None = None,
    ) -> Future[str]:
        """Write `drawing` to `path` (its format from the extension), off the GUI thread; laid out
        again with `expanded` open when given (another collapse level than the window's). An HTML
        page also carries the source texts `sources()` gives (read on this thread)."""

        def job() -> str:
            drawn = drawing if expanded is None else replace(drawing, layout=self._layout(drawing, expanded))
            return drawn.write(path, links=links, sources=sources() if sources is not None else None)

        future = self._pool.submit(job)
        future.add_done_callback(lambda f: self._done(path, f))
        return future

    def _done(self, path: str, future: Future[str]) -> None:
        exc = future.exception()
        if exc is None:
            self.finished.emit(path, future.result())  # queued: emitted from the export thread
        else:
            self.failed.emit(path, f"{type(exc).__name__}: {exc}" if not isinstance(exc, (OSError, ValueError)) else str(exc))
