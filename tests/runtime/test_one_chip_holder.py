"""Issue 58: a TPU admits one process at a time and opening it costs 6-11 s, so a command holds one
worker, jaxscope's helpers stay off every accelerator, and the window keeps no spare beside a TPU."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from jaxscope.about import SOURCE_ROOT
from jaxscope.cli.common import TargetOptions
from jaxscope.cli.main import main
from jaxscope.runtime import worker_client, worker_process
from jaxscope.runtime.interpreter import helper_env
from jaxscope.schema.trace import ErrorInfo
from jaxscope.session import one_off_client, shared_workers

BASICS = os.path.join(SOURCE_ROOT, "examples", "basics.py")


def _workers_started(monkeypatch) -> list[int]:
    """The pids of the workers started from now on, as they start."""
    started: list[int] = []
    real = worker_process.WorkerProcess.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        started.append(self.pid)

    monkeypatch.setattr(worker_process.WorkerProcess, "__init__", counted)
    return started


def test_a_command_traces_lowers_compiles_and_profiles_in_one_worker(monkeypatch, capsys) -> None:
    started = _workers_started(monkeypatch)
    assert main(["cost", f"{BASICS}::predict", "--time", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["time"]["run_s"] > 0  # traced, compiled and run under the profiler
    assert len(started) == 1, started
    assert not [t for t in threading.enumerate() if t.name == "worker-close"]  # closed with the command, not left behind


def test_commands_within_one_shared_workers_share_the_worker_but_not_a_timeout(monkeypatch) -> None:
    """A caller that runs commands in one process (tests/cli's modules) keeps their worker between
    them; a command's --timeout bounds that command only."""
    started = _workers_started(monkeypatch)
    with shared_workers():
        assert main(["jaxpr", f"{BASICS}::predict", "--timeout", "50"]) == 0
        client = one_off_client(None, None, TargetOptions(target=BASICS).env())  # the commands' one
        assert client.timeouts == worker_client.DEFAULT_TIMEOUTS
        assert main(["jaxpr", f"{BASICS}::loss"]) == 0
    assert len(started) == 1, started
    assert client.processes() == (None, None)  # closed by the outermost


def test_helpers_never_open_an_accelerator() -> None:
    env = helper_env(SOURCE_ROOT)
    assert env["JAX_PLATFORMS"] == "cpu" and env["PYTHONPATH"].split(os.pathsep)[0] == SOURCE_ROOT


class _Worker:
    """A worker as the client sees it once it is ready: alive, with the devices it listed."""

    def __init__(self, platform: str) -> None:
        self.ready_info = {"devices": [{"name": f"{platform}:0", "platform": platform, "id": 0}]}
        self.alive = True

    def close(self) -> None:
        self.alive = False


def test_no_spare_worker_is_started_beside_one_that_holds_a_tpu(monkeypatch) -> None:
    spawned: list[str] = []

    def spawn(platform: str):
        def make(self: Any) -> _Worker:
            spawned.append(platform)
            return _Worker(platform)

        return make

    for platform, spares in (("tpu", 0), ("cpu", 1)):
        spawned.clear()
        monkeypatch.setattr(worker_client.WorkerClient, "_spawn", spawn(platform))
        client = worker_client.WorkerClient(spare=True)  # starts its active worker
        try:
            client.ensure_spare()  # after a job, when the active one is idle
            assert len(spawned) == 1 + spares, (platform, spawned)
        finally:
            client.close()


def test_a_chip_held_elsewhere_is_one_sentence() -> None:
    from jaxscope.worker.errors import classify

    message = "Unable to initialize backend 'tpu': INTERNAL: Internal error when accessing libtpu multi-process lockfile"
    info = classify(RuntimeError(message), "startup")
    assert info.kind == "device-busy" and info.summary().startswith("The TPU is held by another program")
    assert info.summary().count(". ") == 0 and "JAX_PLATFORMS=cpu" in info.summary()
    assert classify(RuntimeError("Unable to initialize backend 'cuda'"), "trace").kind == "user-code"
    assert isinstance(info, ErrorInfo)
