"""Node label text and the box size it needs, shared by the layout and every renderer.

Labels are drawn in a monospace font, so a box's size follows from its character count alone:
layout, SVG, DOT and the Qt scene agree without asking a font engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from jaxscope.schema.graph import Node, group_of
from jaxscope.schema.primitives import primitive

FONT_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, monospace"
FONT_SIZE = 11.0  # px
CHAR_W = 6.7  # advance of one DejaVu Sans Mono glyph at 11 px
LINE_H = 14.0
PAD_X = 8.0
PAD_Y = 5.0
MAX_CHARS = 40  # longer lines are cut with an ellipsis; the full text goes to tooltips
TITLE_H = 20.0  # cluster title band

# The one parameter worth showing on the node itself, per primitive.
_SPEC = re.compile(r"spec=(P\([^)]*\))")
_MESH = re.compile(r"Mesh\(((?:'[^']*': \d+(?:, )?)+)")


def ellipsize(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mesh_text(text: str) -> str:
    """``Mesh('data': 4, 'model': 2, axis_types=...)`` -> ``data=4,model=2`` ("" if none)."""
    m = _MESH.search(text)
    return ",".join(f"{k.strip(chr(39))}={v}" for k, v in (part.split(": ") for part in m.group(1).rstrip(", ").split(", "))) if m else ""


def sharding_text(node: Node) -> str:
    """A sharding constraint's spec and mesh (``P('data', None) @ data=4``), a shard_map's in and out
    specs: what the program asks XLA for, on its box."""
    params = dict(node.params)
    if node.label == "sharding_constraint":
        spec = _SPEC.search(params.get("sharding", ""))
        mesh = mesh_text(params.get("sharding", ""))
        return f"{spec.group(1) if spec else params.get('sharding', '')}" + (f" @ {mesh}" if mesh else "")
    if node.label == "shard_map":
        mesh = mesh_text(params.get("mesh", ""))
        return f"{params.get('in_specs', '')}→{params.get('out_specs', '')}" + (f" @ {mesh}" if mesh else "")
    return ""


def key_param(node: Node) -> str:
    """The short `k=v` shown under a primitive's name, or ""."""
    wanted = primitive(node.label).shown
    for key, value in node.params:
        if key in wanted:
            return value if key == "name" else f"{key}={value}"
    return ""


def node_lines(node: Node, annotation: str = "") -> list[str]:
    """The text lines drawn inside a node's box (already ellipsized); `annotation` (what XLA's
    partitioner did there: `Layout.annotations`) as the last."""
    if node.kind == "eqn" and group_of(node) is not None and node.params:  # a module's group: its name and size
        key, value = node.params[0]
        lines = [node.label, f"{value} {key}"]
    elif node.kind == "eqn" and node.label in ("sharding_constraint", "shard_map"):  # the spec on a line of its own
        lines = [node.label, sharding_text(node)]
        if node.avals:
            lines.append(", ".join(node.avals) if len(node.avals) <= 2 else f"{node.avals[0]}, … ({len(node.avals)})")
    elif node.kind == "eqn":
        first = node.label
        extra = key_param(node)
        if extra:
            first = f"{first} {extra}"
        entry = primitive(node.label)  # a scan's or a checkpoint's box says the function it runs: "scan of layer"
        named = node.subgraphs[0].role if (entry.checkpoint or (entry.loop and len(node.subgraphs) == 1)) and node.subgraphs else ""
        if " of " in named:  # a scan or a checkpoint says the function it runs (`analysis.body_names`)
            first = named
        lines = [first]
        if node.avals:
            lines.append(", ".join(node.avals) if len(node.avals) <= 2 else f"{node.avals[0]}, … ({len(node.avals)})")
    elif node.kind == "literal":
        lines = [node.label]
    else:
        lines = [node.label]
        if node.avals:
            lines.append(node.avals[0])
    if annotation:
        lines.append("⇄ " + annotation)
    return [ellipsize(line) for line in lines]


def text_size(lines: list[str]) -> tuple[float, float]:
    chars = max((len(line) for line in lines), default=1)
    return chars * CHAR_W + 2 * PAD_X, len(lines) * LINE_H + 2 * PAD_Y


def box_lines(node: Node | None, path: str, annotations: Mapping[str, str] | None) -> list[str]:
    """The lines of a drawn box at `path` (a stub copy's ``#k`` left out): its node's, with its
    annotation from `annotations` (`Layout.annotations`); for a box of no node, its path."""
    if node is None:
        return [ellipsize(path)]
    return node_lines(node, annotations.get(path.split("#", 1)[0], "") if annotations else "")


def node_size(node: Node, annotation: str = "") -> tuple[float, float]:
    """Width and height in px of the box that holds `node_lines(node, annotation)`."""
    w, h = text_size(node_lines(node, annotation))
    if node.kind == "literal":
        return max(w, 28.0), h
    return max(w, 44.0), h
