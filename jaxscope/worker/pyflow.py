"""Record which user lines run while JAX traces.

Two recorders with one result: `Recorder()` picks `MonitorRecorder` (sys.monitoring, Python 3.12+)
when a monitoring tool id is free, else `TraceRecorder` (sys.settrace). Both decide once per code
object whether the code is the user's (`is_user_file`) and count line events in user code only.
Each user call gets its own hit dict, so a loop in a helper called 3 times yields 3 per-call
counts; generators and coroutines count each resume as a call. Use as::

    with Recorder() as rec:
        jitted.trace(...)
    report = rec.report()

What they cost differs: a trace function puts every frame of the thread on CPython's slow path
(JAX's own tracing ~2.5-3x slower, ~2 µs more per call, even with an empty hook), while
sys.monitoring lets the recorder switch the call event off for good in each code object that is
not the user's, the first time it runs, so JAX's frames run at full speed after their first call.
Either stops recording after `CALL_BUDGET` call events (then `stopped`: the hits are partial).
"""

from __future__ import annotations

import sys
import threading
import time
from bisect import bisect_right
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any, Literal

from jaxscope.analysis.flow import analyse
from jaxscope.schema.flow import FileFlow, FlowReport
from jaxscope.worker.userframes import is_user_file

# A program that makes this many Python calls while it is traced is big (JAX makes 50-500 calls
# per equation: a 4k-equation unrolled MLP ~1M): under a trace function (gpt-10k: 2.5 -> 6.5 s)
# the recorder stops there, and the trace goes on at full speed without control-flow marks
# (gpt-10k: 6.5 -> ~3.5 s). Under sys.monitoring only first calls and user calls count.
CALL_BUDGET = 1_000_000
_TOOL_NAME = "jaxscope-flow"
_TOOL_IDS = (4, 3)  # free by convention (0-2: debugger, coverage, profiler; 5: optimizer)
# sys.monitoring on Python 3.12+ (None before, where no MonitorRecorder is made). Any: mypy checks
# against Python 3.11, whose typeshed has no sys.monitoring.
_monitoring: Any = getattr(sys, "monitoring", None)


