"""`python -m jaxscope.worker --proto-fd N`: the only process that imports jax or user code.

Requests arrive on stdin, replies leave on fd N; fd 0 is then pointed at /dev/null and fds 1/2
stay the (drained) stdout/stderr pipes, so nothing the user's code does can touch the protocol.
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import os
import signal
import sys


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxscope.worker")
    parser.add_argument("--proto-fd", type=int, required=True)
    opts = parser.parse_args(argv)
    requests, replies = _protect_channels(opts.proto_fd)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _limit_memory()

    from jaxscope.worker.loop import serve

    return serve(requests, replies)


if __name__ == "__main__":
    raise SystemExit(main())
