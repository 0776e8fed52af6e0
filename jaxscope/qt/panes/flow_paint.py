"""How the source pane draws what tracing baked in (analysis.flow_marks.LineMark per line).

Kept apart from the editor widget: one style table, one painter pass over the visible lines,
and the tooltip text, so the legend and the marks cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen, QTextBlock

from jaxscope.analysis.flow_marks import LineMark

# kind -> (legend text, left-bar colour light, dark); "emitted" lines already carry the shared colour
STYLES: dict[str, tuple[str, str, str]] = {
    "emitted": ("emitted equations (colour shared with the graph)", "", ""),
    "python": ("ran in Python only while tracing", "#8a94a6", "#7c8696"),
    "not-taken": ("branch not taken (greyed)", "#c9ced6", "#4a505a"),
    "never": ("never reached while tracing", "#5b6270", "#aab2bd"),  # filled grey; python-only is hollow
    "staged": ("staged: traced into lax.cond / while / scan", "#8e5ad6", "#b38cf0"),
    "error": ("the trace failed here", "#d62f2f", "#ff6b6b"),
}
BAR_W = 4.0
DIM_ALPHA = {"light": 150, "dark": 140}


def legend_items(theme: str) -> list[tuple[str, str, str]]:
    """(colour, text, swatch glyph) for the legend, plus the unrolled-loop badge; the glyph is
    drawn as the mark is: hollow for python-only lines, a filled bar for the others."""
    dark = theme == "dark"
    items = [
        (light if not dark else dk, text, "\u25af" if kind == "python" else "\u258c") for kind, (text, light, dk) in STYLES.items() if light
    ]
    items.append(("", "×N  Python loop unrolled N times", "\u258c"))
    return items


def tooltip(mark: LineMark) -> str:
    """Plain text for a line's tooltip: what happened and why."""
    head = {
        "emitted": f"emitted {mark.eqns} equation{'s' if mark.eqns != 1 else ''}",
        "python": "ran in Python while tracing; emitted no equations",
        "not-taken": "not run while tracing: branch not taken",
        "never": "never reached while tracing",
        "staged": "staged into the program (traced, not decided in Python)",
        "error": "the trace failed on this line",
    }.get(mark.kind, mark.kind)
    if mark.hits:
        head += f" · ran {mark.hits}×"
    return f"{head}\n{mark.why}" if mark.why else head


def paint(
    painter: QPainter,
    blocks: Iterable[tuple[QTextBlock, QRectF]],
    marks: dict[int, LineMark],
    width: float,
    background: QColor,
    theme: str,
    metrics: QFontMetricsF,
    text_left: float,
) -> None:
    """Dim untaken/unreached lines, draw the left bars and the ×N badges."""
    dark = theme == "dark"
    dim = QColor(background)
    dim.setAlpha(DIM_ALPHA["dark" if dark else "light"])
    for block, rect in blocks:
        mark = marks.get(block.blockNumber() + 1)
        if mark is None:
            continue
        row = QRectF(0.0, rect.top(), width, rect.height())
        if mark.kind in ("not-taken", "never"):
            painter.fillRect(row, dim)
        elif mark.kind == "error":
            tint = QColor(STYLES["error"][2 if dark else 1])
            tint.setAlpha(60)
            painter.fillRect(row, tint)
        style = STYLES.get(mark.kind)
        colour = style[2 if dark else 1] if style else ""
        if colour:
            bar = QRectF(0.0, rect.top() + 1, BAR_W, rect.height() - 2)
            if mark.kind == "python":
                painter.setPen(QPen(QColor(colour), 1.2))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(bar.adjusted(0.6, 0.6, -0.6, -0.6))
            else:
                painter.fillRect(bar, QColor(colour))
        if mark.badge:
            w = metrics.horizontalAdvance(mark.badge) + 10
            end = text_left + metrics.horizontalAdvance(block.text().replace("\t", "    ")) + 10
            x = min(end, width - w - 4)  # long lines: keep the badge on screen, at the right edge
            pill = QRectF(x, rect.top() + 1.5, w, rect.height() - 3)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("#8e5ad6" if not dark else "#6b46b0"))
            painter.drawRoundedRect(pill, 6, 6)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), mark.badge)
