"""Ending every process a child of ours started, wherever it went (issue 59.2).

A process group misses what left it: a child in a session of its own, and a double-forked daemon
(fork, setsid, fork: its parent gone, it belongs to init). What every descendant keeps is its
environment, unless it clears it on purpose: each child jaxscope starts that runs user code gets a
token of its own (`JAXSCOPE_PROCESS_TOKEN`), and `sweep` ends every process of this user whose
environment holds it. Linux only (/proc); elsewhere the process group is all there is.
"""

from __future__ import annotations

import os
import secrets
import signal

TOKEN_VAR = "JAXSCOPE_PROCESS_TOKEN"


def new_token() -> str:
    """A token for one child process and all it will start."""
    return secrets.token_hex(12)


def sweep(token: str) -> list[int]:
    """SIGKILL every process whose environment carries `token` (not this one); their pids."""
    if not token:
        return []
    needle = f"{TOKEN_VAR}={token}".encode()
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    except OSError:
        return []
    ended = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                found = needle in fh.read().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if found:
            try:
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
            except OSError:
                pass
    return ended
