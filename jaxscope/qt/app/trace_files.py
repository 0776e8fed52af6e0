"""Saved traces in the window: open one (File → Open, drag and drop, `jaxscope NAME.jaxscope`) and
it is shown as a live trace is, answered by the document instead of a worker (`SavedWorker`); save
the trace shown (File → Save Trace…) with its jaxpr, IR texts, last run and source files."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import Protocol

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QFileDialog

from jaxscope.about import __version__
from jaxscope.qt.app.chrome.welcome import RecentTargets
from jaxscope.qt.app.file_watch import FileWatch
from jaxscope.qt.app.host import WindowHost
from jaxscope.qt.app.ir_side import IrSide
from jaxscope.qt.app.jobs import Jobs, when_done
from jaxscope.qt.panes.source_frames import read_frame_file
from jaxscope.runtime.parse_process import BIG_SOURCE, discover
from jaxscope.saved_traces import snapshot, stamp, write
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text
from jaxscope.schema.trace import same_call
from jaxscope.schema.trace_file import SUFFIX, DocumentError, TraceDocument, read
from jaxscope.spec.discover import DiscoveryError, ModuleInfo, discover_source


class Opening(Protocol):
    """What a saved trace's showing uses of the file opening (`FileOpening` is one)."""

    def show_file(self, path: str, function: str, args: str | None, inputs: str | None, found: ModuleInfo | DiscoveryError) -> bool: ...

    def settings_saved(self, ok: bool) -> None: ...


class TraceFilesHost(WindowHost, Protocol):
    """What showing and saving a saved trace use of the window (`MainWindow` satisfies it)."""

    files: FileWatch
    recent: RecentTargets
    jobs: Jobs
    ir_side: IrSide
    opening: Opening

    def trace_function(self, function: str, args: str, inputs: str = "") -> None: ...

    def setWindowTitle(self, title: str) -> None: ...


def read_apart(path: str) -> tuple[TraceDocument, ModuleInfo]:
    """The document at `path` and what its saved copy of the traced file defines, both read off the
    GUI thread; a big copy is parsed in a child process (`ast.parse` holds the GIL)."""
    doc = read(path)
    where = doc.trace.request.function.path or path
    text = doc.source(where) or ""
    found = discover(where, apart=len(text) > BIG_SOURCE, text=text)
    return doc, found if isinstance(found, ModuleInfo) else discover_source("", where)


def droppable(urls: list[QUrl]) -> str:
    """The first dropped file the window opens: a Python file or a saved trace ("" none)."""
    return next((u.toLocalFile() for u in urls if u.toLocalFile().endswith((".py", SUFFIX))), "")


