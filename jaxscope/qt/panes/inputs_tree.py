"""A maker's inputs as a tree: arguments, then their pytree paths; each leaf traced (dtype[shape]) or static."""

from __future__ import annotations

import re
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from jaxscope.schema.trace import InputLeaf

MAX_LEAVES = 5000  # a 50k-leaf model: the first ones and a note (QTreeWidget builds every item)
_PART = re.compile(r"\[[^\]]*\]|\.[^.\[]+")
_STATIC = QColor("#8a8a8a")


def path_parts(path: str) -> list[str]:
    """`opt_state[1][0].mu['w']` -> ["opt_state", "[1]", "[0]", ".mu", "['w']"] (keystr's pieces)."""
    head = re.match(r"[^\[.]*", path)
    start = head.end() if head else 0
    parts = [path[:start]] if start else []
    rest = path[start:]
    found = _PART.findall(rest)
    if "".join(found) != rest:  # a key with brackets or dots inside: keep the path whole
        return [path]
    return parts + found


class InputsTree(QTreeWidget):
    """Read-only: one row per argument, nested by path; interior rows count what is under them."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("inputsTree")
        self.setColumnCount(2)
        self.setHeaderLabels(["Input", "Traced as / static value"])
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.header().setStretchLastSection(True)

    def show_leaves(self, leaves: Sequence[InputLeaf]) -> None:
        self.setUpdatesEnabled(False)
        try:
            self.clear()
            items: dict[tuple[str, ...], QTreeWidgetItem] = {}
            counts: dict[tuple[str, ...], list[int]] = {}
            for leaf in leaves[:MAX_LEAVES]:
                parts = tuple(path_parts(leaf.path))
                for depth in range(1, len(parts) + 1):
                    key = parts[:depth]
                    if key not in items:
                        parent = items.get(key[:-1])
                        item = QTreeWidgetItem([key[-1]])
                        item.setToolTip(0, "".join(key))
                        if parent is None:
                            self.addTopLevelItem(item)
                        else:
                            parent.addChild(item)
                        items[key] = item
                    if depth < len(parts):
                        tally = counts.setdefault(key, [0, 0])
                        tally[leaf.aval == "static"] += 1
                self._fill_leaf(items[parts], leaf)
            for key, (traced, static) in counts.items():
                text = ", ".join(t for t in (f"{traced} traced" if traced else "", f"{static} static" if static else "") if t)
                items[key].setText(1, text)
                items[key].setForeground(1, QBrush(_STATIC))
            if len(leaves) > MAX_LEAVES:
                more = QTreeWidgetItem([f"… {len(leaves) - MAX_LEAVES:,} more leaves not listed"])
                self.addTopLevelItem(more)
            if len(leaves) <= 12:
                self.expandAll()
            else:  # every argument in sight, one level open
                self.expandToDepth(0)
        finally:
            self.setUpdatesEnabled(True)

    def _fill_leaf(self, item: QTreeWidgetItem, leaf: InputLeaf) -> None:
        if leaf.aval == "static":
            value = leaf.preview[0] if leaf.preview else ""
            item.setText(1, f"static = {value}")
            item.setForeground(1, QBrush(_STATIC))
            item.setToolTip(1, f"static: jit bakes this Python value in (a change retraces)\n{value}")
        else:
            item.setText(1, leaf.aval)
            item.setToolTip(1, "traced: an abstract array of this dtype and shape")
        item.setData(0, Qt.ItemDataRole.UserRole, leaf.path)
