"""The worker client: futures for trace requests, one active worker plus a pre-warmed spare.

Whatever user code does — raise, exit, segfault, hang, print megabytes, change `jax.config` —
the caller gets a structured `WorkerError` and the next request runs on a clean worker.

Cancel ladder: SIGINT (the worker replies with where it was), a short grace, SIGKILL of the
process group, promote the spare. A worker is recycled (never reused) after a cancel, timeout or
crash, when the next request is for another file, when a user module it loaded changed on disk,
or when user code changed `jax.config`.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from jaxscope.runtime.worker_process import OutputCallback, WorkerProcess, describe_exit, worker_env
from jaxscope.schema.codec import from_jsonable, to_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.graph import Graph
from jaxscope.schema.graph_wire import SENT_AHEAD, graph_from_jsonable
from jaxscope.schema.trace import ErrorInfo, ErrorKind, TraceRequest, TraceResult, result_from_jsonable

PhaseCallback = Callable[[str], None]

DEFAULT_TIMEOUTS: dict[str, float] = {
    "startup": 120.0,  # spawn + import jax (a cold CI machine can be slow)
    "load": 30.0,  # executing the user's file
    "trace": 60.0,
    "graph": 60.0,
    "print": 120.0,  # JAX's jaxpr pretty printer: seconds at 50k equations
    "lower": 120.0,
    "compile": 900.0,  # XLA:CPU compile is superlinear: minutes for tens of thousands of unrolled equations
    "inputs": 60.0,  # the `run` op's phases (schema.run)
    "run": 120.0,
    "eager": 300.0,
    "compare": 60.0,
    "nan": 300.0,
    "divergence": 300.0,
    "evidence": 600.0,  # the runs that name a difference's cause: replay, retrace, float64, precision, device
}
GRACE_S = 1.0  # a timed-out worker gets this long to say where it was stuck (the error names the line)
CHANNEL_CLOSED = 86  # the worker's exit code when user code closed its channel (worker.__main__)
CANCEL_GRACE_S = 0.05  # a cancelled job fails at once; its worker gets this long to stop before SIGKILL
CRASH_LIMIT = 3
CRASH_WINDOW_S = 300.0


def _error_info(data: Any) -> ErrorInfo:
    """The ErrorInfo of a worker's reply; a malformed one is itself the (internal) error."""
    try:
        info = from_jsonable(ErrorInfo, data) if data else None
    except (TypeError, ValueError, AttributeError) as exc:
        return ErrorInfo(kind="internal", message=f"unreadable error from the worker: {exc}")
    return info if isinstance(info, ErrorInfo) else ErrorInfo(kind="internal", message="no error info")


class WorkerError(JaxscopeError):
    """A request to the worker failed: the user's code raised, a phase ran past its time, the
    worker crashed. `info` says how, where, and what the worker printed; its hint says what to do."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.summary())
        self.info = info


EXCLUSIVE_PLATFORMS = ("tpu",)  # accelerators one process at a time may hold (libtpu's lockfile)


def default_memory_limit_mb() -> int:
    """Cap the worker's address space so a memory blow-up becomes a MemoryError, not a frozen machine:
    the user's JAXSCOPE_MEMORY_LIMIT_MB when set (0: no cap), else 60 % of RAM, at least 4 GB."""
    own = os.environ.get("JAXSCOPE_MEMORY_LIMIT_MB", "").strip()
    if own.isdigit():
        return int(own)
    try:
        import psutil

        total = psutil.virtual_memory().total // 2**20
    except Exception:
        total = 16384
    return max(4096, int(total * 0.6))


@dataclass
class _Job:
    rid: int
    request: Any  # a TraceRequest, or another request naming a `function`
    future: Future[Any]
    worker: WorkerProcess
    on_phase: PhaseCallback | None
    decode: Callable[[Any], Any] = result_from_jsonable
    phase: str = "startup"
    deadline: float = 0.0
    started: float = field(default_factory=time.monotonic)
    stopping: ErrorKind | None = None  # set when we cancel or time it out
    reply_error: ErrorInfo | None = None
    graph: Graph | None = None  # a trace's graph, sent ahead of its result


