"""Regenerate the README screenshots: `.venv/bin/python resources/screenshots.py` (offscreen Qt, real worker)."""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# (file name, target, theme, args, guide link to click, source line to click, bottom dock to raise)
SHOTS = [
    ("window-prng-guide-light.png", "examples/prng.py", "light", None, "random_split", None, "diagnostics"),
    ("window-hidden-state-dark.png", "examples/hidden_state.py", "dark", None, "SCALE", None, "diagnostics"),
    ("window-control-flow-light.png", "examples/control_flow.py::step", "light", None, None, 21, "problems"),
    ("window-control-flow-dark.png", "examples/control_flow.py::step", "dark", None, None, 21, "problems"),
    ("window-basics-light.png", "examples/basics.py::predict", "light", None, None, 25, "problems"),
    ("window-basics-dark.png", "examples/basics.py::predict", "dark", None, None, 25, "problems"),
    ("window-run-light.png", "examples/train_step.py", "light", None, None, None, "run"),
]


def settle(app: QApplication, seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        app.processEvents()
        time.sleep(0.02)


def main() -> int:
    app = QApplication([])
    QCoreApplication.setOrganizationName("jaxscope-screenshots")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    from jaxscope.qt.main_window import MainWindow

    only = set(sys.argv[1:])
    for name, target, theme, args, query, line, dock in SHOTS:
        if only and name not in only:
            continue
        w = MainWindow(theme=theme)
        w.set_theme(theme)  # the application palette, as the app applies it at start
        w.resize(1600, 1000)
        w.show()
        w.open_target(os.path.join(ROOT, target), args)
        t0 = time.time()
        while w.doc.layout is None and time.time() - t0 < 120:
            settle(app, 0.05)
        settle(app, 1.0)
        w.docks[dock].raise_()
        if query:
            w.show_query(query)
        if line:
            w.source.line_clicked.emit(line)
        if dock == "run":  # per-equation jit vs eager, then the values of the node that differs most
            w.run_panel.per_equation.setChecked(True)
            w.run_function()
            while w.run_panel.verdict_state == "" and time.time() - t0 < 240:
                settle(app, 0.05)
            if w.run_panel.divergence.rowCount():
                w.run_panel.divergence.cellClicked.emit(0, 0)
            w.resizeDocks([w.docks["run"]], [520], Qt.Orientation.Vertical)
        settle(app, 2.0)
        w.grab().save(os.path.join(HERE, name))
        print("wrote", name, "-", w.phase_label.text())
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
