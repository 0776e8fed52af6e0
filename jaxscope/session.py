"""Trace this target with these inputs: the one way the CLI and the API turn a target string and
its argument text into a worker's result, and a worker's failure into a message and an exit code.

Imports neither jax nor Qt: the worker does the tracing in its own process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text
from jaxscope.schema.trace import FILE_INPUTS, ErrorInfo, FunctionRef, TraceResult

if TYPE_CHECKING:
    from jaxscope.runtime.worker_client import WorkerClient

EXIT_CODES = {
    "spec": 2,
    "not-found": 2,
    "syntax": 3,
    "import": 3,
    "user-code": 3,
    "tracer": 3,
    "exit": 3,
    "memory": 3,
    "timeout": 4,
    "cancelled": 4,
    "device-busy": 4,
    "crash": 5,
    "internal": 5,
}


SOURCE_CHARS = 200  # a quoted source line is cut here (a 30,000-term sum is one line of 120k characters)


class SessionError(JaxscopeError):
    """A target that cannot be traced (its error, a bad input, a worker that gave up), with the
    message to show and the CLI's exit code for it; the message ends with what to do. The error it
    was made of (a `SpecError` with its offset, a `WorkerError` with its info) is its `cause`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code

    @property
    def cause(self) -> JaxscopeError | None:
        """The typed error this one says in the command line's words (chained `from` it)."""
        return self.__cause__ if isinstance(self.__cause__, JaxscopeError) else None

    def raise_typed(self) -> NoReturn:
        """Raise what the Python API raises for this: the error it was made of, itself (its type,
        its fields, its code as the CLI's), with this sentence as a note where it says it anew; this
        one when it was made of none. Each keeps its own cause."""
        typed = self.cause or self
        if typed is not self:
            typed.code = self.code
            if str(typed) not in str(self) and str(self) not in getattr(typed, "__notes__", ()):
                typed.add_note(str(self))  # (a worker's error said in full: where, whose, what to do)
        raise typed from typed.__cause__


def resolve_call(target: str, args: str | None, inputs: str | None = None) -> tuple[FunctionRef, str, str]:
    """Parse the target and pick its inputs: (function, argument specs, maker). In order: --inputs,
    --args, the file's JAXSCOPE_INPUTS entry (a maker), its JAXSCOPE_ARGS entry, no arguments."""
    from jaxscope.schema.trace_file import SUFFIX
    from jaxscope.targets import argspec
    from jaxscope.targets.discover import EXAMPLES_VAR, INPUTS_VAR, DiscoveryError, discover_file
    from jaxscope.targets.target import TargetError, parse_target

    if target.endswith(SUFFIX):
        raise SessionError(
            f"{target} is a saved trace: it holds no code, and this traces or runs the function again: "
            "name the function itself (file.py::function)"
        )
    if "::" not in target and target.endswith(".py"):
        target = default_target(target)
    try:
        ref = parse_target(target)
    except TargetError as exc:
        raise SessionError(str(exc)) from exc
    if ref.path:
        ref = replace(ref, path=os.path.abspath(ref.path))
    if inputs is not None:
        if args is not None:
            raise SessionError("give the inputs one way: --inputs (a maker) or --args (specs), not both")
        return ref, "", maker_ref(inputs)
    if args is None and ref.path:
        try:
            info = discover_file(ref.path)
        except DiscoveryError as exc:
            raise SessionError(str(exc), 3 if exc.line else 2) from exc
        fn = info.get(ref.qualname)
        declared = ref.qualname in info.makers or (info.inputs_table and not info.makers and ref.qualname not in info.example_args)
        if (fn is not None and fn.maker is not None) or declared:
            return ref, "", FILE_INPUTS
        args = info.example_args.get(ref.qualname)
        if args is None:
            if fn is not None and fn.required:
                names = ", ".join(p.name for p in fn.params)
                where = target.rsplit("::", 1)[0]
                raise SessionError(
                    f"{ref.qualname}({names}) needs example inputs: add a maker to {where} "
                    f"({INPUTS_VAR} = {{{ref.qualname!r}: make_inputs}}, a function that returns the arguments), "
                    f"or pass --inputs PATH.py::MAKER, or specs: --args 'f32[8,128], ...' ({EXAMPLES_VAR} in the file)"
                )
            args = ""
    try:
        argspec.parse_call(args or "")
    except argspec.SpecError as exc:
        raise SessionError(f"bad --args:\n{exc}") from exc
    return ref, args or "", ""


