"""The desktop app (PySide6), the only package that imports Qt: `app/` the window and its
collaborators, `graph/` the graph view and its scene, `panes/` the text views, panels and dialogs."""
