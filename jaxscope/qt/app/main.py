"""`jaxscope` (no sub-command): the desktop app. The window shows before the worker has imported jax."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

from jaxscope.qt.app.chrome import theme as themes


def main(target: str | None = None, args: str | None = None, inputs: str | None = None, python: str | None = None) -> int:
    """The app, opening `target` with its specs `args` (or the maker `inputs`), its code run by `python`."""
    from jaxscope.session import SessionError, checked_python, maker_ref

    try:  # a bad maker or interpreter is said before any window opens
        inputs = maker_ref(inputs) if inputs else None
        python = checked_python(python)
    except SessionError as exc:
        print(f"jaxscope: {exc}", file=sys.stderr)
        return 2
    QCoreApplication.setOrganizationName("jaxscope")
    QCoreApplication.setApplicationName("jaxscope")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    from jaxscope.qt.app.window import MainWindow  # after QApplication: widgets need it

    window = MainWindow(python=python)
    themes.apply(app, window.theme)
    window._apply_theme()
    window.show()
    if target:
        path = os.path.abspath(target) if "::" not in target else target
        QTimer.singleShot(0, window, lambda: window.open_target(path, args, inputs))
    return app.exec()
