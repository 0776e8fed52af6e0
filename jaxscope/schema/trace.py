"""A trace request and everything one trace produced: diagnostics, the jaxpr text, errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, cast

from jaxscope.schema.codec import dumps, from_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.flow import FlowReport
from jaxscope.schema.graph import SCHEMA_VERSION, Graph, SourceLoc


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """Where a function lives: `path` + `qualname`, or an importable `module` + `qualname`."""

    qualname: str
    path: str = ""
    module: str = ""

    def display(self) -> str:
        return f"{self.path}::{self.qualname}" if self.path else f"{self.module}:{self.qualname}"


Severity = Literal["info", "warning", "error"]


DiagnosticKind = Literal[
    "captured-constant",  # an array from a global or closure baked into the program
    "captured-scalar",  # a Python number from a global or closure baked in as a literal
    "trace-print",  # print() ran while tracing: once, not at every call
    "key-reuse",  # one PRNG key consumed twice: identical random numbers
    "global-changed",  # a module global rebound or mutated while tracing
    "leaked-tracer",  # a tracer stored where it outlives the trace
    "dead-code",  # a large share of the equations computes nothing the function returns: jit drops them
    "trace-time-call",  # numpy's or Python's random numbers, or the clock, read at trace time: baked in
    "trace-time-state",  # an attribute, item or closure cell changed while tracing (a counter)
]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding, with where it is in the user's code and in the graph."""

    kind: DiagnosticKind
    severity: Severity
    title: str  # one line, names the thing (e.g. "global array `SCALE` (f32[4], 16 B) is a constant")
    detail: str = ""  # why it matters
    fix: str = ""  # what to do instead
    locations: tuple[SourceLoc, ...] = ()  # user lines involved, most relevant first
    nodes: tuple[str, ...] = ()  # graph node paths involved

    def summary(self) -> str:
        """Title, detail and fix as a short plain-text paragraph."""
        parts = [self.title]
        if self.detail:
            parts.append(self.detail)
        if self.fix:
            parts.append(f"fix: {self.fix}")
        return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class InputLeaf:
    """One concrete input leaf as generated or given by a maker, for display."""

    path: str  # e.g. "x", "params['w']"
    aval: str  # e.g. "f32[8,128]", or "static" for a Python value passed as is
    preview: tuple[str, ...] = ()  # the first few values (flattened); a static's repr
    size: int = 0  # number of elements (0 for a static)


FILE_INPUTS = "@file"  # TraceRequest.inputs: the target file's own JAXSCOPE_INPUTS entry for the function


@dataclass(frozen=True, slots=True)
class TraceRequest:
    """What the worker is asked to trace, and with which inputs: `args` is the call-argument text
    (spec.argspec); `inputs`, when set, names a maker instead ("PATH.py::NAME", "module:NAME", or
    "@file" for the file's JAXSCOPE_INPUTS entry of the function; worker.makers)."""

    function: FunctionRef
    args: str = ""
    jaxpr_text: bool = True
    record_flow: bool = True  # record which user lines ran while tracing (worker.pyflow)
    diagnose: bool = True  # check the JAX rules (analysis.diagnostics); an export has no use for them
    inputs: str = ""
    device: str = ""  # trace with this device the default ("cpu:1", "gpu"; "" JAX's default)


class Call(Protocol):
    """What a trace, HLO or run request asks of a function: which, and with which inputs."""

    @property
    def function(self) -> FunctionRef: ...

    @property
    def args(self) -> str: ...

    @property
    def inputs(self) -> str: ...


def same_call(a: Call, b: Call) -> bool:
    """Whether two requests (trace, HLO, run) are of the same function with the same inputs: a
    result of one belongs to what the other shows."""
    return (a.function, a.args, a.inputs) == (b.function, b.args, b.inputs)


@dataclass(frozen=True, slots=True)
class TraceResult:
    """Everything one trace produced, as plain data."""

    request: TraceRequest
    graph: Graph
    jaxpr_text: str = ""
    arg_names: tuple[str, ...] = ()
    result_paths: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    jax_version: str = ""
    schema_version: int = SCHEMA_VERSION
    flow: FlowReport | None = None  # Python control flow during the trace (record_flow)
    diagnostics: tuple[Diagnostic, ...] = ()  # hidden inputs and side effects (analysis.diagnostics)
    inputs: tuple[InputLeaf, ...] = ()  # every leaf of a maker's inputs, traced or static
    input_source: str = ""  # the maker's label, when a maker gave the inputs
    # path -> `files.digest` of the bytes traced, for each user file of the trace: a save copies a
    # source only while it still has these bytes (it may have changed since, or failed to trace)
    source_hashes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return dumps(self)

    @staticmethod
    def from_json(text: str | bytes) -> TraceResult:
        with gc_paused():
            return result_from_jsonable(json.loads(text))


def result_from_jsonable(data: dict[str, Any]) -> TraceResult:
    """Rebuild a TraceResult, refusing a schema newer than this reader understands."""
    version = data.get("schema_version", 0)
    if type(version) is not int:
        raise ValueError(f"trace result schema {str(version)[:20]!r} is not a schema version (a whole number)")
    if version > SCHEMA_VERSION:
        raise ValueError(f"trace result schema {version} is newer than supported ({SCHEMA_VERSION})")
    from jaxscope.schema.graph_wire import split_wire_graph  # it imports this module

    rest, graph = split_wire_graph(data)
    result = cast(TraceResult, from_jsonable(TraceResult, rest))  # decoded JSON
    return result if graph is None else replace(result, graph=graph)


ErrorKind = Literal[
    "spec",  # bad argument spec or target
    "not-found",  # file, module or function missing
    "syntax",  # the user's file does not parse
    "import",  # the user's file (or something it imports) failed to import
    "user-code",  # the user's function raised
    "tracer",  # a JAX tracer/concretization error in the user's code
    "exit",  # user code called sys.exit / raised SystemExit
    "crash",  # the worker process died (segfault, os._exit, abort, OOM kill)
    "timeout",  # a phase ran past its time limit
    "cancelled",  # the user cancelled
    "memory",  # the worker hit its memory cap
    "device-busy",  # the accelerator is held by another program (a TPU admits one process)
    "internal",  # a bug in jaxscope
]


@dataclass(frozen=True, slots=True)
class JaxprText:
    """The jaxpr of a trace, printed (with source lines): asked for after the graph, so the graph
    is on screen while JAX's pretty printer runs (seconds at 50k equations)."""

    request: TraceRequest
    text: str
    seconds: float = 0.0
    equations: dict[str, Any] | None = None  # the text's line map (`linking.equations_to_wire`)


@dataclass(frozen=True, slots=True)
class Frame:
    """One traceback frame, as shown to the user."""

    file: str
    line: int
    function: str
    code: str = ""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A structured failure: what kind, what was said, where in the user's code."""

    kind: ErrorKind
    message: str
    phase: str = ""
    exc_type: str = ""
    location: SourceLoc | None = None
    traceback: tuple[Frame, ...] = ()  # user frames, outermost first
    stderr_tail: str = ""
    hint: str = ""
    argument: str = ""  # the traced argument a tracer error's value came from, e.g. "n" or "params['n']"

    def summary(self) -> str:
        """One paragraph for a terminal or an error panel."""
        if self.kind == "device-busy":  # nothing of the user's failed: the one sentence says what to do
            return self.message
        where = f" at {self.location.file}:{self.location.line}" if self.location else ""
        head = f"{self.exc_type}: " if self.exc_type else ""
        text = f"{self.kind} error{' during ' + self.phase if self.phase else ''}{where}: {head}{self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text
