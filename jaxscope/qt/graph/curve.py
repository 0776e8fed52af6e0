"""An edge's curve as a QPainterPath, the same for the window's items and the PNG/PDF export."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QPainterPath


def add_curve(path: QPainterPath, pts: Sequence[tuple[float, float]]) -> QPainterPath:
    """`path` with a subpath through `pts` (2+ points) added: a cubic Bezier chain when the count
    fits one (1 + 3k points, as the layouts make them), else a polyline. Returned for chaining; the
    export adds every edge of one style to a single path."""
    path.moveTo(*pts[0])
    if (len(pts) - 1) % 3 == 0:
        for i in range(1, len(pts), 3):
            (a, b), (c, d), (e, f) = pts[i], pts[i + 1], pts[i + 2]
            path.cubicTo(a, b, c, d, e, f)
    else:
        for x, y in pts[1:]:
            path.lineTo(x, y)
    return path