class WorkerClient:
    """Submit trace requests; get futures. Thread-safe; callbacks run on background threads."""

    def __init__(
        self,
        *,
        spare: bool = True,
        timeouts: dict[str, float] | None = None,
        memory_limit_mb: int | None = None,
        env: dict[str, str] | None = None,
        on_output: OutputCallback | None = None,
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        python: str | None = None,
    ) -> None:
        self.timeouts = {**DEFAULT_TIMEOUTS, **(timeouts or {})}
        self.python = python or None  # the interpreter of the user's code (runtime.interpreter); None: ours
        self._use_spare = spare
        limit = default_memory_limit_mb() if memory_limit_mb is None else memory_limit_mb
        self._base_env = {"JAXSCOPE_MEMORY_LIMIT_MB": str(limit), **(env or {})}
        self._env = worker_env(self._base_env, self.python)
        self._on_output = on_output
        self._on_ready = on_ready
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._active: WorkerProcess | None = None
        self._spare: WorkerProcess | None = None
        self._job: _Job | None = None
        self._stopping: dict[int, _Job] = {}  # id(worker) -> job being cancelled on it
        self._crashes: deque[float] = deque()
        self._closed = False
        self._last_stderr = ""
        self._wake = threading.Condition(self._lock)
        self._watchdog = threading.Thread(target=self._watch, name="jaxscope-watchdog", daemon=True)
        self._watchdog.start()
        with self._lock:
            self._active = self._spawn()

    # ------------------------------------------------------------------ public API

    def trace(
        self, request: TraceRequest, on_phase: PhaseCallback | None = None, tap: Callable[[bytes | None], None] | None = None
    ) -> Future[TraceResult]:
        """Start a trace; a request still in flight is cancelled (the latest request wins)."""
        return self.submit("trace", request, result_from_jsonable, on_phase, tap)

    def submit(
        self,
        op: str,
        request: Any,
        decode: Callable[[Any], Any],
        on_phase: PhaseCallback | None = None,
        tap: Callable[[bytes | None], None] | None = None,
    ) -> Future[Any]:
        """Send any worker op whose request names a `function`; `decode` turns the reply's result into data.

        `tap`, if given, gets every raw protocol line the worker sends for this job as it arrives
        (phase events and the reply, `runtime.protocol` lines), then None once the reply is complete or
        the job ended without one; it runs on a reader thread and must not block."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                future.set_exception(WorkerError(ErrorInfo(kind="internal", message="the worker client is closed")))
                if tap is not None:
                    tap(None)
                return future
            if self._job is not None:
                self._stop_job(self._job, "cancelled")
            if self._crash_looping():
                info = ErrorInfo(
                    kind="crash",
                    message=f"the worker crashed {CRASH_LIMIT} times within {int(CRASH_WINDOW_S / 60)} minutes; "
                    "not restarting it automatically",
                    stderr_tail=self._last_stderr,
                    hint="read the worker output above, fix the cause, then restart the worker",
                )
                future.set_exception(WorkerError(info))
                if tap is not None:
                    tap(None)
                return future
            worker = self._worker_for(request)
            job = _Job(next(self._ids), request, future, worker, on_phase, decode)
            job.deadline = time.monotonic() + (self.timeouts["startup"] if not worker.ready.is_set() else self.timeouts["load"])
            if worker.ready.is_set():
                job.phase = "load"
            self._job = job
            worker.used = True
            worker.target_file = os.path.abspath(request.function.path) if request.function.path else ""
            worker.end_tap()
            worker.tap = tap
            ok = worker.send({"op": op, "id": job.rid, "request": to_jsonable(request)})
            self._wake.notify_all()
        if not ok:
            self._fail(job, ErrorInfo(kind="crash", message="could not send the request: the worker is gone"))
        return future

    def cancel(self) -> None:
        """Cancel the request in flight (returns at once; the future fails with kind "cancelled")."""
        with self._lock:
            if self._job is not None:
                self._stop_job(self._job, "cancelled")
                threading.Thread(target=self._ensure_spare_soon, daemon=True).start()  # the retry's worker

    def restart(self) -> None:
        """Forget past crashes and start from fresh workers (after a crash loop)."""
        with self._lock:
            self._crashes.clear()
            self._replace_workers()

    def reconfigure(self, env: dict[str, str], python: str | None = None) -> None:
        """Replace both workers with ones started with `env` added (read once by XLA: device count,
        backends), run by `python` (None: ours). A job in flight is cancelled; the next request runs
        on the new workers."""
        with self._lock:
            self.python = python or None
            self._env = worker_env({**self._base_env, **env}, self.python)
            self._replace_workers()

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._job is not None

    def processes(self) -> tuple[WorkerProcess | None, WorkerProcess | None]:
        """The active worker and the spare, as they are now (None: not started, or gone)."""
        with self._lock:
            return self._active, self._spare

    def worker_info(self) -> dict[str, Any]:
        """The active worker's ready message (pid, jax version...), waiting for it if needed."""
        with self._lock:
            worker = self._active or self._spawn_active()
        worker.ready.wait(self.timeouts["startup"])
        return dict(worker.ready_info)

    def output_tail(self) -> str:
        with self._lock:
            w = self._active
        return (w.stdout.text() + w.stderr.text()) if w else self._last_stderr

    def close(self) -> None:
        with self._lock:
            self._closed = True
            job, self._job = self._job, None
            workers = [self._active, self._spare]
            self._active = self._spare = None
            self._wake.notify_all()
        if job is not None and not job.future.done():
            job.future.set_exception(WorkerError(ErrorInfo(kind="cancelled", message="the worker client was closed")))
        for w in workers:
            if w is not None:
                w.close()

    def __enter__(self) -> WorkerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ workers

    def _spawn(self) -> WorkerProcess:
        return WorkerProcess(self._on_message, self._on_exit, self._on_output, env=self._env, python=self.python)

    def _spawn_active(self) -> WorkerProcess:
        self._active = self._spare if (self._spare and self._spare.alive) else self._spawn()
        self._spare = None  # the next one starts once this one is idle (`_ensure_spare_soon`)
        return self._active

    def ensure_spare(self) -> None:
        """Start the spare worker now, if this client keeps one and none is up; never beside a
        worker that holds a chip (a TPU is one process's at a time); `_ensure_spare_soon` calls
        it once the active worker is idle."""
        with self._lock:
            if self._use_spare and not self._closed and (self._spare is None or not self._spare.alive) and not self._holds_chip():
                self._spare = self._spawn()

    def _holds_chip(self) -> bool:
        """The active worker holds a TPU, which admits one process: a spare could not open it (nor
        run anything there), so the next worker starts when this one is retired."""
        devices = (self._active.ready_info.get("devices") or ()) if self._active is not None else ()
        return any(isinstance(d, dict) and d.get("platform") in EXCLUSIVE_PLATFORMS for d in devices)

    def _replace_workers(self) -> None:
        """Cancel the job in flight (its worker's death is ours, not a crash to count), retire both
        workers and start a fresh active one. Call with the lock held."""
        if self._job is not None:
            self._stop_job(self._job, "cancelled")
        self._retire(self._active)
        self._retire(self._spare)
        self._active, self._spare = self._spawn(), None

    def _retire(self, worker: WorkerProcess | None) -> None:
        if worker is not None:
            threading.Thread(target=worker.close, daemon=True).start()

    def _reusable(self, worker: WorkerProcess, request: Any) -> bool:
        if not worker.alive:
            return False
        if not worker.used:
            return True
        if worker.state.get("config_changed"):
            return False
        target = os.path.abspath(request.function.path) if request.function.path else ""
        if target != worker.target_file or request.function.module:
            return False
        for path, mtime in worker.state.get("user_modules", {}).items():
            try:
                if os.stat(path).st_mtime != mtime:
                    return False
            except OSError:
                return False
        return True

    def _worker_for(self, request: Any) -> WorkerProcess:
        if self._active is not None and self._reusable(self._active, request):
            worker = self._active
        else:
            self._retire(self._active)
            self._active = None
            worker = self._spawn_active()
        return worker

    # ------------------------------------------------------------------ events (reader threads)

    def _on_message(self, worker: WorkerProcess, message: dict[str, Any]) -> None:
        if message.get("event") == "ready":
            with self._lock:
                current = worker is self._active or worker is self._spare  # not a retired one of an old setup
            if current and self._on_ready is not None:
                self._on_ready(dict(message))
            self._ensure_spare_soon()
            return
        with self._lock:
            job = self._job
            if job is None or job.worker is not worker:
                job = self._stopping.get(id(worker))
            if job is None or message.get("id") != job.rid:
                return
            event = message.get("event")
            if event == "graph":
                pass  # decoded below, outside the lock
            elif event == "phase":
                job.phase = str(message.get("phase", ""))
                job.deadline = time.monotonic() + self.timeouts.get(job.phase, 60.0)
                callback = job.on_phase
            elif event == "done":
                worker.state = message.get("state", {}) or {}
                worker.used = bool(worker.state.get("ran_user_code", True))
                if job.stopping is not None:
                    if not message.get("ok"):
                        job.reply_error = _error_info(message.get("error"))
                    return  # the stopper thread finishes the job
                self._job = None
                callback = None
            else:
                return
        if event == "phase":
            if callback is not None:
                callback(job.phase)
            return
        if event == "graph":
            try:
                with gc_paused() as pause:
                    job.graph = graph_from_jsonable(message.get("graph"))
                    pause.freeze_at_end(job.graph)
            except Exception:  # the result says what went wrong, if anything did
                job.graph = None
            return
        self._ensure_spare_soon()
        if message.get("ok"):
            try:
                with gc_paused() as pause:
                    data = message["result"]
                    result = job.decode(data)
                    if isinstance(data, dict) and data.get("graph") == SENT_AHEAD:
                        if job.graph is None:
                            raise ValueError("the graph sent ahead of the result did not arrive")
                        result = replace(result, graph=job.graph)
                    else:
                        pause.freeze_at_end(getattr(result, "graph", None))
            except Exception as exc:
                job.future.set_exception(WorkerError(ErrorInfo(kind="internal", message=f"bad result from worker: {exc}")))
                return
            with self._lock:
                self._crashes.clear()
            job.future.set_result(result)
        else:
            info = _error_info(message.get("error"))
            if info.kind in ("memory", "exit", "internal"):
                worker.state = {**worker.state, "config_changed": True}  # do not reuse a worker after these
            job.future.set_exception(WorkerError(replace(info, stderr_tail=worker.stderr.text()[-8000:])))

    def _ensure_spare_soon(self) -> None:
        """Pre-warm the next worker when nothing runs (no job; the active worker up, or none left
        after a crash or a cancel), off the GUI thread: a spare importing JAX while the user's
        function traces took CPU from it (2 cores), and starting one in `trace` cost the GUI thread
        ~50 ms (a process and its reader threads)."""
        with self._lock:
            if self._job is None and (self._active is None or self._active.ready.is_set()):
                self.ensure_spare()

    def _on_exit(self, worker: WorkerProcess, code: int) -> None:
        with self._lock:
            tail = worker.stderr.text()
            if not worker.killed_by_us:
                self._last_stderr = tail
            if worker is self._active:
                self._active = None
            if worker is self._spare:
                self._spare = None
            job = self._job if (self._job is not None and self._job.worker is worker) else None
            if job is None or job.stopping is not None:
                return
            self._job = None
            self._crashes.append(time.monotonic())
        info = ErrorInfo(
            kind="crash",
            message=f"the worker {describe_exit(code)} during the {job.phase} phase of {job.request.function.display()}",
            phase=job.phase,
            stderr_tail=tail[-8000:],
            hint="the worker's last output is below; the app and your document are unaffected",
        )
        if code == CHANNEL_CLOSED:  # worker.__main__: the user's code closed descriptors it did not open
            info = replace(
                info,
                kind="user-code",
                message=f"your code closed the worker's channel to jaxscope during the {job.phase} "
                "phase (a file descriptor it did not open, e.g. os.closerange)",
                hint="close only the files your code opened",
            )
        job.future.set_exception(WorkerError(info))
        self._ensure_spare_soon()  # the next request's worker

    # ------------------------------------------------------------------ cancel / timeout

    def _stop_job(self, job: _Job, kind: ErrorKind) -> None:
        if job.stopping is not None:
            return
        job.stopping = kind
        self._stopping[id(job.worker)] = job
        self._job = None
        if job.worker is self._active:
            self._active = None  # never reuse an interrupted worker
        job.worker.interrupt()
        if kind == "cancelled":  # the user is waiting: say so now; the worker is stopped in the background
            info = ErrorInfo(kind="cancelled", message=f"cancelled during the {job.phase} phase", phase=job.phase)
            self._fail(job, info)
        threading.Thread(target=self._finish_stop, args=(job,), daemon=True).start()

    def _finish_stop(self, job: _Job) -> None:
        deadline = time.monotonic() + (CANCEL_GRACE_S if job.stopping == "cancelled" else GRACE_S)
        while time.monotonic() < deadline and job.reply_error is None and job.worker.alive:
            time.sleep(0.02)
        job.worker.kill()
        where = job.reply_error.location if job.reply_error else None
        if job.stopping == "timeout":
            limit = self.timeouts.get(job.phase, 0)
            message = f"the {job.phase} phase ran past its {limit:g} s limit"
            if job.phase == "inputs":
                message += ": the maker that gives the example inputs did not return"
        else:
            message = f"cancelled during the {job.phase} phase"
        if where is not None:
            message += f" (it was running {where.file}:{where.line})"
        info = ErrorInfo(
            kind=job.stopping or "cancelled",
            message=message,
            phase=job.phase,
            location=where,
            traceback=job.reply_error.traceback if job.reply_error else (),
            stderr_tail=job.worker.stderr.text()[-8000:],
        )
        self._fail(job, info)
        with self._lock:
            self._stopping.pop(id(job.worker), None)
            if not self._closed and self._active is None:
                self._spawn_active()

    def _fail(self, job: _Job, info: ErrorInfo) -> None:
        job.worker.end_tap()
        with self._lock:
            if self._job is job:
                self._job = None
        if not job.future.done():
            job.future.set_exception(WorkerError(info))

    def _watch(self) -> None:
        with self._lock:
            while not self._closed:
                job = self._job
                if job is not None and job.stopping is None:
                    if job.phase == "startup" and job.worker.ready.is_set():
                        job.phase = "load"
                        job.deadline = time.monotonic() + self.timeouts["load"]
                    if time.monotonic() > job.deadline:
                        self._stop_job(job, "timeout")
                self._wake.wait(0.05)

    def _crash_looping(self) -> bool:
        now = time.monotonic()
        while self._crashes and now - self._crashes[0] > CRASH_WINDOW_S:
            self._crashes.popleft()
        return len(self._crashes) >= CRASH_LIMIT
