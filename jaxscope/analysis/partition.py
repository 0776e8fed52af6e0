"""What XLA's partitioner made of a program on a mesh, read from the compiled HLO text and handed to
the equations by the exact links: the collectives it inserted (or kept: a psum's all-reduce) with
their replica groups and bytes, and the sharding of each argument. Drawn on the boxes by
`export --sharding` and View -> Show Partitioning (`box_notes`: beside the graph, never in it)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from jaxscope.analysis.avals import aval_bytes, aval_elems, format_bytes
from jaxscope.analysis.hlo_cost import INSTRUCTION
from jaxscope.ir import hlo_marks
from jaxscope.schema.graph import Graph
from jaxscope.schema.hlo import HloResult

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast")
_GROUPS = re.compile(r"replica_groups=(\{[^=]*?\}\}|\{\}|mesh\[[^\]]*\]\s*\{[^}]*\}|\[[^\]]*\]<=\[[^\]]*\])")
_SHARDING = re.compile(r"sharding=(\{(?:[^{}]|\{[^{}]*\}|\[[^\]]*\])*\})")  # one level of braces: {mesh[...], [{'data'}, {}]}
_ARG = re.compile(r'op_name="([^"]*)"')
_NAMED = re.compile(r"\{mesh\[([^\]]*)\],\s*\[(.*)\]\s*\}$")


@dataclass(frozen=True, slots=True)
class Collective:
    line: int
    opcode: str  # "all-reduce", ...
    shape: str  # per device: "f32[8,8]"
    groups: str  # replica_groups as XLA prints them

    def describe(self) -> str:
        """``all-reduce f32[] 4 B over data=4``: short enough for a box."""
        size = aval_bytes(self.shape)
        return f"{self.opcode} {self.shape}" + (f" {format_bytes(size)}" if size is not None else "") + f" over {short_groups(self.groups)}"


def _part(output_id: str, aval: str, shapes: list[str]) -> str:
    """Output `out3`'s shape per device, where a device holds a part of it; else ""."""
    index = output_id[3:]
    if not index.isdigit() or int(index) >= len(shapes):
        return ""
    shape = shapes[int(index)]
    whole, part = aval_elems(aval), aval_elems(shape)
    return shape if 0 < part < whole and whole % part == 0 else ""


def short_sharding(text: str) -> str:
    """``{devices=[4,1]<=[4]}`` -> ``tiled 4×1``; ``{devices=[1,2,2]<=[4] last_tile_dim_replicate}`` ->
    ``tiled 1×2, 2 copies``; ``{replicated}`` -> ``replicated``; else as printed."""
    named = _NAMED.match(text)
    if named:  # jax 0.11: {mesh['data'=4,'model'=2], [{'data'}, {}]}: each dimension split over its axes
        sizes = {k: int(v) for k, v in re.findall(r"'([^']*)'=(\d+)", named.group(1))}
        dims = [math.prod(sizes.get(a, 1) for a in re.findall(r"'([^']*)'", d)) for d in re.findall(r"\{([^{}]*)\}", named.group(2))]
        copies = math.prod(sizes.values()) // max(math.prod(dims), 1)
        if not any(d > 1 for d in dims):
            return "replicated"
        return "tiled " + "×".join(map(str, dims)) + (f", {copies} copies" if copies > 1 else "")
    tiles = re.search(r"devices=\[([\d,]+)\]", text)
    if tiles:
        split = tiles.group(1).split(",")
        if "last_tile_dim_replicate" in text and len(split) > 1:  # the last "dimension" is copies, not a split
            return "tiled " + "×".join(split[:-1]) + f", {split[-1]} copies"
        return "tiled " + "×".join(split)
    return text.strip("{}")


def short_groups(groups: str) -> str:
    """XLA's replica groups as a person reads them: ``mesh['data'=4,'x'=1] {'data'}`` -> ``data=4``;
    ``{{0,1},{2,3}}`` -> ``2 groups of 2``; anything else as printed."""
    mesh = re.match(r"mesh\[([^\]]*)\]\s*\{([^}]*)\}", groups)
    if mesh:
        sizes = dict(re.findall(r"'([^']+)'=(\d+)", mesh.group(1)))
        axes = re.findall(r"'([^']+)'", mesh.group(2))
        return ",".join(f"{a}={sizes.get(a, '?')}" for a in axes) or groups
    explicit = re.findall(r"\{([\d,]+)\}", groups)
    if explicit and groups.startswith("{{"):
        n = len(explicit[0].split(","))
        return f"{n} devices" if len(explicit) == 1 else f"{len(explicit)} groups of {n}"
    return groups


