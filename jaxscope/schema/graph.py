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

from dataclasses import dataclass
from typing import Literal

SCHEMA_VERSION = 1

NodeKind = Literal["eqn", "input", "output", "const", "literal"]


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in the user's code, or in a library's (1-based line, 0-based column as in Python's AST)."""

    file: str
    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    function: str = ""
    library: str = ""  # the top package of a library frame ("flax", "optax"); "" for the user's code

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
    # the user's frames that emitted the equation and the libraries' frames under the innermost of
    # them, outermost first (JAX's own left out): train.py:42 -> flax/linen/linear.py:287
    frames: tuple[SourceLoc, ...] = ()
    # the integer params the analyses read, structured (`schema.primitives`: a dot's contracting
    # dimensions, a while's const counts), never parsed back out of the display texts of `params`
    numbers: tuple[tuple[str, tuple[int, ...]], ...] = ()


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

    @property
    def node_total(self) -> int:
        """Nodes over every distinct body, each counted once: the graph's size in memory (what
        `collector.gc_paused(freeze=graph)` measures), not the equations it stands for (`Body.total_eqns`)."""
        return sum(len(b.nodes) for b in self.bodies.values())


# ---------------------------------------------------------------------------- layout data


GROUP_KINDS = ("scope", "values")  # `SubgraphRef.param` of a scoped view's group: a module's, inputs' or outputs'


def group_of(node: Node) -> tuple[str, str] | None:
    """For a group of the scoped view (`analysis.scope_view`): its kind ("scope": a module's
    equations; "values": a pytree's inputs or outputs) and its pass ("forward", "backward" or "");
    None for anything else (a real equation's sub-graphs live in params such as "jaxpr")."""
    if len(node.subgraphs) != 1:
        return None
    kind, _, pass_ = node.subgraphs[0].param.partition(" ")
    return (kind, pass_) if kind in GROUP_KINDS else None


def split_path(path: str) -> list[tuple[str, int]]:
    """``"e4:1/e0"`` -> ``[("e4", 1), ("e0", -1)]``: owner ids with the sub-graph index taken."""
    out: list[tuple[str, int]] = []
    for part in path.split("/"):
        node, _, index = part.partition(":")
        out.append((node, int(index) if index else -1))
    return out


def owner_chain(path: str) -> list[str]:
    """Owner paths that must be expanded for `path` to be drawn: "e4:1/e2:0/e0" -> ["e4", "e4:1/e2"]."""
    out, prefix = [], ""
    for node_id, index in split_path(path)[:-1]:
        owner = f"{prefix}{node_id}"
        out.append(owner)
        prefix = f"{owner}:{index}/"
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
