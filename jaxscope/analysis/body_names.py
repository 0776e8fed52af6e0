"""Sub-graphs named by the function they run: ``scan of layer (length 6)`` for the body of a scan
over layers, ``checkpoint of layer`` for a remat region, and a loop body's inputs by the values
they are fed: ``x0: model.blocks.up.weight`` (a slice of a stacked parameter), not ``x0``.

A body's equations carry the frames they were traced from; the function they share below the
frames of the equation that owns the body is the one the user handed to `lax.scan` or
`jax.checkpoint` (``Model.__call__.<locals>.layer`` -> ``layer``; linen's ``nn.scan`` of a
block -> ``Block.__call__``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace

from jaxscope.analysis.module_keys import value_path
from jaxscope.schema.graph import Body, Graph, Node, SourceLoc
from jaxscope.schema.primitives import primitive


def _kind(label: str) -> str | None:
    """What a body is named as: a loop's ("scan", "while") or a checkpoint's; None for the rest."""
    entry = primitive(label)
    return "checkpoint" if entry.checkpoint else label if entry.loop else None


def named_bodies(graph: Graph) -> Graph:
    """`graph` with its loops' and checkpoints' bodies named (see the module docstring); twice, so
    a backward scan whose body is one checkpoint is named by the checkpoint's function."""
    return _named(_named(graph))


def _named(graph: Graph) -> Graph:
    bodies = dict(graph.bodies)
    changed = False
    named: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}  # (body, owner's frames) -> its function
    for body in graph.bodies.values():
        inputs = {n.id: n.label for n in body.nodes if n.kind == "input"}
        fed_by: dict[str, dict[int, str]] = defaultdict(dict)  # each equation's operands fed by an input, by port
        outputs = {n.id: n.label for n in body.nodes if n.kind == "output"}
        feeds: dict[str, dict[int, str]] = defaultdict(dict)  # each equation's results that are outputs, by port
        for e in body.edges:
            if e.src in inputs:
                fed_by[e.dst][e.dst_port] = inputs[e.src]
            if e.dst in outputs:
                feeds[e.src][e.src_port] = outputs[e.dst]
        new_nodes: dict[str, Node] = {}
        for node in body.nodes:
            kind = _kind(node.label)
            if kind is None or not node.subgraphs:
                continue
            refs = []
            for ref in node.subgraphs:
                inner = bodies[ref.body]
                at = (ref.body, tuple((f.function, f.file) for f in node.frames))
                if at not in named:
                    named[at] = _function(node, inner) or _checkpointed(inner)
                role = body_role(ref.role, kind, named[at])
                # (a while's operands are not its bodies' inputs in order: a scan's and a checkpoint's are)
                in_order = primitive(node.label).ports in ("scan", "operands")
                renamed = _ports(inner, fed_by.get(node.id, {}), feeds.get(node.id, {})) if in_order else inner
                if role != ref.role or renamed is not inner:
                    bodies[ref.body] = replace(renamed, title=role)
                    changed = True
                refs.append(replace(ref, role=role))
            if tuple(refs) != node.subgraphs:
                new_nodes[node.id] = replace(node, subgraphs=tuple(refs))
        if new_nodes:
            current = bodies[body.id]
            bodies[body.id] = replace(current, nodes=tuple(new_nodes.get(n.id, n) for n in current.nodes))
    return Graph(graph.function, bodies, graph.root) if changed else graph


def body_role(role: str, kind: str, fn: str) -> str:
    """``scan body (length 6)`` -> ``scan of layer (length 6)``; ``checkpoint`` -> ``checkpoint of layer``."""
    if not fn or fn.startswith("<"):  # (a lambda's name says nothing)
        return role
    if kind == "scan" and role.startswith("scan body"):
        return role.replace("scan body", f"scan of {fn}", 1)
    if kind == "while" and role == "while body":  # a function named `body` reads "while body", not "while body of body"
        return role if fn == "body" else f"while body of {fn}"
    return f"{role} of {fn}" if role == kind else role


def _function(owner: Node, body: Body) -> str:
    """The user's function a body runs: the first user frame all its equations share below the
    owner's own frames; "" when they share none."""
    stacks = [n.frames for n in body.nodes if n.kind == "eqn" and n.frames]
    if not stacks:
        return ""
    shared = list(stacks[0])
    for frames in stacks[1:]:
        n = 0
        while n < min(len(shared), len(frames)) and _same(shared[n], frames[n]):
            n += 1
        del shared[n:]
    k = 0
    while k < min(len(shared), len(owner.frames)) and _same(shared[k], owner.frames[k]):
        k += 1
    return next((_short(f.function) for f in shared[k:] if not f.library), "")


def _checkpointed(body: Body) -> str:
    """The function of the one checkpoint a body runs (a backward scan's body), else ""."""
    roles = {r.role for n in body.nodes for r in n.subgraphs}
    named = [r.removeprefix("checkpoint of ") for r in roles if r.startswith("checkpoint of ")]
    return named[0] if len(named) == 1 else ""


def _same(a: SourceLoc, b: SourceLoc) -> bool:
    return (a.function, a.file) == (b.function, b.file)


def _short(qualname: str) -> str:
    """``Model.__call__.<locals>.layer`` -> ``layer``; ``Block.__call__`` as it is."""
    return qualname.rsplit(".<locals>.", 1)[-1]


_PLACEHOLDER = re.compile(r"(in|out)\d+")  # a body's input or output named by its place alone


def _ports(body: Body, fed: dict[int, str], feeds: dict[int, str]) -> Body:
    """A loop body's inputs named also by the outer values they are fed and its outputs by the
    outer results they are (by position), their own role first and the value's path after (a
    checkpoint in a scan's body: ``x3: model.blocks.attn.qkv.weight``; a backward scan's gradient:
    ``y4: result[1].blocks.attn.out.weight``); a checkpoint's, which have no role (``in3``), by the values alone."""
    names: dict[str, str] = {}
    for kind, outer in (("input", fed), ("output", feeds)):
        ports = [n for n in body.nodes if n.kind == kind]
        for k, n in enumerate(ports):
            if k in outer and outer[k] != n.label and ": " not in n.label:
                roleless = n.label == n.id or _PLACEHOLDER.fullmatch(n.label) is not None
                names[n.id] = outer[k] if roleless else f"{n.label}: {value_path(outer[k])}"
    if not names:
        return body
    return replace(body, nodes=tuple(replace(n, label=names[n.id]) if n.id in names else n for n in body.nodes))