def maker_ref(text: str) -> str:
    """`--inputs` as the worker takes it: PATH.py::NAME with an absolute path, or module:NAME."""
    from jaxscope.targets.target import TargetError, parse_target

    try:
        ref = parse_target(text)
    except TargetError as exc:
        raise SessionError(f"bad --inputs {text!r}: {exc}; give PATH.py::MAKER or package.module:MAKER") from exc
    if ref.path:
        if not os.path.isfile(ref.path):
            raise SessionError(f"--inputs {text}: no such file: {ref.path}")
        return f"{os.path.abspath(ref.path)}::{ref.qualname}"
    return f"{ref.module}:{ref.qualname}"


def default_target(path: str) -> str:
    """`file.py` -> `file.py::f` for its JAXSCOPE_MAIN, its one function with inputs, or its only function."""
    from jaxscope.targets.discover import MAIN_VAR, DiscoveryError, default_function, discover_file

    try:
        info = discover_file(path)
    except DiscoveryError as exc:
        raise SessionError(str(exc), 3 if exc.line else 2) from exc
    fn = default_function(info)
    if fn is None:
        names = ", ".join(f.name for f in info.functions) or "none"
        raise SessionError(f"{path} has several functions ({names}): name one as {path}::NAME, or set {MAIN_VAR} = 'NAME' in the file")
    return f"{path}::{fn.name}"


def trace(
    target: str,
    args: str | None,
    *,
    inputs: str | None = None,
    timeout: float | None = None,
    debug: bool = False,
    jaxpr_text: bool = False,
    record_flow: bool = False,
    diagnose: bool = True,
    tap: Callable[[bytes | None], None] | None = None,
    python: str | None = None,
    env: dict[str, str] | None = None,
    device: str = "",
    client: WorkerClient | None = None,
) -> TraceResult:
    """Trace `target` with the call `args` or the maker `inputs` (None: the file's own) in a one-off worker
    (with `device` JAX's default), or in `client` (left open); a failure becomes a SessionError with the
    worker's explanation. `tap` gets the reply's raw lines (`WorkerClient.submit`)."""
    from jaxscope.runtime.worker_client import WorkerError
    from jaxscope.schema.trace import TraceRequest

    own = client is None
    if client is None:  # first: it imports jax while the target is resolved
        client = one_off_client({"trace": timeout, "inputs": timeout} if timeout else None, python, env)
    try:
        ref, call, maker = resolve_call(target, args, inputs)
        request = TraceRequest(
            function=ref, args=call, jaxpr_text=jaxpr_text, record_flow=record_flow, diagnose=diagnose, inputs=maker, device=device
        )
        future = client.trace(request, tap=tap)
        try:
            return future.result()
        except WorkerError as exc:
            text = format_error(exc.info, debug)
            retry = _static_retry(ref, call, exc.info.argument) if not maker else ""
            if retry:
                text += f"\ntry it static: --args {retry!r}"
            raise SessionError(text, EXIT_CODES.get(exc.info.kind, 5)) from exc
    finally:
        if own:
            close_soon(client)


_shared: dict[tuple[Any, ...], WorkerClient] | None = None  # within `shared_workers()`: one client per interpreter and environment


@contextmanager
def shared_workers() -> Iterator[None]:
    """Within it, the one-off workers of a command are one: its trace, its lowering and its runs go
    to the same worker (its module imported once, its program traced warm), and an accelerator is
    opened once per command. A TPU admits one process at a time and opening it costs 6-11 s.
    Closed at the end of the outermost one: a caller that runs several commands in one process
    (a test module) keeps their worker between them."""
    global _shared
    if _shared is not None:  # inside another: its owner closes the workers
        try:
            yield
        finally:  # this command's --timeout is not the next one's
            from jaxscope.runtime.worker_client import DEFAULT_TIMEOUTS

            for client in _shared.values():
                client.timeouts = dict(DEFAULT_TIMEOUTS)
        return
    _shared = {}
    try:
        yield
    finally:
        clients, _shared = _shared, None
        for client in clients.values():
            client.close()


