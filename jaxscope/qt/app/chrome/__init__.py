"""The window's furniture: its menus, dock sizes, saved preferences, status line, theme, welcome
page and dialogs. What is shown and what it means live one level up, in `qt.app`."""
