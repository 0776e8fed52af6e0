"""Opening a user's file in the window: read what it defines (a big one apart), show it, pick the
function and its inputs, ask once whether its code may run, and trace it; follow its saves and
its removal. A file that no longer parses keeps the last good result, said to be stale."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QDockWidget, QStackedWidget, QStatusBar

from jaxscope.about import EXAMPLES_DIR
from jaxscope.qt.app.chrome import prefs
from jaxscope.qt.app.chrome.welcome import RecentTargets
from jaxscope.qt.app.file_watch import FileWatch
from jaxscope.qt.app.jobs import when_done
from jaxscope.qt.app.trace_display import TraceDisplay
from jaxscope.qt.app.trace_files import TraceFiles
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.panes.inputs_panel import InputsPanel
from jaxscope.qt.panes.log_pane import LogPane
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.runtime.parse_process import BIG_SOURCE, discover
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.trace import ErrorInfo
from jaxscope.schema.trace_file import SUFFIX
from jaxscope.targets.discover import DiscoveryError, ModuleInfo, first_with_inputs


@dataclass(frozen=True)
class OpeningParts:
    """What opening a file works with: the workbench (through `session`), the settings, the panes it
    fills (source, inputs, log, the welcome/workspace stack), the display, the file watch, saved
    traces, the recent list, and the window's asks (the problem line, a trace failure shown, the
    question whether a file may run, the window's title, the phase line)."""

    session: TraceSession
    settings: QSettings
    source: QtSourceView
    inputs: InputsPanel
    log: LogPane
    stack: QStackedWidget
    source_dock: QDockWidget
    display: TraceDisplay
    files: FileWatch
    trace_files: TraceFiles
    recent: Callable[[], RecentTargets]  # (made after the menus)
    show_problem: Callable[..., None]  # (text, info=None)
    show_trace_failure: Callable[[ErrorInfo], None]
    confirm_run: Callable[[str], bool]  # the question (tests answer it)
    set_title: Callable[[str], None]
    phase_label: Callable[[str], None]
    status: QStatusBar


class FileOpening(QObject):
    def __init__(self, parts: OpeningParts, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.parts = parts
        self._opening = ""  # the file `open_target` opens last (a big one is read apart: an older reply is dropped)
        self._unsaved_told = False  # `settings_saved`
        # a new trace: its file and the helper modules it imports are watched (saving one re-traces)
        parts.session.traced.connect(lambda prepared, _previous: parts.files.watch(parts.session.doc.path, set(prepared.helpers)))

    def open_target(self, target: str, args: str | None = None, inputs: str | None = None) -> bool:
        """Open `file.py` or `file.py::function` (specs `args` or a maker `inputs` for it), and trace it
        (the function, JAXSCOPE_MAIN, or the first with inputs) when it has inputs; else say what it needs."""
        parts = self.parts
        if target.endswith(SUFFIX):
            return parts.trace_files.open(target)
        parts.trace_files.leave()
        path, _, function = target.rpartition("::") if "::" in target else (target, "", "")
        path = self._opening = os.path.abspath(path)
        if os.path.isfile(path) and os.path.getsize(path) > BIG_SOURCE:  # ast.parse holds the GIL: 0.7 s at 50k lines
            parts.phase_label(f"reading {os.path.basename(path)}…")
            when_done(
                self,
                lambda found: path == self._opening and self.show_file(path, function, args, inputs, found.result()),
                discover,
                path,
                True,
            )  # dropped when another file was opened meanwhile
            return True
        return self.show_file(path, function, args, inputs, discover(path))

    def show_file(self, path: str, function: str, args: str | None, inputs: str | None, found: ModuleInfo | DiscoveryError) -> bool:
        parts, doc = self.parts, self.parts.session.doc
        if isinstance(found, DiscoveryError):
            if path != doc.path or doc.result is None:
                parts.show_problem(str(found))
                return False
            if found.line is not None:  # a save broke the open file: show it, keep the last good result (stale)
                parts.source.set_source(parts.trace_files.text(path), path)
            loc = SourceLoc(file=path, line=found.line, col=found.col or 0) if found.line is not None else None
            parts.show_trace_failure(ErrorInfo(kind="syntax", message=found.message, location=loc))
            return False
        module = found
        if parts.session.open_file(path):
            parts.files.watch(path, set())
        else:
            parts.files.watch(path)
        parts.source.set_source(parts.trace_files.text(path), path)
        parts.display.show_guide(module.docstring)
        if not function:
            chosen = first_with_inputs(module) or (module.functions[0] if module.functions else None)
            function = chosen.name if chosen is not None else ""
        parts.inputs.set_choices(prefs.read_choices(parts.settings, path))
        parts.inputs.set_module(module, select=function or None, args=args, inputs=inputs)
        parts.source_dock.setWindowTitle(f"Source — {os.path.basename(path)}")
        parts.stack.setCurrentIndex(1)
        parts.set_title(f"jaxscope — {os.path.basename(path)}")
        self.settings_saved(parts.recent().remember(path + (f"::{function}" if function else "")))
        for warning in module.warnings:
            parts.log.append_text(f"warning: {warning}\n")
        if function and module.get(function) is not None:
            if parts.inputs.ready():
                parts.inputs.request_trace()
            else:
                parts.show_problem(parts.inputs.hint.text() or parts.inputs.error.text())
        return True

    def may_run(self, path: str) -> bool:
        """Tracing runs the file's top-level code with the user's privileges: ask once per file.

        The bundled tutorials are trusted; a "Run" answer is remembered in the settings."""
        path, settings = os.path.abspath(path), self.parts.settings
        if path.startswith(os.path.abspath(EXAMPLES_DIR) + os.sep):
            return True
        settings.sync()  # another window may have trusted it meanwhile
        if path in prefs.read_strings(settings, "trustedFiles"):
            return True
        if not self.parts.confirm_run(path):
            return False
        self.settings_saved(prefs.update_strings(settings, "trustedFiles", lambda ts: [*(t for t in ts if t != path), path][-500:]))
        return True

    def remember_inputs(self) -> None:
        """The inputs picked for the file shown are its next time's."""
        path = self.parts.session.doc.path
        if path:
            self.settings_saved(prefs.update_choices(self.parts.settings, path, self.parts.inputs.choices()))

    def settings_saved(self, ok: bool) -> None:
        """Say once when the settings cannot be written (nothing is remembered then)."""
        if not ok and not self._unsaved_told:
            self._unsaved_told = True
            where = self.parts.settings.fileName()
            text = f"jaxscope: the settings cannot be saved to {where}: recent and trusted files are not remembered\n"
            self.parts.log.append_text(text)
            self.parts.status.showMessage(text.strip(), 10000)

    def file_changed(self) -> None:
        """The file shown (or a helper it imports) was saved: open it again; the panel keeps the inputs."""
        doc = self.parts.session.doc
        if doc.path and os.path.exists(doc.path):
            self.open_target(f"{doc.path}::{doc.function}" if doc.function else doc.path)

    def file_vanished(self, path: str) -> None:
        doc = self.parts.session.doc
        if path != doc.path or doc.result is None or doc.stale:
            return
        self.parts.display.mark_stale(f"{os.path.basename(path)} was deleted or moved; showing the last result (stale).")
        self.parts.show_problem(f"{path} is gone (deleted or moved away): the graph shown is from before; saving it again re-traces.")
