"""`python -m jaxscope.worker --proto-fd N [--parent-fd M]`: the only process that imports jax or
user code.

Requests arrive on stdin, replies leave on fd N; fd 0 is then pointed at /dev/null and fds 1/2
stay the (drained) stdout/stderr pipes, so nothing the user's code does can touch the protocol.
Fd M is the parent's lifeline: at its EOF the parent is gone and the worker kills its own process
group, user code in a loop and the processes it started included.
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import os
import signal
import sys
import threading


def _protect_channels(proto_fd: int) -> tuple[io.BufferedReader, io.BufferedWriter]:
    requests = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    replies = os.fdopen(proto_fd, "wb")
    return requests, replies


def _limit_memory() -> None:
    limit_mb = int(os.environ.get("JAXSCOPE_MEMORY_LIMIT_MB", "0") or 0)
    if limit_mb > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_mb * 2**20, limit_mb * 2**20))


def _die_with_parent(fd: int) -> None:
    """Watch the parent's lifeline on a thread of its own: the main thread may be running user code
    that never returns (a Python loop still lets this thread have the GIL every few ms)."""

    def watch() -> None:
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        if os.getpgrp() == os.getpid():  # our own group (started with start_new_session): its children too
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="parent-lifeline", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxscope.worker")
    parser.add_argument("--proto-fd", type=int, required=True)
    parser.add_argument("--parent-fd", type=int, default=None, help="a pipe whose EOF means the parent is gone")
    opts = parser.parse_args(argv)
    if opts.parent_fd is not None:
        _die_with_parent(opts.parent_fd)
    requests, replies = _protect_channels(opts.proto_fd)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _limit_memory()

    from jaxscope.worker.loop import serve

    return serve(requests, replies)


if __name__ == "__main__":
    raise SystemExit(main())
