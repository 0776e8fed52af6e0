"""Guard the PySide6 pin: 6.12.0 on CPython 3.11 aborts (`Fatal Python error: none_dealloc`)
after ~2k graphics items. Build a 20k-item scene and render it in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import sys
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

app = QApplication([sys.argv[0]])
scene = QGraphicsScene()
pen, brush = QPen(QColor("#2f6fa8")), QBrush(QColor("#dceaf7"))
items = []
for i in range(10_000):
    x, y = (i % 100) * 60.0, (i // 100) * 30.0
    rect = QGraphicsRectItem(0.0, 0.0, 50.0, 20.0)
    rect.setPos(x, y)
    rect.setPen(pen)
    rect.setBrush(brush)
    text = QGraphicsSimpleTextItem(f"eqn{i}")
    text.setPos(x + 2.0, y + 2.0)
    text.setBrush(QBrush(QColor("#1f2328")))
    scene.addItem(rect)
    scene.addItem(text)
    items.append((rect, text))
assert len(scene.items()) == 20_000
image = QImage(1200, 600, QImage.Format.Format_ARGB32_Premultiplied)
image.fill(Qt.GlobalColor.white)
painter = QPainter(image)
scene.render(painter, QRectF(0, 0, 1200, 600), scene.sceneRect())
painter.end()
del items
scene.clear()
print("PYSIDE-SCENE-OK", len(scene.items()))
"""


def test_many_graphics_items_do_not_abort_the_interpreter():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert "PYSIDE-SCENE-OK 0" in proc.stdout
