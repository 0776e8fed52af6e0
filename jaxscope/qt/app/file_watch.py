"""Re-trace when the open file (or a helper module its equations came from) is saved, however the
editor saves it: in place, by writing a new file and renaming it over the old one, or by deleting
and creating it again. A file watch alone is lost when its file goes away, so the files' folders
are watched too, and a folder's change counts only when a watched file's identity (inode, size,
modification time) changed. A file that is gone is reported, so the window can mark its result
stale."""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

SETTLE_MS = 300  # editors write in bursts; wait for the last one


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class FileWatch(QObject):
    changed = Signal()  # a watched file was saved (or came back): trace again
    vanished = Signal(str)  # the open file is gone (deleted or moved away)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.watcher = QFileSystemWatcher(self)
        self._seen: dict[str, tuple[int, int, int] | None] = {}  # watched file -> its identity when last seen
        self.main = ""
        self.paused = False  # a saved trace is shown: nothing is watched
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self.watcher.fileChanged.connect(lambda _path: self._settle.start())
        self.watcher.directoryChanged.connect(lambda _path: self._settle.start())

    def files(self) -> list[str]:
        return sorted(self._seen)

    def watch(self, main: str, helpers: set[str] | None = None) -> None:
        """Watch `main` (the open file) and, if given, these helpers instead of the last ones."""
        wanted = {main, *(helpers if helpers is not None else (set(self._seen) - {self.main}))} if not self.paused else set()
        self.main = main
        for path in set(self._seen) - wanted:
            del self._seen[path]
        for path in wanted:
            if path not in self._seen:
                self._seen[path] = _identity(path)
        self._sync_watches()

    def _sync_watches(self) -> None:
        files = [p for p in self._seen if os.path.exists(p)]
        folders = {os.path.dirname(p) for p in self._seen}
        stale = [p for p in self.watcher.files() if p not in files] + [d for d in self.watcher.directories() if d not in folders]
        if stale:
            self.watcher.removePaths(stale)
        new = [p for p in files if p not in self.watcher.files()] + [d for d in folders if d not in self.watcher.directories()]
        if new:
            self.watcher.addPaths([p for p in new if os.path.exists(p)])

    def _settled(self) -> None:
        changed = False
        for path, before in list(self._seen.items()):
            now = _identity(path)
            if now != before:
                self._seen[path] = now
                changed = changed or now is not None
        self._sync_watches()  # a save by rename drops the file's watch: watch the new file
        if self.main and self._seen.get(self.main) is None:
            self.vanished.emit(self.main)
        elif changed:
            self.changed.emit()
