"""The worker's request loop: one request at a time, every failure turned into a reply."""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

from jaxscope.runtime import protocol
from jaxscope.runtime.sweep import TOKEN_VAR, sweep
from jaxscope.schema.codec import from_jsonable, to_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph_wire import graph_to_wire, to_wire_jsonable
from jaxscope.schema.trace import ErrorInfo, TraceRequest
from jaxscope.worker.errors import CHIP_HELD, chip_held


def _user_modules() -> dict[str, float]:
    """path -> mtime of each user module: the client recycles the worker when one changes."""
    from jaxscope.worker.userframes import user_modules

    out: dict[str, float] = {}
    for module in user_modules():
        path = module.__file__
        if path is None:  # never: user_modules keeps the modules with a file
            continue
        try:
            out[path] = os.stat(path).st_mtime
        except OSError:
            out[path] = -1.0
    return out


def _config_snapshot() -> dict[str, str]:
    import jax

    return {k: repr(v) for k, v in jax.config.values.items()}


_API_MODULES = ("jax", "jax.numpy", "jax.lax", "jax.random", "jax.tree", "jax.tree_util", "jax.nn", "numpy")
_MISSING = object()
_TOKEN = os.environ.get(TOKEN_VAR, "")  # read before user code runs (it could change os.environ)


def _api_snapshot() -> dict[tuple[str, str], Any]:
    """The public functions of jax (and numpy) as the worker started: user code that assigns to them
    (`jax.jit = None`) breaks the worker's own calls, which must not read as a jaxscope bug."""
    snapshot: dict[tuple[str, str], Any] = {}
    for name in _API_MODULES:
        module = sys.modules.get(name)
        for attr, value in vars(module).items() if module is not None else ():
            if not attr.startswith("_"):
                snapshot[(name, attr)] = value
    return snapshot


def _api_replaced(snapshot: dict[tuple[str, str], Any]) -> list[str]:
    return [f"{name}.{attr}" for (name, attr), value in snapshot.items() if getattr(sys.modules.get(name), attr, _MISSING) is not value]


def _api_restore(snapshot: dict[tuple[str, str], Any], replaced: list[str]) -> None:
    """Put back what user code replaced: the next request starts from jax as it was."""
    for dotted in replaced:
        name, _, attr = dotted.rpartition(".")
        module = sys.modules.get(name)
        if module is not None:
            setattr(module, attr, snapshot[(name, attr)])


def _blame_replaced(reply: dict[str, Any], replaced: list[str], phase: str) -> dict[str, Any]:
    """A failure after user code replaced jax's own functions is the user's, whatever raised."""
    error = dict(reply.get("error") or {})
    names = ", ".join(replaced[:6]) + (f" (and {len(replaced) - 6} more)" if len(replaced) > 6 else "")
    error.update(
        kind="user-code",
        exc_type="",
        phase=error.get("phase") or phase,
        message=f"your code replaced {names}, which jaxscope's worker calls: {error.get('message', '')}",
        hint="assigning to jax's (or numpy's) own functions breaks every caller; wrap them under a name of your own",
    )
    return {"ok": False, "error": error}


def _flush_streams(out: Any, err: Any) -> None:
    """Flush the worker's real stdout/stderr, and give them back to `sys`: user code may have set
    `sys.stdout = None` (or a closed file), which must cost neither this reply nor the next request."""
    sys.stdout, sys.stderr = out, err
    for stream in (out, err):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _end_strays(err: Any) -> None:
    """End the processes user code started during a request and left running (os.fork, subprocess):
    each request runs the file anew, so a child that never exits multiplied (12 after 4 re-traces).
    The worker leads its own process group: its members other than itself are the user's, and so are
    its children that left it for a session of their own (`start_new_session=True`). Linux
    only (/proc); elsewhere they live until the worker is replaced, which kills the group."""
    me = os.getpid()
    if os.getpgrp() != me:
        return
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    except OSError:
        return
    ended = sweep(_TOKEN)  # what left the group and our children (a double-forked daemon): by the token it carries
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()  # after "(comm)": state, ppid, pgrp, ...
            if pid not in ended and me in (int(fields[1]), int(fields[2])):  # in our group, or our child in a session of its own
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
        except (OSError, IndexError, ValueError):
            continue
    for pid in ended:  # reap our own children among them (SIGKILL: at once); not ours: init reaps them
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    if ended:
        print(
            f"jaxscope: ended {len(ended)} process(es) your code started and left running "
            f"(pid {', '.join(map(str, ended))}); each trace runs the file anew",
            file=err,
            flush=True,
        )


def _ran_user_code() -> bool:
    from jaxscope.worker import load

    return load.RAN_USER_CODE


OPEN_WAIT_S = 15.0  # how long a new worker waits for an accelerator the process before it is still closing
_refused: Exception | None = None  # why JAX's backends did not open (a chip held by another program), until they do


