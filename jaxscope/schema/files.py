"""Reading a file someone named: a saved trace, a source file, a frame of a call chain.

A path can name a FIFO (reading it blocks until someone writes), a device (`/dev/zero` never
ends), a symlink to either, or a file of gigabytes. `read_bytes` opens without blocking, checks
that what it opened is a regular file, and reads no more than a limit: anything else is an OSError
that says what the path is, for the caller's one-line message.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat

from jaxscope.schema.errors import JaxscopeError

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


MAX_SOURCE_BYTES = 4 << 20  # the largest source file jaxscope reads, shows or saves (a generated 50k-line program is ~3 MB)


class NotAFileError(JaxscopeError, OSError):
    """The path names something other than a regular file (a FIFO, a device, a folder), or one
    over the size read for its purpose. Remedy: name the regular file meant, or a smaller one."""


def read_bytes(path: str, limit: int) -> bytes:
    """The bytes of the regular file at `path` (following links), at most `limit` of them; a
    NotAFileError for a FIFO, device, socket or directory, or a file over `limit` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)  # a FIFO opens at once
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise NotAFileError(errno.EISDIR, "is a directory, not a file") from None
    with os.fdopen(fd, "rb", closefd=True) as fh:
        st = os.fstat(fd)  # what was opened, not what the path names now
        if not stat.S_ISREG(st.st_mode):
            kind = next((what for test, what in _KINDS if test(st.st_mode)), "not a regular file")
            raise NotAFileError(errno.EINVAL, f"is {kind}, not a file")
        if st.st_size > limit:
            raise NotAFileError(errno.EFBIG, f"is {_size(st.st_size)}, more than the {_size(limit)} jaxscope reads")
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew while read
        raise NotAFileError(errno.EFBIG, f"is more than the {_size(limit)} jaxscope reads")
    return data


def read_text(path: str, limit: int) -> str:
    """`read_bytes` as UTF-8 text (undecodable bytes replaced: for showing, not for running)."""
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def digest(data: bytes) -> str:
    """The content hash a trace keeps of each source file it ran (`TraceResult.source_hashes`)."""
    return hashlib.sha256(data).hexdigest()


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n:,} bytes"
