"""Saved traces in the window: open one (File → Open, drag and drop, `jaxscope NAME.jaxscope`) and
it is shown as a live trace is, answered by the document instead of a worker (`SavedWorker`); save
the trace shown (File → Save Trace…) with its jaxpr, IR texts, last run and source files."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Protocol

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDockWidget, QFileDialog, QStatusBar, QWidget

from jaxscope.about import __version__
from jaxscope.qt.app.chrome.welcome import RecentTargets
from jaxscope.qt.app.file_watch import FileWatch
from jaxscope.qt.app.jobs import when_done
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.panes.source_frames import read_frame_file
from jaxscope.runtime.parse_process import BIG_SOURCE, discover
from jaxscope.saved_traces import snapshot, stamp, write
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text
from jaxscope.schema.hlo import HloResult
from jaxscope.schema.run import RunResult
from jaxscope.schema.trace import same_call
from jaxscope.schema.trace_file import SUFFIX, DocumentError, TraceDocument, read
from jaxscope.targets.discover import DiscoveryError, ModuleInfo, discover_source


class Opening(Protocol):
    """What a saved trace's showing uses of the file opening (`FileOpening` is one)."""

    def show_file(self, path: str, function: str, args: str | None, inputs: str | None, found: ModuleInfo | DiscoveryError) -> bool: ...

    def settings_saved(self, ok: bool) -> None: ...


@dataclass(frozen=True)
class TraceFilesParts:
    """What showing and saving saved traces work with: the workbench (through `session`), the file
    watch and the recent list it pauses, the file opening that shows a document's file, and the
    window's asks (trace a function, title the window, the problem line, the phase line); the run
    and IR texts a saved trace keeps are `last_run()` and `ir_results()`."""

    session: TraceSession
    parent: QWidget
    status: QStatusBar
    phase_label: Callable[[str], None]
    show_problem: Callable[..., None]  # (text, info=None)
    files: FileWatch
    recent: Callable[[], RecentTargets]  # (made after the menus)
    opening: Callable[[], Opening]
    trace_function: Callable[[str, str, str], None]
    set_title: Callable[[str], None]
    source_dock: QDockWidget
    last_run: Callable[[], RunResult | None]
    ir_results: Callable[[], dict[str, HloResult]]


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
    def __init__(self, parts: TraceFilesParts) -> None:
        self.parts = parts

    @property
    def path(self) -> str:
        """The saved trace shown ("" while a live file is)."""
        return self.parts.session.bench.saved_path

    @property
    def doc(self) -> TraceDocument | None:
        return self.parts.session.bench.saved

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
        self.parts.phase_label(f"reading {os.path.basename(path)}…")
        when_done(self.parts.parent, lambda done: self._opened(path, done), read_apart, path)
        return True

    def _opened(self, path: str, done: Future[tuple[TraceDocument, ModuleInfo]]) -> None:
        parts = self.parts
        parts.phase_label("")
        try:
            doc, module = done.result()
        except DocumentError as exc:  # the document shown (and its result) stay
            parts.show_problem(str(exc))
            return
        request = doc.trace.request
        where = request.function.path or path
        parts.session.stand_in(doc, path)  # it answers in the worker's place
        parts.files.paused = True  # the saved copy is shown: an edit of the file on disk is no reason to re-trace
        parts.recent().paused = True  # the document is remembered, not the file it names
        try:
            shown = parts.opening().show_file(where, request.function.qualname, request.args or None, request.inputs or None, module)
        finally:
            parts.recent().paused = False
        if not shown:
            return
        if module.get(request.function.qualname) is None:  # its source was not saved: trace (replay) it all the same
            parts.trace_function(request.function.qualname, request.args, request.inputs)
        parts.set_title(f"jaxscope — {os.path.basename(path)} (saved trace of {request.function.qualname})")
        parts.source_dock.setWindowTitle(f"Source — {os.path.basename(where)} (as saved)")
        parts.opening().settings_saved(parts.recent().remember(path))

    def leave(self) -> None:
        """A live file is opened: the worker answers again."""
        if self.parts.session.bench.saved is not None:
            self.parts.session.stand_in(None)
            self.parts.files.paused = False

    def current(self) -> TraceDocument | None:
        """The trace shown as a document, its sources still to read (`with_sources`)."""
        parts = self.parts
        result = parts.session.doc.result
        if result is None:
            return None
        run = parts.last_run()
        if run is not None and not same_call(run.request, result.request):
            run = None
        ir = parts.ir_results()
        return TraceDocument(result, ir.get("stablehlo"), ir.get("compiled"), run, {}, stamp(), __version__)

    def save_dialog(self) -> None:
        parts = self.parts
        doc = self.current()
        if doc is None:
            parts.show_problem("Nothing to save yet: trace a function first.")
            return
        start = self.path or os.path.join(os.path.dirname(parts.session.doc.path), f"{doc.trace.request.function.qualname}{SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(parts.parent, "Save Trace", start, f"jaxscope trace (*{SUFFIX})")
        if path:
            self.save(path if path.endswith(SUFFIX) else path + SUFFIX, doc)

    def save(self, path: str, doc: TraceDocument | None = None) -> None:
        """Write the trace shown to `path` with its sources, apart from the GUI thread; said in the
        status bar, with the sources that were left out and why."""
        doc = doc or self.current()
        if doc is None:
            return
        parts = self.parts
        saved = self.doc  # a saved trace is data: its paths are labels, never opened; it keeps what it holds
        held = dict(saved.sources) if saved is not None else None
        notes: list[str] = []

        def written(done: Future[int]) -> None:
            try:
                size = done.result()
            except OSError as exc:
                parts.show_problem(f"cannot save the trace to {path}: {exc}")
                return
            left = f"; left out: {'; '.join(notes)}" if notes else ""
            parts.status.showMessage(f"saved the trace to {path} ({size / 1024:.0f} KB){left}", 10000 if notes else 5000)
            for note in notes:
                parts.show_problem(f"Save Trace: {note}")

        when_done(parts.parent, written, with_sources, doc, path, held, notes.append)


def with_sources(doc: TraceDocument, path: str, held: dict[str, str] | None, note: Callable[[str], None]) -> int:
    """Write `doc` to `path` with the sources `held` (a saved trace's), or else the user's files of
    its trace as they are now, where they still have the bytes that were traced (`saved_traces.snapshot`).
    Off the GUI thread with the cyclic GC paused: a collection here finalized Qt objects and
    deadlocked with the GUI thread connecting a timer (a Qt mutex against the GIL)."""
    with gc_paused():
        sources = held if held is not None else snapshot(doc.trace, note)
        return write(replace(doc, sources=sources), path)
