"""Record which user lines run while JAX traces (Python 3.11: sys.settrace; no sys.monitoring).

A global trace function sees every Python call; it decides once per code object whether the
code is the user's (`is_user_file`) and only then returns a local tracer, so JAX's own frames
cost one callback each and no line events. Each user call gets its own hit dict, so a loop in a
helper called 3 times yields 3 per-call counts. Use as::

    with Recorder() as rec:
        jitted.trace(...)
    report = rec.report()

The previous trace functions (sys and threading) are restored on exit, exceptions included.
Generators and coroutines get a 'call' event at every resume, so each resume counts as a call.
"""

from __future__ import annotations

import sys
import threading
import time
from types import CodeType, FrameType
from typing import Any

from jaxscope.core.flow import FileFlow, FlowReport, analyse
from jaxscope.worker.userframes import is_user_file


# While a trace function is set, Python 3.11 runs every frame on its slow path: JAX's tracing takes
# ~2.5x as long (gpt-10k: 2.5 -> 6.5 s; ~1.5 µs more per call). A program that makes this many
# Python calls while it is traced is big (JAX makes 50-500 calls per equation: a 4k-equation
# unrolled MLP ~1M): the recorder stops there, and the trace goes on at full speed without
# control-flow marks (gpt-10k: 6.5 -> ~3.5 s).
CALL_BUDGET = 1_000_000


class Recorder:
    """Context manager recording per-call line hits of user code while it is active, for at most
    `budget` calls (then `stopped`: the hits are partial and should not be reported)."""

    def __init__(self, budget: int | None = None) -> None:
        self._user: dict[CodeType, bool] = {}
        self.calls: list[tuple[CodeType, dict[int, int]]] = []  # one (code, line -> hits) per call
        self.call_events = 0
        self.budget = CALL_BUDGET if budget is None else budget
        self.stopped = False
        self.record_s = 0.0
        self.interrupted = False
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
            user = self._user[code] = is_user_file(code.co_filename)
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

    def __enter__(self) -> Recorder:
        self._prev_sys = sys.gettrace()
        self._prev_thread = threading.gettrace()
        self._t0 = time.perf_counter()
        threading.settrace(self._global)
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> bool:
        # Python drops a trace function that raised, and user code may replace it: then the
        # hits are partial, and the report says so.
        self.interrupted = not self.stopped and sys.gettrace() is not self._global
        sys.settrace(self._prev_sys)
        threading.settrace(self._prev_thread)
        self.record_s = time.perf_counter() - self._t0
        return False

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

    def report(self, read=None) -> FlowReport:  # type: ignore[no-untyped-def]
        """Analyse every user file that had hits; `read(path) -> str` reads a source (default: disk)."""
        t0 = time.perf_counter()
        read = read or _read
        hits = self.hits()
        loops = self.loop_calls()
        files: list[FileFlow] = []
        notes: list[str] = ["recording was interrupted (the trace hook was removed mid-trace): hits are partial"] if self.interrupted else []
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


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()
