"""`python -m jaxscope.worker --proto-fd N [--parent-fd M]`: the only process that imports jax or
user code.

Requests arrive on stdin, replies leave on fd N; fd 0 is then pointed at /dev/null and fds 1/2
stay the (drained) stdout/stderr pipes, so nothing the user's code does can touch the protocol.
Fd M is the parent's lifeline: at its EOF the parent is gone and the worker kills its own process
group, user code in a loop and the processes it started included.
"""

from __future__ import annotations

import argparse
import errno
import faulthandler
import io
import os
import signal
import sys
import threading
import time

CHANNEL_CLOSED = 86  # exit code: user code closed the worker's channel to the client (os.closerange)


def _high(fd: int) -> int:
    """`fd` moved to a high number, close-on-exec: out of reach of user code that closes descriptors
    in bulk (`os.closerange(3, 256)` closed the protocol pipe: a "crash" blamed on jaxscope), and not
    inherited by what user code executes."""
    import fcntl
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    base = 1000 if soft == resource.RLIM_INFINITY or soft > 1024 else max(3, soft - 16)
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base)
    except OSError:
        return fd
    os.close(fd)
    return moved


def _protect_channels(proto_fd: int) -> tuple[io.BufferedReader, io.BufferedWriter]:
    requests = os.fdopen(_high(os.dup(0)), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    replies = os.fdopen(_high(proto_fd), "wb")
    return requests, replies


def _limit_memory() -> None:
    """Cap the address space at JAXSCOPE_MEMORY_LIMIT_MB, only ever lowering what was inherited: a
    scheduler's or a login node's `ulimit -v` (soft or hard) stays, as it may not be raised."""
    try:
        limit_mb = int(os.environ.get("JAXSCOPE_MEMORY_LIMIT_MB", "0") or 0)
    except ValueError:
        limit_mb = 0
    if limit_mb <= 0:
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    infinite = resource.RLIM_INFINITY

    def lower(inherited: int) -> int:
        return limit_mb * 2**20 if inherited == infinite else min(limit_mb * 2**20, inherited)

    new_hard = lower(hard)
    new_soft = min(lower(soft), new_hard)
    resource.setrlimit(resource.RLIMIT_AS, (new_soft, new_hard))
    lowered = new_soft < limit_mb * 2**20
    if lowered or os.environ.get("JAXSCOPE_DEBUG") == "1":  # said with --debug, or when a ulimit -v set it lower
        why = "the inherited ulimit -v, lower than asked" if lowered else "as asked"
        os.write(
            2, f"jaxscope worker: address space capped at {new_soft // 2**20} MB ({why}: JAXSCOPE_MEMORY_LIMIT_MB={limit_mb})\n".encode()
        )


def _die_with_parent(fd: int) -> None:
    """Watch the parent's lifeline on a thread of its own: the main thread may be running user code
    that never returns (a Python loop still lets this thread have the GIL every few ms)."""

    parent = os.getppid()

    def watch() -> None:
        while True:
            try:
                if not os.read(fd, 1):
                    break
            except InterruptedError:
                continue
            except OSError:  # user code closed it: watch the parent's pid instead (re-parented when it dies)
                while os.getppid() == parent:
                    time.sleep(0.5)
                break
        if os.getpgrp() == os.getpid():  # our own group (started with start_new_session): its children too
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="parent-lifeline", daemon=True).start()


def _check() -> int:
    """`--check`: what `runtime.interpreter.check` asks of another Python (its version, its jax, and
    that the worker's own modules import there), as one tagged JSON line; never raises."""
    import json

    from jaxscope.runtime.interpreter import CHECK_TAG

    out: dict[str, object] = {"python": sys.version.split()[0], "version": list(sys.version_info[:2]), "executable": sys.executable}
    try:
        import jax

        out["jax"] = jax.__version__
        import jaxscope.worker.loop
        import jaxscope.worker.trace  # noqa: F401  (what the worker imports before any request)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    print("\n" + CHECK_TAG + json.dumps(out), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxscope.worker")
    parser.add_argument("--proto-fd", type=int, default=None)
    parser.add_argument("--parent-fd", type=int, default=None, help="a pipe whose EOF means the parent is gone")
    parser.add_argument("--check", action="store_true", help="print this Python's version and jax version, then exit")
    opts = parser.parse_args(argv)
    if opts.check:
        return _check()
    if opts.proto_fd is None:
        parser.error("--proto-fd is required")
    if opts.parent_fd is not None:
        _die_with_parent(_high(opts.parent_fd))
    requests, replies = _protect_channels(opts.proto_fd)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _limit_memory()

    from jaxscope.worker.loop import serve

    try:
        return serve(requests, replies)
    except OSError as exc:  # the channel itself is gone: say whose doing it was, where the client reads it
        if exc.errno == errno.EBADF:
            os.write(2, b"jaxscope: user code closed the worker's channel to jaxscope (a file descriptor it did not open)\n")
            return CHANNEL_CLOSED
        raise


if __name__ == "__main__":
    raise SystemExit(main())
