"""The data that flows between worker, layout, renderers and views.

A traced function becomes a `Graph` made of `Body`s: one body per *distinct* jaxpr (the top
level, each cond branch, while cond/body, scan body, nested jit...). An equation that owns
sub-jaxprs lists them as `SubgraphRef`s pointing at bodies, so a model that calls the same
jitted block 200 times stores that block once, and its layout is computed once.

A node inside an expanded sub-graph is addressed by a *path*: the owner's path, ``:``, the index
of the sub-graph in the owner's `subgraphs`, ``/``, the node's local id; e.g. ``e4:1/e0`` is
equation 0 of the second sub-graph (the true branch of a cond) of top-level equation 4.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from jaxscope.analysis.flow import FlowReport
from jaxscope.schema.codec import dumps, from_jsonable, gc_paused, loads

SCHEMA_VERSION = 1

NodeKind = Literal["eqn", "input", "output", "const", "literal"]


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in the user's code (1-based line, 0-based column as in Python's AST)."""

    file: str
    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    function: str = ""

    def short(self) -> str:
        name = self.file.rsplit("/", 1)[-1]
        return f"{name}:{self.line}"


@dataclass(frozen=True, slots=True)
class SubgraphRef:
    """One sub-jaxpr of a higher-order equation, e.g. role "true branch" -> body "b3"."""

    role: str
    body: str
    param: str = ""  # where it lives in the equation's params, e.g. "branches[1]"


@dataclass(frozen=True, slots=True)
class Node:
    """An equation, a jaxpr input/output, a captured constant or a literal operand."""

    id: str  # unique within its body: "e3", "in0", "out1", "c0", "e3.l1"
    kind: NodeKind
    label: str  # primitive name, argument path, constant name, or literal value
    avals: tuple[str, ...] = ()  # output avals, e.g. ("f32[8,128]",)
    in_avals: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()  # stringified, truncated
    source: SourceLoc | None = None  # innermost frame in user code
    name_stack: str = ""
    subgraphs: tuple[SubgraphRef, ...] = ()
    detail: str = ""  # e.g. the Python name a constant came from


@dataclass(frozen=True, slots=True)
class Edge:
    """Dataflow: output `src_port` of `src` is operand `dst_port` of `dst` (ids local to a body)."""

    src: str
    dst: str
    src_port: int = 0
    dst_port: int = 0
    aval: str = ""


@dataclass(frozen=True, slots=True)
class Body:
    """The nodes and edges of one distinct jaxpr, without its sub-jaxprs' contents."""

    id: str
    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    n_eqns: int  # equations directly in this body
    total_eqns: int  # including every sub-graph occurrence, recursively


@dataclass(frozen=True, slots=True)
class Graph:
    """A traced function as a graph of bodies; `root` is the top-level jaxpr."""

    function: str
    bodies: dict[str, Body]
    root: str = "b0"

    def body(self, body_id: str) -> Body:
        return self.bodies[body_id]

    @property
    def top(self) -> Body:
        return self.bodies[self.root]


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
class TraceRequest:
    """What the worker is asked to trace; `args` is the call-argument text (see core.argspec)."""

    function: FunctionRef
    args: str = ""
    jaxpr_text: bool = True
    record_flow: bool = True  # record which user lines ran while tracing (core.flow)
    diagnose: bool = True  # check the JAX rules (core.diagnostics); an export has no use for them


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
    diagnostics: tuple[Diagnostic, ...] = ()  # hidden inputs and side effects (core.diagnostics)

    def to_json(self) -> str:
        return dumps(self)

    @staticmethod
    def from_json(text: str | bytes) -> TraceResult:
        with gc_paused():
            return result_from_jsonable(json.loads(text))


def result_from_jsonable(data: dict[str, Any]) -> TraceResult:
    """Rebuild a TraceResult, refusing a schema newer than this reader understands."""
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"trace result schema {version!r} is newer than supported ({SCHEMA_VERSION})")
    from jaxscope.schema.graph_wire import split_wire_graph  # it imports this module

    rest, graph = split_wire_graph(data)
    result = from_jsonable(TraceResult, rest)
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
        where = f" at {self.location.file}:{self.location.line}" if self.location else ""
        head = f"{self.exc_type}: " if self.exc_type else ""
        text = f"{self.kind} error{' during ' + self.phase if self.phase else ''}{where}: {head}{self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


# ---------------------------------------------------------------------------- layout data


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A placed node: `path` addresses it in the Graph (see module docstring). Centre x/y."""

    path: str
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True, slots=True)
class EdgePath:
    """A drawn edge between node paths. `points` is a cubic Bezier chain: p0, (c1, c2, p)*.

    `routed` is False for edges left out of the layout (long spans): renderers draw them as
    plain curves or stubs so no dataflow is silently dropped.
    """

    src: str
    dst: str
    points: tuple[tuple[float, float], ...]
    routed: bool = True
    aval: str = ""


@dataclass(frozen=True, slots=True)
class ClusterBox:
    """An expanded sub-graph drawn as a titled box; `path` is "<owner path>:<index>"."""

    path: str
    title: str
    x: float  # top-left corner
    y: float
    w: float
    h: float
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Layout:
    """Absolute positions (pixels at 96 dpi, y down) for everything a renderer draws."""

    width: float
    height: float
    nodes: tuple[NodeBox, ...]  # or, read from the layout process, a `layout_tables.NodeTable` (equal to that tuple)
    edges: tuple[EdgePath, ...]  # or, read from the layout process, a `layout_tables.EdgeTable` (equal to that tuple)
    clusters: tuple[ClusterBox, ...] = ()
    engine: str = ""  # "dot", "layered", or "dot+layered" when mixed
    notes: tuple[str, ...] = ()  # e.g. "dot exceeded its 5 s budget; used the layered layout"

    def to_json(self) -> str:
        return dumps(self)

    @staticmethod
    def from_json(text: str | bytes) -> Layout:
        return loads(Layout, text)


def split_path(path: str) -> list[tuple[str, int]]:
    """``"e4:1/e0"`` -> ``[("e4", 1), ("e0", -1)]``: owner ids with the sub-graph index taken."""
    out: list[tuple[str, int]] = []
    for part in path.split("/"):
        node, _, index = part.partition(":")
        out.append((node, int(index) if index else -1))
    return out


def resolve(graph: Graph, path: str) -> tuple[Body, Node]:
    """The body holding the node at `path`, and the node itself."""
    body = graph.top
    parts = split_path(path)
    for node_id, index in parts[:-1]:
        owner = _node(body, node_id)
        body = graph.bodies[owner.subgraphs[index].body]
    return body, _node(body, parts[-1][0])


def _node(body: Body, node_id: str) -> Node:
    for node in body.nodes:
        if node.id == node_id:
            return node
    raise KeyError(f"no node {node_id!r} in body {body.id}")
