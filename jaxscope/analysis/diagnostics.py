"""Purity and state diagnostics: what the trace reveals about hidden inputs and side effects.

The worker gathers facts (captured constants, prints during tracing, reused PRNG keys, globals
changed while tracing, leaked tracers) and states each as a `Diagnostic` (schema.trace) that names the lines and
the graph nodes involved, so every view (diagnostics pane, `jaxscope explain`) shows the same.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from jaxscope.analysis.avals import aval_bytes, format_bytes
from jaxscope.analysis.scopes import read_scope
from jaxscope.schema.graph import Graph, Node, SourceLoc, resolve
from jaxscope.schema.trace import Diagnostic


def body_prefixes(graph: Graph) -> dict[str, str]:
    """Body id -> the path prefix of its first occurrence ("" for the root, "e4:1/" for a branch)."""
    out = {graph.root: ""}
    queue = [graph.root]
    while queue:
        body_id = queue.pop(0)
        for node in graph.bodies[body_id].nodes:
            for index, ref in enumerate(node.subgraphs):
                if ref.body not in out:
                    out[ref.body] = f"{out[body_id]}{node.id}:{index}/"
                    queue.append(ref.body)
    return out


def iter_constants(graph: Graph) -> Iterator[tuple[str, Node, tuple[str, ...]]]:
    """(path, const node, consumer paths) for each captured constant, once per distinct body."""
    for body_id, prefix in body_prefixes(graph).items():
        body = graph.bodies[body_id]
        for node in body.nodes:
            if node.kind == "const":
                users = tuple(dict.fromkeys(f"{prefix}{e.dst}" for e in body.edges if e.src == node.id))
                yield f"{prefix}{node.id}", node, users


def constant_diagnostics(graph: Graph, load_sites: dict[str, tuple[SourceLoc, ...]] | None = None) -> list[Diagnostic]:
    """One diagnostic per named captured array; unnamed constants are summed into one."""
    load_sites = load_sites or {}
    named: dict[str, list[tuple[str, Node, tuple[str, ...]]]] = {}
    anonymous: list[tuple[str, Node, tuple[str, ...]]] = []
    for path, node, users in iter_constants(graph):
        if node.label and node.label != "const":
            named.setdefault(node.label, []).append((path, node, users))
        else:
            anonymous.append((path, node, users))
    out = []
    sources = {path: n.source for path, n in _eqn_nodes(graph) if n.source is not None}
    for name, found in named.items():
        aval = found[0][1].avals[0] if found[0][1].avals else "?"
        size = aval_bytes(aval)
        nodes = tuple(dict.fromkeys(p for path, _n, users in found for p in (path, *users)))
        locs = tuple(load_sites.get(name, ())) + tuple(dict.fromkeys(sources[p] for p in nodes if p in sources))
        out.append(
            Diagnostic(
                kind="captured-constant",
                severity="warning" if size is None or size >= 1 << 20 else "info",
                title=f"`{name}` ({aval}{', ' + format_bytes(size) if size is not None else ''}) is baked into the program as a constant",
                detail=(
                    f"The function reads `{name}` from a global or closure, not from its arguments. jit captured its "
                    "value at trace time: if `{0}` is later rebound, the compiled function keeps the old value, "
                    "and a large constant is copied into every compiled program.".format(name)
                ),
                fix=f"pass `{name}` as an argument (e.g. in a params pytree) so it is an input of the program",
                locations=_dedupe(locs),
                nodes=nodes,
            )
        )
    if anonymous:
        total = sum(aval_bytes(n.avals[0]) or 0 for _p, n, _u in anonymous if n.avals)
        nodes = tuple(dict.fromkeys(p for path, _n, users in anonymous for p in (path, *users)))
        out.append(
            Diagnostic(
                kind="captured-constant",
                severity="info",
                title=f"{len(anonymous)} unnamed constant{'s' if len(anonymous) != 1 else ''} ({format_bytes(total)}) captured",
                detail="Arrays computed outside the traced arguments (e.g. by a library, or an expression on a global) "
                "became constants of the program.",
                locations=_dedupe(tuple(sources[p] for p in nodes if p in sources)),
                nodes=nodes,
            )
        )
    return out


DEAD_SHARE = 0.10  # said when more of the program than this computes nothing it returns
AUTODIFF_SHARE = 0.8  # dead equations this much of the forward pass (under jvp) are autodiff's, not state left behind


def dead_code(graph: Graph) -> Diagnostic | None:
    """A warning when more than DEAD_SHARE of the equations (a dead call's body counted whole) reach
    no output: jit drops them, so what the user reads in the graph is not what XLA runs. Mostly in a
    differentiated forward pass, they are autodiff's tangents the backward pass never reads (said as
    such: nothing to fix); else the usual cause is state updated in place while only the loss is returned."""
    from jaxscope.analysis.cost import dead

    top = graph.top
    gone = dead(graph)
    if not gone or not top.total_eqns:
        return None
    nodes = {n.id: n for n in top.nodes}
    count = sum(1 + sum(graph.bodies[r.body].total_eqns for r in nodes[i].subgraphs if r.body in graph.bodies) for i in gone)
    share = count / top.total_eqns
    if share <= DEAD_SHARE:
        return None
    paths = tuple(sorted(gone, key=lambda i: int(i[1:]) if i[1:].isdigit() else 0))
    forward = sum(1 for i in gone if read_scope(nodes[i].name_stack).pass_ == "forward")
    if forward >= AUTODIFF_SHARE * len(gone):  # autodiff's leftovers, not the user's state
        return Diagnostic(
            kind="dead-code",
            severity="info",
            title=f"{count:,} of {top.total_eqns:,} equations ({share:.0%}) are autodiff's forward-pass leftovers: jit drops them",
            detail="Differentiating traces the forward pass with its tangents (jvp); the equations whose values the "
            "backward pass never reads reach no output, and XLA compiles only what does. Nothing of yours is lost.",
            fix="nothing to fix; `jaxscope cost` and the Cost pane leave them out (note: dead)",
            locations=node_locations(graph, paths[:20]),
            nodes=paths,
        )
    return Diagnostic(
        kind="dead-code",
        severity="warning",
        title=f"{count:,} of {top.total_eqns:,} equations ({share:.0%}) compute nothing the function returns: jit drops them",
        detail="XLA compiles only what reaches an output, so the graph shows work that never runs. Does the function "
        "update state in place (an optimizer, batch statistics, a Python attribute) and return only the loss?",
        fix="return the new state beside the loss (state in, new state out), or decorate the step with nnx.jit, "
        "whose in-place updates jaxscope traces as outputs as nnx.jit does",
        locations=node_locations(graph, paths[:20]),
        nodes=paths,
    )


def _eqn_nodes(graph: Graph) -> Iterator[tuple[str, Node]]:
    for body_id, prefix in body_prefixes(graph).items():
        for node in graph.bodies[body_id].nodes:
            if node.kind == "eqn":
                yield f"{prefix}{node.id}", node


def node_locations(graph: Graph, paths: tuple[str, ...]) -> tuple[SourceLoc, ...]:
    """Source locations of the equations at `paths`, in order, deduplicated by line."""
    locs = []
    for path in paths:
        try:
            source = resolve(graph, path)[1].source
        except (KeyError, IndexError, ValueError):
            continue
        if source is not None:
            locs.append(source)
    return _dedupe(tuple(locs))


def _dedupe(locs: tuple[SourceLoc, ...]) -> tuple[SourceLoc, ...]:
    seen: set[tuple[str, int]] = set()
    out = []
    for loc in locs:
        if (loc.file, loc.line) not in seen:
            seen.add((loc.file, loc.line))
            out.append(loc)
    return tuple(out)


_SEVERITY_MARK = {"error": "E", "warning": "W", "info": "i"}


def format_diagnostics(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic], file: str = "") -> str:
    """Plain text, one block per diagnostic: `W  lines 12, 14  title`, then detail and fix indented."""
    blocks = []
    for d in diagnostics:
        where = ", ".join(
            str(loc.line) if not file or loc.file == file else f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" for loc in d.locations[:6]
        )
        head = f"  {_SEVERITY_MARK[d.severity]}  {d.title}" + (f"  (line{'s' if len(d.locations) > 1 else ''} {where})" if where else "")
        pad = " " * 7
        body = [textwrap.fill(d.detail, 100, initial_indent=pad, subsequent_indent=pad)] if d.detail else []
        if d.fix:
            body.append(textwrap.fill(f"fix: {d.fix}", 100, initial_indent=pad, subsequent_indent=pad + "     "))
        blocks.append("\n".join([head, *body]))
    return "\n".join(blocks)
