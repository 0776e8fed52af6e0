"""Graph export on a background thread: an SVG of 10k nodes takes about a second to write, a PNG
more, an HTML page lays out every group ahead, and the window must keep painting meanwhile (the
drawing pipeline is plain Python and QImage painting, both fine off the GUI thread). What is not
laid out yet (another collapse level than the window's, a page's bodies, JSON's program as it is)
goes to the exports' own drawer (`jaxscope.drawer`): dot holds the GIL for seconds, so it never
runs in the GUI's process."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from jaxscope.drawer import Drawer
from jaxscope.drawing import DrawRequest


class ExportJobs(QObject):
    """One export at a time, in order; `finished(path, format)` or `failed(path, message)` on the GUI thread."""

    finished = Signal(str, str)
    failed = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-export")
        self.drawer = Drawer()  # its layout process starts with the first export that needs one

    def close(self) -> None:
        """Stop the exports' layout process, if one was started."""
        self.drawer.close()

    def write(self, request: DrawRequest, path: str, sources: Callable[[], dict[str, str]] | None = None) -> str:
        """Draw `request` and write it to `path` (its format from the extension), on this thread;
        an HTML page also carries the source texts `sources()` gives."""
        if sources is not None and request.page:
            request = replace(request, decorations=replace(request.decorations, sources=sources()))
        return self.drawer.draw(request).write(path)

    def start(self, request: DrawRequest, path: str, sources: Callable[[], dict[str, str]] | None = None) -> Future[str]:
        """`write`, off the GUI thread (the sources are read there too)."""
        future = self._pool.submit(self.write, request, path, sources)
        future.add_done_callback(lambda f: self._done(path, f))
        return future

    def _done(self, path: str, future: Future[str]) -> None:
        exc = future.exception()
        if exc is None:
            self.finished.emit(path, future.result())  # queued: emitted from the export thread
        else:
            self.failed.emit(path, f"{type(exc).__name__}: {exc}" if not isinstance(exc, (OSError, ValueError)) else str(exc))
