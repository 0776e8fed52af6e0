"""One worker child process: spawn it, talk the protocol, drain its output, notice its death.

The process runs in its own session (process group) so a kill reaches anything user code
started. stdout/stderr are drained at all times by threads (a full pipe would block the worker
forever) and the tail is kept for error panels.
"""

from __future__ import annotations

import codecs
import collections
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from jaxscope.about import SOURCE_ROOT
from jaxscope.runtime import protocol
from jaxscope.runtime.interpreter import command, worker_pythonpath
from jaxscope.runtime.sweep import TOKEN_VAR, new_token, sweep

OutputCallback = Callable[[str, str], None]  # (stream name, text)
TAIL_CHARS = 64_000


class OutputTail:
    """The last TAIL_CHARS characters written to a stream."""

    def __init__(self, limit: int = TAIL_CHARS) -> None:
        self._chunks: collections.deque[str] = collections.deque()
        self._size = 0
        self._limit = limit
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        with self._lock:
            self._chunks.append(text)
            self._size += len(text)
            while self._size > self._limit and len(self._chunks) > 1:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        with self._lock:
            return "".join(self._chunks)[-self._limit :]


def worker_env(extra: dict[str, str] | None = None, python: str | None = None) -> dict[str, str]:
    """The worker's environment: ours, plus what makes it importable (in `python`, when another
    interpreter runs it: runtime.interpreter) and well-behaved."""
    env = dict(os.environ)
    env["PYTHONPATH"] = worker_pythonpath(python, SOURCE_ROOT, env.get("PYTHONPATH", ""))
    env["PYTHONUNBUFFERED"] = "1"  # user prints reach the log pane as they happen
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # GPUs: do not grab 75% of memory
    env.update(extra or {})
    return env


class WorkerProcess:
    """A spawned `python -m jaxscope.worker`; replies and exit are reported through callbacks."""

    def __init__(
        self,
        on_message: Callable[[WorkerProcess, dict[str, Any]], None],
        on_exit: Callable[[WorkerProcess, int], None],
        on_output: OutputCallback | None = None,
        env: dict[str, str] | None = None,
        python: str | None = None,
    ) -> None:
        self._on_message = on_message
        self._on_exit = on_exit
        self._on_output = on_output
        self.stdout = OutputTail()
        self.stderr = OutputTail()
        self.ready = threading.Event()
        self.ready_info: dict[str, Any] = {}
        self.killed_by_us = False
        self.exit_code: int | None = None
        self.used = False  # has run user code
        self.state: dict[str, Any] = {}
        self.target_file = ""
        self.tap: Callable[[bytes | None], None] | None = None  # gets the reply lines of the job in flight, then None
        self._send_lock = threading.Lock()
        read_fd, write_fd = os.pipe()
        # The worker's lifeline: this process holds the write end (never written, not inherited by
        # other children) for as long as it lives; the worker reads EOF when it is gone, however it
        # went (killed, crashed, timed out), and kills its own process group (`worker.__main__`).
        lifeline_r, self._lifeline = os.pipe()
        self.token = new_token()  # every process the worker starts carries it: `kill` ends them wherever they went
        env = dict(env if env is not None else worker_env(python=python), **{TOKEN_VAR: self.token})
        try:
            self._proc = subprocess.Popen(
                command(python or sys.executable, "-m", "jaxscope.worker", "--proto-fd", str(write_fd), "--parent-fd", str(lifeline_r)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd, lifeline_r),
                start_new_session=True,
                env=env,
                cwd=os.getcwd(),
            )
        except BaseException:
            os.close(self._lifeline)
            raise
        finally:
            os.close(write_fd)
            os.close(lifeline_r)
        self._replies: BinaryIO = os.fdopen(read_fd, "rb")
        self.pid = self._proc.pid
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._drain, args=("stdout", self._proc.stdout, self.stdout), daemon=True),
            threading.Thread(target=self._drain, args=("stderr", self._proc.stderr, self.stderr), daemon=True),
            threading.Thread(target=self._read_replies, daemon=True),
        ]
        for t in self._threads:
            t.start()

    @property
    def alive(self) -> bool:
        return self.exit_code is None and self._proc.poll() is None

    def send(self, message: dict[str, Any]) -> bool:
        """Write one request; False when the worker is gone."""
        try:
            with self._send_lock:
                assert self._proc.stdin is not None
                self._proc.stdin.write(protocol.dumps(message))
                self._proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def interrupt(self) -> None:
        """SIGINT: Python code raises KeyboardInterrupt and the worker replies with where it was."""
        try:
            os.kill(self.pid, signal.SIGINT)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the whole process group, and every process user code started that left it (a
        child in its own session, a double-forked daemon): they carry the worker's token."""
        self.killed_by_us = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                self._proc.kill()
            except ProcessLookupError:
                pass
        sweep(self.token)

    def close(self) -> None:
        """Ask politely, then kill; never blocks for long. A worker still importing jax (not ready)
        could not read the request before the grace period ends: it is killed at once."""
        if self.alive and self.ready.is_set():
            self.send({"op": "exit"})
            try:
                self._proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        try:
            self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self._proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    def _drain(self, name: str, pipe: BinaryIO, tail: OutputTail) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            text = decoder.decode(chunk)
            if text:
                tail.add(text)
                if self._on_output is not None:
                    self._on_output(name, text)

    def end_tap(self) -> None:
        """Tell the tap, if any, that the job's reply is complete (or will never be) and drop it."""
        tap, self.tap = self.tap, None
        if tap is not None:
            tap(None)

    def _forward(self, line: bytes) -> None:
        tap = self.tap
        if tap is not None:
            tap(line)

    def _read_replies(self) -> None:
        while True:
            try:
                message = protocol.read(self._replies, self._forward)
            except (ValueError, OSError):
                message = None
            if message is None:
                break
            if message.get("event") == "ready":
                self.ready_info = message
                self.ready.set()
            elif message.get("event") == "done":
                self.end_tap()  # before the reply is decoded here: the tap's reader starts on it now
            self._on_message(self, message)
        self.end_tap()
        code = self._proc.wait()
        for t in self._threads[:2]:
            t.join(timeout=2)  # so the stderr tail is complete when the exit is reported
        self.exit_code = code
        self._replies.close()
        os.close(self._lifeline)
        self._on_exit(self, code)


def describe_exit(code: int) -> str:
    """`-11` -> "was killed by signal SIGSEGV (segmentation fault)"; `7` -> "exited with code 7"."""
    if code < 0:
        try:
            sig = signal.Signals(-code)
            desc = signal.strsignal(sig) or ""
            return f"was killed by signal {sig.name} ({desc.lower()})" if desc else f"was killed by signal {sig.name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
