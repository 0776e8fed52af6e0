"""Watch a trace for hidden inputs and side effects, and state them as core Diagnostics.

`TraceWatch` wraps the trace: it tees stdout to attribute each print to the user line that made
it, and snapshots the user's module globals before and after, so rebinding, mutation and leaked
tracers show up. `diagnose` then combines that with the graph (captured constants, reused keys)
and with the bytecode of the user functions that ran (which names they load, and where).
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Iterable, Iterator
from types import CodeType, FrameType, ModuleType
from typing import Any, Literal, TextIO

import jax

from jaxscope.analysis.diagnostics import constant_diagnostics, dead_code, node_locations
from jaxscope.schema.graph import Graph, SourceLoc
from jaxscope.schema.run import Site
from jaxscope.schema.trace import Diagnostic
from jaxscope.worker.keyreuse import find_key_reuse
from jaxscope.worker.trace_time import HostCalls, StateSnapshot, probes
from jaxscope.worker.userframes import is_user_file, user_modules

_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"}
_STORES = {"STORE_GLOBAL", "STORE_NAME"}
MAX_PRINT_CHARS = 200
MAX_SCAN = 1000  # items looked at per container when searching for leaked tracers


class _Tee:
    """A stdout that passes everything through and remembers which user line printed what."""

    def __init__(self, inner: TextIO | None) -> None:
        self._inner = inner  # None: the user set sys.stdout = None (print writes nothing, yet it ran)
        self.records: dict[tuple[str, int], list[Any]] = {}  # (file, line) -> [SourceLoc, text]

    def write(self, text: str) -> int:
        frame: FrameType | None = sys._getframe(1)
        depth = 0
        while frame is not None and depth < 40 and not is_user_file(frame.f_code.co_filename):
            frame, depth = frame.f_back, depth + 1
        if frame is not None and depth < 40 and text:
            code = frame.f_code
            key = (code.co_filename, frame.f_lineno)
            rec = self.records.setdefault(key, [SourceLoc(code.co_filename, frame.f_lineno, function=code.co_qualname), ""])
            if len(rec[1]) < MAX_PRINT_CHARS:
                rec[1] += text
        return self._inner.write(text) if self._inner is not None else len(text)

    def flush(self) -> None:
        if self._inner is not None:
            self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _fingerprint(value: Any) -> tuple[int, int]:
    size = len(value) if isinstance(value, (list, dict, set, bytearray)) else -1
    return id(value), size


class TraceWatch:
    """Context manager around one trace: prints by line, globals before and after, the host's random
    numbers and clock read from user lines, and the state the function keeps outside its arguments."""

    def __init__(self, fn: Any = None) -> None:
        self._fn = fn
        self._host = HostCalls()
        self._state: StateSnapshot | None = None
        self._tee: _Tee | None = None
        self._before: dict[str, dict[str, tuple[int, int]]] = {}
        self.modules: list[ModuleType] = []
        self.changed: list[tuple[ModuleType, str, str]] = []  # (module, name, "rebound"/"mutated"/"added")

    def __enter__(self) -> TraceWatch:
        self.modules = user_modules()
        self._before = {m.__name__: {k: _fingerprint(v) for k, v in vars(m).items() if not k.startswith("__")} for m in self.modules}
        self._stdout = sys.stdout
        self._state = StateSnapshot(probes(self.modules, self._fn))
        self._tee = _Tee(sys.stdout)
        sys.stdout = self._tee
        self._host.__enter__()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._host.__exit__()
        if sys.stdout is self._tee:
            sys.stdout = self._stdout

        for module in self.modules:
            before = self._before.get(module.__name__, {})
            for name, value in list(vars(module).items()):
                if name.startswith("__"):
                    continue
                old = before.get(name)
                now = _fingerprint(value)
                if old is None:
                    self.changed.append((module, name, "added"))
                elif old[0] != now[0]:
                    self.changed.append((module, name, "rebound"))
                elif old[1] != now[1]:
                    self.changed.append((module, name, "mutated"))
        return False

    def state_changed(self, referenced: set[str]) -> list[tuple[str, list[str]]]:
        """(holder, keys) of the state that changed while tracing; globals only where `referenced`
        (the names the traced code reads: another global changing meanwhile is not its doing)."""
        return self._state.changed(referenced) if self._state is not None else []

    @property
    def host_calls(self) -> list[tuple[SourceLoc, str]]:
        """(user line, the function it called: "np.random.normal") for each trace-time host call."""
        return [(loc, name) for (_, _, name), loc in self._host.calls.items()]

    @property
    def prints(self) -> list[tuple[SourceLoc, str]]:
        return [(loc, text) for loc, text in self._tee.records.values()] if self._tee else []


def _ran_instructions(
    codes: Iterable[CodeType], ran: dict[str, dict[int, int]] | None, opnames: set[str]
) -> Iterator[tuple[str, SourceLoc]]:
    """(argument, where) of each instruction named in `opnames` in the user's code objects (nested
    ones included) on a line that ran, when known."""
    stack = list(codes)
    seen: set[int] = set()
    while stack:
        code = stack.pop()
        if id(code) in seen or not is_user_file(code.co_filename):
            continue
        seen.add(id(code))
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
        lines = ran.get(code.co_filename) if ran is not None else None
        for ins in dis.get_instructions(code):
            pos = ins.positions
            if ins.opname not in opnames or pos is None or not pos.lineno or (lines is not None and pos.lineno not in lines):
                continue
            line = pos.lineno
            yield (
                str(ins.argval),
                SourceLoc(code.co_filename, line, pos.col_offset or 0, pos.end_lineno or line, pos.end_col_offset or 0, code.co_qualname),
            )


def name_sites(codes: Iterable[CodeType], ran: dict[str, dict[int, int]] | None) -> dict[str, tuple[SourceLoc, ...]]:
    """Name -> where user code loads or stores it as a global/closure name (lines that ran, if known)."""
    out: dict[str, dict[tuple[str, int], SourceLoc]] = {}
    for name, loc in _ran_instructions(codes, ran, _LOADS | _STORES):
        out.setdefault(name, {}).setdefault((loc.file, loc.line), loc)
    return {name: tuple(sorted(sites.values(), key=lambda s: (s.file, s.line))) for name, sites in out.items()}


def diagnose(
    graph: Graph,
    closed: Any,
    fn: Any,
    watch: TraceWatch,
    codes: Iterable[CodeType],
    ran: dict[str, dict[int, int]] | None = None,
    arg_names: tuple[str, ...] = (),
) -> list[Diagnostic]:
    """Every diagnostic for one successful trace, errors first."""
    sites = name_sites(codes, ran)
    out: list[Diagnostic] = []
    out += _leaks(watch, sites)
    out += _key_reuse(graph, closed, arg_names)
    out += _changed_globals(watch, sites)
    out += _prints(watch)
    out += _host_calls(watch)
    out += _state_changes(watch, sites, codes, ran)
    out += constant_diagnostics(graph, sites)
    out += _scalars(fn, sites)
    found = dead_code(graph)
    out += [found] if found is not None else []
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda d: order[d.severity])


def _key_reuse(graph: Graph, closed: Any, arg_names: tuple[str, ...]) -> list[Diagnostic]:
    out = []
    for finding in find_key_reuse(closed, arg_names):
        where = node_locations(graph, finding.uses)
        if finding.in_loop:
            title = f"PRNG key {finding.key} is used on every loop iteration without a split"
            detail = "Inside a scan/while body the same key gives the same random numbers at every iteration."
            fix = "carry the key through the loop and split it each iteration, or pass `jax.random.split(key, n)` as xs"
        else:
            title = f"PRNG key {finding.key} is used {len(finding.uses)} times"
            detail = "Every use of one key draws the same random bits: the samples are identical or correlated, not independent."
            fix = "split it first: `k1, k2 = jax.random.split(key)` and use each new key once"
        out.append(Diagnostic("key-reuse", "warning", title, detail, fix, where, finding.uses))
    return out


def _prints(watch: TraceWatch) -> list[Diagnostic]:
    out = []
    for loc, text in watch.prints:
        shown = text.strip().replace("\n", " ⏎ ")
        if len(shown) > 80:
            shown = shown[:79] + "…"
        out.append(
            Diagnostic(
                "trace-print",
                "info",
                f"print at line {loc.line} ran while tracing: {shown!r}",
                "Python side effects run once, when jit traces the function, and never when the compiled "
                "program runs; what it printed are tracers (shapes), not values.",
                "use `jax.debug.print('x = {x}', x=x)` to print values at every call",
                (loc,),
            )
        )
    return out


def trace_calls(watch: TraceWatch, fn: Any) -> tuple[Site, ...]:
    """The host calls and state changes of one trace of `fn` as the evidence of a trace-time cause."""
    sites = [Site("", "", loc, f"`{name}` ran at trace time") for loc, name in watch.host_calls]
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    for holder, keys in watch.state_changed(set(name_sites([code], None)) if code is not None else set()):
        shown = ", ".join(f"{holder}.{k}" if k and k[0].isidentifier() else f"{holder}{k}" for k in keys if k) or holder
        sites.append(Site("", "", None, f"`{shown}` changed while tracing"))
    return tuple(sites)


def _host_calls(watch: TraceWatch) -> list[Diagnostic]:
    out = []
    for loc, name in watch.host_calls:
        clock = name.startswith("time.")
        out.append(
            Diagnostic(
                "trace-time-call",
                "warning",
                f"`{name}` ran at trace time",
                "What it returned is baked into the program as a constant: every call of the compiled function "
                "reuses it, while an eager call (or the next trace) gets a new value, so jit and eager disagree.",
                "pass the time in as an argument"
                if clock
                else "draw random numbers with jax.random from a key passed in (split it per call)",
                (loc,),
            )
        )
    return out


def _state_changes(
    watch: TraceWatch, sites: dict[str, tuple[SourceLoc, ...]], codes: Iterable[CodeType], ran: dict[str, dict[int, int]] | None
) -> list[Diagnostic]:
    """A counter kept in an object's attribute, a container's item or a closure cell, changed while tracing."""
    reported = {name for _, name, _ in watch.changed}
    out = []
    for holder, keys in watch.state_changed(set(sites)):
        if holder in reported and not keys:
            continue
        attrs = [k for k in keys if k and not k.startswith(("[", "'", '"')) and k != "len"]
        shown = ", ".join(f"`{holder}.{k}`" if k in attrs else f"`{holder}{k if k.startswith('[') else f'[{k}]'}`" for k in keys if k)
        where = attr_sites(codes, ran, attrs) or sites.get(holder, ())
        out.append(
            Diagnostic(
                "trace-time-state",
                "warning",
                f"{shown or f'`{holder}`'} changed while tracing",
                "This ran once, at trace time: the compiled function keeps the value it read then, as a constant, "
                "while the Python state goes on changing on every eager call; jit and eager disagree.",
                "keep the state in the arguments and return the new state (state in, new state out)",
                where,
            )
        )
    return out


def attr_sites(codes: Iterable[CodeType], ran: dict[str, dict[int, int]] | None, attrs: list[str]) -> tuple[SourceLoc, ...]:
    """Where user code that ran stores one of `attrs` (`self.count += 1`)."""
    found = {(loc.file, loc.line): loc for name, loc in _ran_instructions(codes, ran, {"STORE_ATTR"}) if name in attrs}
    return tuple(sorted(found.values(), key=lambda s: (s.file, s.line)))


def _changed_globals(watch: TraceWatch, sites: dict[str, tuple[SourceLoc, ...]]) -> list[Diagnostic]:
    out = []
    for module, name, how in watch.changed:
        if isinstance(getattr(module, name, None), (ModuleType, type)) or _has_tracer(getattr(module, name, None)):
            continue  # imports at trace time are fine; leaks are reported on their own
        verb = {"added": "was created", "rebound": "was rebound", "mutated": "was mutated in place"}[how]
        out.append(
            Diagnostic(
                "global-changed",
                "warning",
                f"global `{name}` {verb} while tracing",
                "This ran once, at trace time. Calls of the compiled function will not repeat it, so state "
                "kept in globals drifts away from what the program computes.",
                "thread state explicitly: take it as an argument and return the new state",
                sites.get(name, ()),
            )
        )
    return out


def _leaks(watch: TraceWatch, sites: dict[str, tuple[SourceLoc, ...]]) -> list[Diagnostic]:
    out = []
    for module in watch.modules:
        for name, value in list(vars(module).items()):
            if name.startswith("__") or not _has_tracer(value):
                continue
            out.append(
                Diagnostic(
                    "leaked-tracer",
                    "error",
                    f"a tracer leaked into global `{name}`",
                    "A traced value was stored outside the function. It is only a placeholder: using it later "
                    "raises UnexpectedTracerError.",
                    "return the value from the function instead of storing it",
                    sites.get(name, ()),
                )
            )
    return out


def _has_tracer(value: Any) -> bool:
    tracer = jax.core.Tracer
    if isinstance(value, tracer):
        return True
    items: Iterable[Any] = ()
    if isinstance(value, (list, tuple, set)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif hasattr(value, "__dict__") and not isinstance(value, (ModuleType, type)) and not callable(value):
        items = vars(value).values()
    return any(isinstance(v, tracer) for _, v in zip(range(MAX_SCAN), items, strict=False))


def _scalars(fn: Any, sites: dict[str, tuple[SourceLoc, ...]]) -> list[Diagnostic]:
    """Python numbers read from module globals: they become literals, frozen at trace time."""
    globs = getattr(fn, "__globals__", {})
    out = []
    for name, locs in sites.items():
        value = globs.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            continue
        out.append(
            Diagnostic(
                "captured-scalar",
                "info",
                f"global `{name}` = {value!r} is baked into the program",
                "Python numbers read from globals become literals (or shapes) at trace time; rebinding the "
                "global later does not change the compiled function.",
                f"pass `{name}` as an argument, or mark it static if it picks shapes",
                locs,
            )
        )
    return out
