"""Graph first at every window size: the docks take the room their content needs, no more.

The bottom tab group (Problems, Diagnostics, Log, Node, Run, Cost) folds to its title and tab bar
while what it shows is an empty Problems pane ("No problems." in 200 px was a fifth of a 1280 x 800
window), and opens to a working height when a problem arrives or the user picks another tab. On a
window narrower than `NARROW_PX`, the IR dock is tabbed with the Source dock in one wider column, so
neither cuts its lines at 30 columns and the graph keeps the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow

from jaxscope.qt.panes.problems_panel import ProblemsPanel

NARROW_PX = 1800  # below this window width, Source and IR share one column as tabs (each ~60 columns)
OPEN_PX = 200  # the bottom docks' height when they show something
FOLDED_PX = 32  # the bottom panes' least height: the group folds to its title and tab bar
IR_COLUMNS = 84  # the shared column widens to this many columns of IR text while the IR tab is up
IR_SHARE = 0.45  # of the window's width at most, so the graph keeps the rest
BOTTOM = ("problems", "diagnostics", "log", "node", "run", "cost")


class DockFit(QObject):
    """Sizes the docks of `window` by what they show (see the module docstring)."""

    def __init__(self, window: QMainWindow, docks: dict[str, QDockWidget], problems: ProblemsPanel) -> None:
        super().__init__(window)
        self.window, self.docks, self.problems = window, docks, problems
        self.has_problem = False
        # a bottom pane that needs more than OPEN_PX while it is shown: its wanted height (0: none now).
        # The Run pane after a run: its verdict, causes and table, not a strip of them.
        self.room: dict[str, Callable[[], int]] = {}
        self.narrow = 0  # the shared code column's width before the IR tab widened it
        problems.shown.connect(self._problem)
        docks["jaxpr"].visibilityChanged.connect(self._ir_shown)
        for name in BOTTOM:
            docks[name].visibilityChanged.connect(self._shown)

    def apply_defaults(self) -> None:
        """The first layout of a window without saved state: one column for code on a narrow one."""
        if self.window.width() < NARROW_PX:
            self.window.tabifyDockWidget(self.docks["source"], self.docks["jaxpr"])
            self.docks["source"].raise_()
            width = max(330, self.window.width() * 27 // 100)
            # after the IR tab's own show and hide (queued by the tabbing above), which would undo it
            QTimer.singleShot(0, self, lambda: self.window.resizeDocks([self.docks["source"]], [width], Qt.Orientation.Horizontal))
        self.fit()

    def _ir_shown(self, visible: bool) -> None:
        """The IR tab raised in the column it shares with Source: the column widens so the text reads
        at IR_COLUMNS columns (at most IR_SHARE of the window); Source raised again: its width back."""
        ir, source = self.docks["jaxpr"], self.docks["source"]
        try:
            if ir.isFloating() or source not in self.window.tabifiedDockWidgets(ir):
                return
        except RuntimeError:  # the window is being destroyed: its docks hide
            return
        if visible:
            self.narrow = source.width()
            chars = ir.fontMetrics().horizontalAdvance("0" * IR_COLUMNS) + 60  # the gutter and the scroll bar
            width = min(chars, int(self.window.width() * IR_SHARE))
            if width > ir.width():
                QTimer.singleShot(0, self, lambda: self.window.resizeDocks([ir], [width], Qt.Orientation.Horizontal))
        elif self.narrow:
            narrow, self.narrow = self.narrow, 0
            QTimer.singleShot(0, self, lambda: self.window.resizeDocks([source], [narrow], Qt.Orientation.Horizontal))

    def selected(self, shown: list[str]) -> None:
        """Boxes picked in the graph: the Node pane comes up in place of an empty Problems pane (a
        pane the user is reading, Run or Cost, stays)."""
        problems = self.docks["problems"]
        if shown and not self.has_problem and not problems.visibleRegion().isEmpty():
            self.docks["node"].raise_()

    def _shown(self, visible: bool) -> None:
        if visible:  # a tab of the bottom group was raised
            self._later()

    def _problem(self, shown: bool) -> None:
        self.has_problem = shown
        self._later()

    def later(self) -> None:
        """Fit once the current event is handled (a pane just filled, a tab just switched)."""
        self._later()

    def _later(self) -> None:
        QTimer.singleShot(0, self, self.fit)  # after the tab switch or the text settles

    def fit(self) -> None:
        """Fold the bottom group to its tab bar while it shows an empty Problems pane; else open it."""
        problems = self.docks["problems"]
        if problems.isFloating() or self.window.dockWidgetArea(problems) != Qt.DockWidgetArea.BottomDockWidgetArea:
            return  # the user placed it: theirs
        empty = not problems.visibleRegion().isEmpty() and not self.has_problem
        wanted = max((want() for name, want in self.room.items() if not self.docks[name].visibleRegion().isEmpty()), default=0)
        height = problems.minimumSizeHint().height() if empty else max(OPEN_PX, problems.height(), wanted)
        self.window.resizeDocks([problems], [height], Qt.Orientation.Vertical)