def one_off_client(timeouts: dict[str, float] | None, python: str | None, env: dict[str, str] | None) -> WorkerClient:
    """A worker for one command (no spare), run by `python` (checked up front): the command's shared
    one within `shared_workers()`. With the command's --timeout (`timeouts`), another interpreter's
    check and start-up are bounded by it too: one that hangs costs the user their own limit, not
    two minutes each."""
    from jaxscope.runtime.worker_client import WorkerClient

    key = (python, tuple(sorted((env or {}).items())))
    if _shared is not None and key in _shared:
        client = _shared[key]
        client.timeouts.update(timeouts or {})
        return client
    limit = max(timeouts.values()) if timeouts else None
    checked = checked_python(python, limit)
    if checked is not None and limit is not None:
        timeouts = {**(timeouts or {}), "startup": limit}
    client = WorkerClient(spare=False, timeouts=timeouts, python=checked, env=env)
    if _shared is not None:
        _shared[key] = client
    return client


def close_soon(client: WorkerClient) -> None:
    """The worker's exit (freeing a big program) takes ~0.2 s at 10k equations: it happens while the
    command goes on (a non-daemon thread: the process still waits for it at exit). The command's
    shared worker stays for its next request (`shared_workers`)."""
    if _shared is not None and client in _shared.values():
        return
    threading.Thread(target=client.close, name="worker-close").start()


def checked_python(python: str | None, timeout: float | None = None) -> str | None:
    """The interpreter to run user code (--python, else JAXSCOPE_PYTHON; None: ours), checked up front
    (within `timeout` seconds, when given)."""
    from jaxscope.runtime.interpreter import InterpreterError, check, foreign

    python = python or os.environ.get("JAXSCOPE_PYTHON") or None
    if not foreign(python):
        return None
    assert python is not None
    try:
        return check(python, timeout).path
    except InterpreterError as exc:
        raise SessionError(str(exc), 2) from exc


def worker_job(
    op: str,
    request: Any,
    decode: Callable[[Any], Any],
    timeouts: dict[str, float] | None,
    debug: bool,
    env: dict[str, str] | None = None,
    python: str | None = None,
) -> Any:
    """Run one request in a one-off worker (run by `python`); a failure becomes the SessionError
    (and exit code) for its kind."""
    client = one_off_client(timeouts, python, env)
    try:
        return client_job(client, op, request, decode, debug)
    finally:
        close_soon(client)


def client_job(client: WorkerClient, op: str, request: Any, decode: Callable[[Any], Any], debug: bool) -> Any:
    """One request in `client`; a failure becomes the SessionError (and exit code) for its kind."""
    from jaxscope.runtime.worker_client import WorkerError

    future = client.submit(op, request, decode)
    try:
        return future.result()
    except WorkerError as exc:
        raise SessionError(format_error(exc.info, debug), EXIT_CODES.get(exc.info.kind, 5)) from exc


def _static_retry(ref: FunctionRef, args: str, argument: str) -> str:
    """The --args that make `argument` static, when a tracer error names a traced scalar."""
    from jaxscope.targets.discover import DiscoveryError, discover_file
    from jaxscope.targets.static_fix import make_static, static_suggestion

    if not argument or not ref.path:
        return ""
    try:
        fn = discover_file(ref.path).get(ref.qualname)
    except DiscoveryError:
        return ""
    value = static_suggestion(fn, args, argument) if fn is not None else None
    return make_static(fn, args, argument, value) if fn is not None and value is not None else ""


def format_error(info: ErrorInfo, debug: bool) -> str:
    """The worker's explanation of a failure, with the offending source line (and, with `debug`,
    the user frames of the traceback and the worker's last output)."""
    text = info.summary()
    if info.location is not None:
        code = _source_line(info.location.file, info.location.line)
        if code and "\0" not in code:  # a UTF-16 file's line is no line to quote
            code = code if len(code) <= SOURCE_CHARS else code[: SOURCE_CHARS - 1] + "…"
            text += f"\n  {info.location.line} | {code}"
    if debug and info.traceback:
        text += "\ntraceback (user frames):" + "".join(f"\n  {f.file}:{f.line} in {f.function}: {f.code}" for f in info.traceback)
    if info.stderr_tail and (debug or info.kind == "crash"):
        tail = info.stderr_tail.strip().splitlines()[-20:]
        text += "\nworker output (last lines):\n  " + "\n  ".join(tail)
    return text


def _source_line(path: str, line: int) -> str:
    try:
        lines = read_text(path, MAX_SOURCE_BYTES).splitlines()
    except OSError:
        return ""
    return lines[line - 1].rstrip() if 0 < line <= len(lines) else ""
