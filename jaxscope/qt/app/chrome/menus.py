"""The window's menu bar: File, Trace, View, Help, each entry a QAction on the window (so its
shortcut works wherever the focus is), wired to the collaborator that does the work."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence

from jaxscope.qt.app.chrome import prefs


def build_menus(w: Any) -> None:
    """Fill `w`'s menu bar (`w` is the MainWindow: it keeps the checkable actions it reads)."""

    def action(text: str, slot: object, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None, name: str = "") -> QAction:
        made = QAction(text, w)
        if shortcut is not None:
            made.setShortcut(QKeySequence(shortcut))
        made.triggered.connect(slot)
        if name:
            made.setObjectName(name)
        w.addAction(made)
        return made

    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addAction(action("&Open File…", w.open_file_dialog, QKeySequence.StandardKey.Open))
    file_menu.addAction(action("Open &Example…", w.open_example_dialog, "Ctrl+Shift+O"))
    w.recent_menu = file_menu.addMenu("Open &Recent")
    file_menu.addSeparator()
    file_menu.addAction(action("&Save Trace…", w.trace_files.save_dialog, QKeySequence.StandardKey.Save, "saveTraceAction"))
    file_menu.addAction(action("&Export Graph…", w.graph_export.dialog, "Ctrl+E", "exportAction"))
    file_menu.addAction(action("&Copy Graph Image", w.graph_export.copy_image, "Ctrl+Shift+C"))
    file_menu.addSeparator()
    file_menu.addAction(action("&Quit", w.close, QKeySequence.StandardKey.Quit))
    trace_menu = bar.addMenu("&Trace")
    trace_menu.addAction(action("&Trace", w.inputs.request_trace, "F5", "traceAction"))
    trace_menu.addAction(action("&Cancel", w.controller.cancel, "Esc"))
    trace_menu.addAction(action("Restart &Worker", w.restart_worker, name="restartWorkerAction"))
    trace_menu.addAction(action("&Python for Your Code…", w.jobs.choose_python, name="pythonAction"))
    w.x64 = action("&64-bit Mode (jax_enable_x64)", w.jobs.set_x64, name="x64Action")
    w.x64.setCheckable(True)
    w.x64.setChecked(w.controller.x64)
    trace_menu.addAction(w.x64)
    trace_menu.addSeparator()
    trace_menu.addAction(action("Would It &Retrace…", w.jobs.retrace_dialog, "Ctrl+R", "retraceAction"))
    w.auto_compile = action("Compile HLO After Each Trace", w.ir_side.toggle_auto_compile, name="autoCompileAction")
    w.auto_compile.setCheckable(True)
    w.auto_compile.setChecked(prefs.read(w.settings, "autoCompile", True))
    trace_menu.addAction(w.auto_compile)
    trace_menu.addAction(action("&Compile HLO Now", w.ir_side.request_compile, "Ctrl+Shift+H"))
    trace_menu.addAction(action("Run &jit vs Eager", lambda: w.jobs.run_function(), "Ctrl+Shift+R", "runAction"))
    view = bar.addMenu("&View")
    view.addAction(action("&Fit Graph", lambda: w.graph.fit_all(), "Ctrl+0"))
    view.addAction(action("Zoom &In", lambda: w.graph.zoom_in(), QKeySequence.StandardKey.ZoomIn))
    view.addAction(action("Zoom &Out", lambda: w.graph.zoom_out(), QKeySequence.StandardKey.ZoomOut))
    w.long_edges_whole = action("Draw Long Edges &Whole", w._toggle_long_edges, name="longEdgesAction")
    w.long_edges_whole.setCheckable(True)
    w.long_edges_whole.setChecked(prefs.read(w.settings, "longEdgesWhole", False))
    w.long_edges_whole.setToolTip("Off: where a graph has many long edges, draw each one's two ends (select a box to see its own whole)")
    w.graph.set_long_edges_whole(w.long_edges_whole.isChecked())
    view.addAction(w.long_edges_whole)
    w.structure.add_action(view)
    view.addAction(action("&Compare with…", w.compare.dialog, "Ctrl+Shift+D", "compareAction"))
    view.addSeparator()
    view.addAction(action("&Find in Graph", w.search_bar.focus, QKeySequence.StandardKey.Find))
    view.addAction(action("Find &Next", lambda: w.search_bar.step(+1), QKeySequence.StandardKey.FindNext))
    view.addAction(action("Find &Previous", lambda: w.search_bar.step(-1), QKeySequence.StandardKey.FindPrevious))
    view.addAction(action("Find in IR &Text…", w.ir_side.find_text_dialog, "Ctrl+Shift+F"))
    view.addAction(action("Find Next in Text", lambda: w.ir_side.find_text(), "Ctrl+G"))
    view.addAction(action("Find Previous in Text", lambda: w.ir_side.find_text(backward=True), "Ctrl+Shift+G"))
    view.addSeparator()
    for name in ("light", "dark"):
        view.addAction(action(f"{name.title()} Theme", lambda checked=False, n=name: w.set_theme(n)))
    view.addSeparator()
    for dock in w.docks.values():
        view.addAction(dock.toggleViewAction())
    help_menu = bar.addMenu("&Help")
    help_menu.addAction(action("&Keyboard Shortcuts", w.show_shortcuts))
    help_menu.addAction(action("&About jaxscope", w.show_about))