def Recorder(budget: int | None = None) -> Recording:  # noqa: N802 - used like a class
    """The cheapest recorder this Python has: sys.monitoring's when a tool id is free."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        for tool in _TOOL_IDS:
            if monitoring.get_tool(tool) is None:
                return MonitorRecorder(tool, budget)
    return TraceRecorder(budget)


class Recording:
    """Per-call line hits of user code recorded while active (a context manager), for at most
    `budget` call events; and the report made of them."""

    def __init__(self, budget: int | None = None) -> None:
        self._user: dict[CodeType, bool] = {}
        self.calls: list[tuple[CodeType, dict[int, int]]] = []  # one (code, line -> hits) per call
        self.call_events = 0
        self.budget = CALL_BUDGET if budget is None else budget
        self.stopped = False
        self.record_s = 0.0
        self.interrupted = False
        self._t0 = 0.0

    def _is_user(self, code: CodeType) -> bool:
        user = self._user.get(code)
        if user is None:
            user = self._user[code] = is_user_file(code.co_filename)
        return user

    def __enter__(self) -> Recording:
        self._t0 = time.perf_counter()
        self._start()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._finish()
        self.record_s = time.perf_counter() - self._t0
        return False

    def _start(self) -> None:
        raise NotImplementedError

    def _finish(self) -> None:
        raise NotImplementedError

    # -- results
    def hits(self) -> dict[str, dict[int, int]]:
        """file -> line -> hits, summed over calls."""
        out: dict[str, dict[int, int]] = {}
        for code, counts in self.calls:
            per = out.setdefault(code.co_filename, {})
            for ln, n in counts.items():
                per[ln] = per.get(ln, 0) + n
        return out

    def loop_calls(self) -> dict[str, dict[int, list[int]]]:
        """file -> line -> hits of that line in each call of the code objects holding it.

        Lines of one code object share the same call order, so two lines of one function line up
        index by index (what `analyse` relies on for per-call loop counts)."""
        lines_of: dict[CodeType, frozenset[int]] = {}
        by_code: dict[CodeType, list[dict[int, int]]] = {}
        for code, counts in self.calls:
            by_code.setdefault(code, []).append(counts)
        # A line in several code objects (a lambda or comprehension on a statement's line) goes
        # to the outermost one: statements, loop headers included, live there.
        owner: dict[tuple[str, int], CodeType] = {}
        for code in by_code:
            own = lines_of[code] = frozenset(ln for _, _, ln in code.co_lines() if ln is not None)
            rank = (code.co_firstlineno, -len(own))
            for ln in own:
                key = (code.co_filename, ln)
                prev = owner.get(key)
                if prev is None or rank < (prev.co_firstlineno, -len(lines_of[prev])):
                    owner[key] = code
        out: dict[str, dict[int, list[int]]] = {}
        for (path, ln), code in owner.items():
            out.setdefault(path, {})[ln] = [c.get(ln, 0) for c in by_code[code]]
        return out

    def report(self, read: Callable[[str], str] | None = None) -> FlowReport:
        """Analyse every user file that had hits; `read(path) -> str` reads a source (default: disk)."""
        t0 = time.perf_counter()
        read = read or _read
        hits = self.hits()
        loops = self.loop_calls()
        files: list[FileFlow] = []
        notes: list[str] = []
        if self.interrupted:
            notes.append("recording was interrupted (the trace hook was removed mid-trace): hits are partial")
        for path in sorted(hits):
            try:
                source = read(path)
            except OSError as exc:
                notes.append(f"{path}: source not readable ({exc.strerror or exc})")
                files.append(FileFlow(path=path, line_hits=tuple(sorted(hits[path].items()))))
                continue
            files.append(analyse(source, path, hits[path], loops.get(path)))
        return FlowReport(
            files=tuple(files),
            user_calls=len(self.calls),
            line_events=sum(sum(c.values()) for _, c in self.calls),
            call_events=self.call_events,
            analyse_s=time.perf_counter() - t0,
            notes=tuple(notes),
        )


class TraceRecorder(Recording):
    """sys.settrace (and threading.settrace, for threads started meanwhile); the trace functions
    that were set before are restored on exit, exceptions included."""

    def __init__(self, budget: int | None = None) -> None:
        super().__init__(budget)
        self._prev_sys: Any = None
        self._prev_thread: Any = None

    # -- hooks (hot: keep them small)
    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        self.call_events += 1
        if self.call_events > self.budget:
            self.stopped = True
            sys.settrace(None)  # this thread, from its next call on; frames traced so far keep theirs
            threading.settrace(None)
            return None
        code = frame.f_code
        user = self._user.get(code)
        if user is None:
            user = self._is_user(code)
        if not user:
            return None
        counts: dict[int, int] = {}
        self.calls.append((code, counts))

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                ln = frame.f_lineno
                counts[ln] = counts.get(ln, 0) + 1
            return local

        return local

    def _start(self) -> None:
        self._prev_sys = sys.gettrace()
        self._prev_thread = threading.gettrace()
        threading.settrace(self._global)
        sys.settrace(self._global)

    def _finish(self) -> None:
        # Python drops a trace function that raised, and user code may replace it: then the
        # hits are partial, and the report says so.
        self.interrupted = not self.stopped and sys.gettrace() is not self._global
        sys.settrace(self._prev_sys)
        threading.settrace(self._prev_thread)


class MonitorRecorder(Recording):
    """sys.monitoring (Python 3.12+), as tool `tool`: the call event everywhere, switched off in
    each code object that is not the user's the first time it fires; line, jump, return, yield
    and resume events in user code only; unwinds (global only) end a call as a return does. A
    call stack per code object tells a line event which call it belongs to (no frame is passed)."""

    def __init__(self, tool: int, budget: int | None = None) -> None:
        super().__init__(budget)
        self._tool = tool
        self._stacks: dict[CodeType, list[list[Any]]] = {}  # per code object, its calls running: [hits, last line]
        self._lines: dict[CodeType, list[tuple[int, int, int | None]]] = {}

    def _started(self, code: CodeType, offset: int) -> Any:
        """PY_START: a call of `code` starts (a generator's first run too)."""
        self.call_events += 1
        if self.call_events > self.budget:
            self._stop()
            return None
        user = self._user.get(code)
        if user is None:
            user = self._is_user(code)
            if user:
                ev = _monitoring.events
                _monitoring.set_local_events(self._tool, code, ev.LINE | ev.JUMP | ev.PY_RESUME | ev.PY_RETURN | ev.PY_YIELD)
        if not user:
            return _monitoring.DISABLE
        self._push(code)
        return None

    def _resumed(self, code: CodeType, offset: int, *exc: object) -> None:
        """PY_RESUME / PY_THROW: a generator or coroutine goes on (a new call, as for settrace)."""
        if self._user.get(code):
            self.call_events += 1
            if self.call_events > self.budget:
                self._stop()
                return
            self._push(code)

    def _push(self, code: CodeType) -> None:
        counts: dict[int, int] = {}
        self.calls.append((code, counts))
        entry = [counts, -1]  # the call's hits, and the line it last counted
        stack = self._stacks.get(code)
        if stack is None:
            self._stacks[code] = [entry]
        else:
            stack.append(entry)

    # Lines are counted as a trace function sees them (CPython's own settrace on sys.monitoring):
    # on entering a line other than the last one counted, and on every backward jump (a loop's
    # next turn, even within one line: a one-line comprehension counts once per item).

    def _line(self, code: CodeType, line: int) -> None:
        stack = self._stacks.get(code)
        if stack:
            top = stack[-1]
            if top[1] != line:
                top[1] = line
                counts = top[0]
                counts[line] = counts.get(line, 0) + 1

    def _jumped(self, code: CodeType, offset: int, target: int) -> Any:
        if target > offset:
            return _monitoring.DISABLE  # forward jumps never count: not asked for again here
        stack = self._stacks.get(code)
        if stack:
            line = self._line_at(code, target)
            if line is not None:
                top = stack[-1]
                top[1] = line
                counts = top[0]
                counts[line] = counts.get(line, 0) + 1
        return None

    def _line_at(self, code: CodeType, offset: int) -> int | None:
        table = self._lines.get(code)
        if table is None:
            table = self._lines[code] = [(start, end, line) for start, end, line in code.co_lines()]
        i = bisect_right(table, (offset, float("inf"), 0)) - 1
        if i >= 0 and table[i][0] <= offset < table[i][1]:
            return table[i][2]
        return None

    def _left(self, code: CodeType, offset: int, *value: object) -> None:
        """PY_RETURN / PY_YIELD / PY_UNWIND: the call (or this run of a generator) is over."""
        stack = self._stacks.get(code)
        if stack:
            stack.pop()

    def _callbacks(self) -> list[tuple[int, Any]]:
        ev = _monitoring.events
        return [
            (ev.PY_START, self._started),
            (ev.PY_RESUME, self._resumed),
            (ev.PY_THROW, self._resumed),
            (ev.LINE, self._line),
            (ev.JUMP, self._jumped),
            (ev.PY_RETURN, self._left),
            (ev.PY_YIELD, self._left),
            (ev.PY_UNWIND, self._left),
        ]

    def _start(self) -> None:
        mon = _monitoring
        mon.use_tool_id(self._tool, _TOOL_NAME)
        for event, callback in self._callbacks():
            mon.register_callback(self._tool, event, callback)
        mon.set_events(self._tool, mon.events.PY_START | mon.events.PY_THROW | mon.events.PY_UNWIND)

    def _stop(self) -> None:
        """The budget ran out: no more events (the tool id stays ours until the recording ends)."""
        self.stopped = True
        self._switch_off()

    def _switch_off(self) -> None:
        mon = _monitoring
        if mon.get_tool(self._tool) != _TOOL_NAME:
            return
        mon.set_events(self._tool, 0)
        for code, user in self._user.items():
            if user:
                mon.set_local_events(self._tool, code, 0)

    def _finish(self) -> None:
        mon = _monitoring
        # someone freed the tool id mid-trace (a debugger reset): the hits are partial
        self.interrupted = mon.get_tool(self._tool) != _TOOL_NAME
        if self.interrupted:
            return
        self._switch_off()
        for event, _ in self._callbacks():
            mon.register_callback(self._tool, event, None)
        mon.free_tool_id(self._tool)


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()
