"""Opening a user's file in the window: read what it defines (a big one apart), show it, pick the
function and its inputs, ask once whether its code may run, and trace it; follow its saves and
its removal. A file that no longer parses keeps the last good result, said to be stale."""

from __future__ import annotations

import os
from typing import Protocol

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QDockWidget, QLabel, QStackedWidget, QStatusBar

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
from jaxscope.spec.discover import DiscoveryError, ModuleInfo, first_with_inputs


class OpeningHost(Protocol):
    """What opening a file uses of the window (`MainWindow` satisfies it)."""

    session: TraceSession
    settings: QSettings
    source: QtSourceView
    inputs: InputsPanel
    display: TraceDisplay
    docks: dict[str, QDockWidget]
    stack: QStackedWidget
    recent: RecentTargets
    log: LogPane
    files: FileWatch
    trace_files: TraceFiles
    phase_label: QLabel

    def show_problem(self, text: str, info: ErrorInfo | None = None) -> None: ...

    def show_trace_failure(self, info: ErrorInfo) -> None: ...

    def confirm_run(self, path: str) -> bool: ...  # the question (tests replace it)

    def setWindowTitle(self, title: str) -> None: ...

    def statusBar(self) -> QStatusBar: ...


class FileOpening(QObject):
    def __init__(self, host: OpeningHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self._opening = ""  # the file `open_target` opens last (a big one is read apart: an older reply is dropped)
        self._unsaved_told = False  # `settings_saved`

    def open_target(self, target: str, args: str | None = None, inputs: str | None = None) -> bool:
        """Open `file.py` or `file.py::function` (specs `args` or a maker `inputs` for it), and trace it
        (the function, JAXSCOPE_MAIN, or the first with inputs) when it has inputs; else say what it needs."""
        host = self.host
        if target.endswith(SUFFIX):
            return host.trace_files.open(target)
        host.trace_files.leave()
        path, _, function = target.rpartition("::") if "::" in target else (target, "", "")
        path = self._opening = os.path.abspath(path)
        if os.path.isfile(path) and os.path.getsize(path) > BIG_SOURCE:  # ast.parse holds the GIL: 0.7 s at 50k lines
            host.phase_label.setText(f"reading {os.path.basename(path)}…")
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
        host, doc = self.host, self.host.session.doc
        if isinstance(found, DiscoveryError):
            if path != doc.path or doc.result is None:
                host.show_problem(str(found))
                return False
            if found.line is not None:  # a save broke the open file: show it, keep the last good result (stale)
                host.source.set_source(host.trace_files.text(path), path)
            loc = SourceLoc(file=path, line=found.line, col=found.col or 0) if found.line is not None else None
            host.show_trace_failure(ErrorInfo(kind="syntax", message=found.message, location=loc))
            return False
        module = found
        if host.session.open_file(path):
            host.files.watch(path, set())
        else:
            host.files.watch(path)
        host.source.set_source(host.trace_files.text(path), path)
        host.display.show_guide(module.docstring)
        if not function:
            chosen = first_with_inputs(module) or (module.functions[0] if module.functions else None)
            function = chosen.name if chosen is not None else ""
        host.inputs.set_choices(prefs.read_choices(host.settings, path))
        host.inputs.set_module(module, select=function or None, args=args, inputs=inputs)
        host.docks["source"].setWindowTitle(f"Source — {os.path.basename(path)}")
        host.stack.setCurrentIndex(1)
        host.setWindowTitle(f"jaxscope — {os.path.basename(path)}")
        self.settings_saved(host.recent.remember(path + (f"::{function}" if function else "")))
        for warning in module.warnings:
            host.log.append_text(f"warning: {warning}\n")
        if function and module.get(function) is not None:
            if host.inputs.ready():
                host.inputs.request_trace()
            else:
                host.show_problem(host.inputs.hint.text() or host.inputs.error.text())
        return True

    def may_run(self, path: str) -> bool:
        """Tracing runs the file's top-level code with the user's privileges: ask once per file.

        The bundled tutorials are trusted; a "Run" answer is remembered in the settings."""
        path, settings = os.path.abspath(path), self.host.settings
        if path.startswith(os.path.abspath(EXAMPLES_DIR) + os.sep):
            return True
        settings.sync()  # another window may have trusted it meanwhile
        if path in prefs.read_strings(settings, "trustedFiles"):
            return True
        if not self.host.confirm_run(path):
            return False
        self.settings_saved(prefs.update_strings(settings, "trustedFiles", lambda ts: [*(t for t in ts if t != path), path][-500:]))
        return True

    def remember_inputs(self) -> None:
        """The inputs picked for the file shown are its next time's."""
        path = self.host.session.doc.path
        if path:
            self.settings_saved(prefs.update_choices(self.host.settings, path, self.host.inputs.choices()))

    def settings_saved(self, ok: bool) -> None:
        """Say once when the settings cannot be written (nothing is remembered then)."""
        if not ok and not self._unsaved_told:
            self._unsaved_told = True
            where = self.host.settings.fileName()
            text = f"jaxscope: the settings cannot be saved to {where}: recent and trusted files are not remembered\n"
            self.host.log.append_text(text)
            self.host.statusBar().showMessage(text.strip(), 10000)

    def file_changed(self) -> None:
        """The file shown (or a helper it imports) was saved: open it again; the panel keeps the inputs."""
        doc = self.host.session.doc
        if doc.path and os.path.exists(doc.path):
            self.open_target(f"{doc.path}::{doc.function}" if doc.function else doc.path)

    def file_vanished(self, path: str) -> None:
        doc = self.host.session.doc
        if path != doc.path or doc.result is None or doc.stale:
            return
        self.host.display.mark_stale(f"{os.path.basename(path)} was deleted or moved; showing the last result (stale).")
        self.host.show_problem(f"{path} is gone (deleted or moved away): the graph shown is from before; saving it again re-traces.")
