"""Everything the `jaxscope` command prints goes through one sanitizer.

What it prints comes from programs and files it did not write: names, scopes, messages and source
in a saved trace, the IR texts, a `--python` interpreter's stderr. An ESC byte in any of them would
reach the terminal raw: an OSC 0 retitles the window, an OSC 52 writes the clipboard, a CSI moves
the cursor over what was printed before. `SafeText` replaces every control character but newline
and tab (C0, DEL, C1, and the bidirectional overrides that reorder what is shown) with its `\\uXXXX`
escape, which is also a valid escape inside the JSON `--json` prints.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_CONTROLS = [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TABLE = {c: f"\\u{c:04x}" for c in _CONTROLS if chr(c) not in "\n\t"}


def escape_controls(text: str) -> str:
    """`text` with each control character (not newline or tab) written as its `\\uXXXX` escape."""
    return text.translate(_TABLE)


class SafeText(io.TextIOBase):
    """A text stream that escapes control characters on their way to `stream`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape_controls(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    def __getattr__(self, name: str) -> Any:  # buffer, errors, ...: the stream's own
        return getattr(self.stream, name)


@contextmanager
def sanitized() -> Iterator[None]:
    """sys.stdout and sys.stderr escape control characters for the duration."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeText(out), SafeText(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def quiet_broken_pipe() -> None:
    """The reader of our stdout went away (`jaxscope jaxpr X | head`): what is left unwritten goes
    nowhere, and the interpreter's last flush at exit says nothing either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
