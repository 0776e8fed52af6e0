"""Light and dark palettes for the Fusion style; "system" follows the platform's colour scheme."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

_COLOURS = {
    "light": {"window": "#f5f6f8", "base": "#ffffff", "alt": "#f0f2f5", "text": "#1d2330", "button": "#eceef2",
              "highlight": "#2f6fd6", "htext": "#ffffff", "muted": "#6b7280", "tip": "#ffffe6"},
    "dark": {"window": "#1e2127", "base": "#16191e", "alt": "#20242b", "text": "#e3e6eb", "button": "#2a2e36",
             "highlight": "#4a86e8", "htext": "#ffffff", "muted": "#9aa3ad", "tip": "#2a2e36"},
}  # fmt: skip


def resolve(name: str) -> str:
    """ "system" -> "light"/"dark" from the platform (offscreen reports Unknown: light)."""
    if name in _COLOURS:
        return name
    scheme = QGuiApplication.styleHints().colorScheme()
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def apply(app: QApplication, name: str) -> str:
    """Set Fusion + a full palette; returns the concrete theme name."""
    theme = resolve(name)
    c = {k: QColor(v) for k, v in _COLOURS[theme].items()}
    pal = QPalette()
    for role, key in (
        (QPalette.ColorRole.Window, "window"), (QPalette.ColorRole.Base, "base"), (QPalette.ColorRole.AlternateBase, "alt"),
        (QPalette.ColorRole.Text, "text"), (QPalette.ColorRole.WindowText, "text"), (QPalette.ColorRole.ButtonText, "text"),
        (QPalette.ColorRole.Button, "button"), (QPalette.ColorRole.Highlight, "highlight"),
        (QPalette.ColorRole.HighlightedText, "htext"), (QPalette.ColorRole.ToolTipBase, "tip"),
        (QPalette.ColorRole.ToolTipText, "text"), (QPalette.ColorRole.PlaceholderText, "muted"),
    ):  # fmt: skip
        pal.setColor(role, c[key])
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, c["muted"])
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, c["muted"])
    app.setStyle("Fusion")
    app.setPalette(pal)
    return theme


def muted(theme: str) -> str:
    return _COLOURS[resolve(theme)]["muted"]