class TraceFiles:
    def __init__(self, host: TraceFilesHost) -> None:
        self.host = host

    @property
    def path(self) -> str:
        """The saved trace shown ("" while a live file is)."""
        return self.host.session.bench.saved_path

    @property
    def doc(self) -> TraceDocument | None:
        return self.host.session.bench.saved

    def text(self, path: str) -> str:
        """A source file's text: the saved copy while a saved trace is shown, else the file's."""
        doc = self.doc
        if doc is not None:
            return doc.source(path) or f"# {path}: not saved in {os.path.basename(self.path)}\n"
        try:
            return read_text(path, MAX_SOURCE_BYTES)  # a FIFO, a device or gigabytes are refused, not read
        except OSError as exc:
            return f"# cannot show {path}: {exc.strerror or exc}\n"

    def frame_text(self, path: str) -> str:
        """A call-chain frame's file: the saved copy while a saved trace is shown (an OSError when it
        holds none: its paths are never opened), else the file's."""
        doc = self.doc
        if doc is None:
            return read_frame_file(path)
        text = doc.source(path)
        if text is None:
            raise FileNotFoundError(errno.ENOENT, f"not saved in {os.path.basename(self.path)}")
        return text

    def open(self, path: str) -> bool:
        """Read the document apart (a big one takes a second), then show it."""
        path = os.path.abspath(path)
        self.host.phase_label.setText(f"reading {os.path.basename(path)}…")
        when_done(self.host.window(), lambda done: self._opened(path, done), read_apart, path)
        return True

    def _opened(self, path: str, done: Future[tuple[TraceDocument, ModuleInfo]]) -> None:
        host = self.host
        host.phase_label.setText("")
        try:
            doc, module = done.result()
        except DocumentError as exc:  # the document shown (and its result) stay
            host.show_problem(str(exc))
            return
        request = doc.trace.request
        where = request.function.path or path
        host.session.stand_in(doc, path)  # it answers in the worker's place
        host.files.paused = True  # the saved copy is shown: an edit of the file on disk is no reason to re-trace
        host.recent.paused = True  # the document is remembered, not the file it names
        try:
            shown = host.opening.show_file(where, request.function.qualname, request.args or None, request.inputs or None, module)
        finally:
            host.recent.paused = False
        if not shown:
            return
        if module.get(request.function.qualname) is None:  # its source was not saved: trace (replay) it all the same
            host.trace_function(request.function.qualname, request.args, request.inputs)
        host.setWindowTitle(f"jaxscope — {os.path.basename(path)} (saved trace of {request.function.qualname})")
        host.docks["source"].setWindowTitle(f"Source — {os.path.basename(where)} (as saved)")
        host.opening.settings_saved(host.recent.remember(path))

    def leave(self) -> None:
        """A live file is opened: the worker answers again."""
        if self.host.session.bench.saved is not None:
            self.host.session.stand_in(None)
            self.host.files.paused = False

    def current(self) -> TraceDocument | None:
        """The trace shown as a document, its sources still to read (`with_sources`)."""
        host = self.host
        result = host.session.doc.result
        if result is None:
            return None
        run = host.jobs.last_run
        if run is not None and not same_call(run.request, result.request):
            run = None
        ir = host.ir_side.results
        return TraceDocument(result, ir.get("stablehlo"), ir.get("compiled"), run, {}, stamp(), __version__)

    def save_dialog(self) -> None:
        host = self.host
        doc = self.current()
        if doc is None:
            host.show_problem("Nothing to save yet: trace a function first.")
            return
        start = self.path or os.path.join(os.path.dirname(host.session.doc.path), f"{doc.trace.request.function.qualname}{SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(host.window(), "Save Trace", start, f"jaxscope trace (*{SUFFIX})")
        if path:
            self.save(path if path.endswith(SUFFIX) else path + SUFFIX, doc)

    def save(self, path: str, doc: TraceDocument | None = None) -> None:
        """Write the trace shown to `path` with its sources, apart from the GUI thread; said in the
        status bar, with the sources that were left out and why."""
        doc = doc or self.current()
        if doc is None:
            return
        host = self.host
        saved = self.doc  # a saved trace is data: its paths are labels, never opened; it keeps what it holds
        held = dict(saved.sources) if saved is not None else None
        notes: list[str] = []

        def written(done: Future[int]) -> None:
            try:
                size = done.result()
            except OSError as exc:
                host.show_problem(f"cannot save the trace to {path}: {exc}")
                return
            left = f"; left out: {'; '.join(notes)}" if notes else ""
            host.statusBar().showMessage(f"saved the trace to {path} ({size / 1024:.0f} KB){left}", 10000 if notes else 5000)
            for note in notes:
                host.show_problem(f"Save Trace: {note}")

        when_done(host.window(), written, with_sources, doc, path, held, notes.append)


def with_sources(doc: TraceDocument, path: str, held: dict[str, str] | None, note: Callable[[str], None]) -> int:
    """Write `doc` to `path` with the sources `held` (a saved trace's), or else the user's files of
    its trace as they are now, where they still have the bytes that were traced (`saved_traces.snapshot`).
    Off the GUI thread with the cyclic GC paused: a collection here finalized Qt objects and
    deadlocked with the GUI thread connecting a timer (a Qt mutex against the GIL)."""
    with gc_paused():
        sources = held if held is not None else snapshot(doc.trace, note)
        return write(replace(doc, sources=sources), path)
