"""A worker never outlives the process that started it: killed, timed out or crashed, the CLI (or
the window) takes its worker, and whatever user code started there, with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

CASES = os.path.join(os.path.dirname(__file__), "cases")


def _workers_of(proc: psutil.Process) -> list[psutil.Process]:
    return [c for c in proc.children(recursive=True) if "jaxscope.worker" in " ".join(c.cmdline())]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_cli_leaves_no_worker_spinning(sig):
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jaxscope",
            "export",
            f"{os.path.join(CASES, 'infinite_loop.py')}::f",
            "--args",
            "f32[3]",
            "-o",
            os.devnull,
            "--timeout",
            "600",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[psutil.Process] = []
    try:
        parent = psutil.Process(cli.pid)
        deadline = time.monotonic() + 60
        while not workers and time.monotonic() < deadline:
            workers = _workers_of(parent)
            time.sleep(0.1)
        assert workers, "the CLI started no worker"
        worker = workers[0]
        time.sleep(3)  # it imports jax and gets into the user's loop
        cli.send_signal(sig)
        cli.wait(timeout=30)
        gone, alive = psutil.wait_procs([worker], timeout=15)
        assert not alive, f"worker {worker.pid} still running after its CLI got {sig.name}"
    finally:
        cli.kill()
        for worker in workers:  # not left spinning when the test fails
            if worker.is_running():
                worker.kill()
