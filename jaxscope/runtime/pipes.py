"""Pipes between the layout process and its client, read fast: whole lines handed over in batches
by a reader thread, and pipe buffers widened to 1 MB."""

from __future__ import annotations

import collections
import queue
import threading
from typing import Any


class PipeLines:
    """A pipe's lines, read on a thread (the layout process's stdin; the client's end of its
    stdout): a reader can wait with a timeout, and the layout process's loop can tell whether a
    request is waiting (a buffered pipe cannot say so without blocking) and use the idle time.
    The thread reads what the pipe has (up to 1 MB, `widen_pipes`) and hands over all its whole
    lines at once: a streamed trace reply is thousands of lines, and one hand-over per line cost a
    second at 10k equations (the two threads taking turns with the GIL); a big layout no longer
    waits on a 64 KB pipe read in 8 KB lines (benchmarks/README.md, "Measured in the code")."""

    def __init__(self, stream: Any, name: str = "layout-stdin") -> None:
        self._queue: queue.SimpleQueue[list[bytes]] = queue.SimpleQueue()
        self._ready: collections.deque[bytes] = collections.deque()
        threading.Thread(target=self._pump, args=(stream,), name=name, daemon=True).start()

    def _pump(self, stream: Any) -> None:
        read = getattr(stream, "read1", stream.read)
        rest = b""
        try:
            while chunk := read(1 << 20):
                lines = (rest + chunk if rest else chunk).split(b"\n")
                rest = lines.pop()
                if lines:  # no newline: a line is b"" only at the end of input (no copy made)
                    self._queue.put([line or b"\n" for line in lines])
        except (OSError, ValueError):  # the pipe closed under us: the end of input
            pass
        finally:
            self._queue.put([rest, b""] if rest else [b""])  # b"": the end of input

    def readline(self) -> bytes:
        if not self._ready:
            self._ready.extend(self._queue.get())
        return self._take()

    def next_within(self, timeout: float) -> bytes | None:
        """The next line, or None when none arrives within `timeout` seconds."""
        if not self._ready:
            try:
                self._ready.extend(self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait())
            except queue.Empty:
                return None
        return self._take()

    def _take(self) -> bytes:
        line = self._ready.popleft()
        if not line:  # the end of input stays the end for every later read
            self._ready.append(line)
        return line


PIPE_BYTES = 1 << 20  # Linux's default limit for an unprivileged process (/proc/sys/fs/pipe-max-size)


def widen_pipes(*streams: Any) -> None:
    """Pipes of `PIPE_BYTES` where the OS allows it (Linux): a layout or a graph of megabytes
    then goes through in fewer reads and writes, each a turn at the GIL for the reading thread."""
    try:
        import fcntl

        setsize = fcntl.F_SETPIPE_SZ  # Linux only: AttributeError elsewhere
    except (ImportError, AttributeError):
        return
    for stream in streams:
        try:
            fcntl.fcntl(stream.fileno(), setsize, PIPE_BYTES)
        except (OSError, ValueError, AttributeError):
            pass