def collectives(text: str) -> list[Collective]:
    """Every collective instruction of a compiled HLO text ("-start" forms as their op)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = INSTRUCTION.match(line)
        if not m:
            continue
        opcode = m.group(3).removesuffix("-start")
        if opcode in COLLECTIVES:
            groups = _GROUPS.search(line)
            out.append(Collective(number, opcode, m.group(2).split("{")[0], groups.group(1) if groups else "all devices"))
    return out


def argument_shardings(text: str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The entry computation's parameters' shardings, by argument name (their op_name: "x", "params['w']"):
    as the text prints them, else as `given` (`HloResult.shardings`: jax 0.12 prints none)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = INSTRUCTION.match(line)
        if not m or m.group(3) != "parameter":
            continue
        found, arg = _SHARDING.search(line), _ARG.search(line)
        if not arg or arg.group(1).startswith(("jit(", "pjit(")):
            continue
        sharding = found.group(1) if found else (given or {}).get(arg.group(1))
        if sharding:
            out[arg.group(1)] = f"{short_sharding(sharding)}, {m.group(2).split('{')[0]} each"
    return out


def shard_shapes(text: str, exact: dict[int, list[str]], avals: dict[str, str]) -> dict[str, str]:
    """Top-level equation -> the shape each device holds of its result, where the compiled program
    (whose shapes are per device) holds a part of it: an instruction made by that one equation whose
    array is a whole fraction of the equation's."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        paths = exact.get(number)
        if not paths or len(paths) != 1 or "/" in paths[0]:
            continue
        m = INSTRUCTION.match(line)
        aval = avals.get(paths[0])
        if not m or aval is None or paths[0] in out:
            continue
        shape = m.group(2).split("{")[0]
        whole, part = aval_elems(aval), aval_elems(shape)
        if 0 < part < whole and whole % part == 0 and shape.split("[")[0] == aval.split("[")[0]:
            out[paths[0]] = shape
    return out


def output_shapes(text: str) -> list[str]:
    """The entry computation's results as each device holds them (its signature), in order."""
    head = next((line for line in text.splitlines() if line.startswith("ENTRY ")), "")
    result = head.rpartition("->")[2].strip().rstrip("{").strip()
    return re.findall(r"[a-z]+\d*\[[\d,]*\]", result)


def box_notes(graph: Graph, text: str, exact: dict[int, list[str]], given: Mapping[str, str] | None = None) -> tuple[dict[str, str], int]:
    """What the partitioner decided, by top-level node id: each equation's part per device (when a
    device holds a part) and the collectives it led to; each input its sharding; each output its
    part. And how many collectives. Drawn on the boxes (`Layout.annotations`), never written into
    the graph."""
    found = collectives(text)
    by_path: dict[str, list[str]] = {}
    for c in found:
        for path in exact.get(c.line, ()):
            head = path.split("/", 1)[0].split(":", 1)[0]  # an equation in a body: shown on its top-level owner
            by_path.setdefault(head, []).append(c.describe())
    shardings = argument_shardings(text, given)
    top = graph.top
    outputs = output_shapes(text) if found or shardings else []
    shards = shard_shapes(text, exact, {n.id: n.avals[0] for n in top.nodes if n.kind == "eqn" and n.avals}) if found or shardings else {}
    out: dict[str, str] = {}
    for n in top.nodes:
        said = [f"{shards[n.id]} per device"] if n.id in shards else []
        said += list(dict.fromkeys(by_path.get(n.id, ())))
        if n.kind == "eqn" and said:
            out[n.id] = "; ".join(said)
        elif n.kind == "input" and n.label in shardings:
            out[n.id] = shardings[n.label]
        elif n.kind == "output" and n.avals and (part := _part(n.id, n.avals[0], outputs)):
            out[n.id] = f"{part} per device"
    return out, len(found)


def notes_of(graph: Graph, compiled: HloResult) -> tuple[dict[str, str], int]:
    """`box_notes` of a compiled program as the worker answers it (its exact links on the wire), by
    program path; ValueError when this JAX gave no exact links to hand the collectives out by."""
    if compiled.exact is None:
        raise ValueError("the partitioning needs the compiled program's exact links, which this JAX does not give")
    return box_notes(graph, compiled.text, hlo_marks.from_wire(compiled.exact), compiled.shardings)