def serve(requests: BinaryIO, replies: BinaryIO) -> int:
    """Answer requests until stdin closes or an `exit` request arrives."""
    t0 = time.perf_counter()
    import jax
    import jax.numpy as jnp

    from jaxscope.worker import jax_compat  # (registers frame exclusions before any trace)

    global _refused
    _refused = jax_compat.open_backends(chip_held, OPEN_WAIT_S)  # a chip held elsewhere: said by each request
    if _refused is not None and chip_held(str(_refused)):
        print(f"jaxscope: {CHIP_HELD}", file=sys.stderr)
    jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(1.0)  # warm up: the first real trace is then fast
    config0 = _config_snapshot()
    api0 = _api_snapshot()
    streams = (sys.stdout, sys.stderr)
    protocol.write(replies, _ready(t0))
    while True:
        try:
            message = protocol.read(requests)
        except KeyboardInterrupt:
            continue  # an interrupt that arrived between requests
        if message is None or message.get("op") == "exit":
            return 0
        rid = message.get("id")
        reply = _answer(message, replies, streams[1])
        _flush_streams(*streams)
        _end_strays(streams[1])
        replaced = _api_replaced(api0)
        if replaced:
            if not reply.get("ok"):
                reply = _blame_replaced(reply, replaced, str(message.get("phase", "")))
            _api_restore(api0, replaced)
        reply.update(
            id=rid,
            event="done",
            state={
                "user_modules": _user_modules(),
                "config_changed": _config_snapshot() != config0,
                "ran_user_code": _ran_user_code(),
            },
        )
        with gc_paused():
            protocol.write(replies, reply)


def _ready(t0: float) -> dict[str, Any]:
    """The worker's first message: what it runs (protocol, pid, JAX, Python), its start-up time,
    its devices and XLA flags."""
    import jax

    try:
        from jaxscope.worker.runs.inputs import list_devices

        devices = to_jsonable([info for _, info in list_devices()])
    except Exception as exc:  # a backend that fails to start must not stop tracing
        devices = []
        print(f"jaxscope: could not list devices: {exc}", file=sys.stderr)
    return {
        "event": "ready",
        "protocol": protocol.PROTOCOL_VERSION,
        "pid": os.getpid(),
        "jax_version": jax.__version__,
        "python": sys.version.split()[0],
        "startup_s": time.perf_counter() - t0,
        "devices": devices,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def _answer(message: dict[str, Any], replies: BinaryIO, log: Any) -> dict[str, Any]:
    """The reply to one request; a failure of any kind is a reply too (an interrupt or exit as the
    user's error, anything else as a jaxscope bug, its traceback in the worker's log)."""
    try:
        reply = _handle(message, replies)
    except KeyboardInterrupt as exc:
        from jaxscope.worker.errors import classify

        info = classify(exc, message.get("phase", ""))
        reply = {"ok": False, "error": to_jsonable(info)}
    except BaseException as exc:  # a jaxscope bug must not kill the worker silently
        if isinstance(exc, SystemExit):
            from jaxscope.worker.errors import classify

            reply = {"ok": False, "error": to_jsonable(classify(exc, "trace"))}
        else:
            info = ErrorInfo(
                kind="internal",
                message=f"{type(exc).__name__}: {exc}",
                exc_type=type(exc).__name__,
                hint="this is a jaxscope bug; the traceback is in the worker log",
            )
            traceback.print_exc(file=log)
            reply = {"ok": False, "error": to_jsonable(info)}
    return reply


def _ops() -> dict[str, tuple[type, Callable[[Any, Callable[[str], None]], Any]]]:
    """op name -> (request dataclass, runner(request, phase) -> result dataclass). Imported lazily."""
    from jaxscope.analysis.retrace import RetraceRequest
    from jaxscope.schema.hlo import HloRequest
    from jaxscope.schema.run import RunRequest
    from jaxscope.worker.hlo import run_hlo
    from jaxscope.worker.retrace import run_retrace
    from jaxscope.worker.runs.run import run_function
    from jaxscope.worker.trace import run_jaxpr_text, run_trace

    return {
        "trace": (TraceRequest, run_trace),
        "jaxpr": (TraceRequest, run_jaxpr_text),
        "retrace": (RetraceRequest, run_retrace),
        "hlo": (HloRequest, run_hlo),
        "run": (RunRequest, run_function),
    }


def _handle(message: dict[str, Any], replies: BinaryIO) -> dict[str, Any]:
    rid = message.get("id")
    op = message.get("op")

    def phase(name: str) -> None:
        message["phase"] = name
        protocol.write(replies, {"id": rid, "event": "phase", "phase": name, "t": time.time()})

    if op == "ping":
        return {"ok": True, "result": {"pong": True}}
    global _refused
    if _refused is not None:  # the accelerator was held when this worker started: try again, else say so
        from jaxscope.worker import jax_compat
        from jaxscope.worker.errors import classify

        _refused = jax_compat.open_backends(chip_held, 2.0)
        if _refused is not None:
            return {"ok": False, "error": to_jsonable(classify(_refused, "startup"))}
    ops = _ops()
    if op in ops:
        from jaxscope.worker.trace import TraceError

        request_type, runner = ops[op]
        ahead: list[Any] = []

        def send_graph(graph: Any) -> None:  # the GUI and the layout process decode it while we diagnose
            protocol.write(replies, {"id": rid, "event": "graph", "graph": graph_to_wire(graph)}, plain=True)
            ahead.append(graph)

        extra = {"on_graph": send_graph} if op == "trace" else {}
        try:
            request = from_jsonable(request_type, message["request"])
            if op in ("trace", "jaxpr", "hlo"):  # asked for a device: it is JAX's default meanwhile (run places itself)
                from jaxscope.worker.runs.inputs import default_device

                with default_device(request.device):
                    result = runner(request, phase, **extra)
            else:
                result = runner(request, phase, **extra)
        except TraceError as exc:
            return {"ok": False, "error": to_jsonable(exc.info)}
        with gc_paused():  # see run_trace: the traced program is still alive
            return {"ok": True, "result": to_wire_jsonable(result, sent=ahead[0] if ahead else None)}
    return {"ok": False, "error": to_jsonable(ErrorInfo(kind="internal", message=f"unknown op {op!r}"))}
