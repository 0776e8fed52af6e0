"""A graph as one self-contained HTML page a reader can open up: every group and sub-jaxpr expands
and collapses in place, the drawing pans and zooms, a search walks its matches, a box tells what it
is on hover and, clicked, shows its source lines with the code, its jaxpr line and (when computed)
its StableHLO and compiled lines. No network, no external script or font: it opens from
``file://``, in a doc page, in a notebook cell.

The browser needs no Graphviz: each body (the top level, every group, every sub-jaxpr) comes laid
out on its own with its sub-graphs shut (`BodyLayouts`), and the page's script (`viewer.js`)
composes the open ones in place, pushing what lies below and beside an opened box out of its way.
Everything from the program reaches the page as JSON data in a ``<script type="application/json">``
block (``<``, ``>`` and ``&`` escaped, so no name closes it); the script puts text in with
``textContent`` only, never as markup, and builds no code from data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jaxscope.layout import labels
from jaxscope.render.overlay import RAMP, Overlay
from jaxscope.render.styles import Theme, cluster_passes, family, family_title, get_theme
from jaxscope.schema.graph import Body, Graph, Node
from jaxscope.schema.layout import Layout

_LINES = re.compile(r"\r\n|\r|\n")
_PADDING = re.compile(r"(?<=\S) {3,}(?=# )")  # the spaces that align a jaxpr line's `# file:line` in a column


@dataclass(frozen=True)
class BodyLayouts:
    """Each body of a graph laid out alone (its own nodes, sub-graphs shut), by body id, and the
    drawn paths opened first (as the SVG export opens them)."""

    by_body: Mapping[str, Layout]
    opened: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PageTexts:
    """What a click shows beside a box: the user's source lines, and each stage's text lines, by
    the program path of each equation (`links`: stage -> {"text": ..., "lines": {path: [line, ...]}};
    the page finds a drawn box's equation by dropping its groups from the path)."""

    sources: Mapping[str, str] = field(default_factory=dict)  # file -> its text (the saved copy)
    links: Mapping[str, Any] = field(default_factory=dict)


def render_html(
    graph: Graph,
    layouts: BodyLayouts,
    *,
    theme: str = "light",
    title: str | None = None,
    legend: bool = False,
    overlay: Overlay | None = None,
    texts: PageTexts | None = None,
) -> str:
    """The page (see the module docstring). The stages' lines speak the program's paths; the page
    reaches them from a drawn path as `ScopedGraph.to_real` does (its group parts dropped)."""
    data = page_data(graph, layouts, theme=theme, legend=legend, overlay=overlay, texts=texts or PageTexts())
    script = (resources.files("jaxscope.render") / "viewer.js").read_text(encoding="utf-8")
    style = (resources.files("jaxscope.render") / "viewer.css").read_text(encoding="utf-8")
    name = _escape(title or graph.function)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{name} — jaxscope</title>\n<style>{style}</style></head>\n"
        f'<body class="theme-{_escape(theme)}">\n'
        f'<script type="application/json" id="jaxscope-data">{json_for_script(data)}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def _route(points: tuple[tuple[float, float], ...] | None) -> list[list[float]]:
    """An edge's route as the page draws it (a flat Bezier chain, px to a tenth), or none: the page
    then draws a plain curve between the boxes."""
    return [[round(v, 1) for xy in points for v in xy]] if points else []


def page_data(
    graph: Graph,
    layouts: BodyLayouts,
    *,
    theme: str,
    legend: bool,
    overlay: Overlay | None,
    texts: PageTexts,
) -> dict[str, Any]:
    """The page's JSON: bodies with their boxes, edges and each node's facts; the opened paths;
    the sources' lines and the stages' lines the equations point at; colours."""
    t = get_theme(theme)
    passes = cluster_passes(graph)
    tables = _Tables(t)
    bodies = {body_id: _body_data(graph.bodies[body_id], lay, layouts, tables) for body_id, lay in layouts.by_body.items()}
    return {
        "function": graph.function,
        "root": graph.root,
        "bodies": bodies,
        "opened": sorted(layouts.opened),
        "passes": {path: p for path, p in passes.items() if p},
        "theme": {
            "name": t.name,
            "background": t.background or "transparent",
            "text": t.text,
            "muted": t.muted,
            "edge": t.edge,
            "clusterFills": list(t.cluster_fills),
            "backwardFills": list(t.backward_fills or t.cluster_fills),
            "clusterBorder": t.cluster_border,
            "title": t.title_text,
        },
        "font": {"family": labels.FONT_FAMILY, "size": labels.FONT_SIZE, "lineH": labels.LINE_H},
        "legend": legend,
        "overlay": _overlay(overlay),
        "families": tables.styles,
        "strings": list(tables.strings),
        "files": list(tables.files),
        "sources": {f: _around(texts.sources.get(f), lines) for f, lines in tables.used.items() if f in texts.sources},
        "stages": _stages(texts.links),
    }


class _Tables:
    """What the page's rows point into, each kept once: every text (a program repeats its shapes,
    primitives and scopes), the source files and the lines used of each, the families' styles."""

    def __init__(self, theme: Theme) -> None:
        self.theme = theme
        self.strings: dict[str, int] = {}
        self.files: dict[str, int] = {}
        self.used: dict[str, set[int]] = {}
        self.families: dict[str, int] = {}
        self.styles: list[list[str]] = []

    def put(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings))

    def family(self, fam: str) -> int:
        if fam not in self.families:
            self.families[fam] = len(self.styles)
            style = self.theme.style(fam)
            self.styles.append([family_title(fam), style.fill, style.border])
        return self.families[fam]

    def source(self, node: Node) -> list[int] | None:
        if node.source is None:
            return None
        self.used.setdefault(node.source.file, set()).add(node.source.line)
        return [self.files.setdefault(node.source.file, len(self.files)), node.source.line]


