"""Saved traces in the window: open one (File → Open, drag and drop, `jaxscope NAME.jaxscope`) and
it is shown as a live trace is, answered by the document instead of a worker (`SavedWorker`); save
the trace shown (File → Save Trace…) with its jaxpr, IR texts, last run and source files."""

from __future__ import annotations

import os
from concurrent.futures import Future
from typing import Protocol

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QFileDialog

from jaxscope.about import __version__
from jaxscope.qt.app.file_watch import FileWatch
from jaxscope.qt.app.host import WindowHost
from jaxscope.qt.app.ir_side import IrSide
from jaxscope.qt.app.jobs import Jobs, when_done
from jaxscope.qt.app.welcome import RecentTargets
from jaxscope.runtime.saved_worker import SavedWorker
from jaxscope.schema.document import SUFFIX, DocumentError, TraceDocument, read, user_files
from jaxscope.spec.discover import DiscoveryError, ModuleInfo, discover_source


class TraceFilesHost(WindowHost, Protocol):
    """What showing and saving a saved trace use of the window (`MainWindow` satisfies it)."""

    files: FileWatch
    recent: RecentTargets
    jobs: Jobs
    ir_side: IrSide

    def show_file(self, path: str, function: str, args: str | None, inputs: str | None,
                  found: ModuleInfo | DiscoveryError) -> bool: ...

    def trace_function(self, function: str, args: str, inputs: str = "") -> None: ...

    def settings_saved(self, ok: bool) -> None: ...

    def setWindowTitle(self, title: str) -> None: ...


def droppable(urls: list[QUrl]) -> str:
    """The first dropped file the window opens: a Python file or a saved trace ("" none)."""
    return next((u.toLocalFile() for u in urls if u.toLocalFile().endswith((".py", SUFFIX))), "")


class TraceFiles:
    def __init__(self, host: TraceFilesHost) -> None:
        self.host = host
        self.path = ""  # the saved trace shown ("" while a live file is)

    @property
    def doc(self) -> TraceDocument | None:
        saved = self.host.controller.saved
        return saved.doc if saved is not None else None

    def text(self, path: str) -> str:
        """A source file's text: the saved copy while a saved trace is shown, else the file's."""
        doc = self.doc
        if doc is not None:
            return doc.source(path) or f"# {path}: not saved in {os.path.basename(self.path)}\n"
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def open(self, path: str) -> bool:
        """Read the document apart (a big one takes a second), then show it."""
        path = os.path.abspath(path)
        self.host.phase_label.setText(f"reading {os.path.basename(path)}…")
        when_done(self.host.window(), lambda done: self._opened(path, done), read, path)
        return True

    def _opened(self, path: str, done: Future[TraceDocument]) -> None:
        host = self.host
        host.phase_label.setText("")
        try:
            doc = done.result()
        except DocumentError as exc:  # the document shown (and its result) stay
            host.show_problem(str(exc))
            return
        request = doc.trace.request
        where = request.function.path or path
        try:
            module = discover_source(doc.source(where) or "", where)
        except DiscoveryError:
            module = discover_source("", where)
        host.controller.saved = SavedWorker(doc, os.path.basename(path))
        host.files.paused = True  # the saved copy is shown: an edit of the file on disk is no reason to re-trace
        self.path = path
        if not host.show_file(where, request.function.qualname, request.args or None, request.inputs or None, module):
            return
        if module.get(request.function.qualname) is None:  # its source was not saved: trace (replay) it all the same
            host.trace_function(request.function.qualname, request.args, request.inputs)
        host.setWindowTitle(f"jaxscope — {os.path.basename(path)} (saved trace of {request.function.qualname})")
        host.docks["source"].setWindowTitle(f"Source — {os.path.basename(where)} (as saved)")
        host.settings_saved(host.recent.remember(path))

    def leave(self) -> None:
        """A live file is opened: the worker answers again."""
        if self.host.controller.saved is not None:
            self.host.controller.saved = None
            self.host.files.paused = False
            self.path = ""

    def current(self) -> TraceDocument | None:
        """The trace shown as a document: what the window has of it now."""
        from jaxscope.documents import snapshot, stamp

        host = self.host
        result = host.doc.result
        if result is None:
            return None
        run = host.jobs.last_run
        if run is not None and (run.request.function, run.request.args, run.request.inputs) != (
                result.request.function, result.request.args, result.request.inputs):
            run = None
        ir = host.ir_side.results
        known = self.doc.sources if self.doc is not None else None
        sources = snapshot(user_files(result), known)
        return TraceDocument(result, ir.get("stablehlo"), ir.get("compiled"), run, sources, stamp(), __version__)

    def save_dialog(self) -> None:
        host = self.host
        doc = self.current()
        if doc is None:
            host.show_problem("Nothing to save yet: trace a function first.")
            return
        start = self.path or os.path.join(os.path.dirname(host.doc.path), f"{doc.trace.request.function.qualname}{SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(host.window(), "Save Trace", start, f"jaxscope trace (*{SUFFIX})")
        if path:
            self.save(path if path.endswith(SUFFIX) else path + SUFFIX, doc)

    def save(self, path: str, doc: TraceDocument | None = None) -> None:
        """Write the trace shown to `path`, apart from the GUI thread; said in the status bar."""
        from jaxscope.documents import write

        doc = doc or self.current()
        if doc is None:
            return
        host = self.host

        def written(done: Future[int]) -> None:
            try:
                size = done.result()
            except OSError as exc:
                host.show_problem(f"cannot save the trace to {path}: {exc}")
                return
            host.statusBar().showMessage(f"saved the trace to {path} ({size / 1024:.0f} KB)", 5000)

        when_done(host.window(), written, write, doc, path)