def _body_data(body: Body, lay: Layout, layouts: BodyLayouts, tables: _Tables) -> dict[str, Any]:
    """One body laid out: a row per box, by position (see FIELDS in viewer.js: the page's size is
    these rows), and its edges with the layout's own way round the boxes."""
    nodes = {n.id: n for n in body.nodes}
    notes = dict(lay.annotations)
    routes: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {}
    for edge in lay.edges:
        if edge.routed and len(edge.points) >= 4:
            routes.setdefault((edge.src, edge.dst), edge.points)
    put = tables.put
    placed = []
    for box in lay.nodes:
        node = nodes.get(box.path)
        if node is None:
            continue
        placed.append(
            [
                node.id,
                round(box.x - box.w / 2, 1),
                round(box.y - box.h / 2, 1),
                round(box.w, 1),
                round(box.h, 1),
                node.kind,
                tables.family(family(node)),
                [put(line) for line in labels.box_lines(node, box.path, notes)],
                [[ref.role, ref.body] for ref in node.subgraphs if ref.body in layouts.by_body],
                put(node.label),
                [put(a) for a in node.in_avals],
                [put(a) for a in node.avals],
                [[put(k), put(_cut(v))] for k, v in node.params],
                put(node.detail),
                put(node.name_stack),
                tables.source(node),
            ]
        )
    edges = [
        [src, dst, *_route(routes.get((src, dst)))]
        for src, dst in sorted({(e.src, e.dst) for e in body.edges if e.src in nodes and e.dst in nodes})
    ]
    return {"title": body.title, "w": lay.width, "h": lay.height, "nodes": placed, "edges": edges}


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _around(text: str | None, used: set[int], context: int = 2) -> dict[str, str]:
    """The lines of a source the equations name, with `context` lines on each side."""
    lines = _LINES.split(text or "")  # (not splitlines: a U+2028 in a string is no line of Python's)
    wanted = {k for n in used for k in range(n - context, n + context + 1) if 0 < k <= len(lines)}
    return {str(k): lines[k - 1] for k in sorted(wanted)}


def _stages(links: Mapping[str, Any]) -> dict[str, Any]:
    """Per stage, each equation's lines and the text of those lines only (a page holds the lines a
    reader can reach, not the whole 80k-line HLO). The spaces that align a jaxpr line's source
    location in a column are two: the panel shows a few lines at a time, and the padding was a
    fifth of a 10k-equation step's page (5.1 MB, 4.2 without), cut off with the location at 200 characters."""
    out: dict[str, Any] = {}
    for stage, entry in links.items():
        text_lines = _LINES.split(str(entry.get("text", "")))
        by_path: dict[str, list[int]] = {p: list(v) for p, v in dict(entry.get("lines", {})).items()}
        wanted = sorted({n for v in by_path.values() for n in v if 0 < n <= len(text_lines)})
        out[stage] = {"lines": by_path, "text": {str(n): _cut(_PADDING.sub("  ", text_lines[n - 1], count=1)) for n in wanted}}
    return out


def _overlay(overlay: Overlay | None) -> dict[str, Any] | None:
    if overlay is None:
        return None
    colours = {p: c for p in overlay.values if (c := overlay.colour(p)) is not None}
    return {"measure": overlay.measure, "caption": overlay.caption, "colours": colours, "ramp": list(RAMP)}


def json_for_script(data: Any) -> str:
    """JSON that no string in it can end the script block with: ``<`` ``>`` ``&`` and the line
    separators escaped (they are JSON's, read back by JSON.parse)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, safe)
    return text


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
