"""Graph + Layout -> a deterministic, self-contained SVG document (no Graphviz rendering).

What is drawn
-------------
* **Clusters** (expanded sub-graphs): rounded rectangles, darker with depth, with their title in
  the `labels.TITLE_H` band at the top-left (drawn after the edges on a patch of the cluster's
  fill, so an edge entering the cluster never runs through it).
* **Edges**: one ``<path>`` per `EdgePath` (its points are a cubic Bezier chain) ending in an
  arrowhead drawn as a small filled triangle (no ``<marker>``, so every SVG renderer, QtSvg
  included, shows it). Edges left out of the layout (``routed=False``) are dashed and lighter.
  An edge with an aval has it as its ``<title>`` (hover tooltip). Long edges may be drawn as
  their two ends, one path of two parts (`long_edges`, see `edge_shape`).
* **Nodes**: equations are rounded rectangles, inputs and outputs pills (outputs with a thicker
  border), constants have a dashed border, literals are small ellipses; an equation that owns
  collapsed sub-graphs has a second "card" behind it. Fill and border come from the node's family
  (`styles.family`), text from `labels.node_lines` in `labels.FONT_FAMILY` at `labels.FONT_SIZE`,
  centred, the first line in the text colour and the rest muted. Each node has a ``<title>``
  tooltip: primitive and family, avals, params, source location, name stack, sub-graphs.
* Optional **title** band above and **legend** of the families actually drawn below.
* Optional **highlight**: nodes named in `highlight` (base paths) get a ``rect.highlight`` accent
  outline just outside their box, drawn inside the node's group; none when it is empty.

Determinism and safety
----------------------
Coordinates are written with one decimal; there are no timestamps, random ids or ``id()``s; the
element order is clusters by depth, then edges, then cluster titles, then nodes, each in layout
order. Every user
string goes through `sanitize`, so hostile names stay literal text and the output is valid XML.
Nodes carry ``data-path`` (their path in the Graph) and edges ``data-src``/``data-dst``, for
scripts and tests. With the ``transparent`` theme text and edges use ``currentColor``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jaxscope.layout import labels
from jaxscope.layout.edge_shape import arrowed, check_long_edges, partial_edge, partial_edges
from jaxscope.render import sanitize
from jaxscope.render.overlay import RAMP, Overlay, human
from jaxscope.render.sanitize import xml_attr, xml_text
from jaxscope.render.styles import FAMILIES, Theme, cluster_passes, family, family_title, get_theme
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph, Node, split_path
from jaxscope.schema.layout import ClusterBox, EdgePath, Layout, NodeBox

MARGIN = 8.0
TITLE_BAND = 30.0  # height of the optional title band
TITLE_SIZE = 14.0
LEGEND_ROW = 20.0
EDGE_W = 1.2
CARD_OFFSET = 3.0  # the "stack of cards" behind an equation with collapsed sub-graphs
HIGHLIGHT = {"light": "#d1242f", "dark": "#ff7b72", "transparent": "#e5534b"}  # red: apart from every family hue
HIGHLIGHT_W = 2.5
HIGHLIGHT_PAD = 3.0  # outline this far outside the node (clear of the card behind it)
_BASELINE = 0.36 * labels.FONT_SIZE  # from a line's vertical centre to its baseline

Point = tuple[float, float]


def render_svg(
    graph: Graph,
    layout: Layout,
    *,
    theme: str = "light",
    title: str | None = None,
    legend: bool = False,
    highlight: frozenset[str] = frozenset(),
    tooltips: bool = True,
    long_edges: str = "auto",
    overlay: Overlay | None = None,
) -> str:
    """The SVG document (a str, UTF-8 when written) for `layout` of `graph`; nodes whose base path
    is in `highlight` get an accent outline (`HIGHLIGHT`), e.g. the matches of ``--highlight``.

    Without `tooltips` no ``<title>`` is written (for rasterising: no image shows them).
    `long_edges` (`edge_shape.LONG_EDGES`): "auto" draws long edges as their two ends where there
    are many, as the window does; "ends" always, "whole" never. An `overlay` fills each box by its
    value and draws its scale under the drawing."""
    return "".join(
        svg_parts(
            graph,
            layout,
            theme=theme,
            title=title,
            legend=legend,
            highlight=highlight,
            tooltips=tooltips,
            long_edges=long_edges,
            overlay=overlay,
        )
    )


def svg_frame(
    graph: Graph, layout: Layout, *, theme: str = "light", title: str | None = None, legend: bool = False
) -> tuple[float, float, float, list[tuple[NodeBox, Node | None]]]:
    """(width, height, top of the graph, each box with its Node) of `render_svg`'s document, for a
    renderer that draws the same picture without writing SVG (`qt.raster.overview_png`)."""
    w = _SvgWriter(graph, layout, get_theme(theme), title, legend)
    return w.width, w.height, w.top, w.nodes


def svg_parts(
    graph: Graph,
    layout: Layout,
    *,
    theme: str = "light",
    title: str | None = None,
    legend: bool = False,
    highlight: frozenset[str] = frozenset(),
    tooltips: bool = True,
    long_edges: str = "auto",
    overlay: Overlay | None = None,
) -> list[str]:
    """`render_svg`'s document in consecutive slices (about a MB at most), to write one at a time:
    one join or one encode of a 50 MB document holds the GIL for ~60 ms (an exporting thread froze
    the GUI for that long), and one of a 5 MB slice still 28+ ms in a big process."""
    try:
        return _SvgWriter(graph, layout, get_theme(theme), title, legend, highlight, tooltips, long_edges, overlay).document()
    finally:
        sanitize.clear_caches()


JOIN_PARTS = 4_000


def _f(v: float) -> str:
    text = f"{v:.1f}"
    return "0.0" if text == "-0.0" else text


def _nz(numbers: str) -> str:
    """`_f` for a string made only of %.1f numbers and separators: -0.0 written 0.0 (a number
    in (-0.05, 0] is the only one whose text holds "-0.0"). One format call per element instead
    of one `_f` call per number: a third of the export's time at 10k nodes."""
    return numbers.replace("-0.0", "0.0") if "-0.0" in numbers else numbers


class NodeIndex:
    """Path -> Node lookups for a renderer: like `model.resolve`, but with a dict per body (a
    body can hold thousands of nodes) and None, not an exception, for a path that names nothing.
    A ``#k`` stub suffix (a per-use copy of a node) is ignored."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._bodies: dict[str, dict[str, Node]] = {}

    def _body(self, body_id: str) -> dict[str, Node]:
        nodes = self._bodies.get(body_id)
        if nodes is None:
            nodes = self._bodies[body_id] = {n.id: n for n in self.graph.bodies[body_id].nodes}
        return nodes

    def get(self, path: str) -> Node | None:
        try:
            parts = split_path(path.partition("#")[0])
            body_id = self.graph.root
            for node_id, index in parts[:-1]:
                owner = self._body(body_id)[node_id]
                body_id = owner.subgraphs[index].body
            return self._body(body_id)[parts[-1][0]]
        except (KeyError, IndexError, ValueError):
            return None


_WRAPPED = re.compile(r"^(transpose|jvp)\((.*)\)$")  # autodiff's passes; `jit(layer)` names a scope: kept


def scope_text(stack: str) -> str:
    """A name stack as a reader says it: ``transpose(jvp(block1/conv))`` -> ``block1/conv (backward)``,
    ``transpose(jvp())`` -> ``backward`` (viewer.js's `scopeText` says it alike)."""
    inner, pass_ = stack, ""
    while m := _WRAPPED.match(inner):
        if m.group(1) == "transpose":
            pass_ = "backward"
        elif m.group(1) == "jvp" and not pass_:
            pass_ = "forward"
        inner = m.group(2)
    return f"{inner} ({pass_})" if inner and pass_ else inner or pass_ or stack


def node_tooltip(node: Node, path: str = "") -> str:
    """The hover text of a node: everything worth knowing that does not fit on the box."""
    kind = family_title(family(node))
    lines = [f"{node.label}  ({kind if node.kind == 'eqn' else kind.lower()})"]
    if node.kind == "eqn":
        if node.in_avals:
            lines.append("in:  " + ", ".join(node.in_avals))
        if node.avals:
            lines.append("out: " + ", ".join(node.avals))
        lines.extend(f"{key}={value}" for key, value in node.params)
    elif node.avals:
        lines.append(", ".join(node.avals))
    if node.detail:
        lines.append(node.detail)
    if node.subgraphs:
        lines.append("sub-graphs: " + ", ".join(ref.role for ref in node.subgraphs))
    if node.name_stack:
        lines.append(f"scope: {scope_text(node.name_stack)}")
    if node.source is not None:
        where = f"{node.source.file}:{node.source.line}"
        lines.append(f"at {where}" + (f" in {node.source.function}" if node.source.function else ""))
    if path:
        lines.append(f"path: {path}")
    return "\n".join(lines)


class _SvgWriter:
    """Writes one document; each `_method` appends the elements of one part."""

    def __init__(
        self,
        graph: Graph,
        layout: Layout,
        theme: Theme,
        title: str | None,
        legend: bool,
        highlight: frozenset[str] = frozenset(),
        tooltips: bool = True,
        long_edges: str = "auto",
        overlay: Overlay | None = None,
    ) -> None:
        self.long_edges = check_long_edges(long_edges)
        self.overlay = overlay
        self.graph = graph
        self.highlight = highlight
        self.layout = layout
        self.annotations = dict(layout.annotations)
        self.theme = theme
        self.full_title = title
        self.title = labels.ellipsize(title, 120) if title else None  # the drawn band
        self.out: list[str] = []  # the lines since the last slice (see `_slice`)
        self.slices: list[str] = []
        self.tooltips = tooltips
        self.unrouted_attrs = f' class="edge unrouted" stroke="{theme.edge_unrouted}" stroke-dasharray="5.0 4.0"'
        if theme.unrouted_opacity != 1:
            self.unrouted_attrs += f' stroke-opacity="{theme.unrouted_opacity:g}" fill-opacity="{theme.unrouted_opacity:g}"'
        index = NodeIndex(graph)
        # 50k boxes and their pairs, made at once: no collection halfway through, nor one of them
        # all right after (57 ms of the GUI's GIL at 50k)
        with gc_paused(freeze=graph):
            self.nodes: list[tuple[NodeBox, Node | None]] = [(box, index.get(box.path)) for box in layout.nodes]
        self.legend_items = self._legend_items() if legend else []
        self.scale_top = TITLE_BAND if title else 0.0  # the overlay's scale goes under the title, above the drawing
        self.top = self.scale_top + (SCALE_H if overlay is not None else 0.0)
        self.legend_rows, legend_w = self._legend_rows()
        title_w = 2 * MARGIN + len(self.title) * labels.CHAR_W * TITLE_SIZE / labels.FONT_SIZE if self.title else 0.0
        self.width = max(layout.width, title_w, legend_w, 1.0)
        legend_h = len(self.legend_rows) * LEGEND_ROW + MARGIN if self.legend_rows else 0.0
        if overlay is not None:
            self.width = max(self.width, SCALE_W + 2 * MARGIN + len(self._scale_caption()) * labels.CHAR_W)
        self.height = max(self.top + layout.height + legend_h, 1.0)

    # ---------------------------------------------------------------- document

    def document(self) -> list[str]:
        t = self.theme
        w, h = _f(self.width), _f(self.height)
        label = self.full_title if self.full_title else f"jaxscope graph of {self.graph.function}"
        self.out.append(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'font-family="{xml_attr(labels.FONT_FAMILY)}" font-size="{_f(labels.FONT_SIZE)}" '
            f'role="img" aria-label="{xml_attr(label)}">'
        )
        if self.full_title:
            self.out.append(f"<title>{xml_text(self.full_title)}</title>")
        self.out.append(f"<desc>jaxscope graph of {xml_text(self.graph.function)}</desc>")
        if t.background is not None:
            self.out.append(f'<rect class="background" x="0.0" y="0.0" width="{w}" height="{h}" fill="{t.background}"/>')
        if self.title:
            self._title()
        if self.overlay is not None:
            self._scale()
        self.out.append(f'<g class="graph" transform="translate(0.0,{_f(self.top)})">' if self.top else '<g class="graph">')
        self._clusters()
        self._edges()
        self._cluster_titles()
        self._nodes()
        self.out.append("</g>")
        if self.legend_rows:
            self._legend()
        self.out.append("</svg>")
        self._slice()
        return self.slices

    def _slice(self) -> None:
        """Join the lines written so far into one slice. The big loops call it every `JOIN_PARTS`
        lines, so that a few thousand small strings are alive at a time instead of every line of
        the document next to its slices (gpt-50k: the export's peak over its start 160 -> 90 MB)."""
        if self.out:
            self.slices.append("\n".join(self.out) + "\n")  # lines without their newline; a slice ends with one
            self.out.clear()

    def _title(self) -> None:
        t = self.theme
        text = self.title or ""
        self.out.append(
            f'<text class="title" x="{_f(MARGIN)}" y="{_f(TITLE_BAND / 2 + 0.36 * TITLE_SIZE)}" '
            f'font-size="{_f(TITLE_SIZE)}" font-weight="bold" fill="{t.title_text}">{xml_text(text)}</text>'
        )

    # ---------------------------------------------------------------- clusters

    def _sorted_clusters(self) -> list[ClusterBox]:
        return sorted(self.layout.clusters, key=lambda c: c.depth)  # stable: layout order within a depth

    def _clusters(self) -> None:
        clusters = self._sorted_clusters()
        if not clusters:
            return
        t = self.theme
        opacity = f' fill-opacity="{t.cluster_opacity:g}"' if t.cluster_opacity != 1 else ""
        passes = cluster_passes(self.graph)
        self.out.append(f'<g class="clusters" stroke="{t.cluster_border}" stroke-width="1.0">')
        for c in clusters:
            if len(self.out) >= JOIN_PARTS:
                self._slice()
            self.out.append(f'<g class="cluster" data-path="{xml_attr(c.path)}">')
            if self.tooltips:
                self.out.append(f"<title>{xml_text(c.title)}</title>")
            self.out.append(
                f'<rect x="{_f(c.x)}" y="{_f(c.y)}" width="{_f(c.w)}" height="{_f(c.h)}" rx="6.0" '
                f'fill="{t.cluster_fill(c.depth, passes.get(c.path, ""))}"{opacity}/>'
            )
            self.out.append("</g>")
        self.out.append("</g>")

    def _cluster_titles(self) -> None:
        """Titles go after the edges, on a patch of the cluster's fill, so an edge entering the
        cluster never runs through its title."""
        clusters = [c for c in self._sorted_clusters() if c.title]
        if not clusters:
            return
        t = self.theme
        passes = cluster_passes(self.graph) if t.cluster_opacity == 1 else {}
        self.out.append(f'<g class="cluster-titles" fill="{t.title_text}">')
        for c in clusters:
            chars = max(int((c.w - 2 * MARGIN) / labels.CHAR_W + 0.05), 1)  # layout sizes clusters to fit the title
            title = labels.ellipsize(c.title, chars)
            if t.cluster_opacity == 1:
                w = len(title) * labels.CHAR_W + 8.0
                self.out.append(
                    f'<rect x="{_f(c.x + MARGIN - 4)}" y="{_f(c.y + 3)}" width="{_f(w)}" '
                    f'height="{_f(labels.TITLE_H - 6)}" rx="3.0" fill="{t.cluster_fill(c.depth, passes.get(c.path, ""))}"/>'
                )
            y = c.y + labels.TITLE_H / 2 + _BASELINE
            self.out.append(f'<text x="{_f(c.x + MARGIN)}" y="{_f(y)}"{_space(title)}>{xml_text(title)}</text>')
        self.out.append("</g>")

    # ---------------------------------------------------------------- edges

    def _edges(self) -> None:
        if not self.layout.edges:
            return
        t = self.theme
        opacity = f' stroke-opacity="{t.edge_opacity:g}" fill-opacity="{t.edge_opacity:g}"' if t.edge_opacity != 1 else ""
        self.out.append(f'<g class="edges" fill="none" stroke="{t.edge}" stroke-width="{_f(EDGE_W)}"{opacity}>')
        partial = partial_edges(self.layout, self.long_edges)
        for j, e in enumerate(self.layout.edges):
            if len(self.out) >= JOIN_PARTS:
                self._slice()
            self._edge(e, j in partial)
        self.out.append("</g>")

    def _edge(self, e: EdgePath, partial: bool = False) -> None:
        """One edge's group, appended as one string (the parts are joined with newlines anyway);
        `partial`: drawn as its two ends (one path of two parts), if it is long enough for that."""
        pts: Sequence[Point] = e.points
        if len(pts) < 2:
            return
        ends = partial_edge(pts) if partial else None
        head = ""
        if ends is not None:
            head, pts = _path_d(ends[0]) + " ", ends[1]
        pts, arrowhead = arrowed(pts)
        if e.routed:
            colour, attrs = self.theme.edge, ' class="edge"'
        else:
            colour, attrs = self.theme.edge_unrouted, self.unrouted_attrs
        title = f"\n<title>{xml_text(e.aval)}</title>" if e.aval and self.tooltips else ""
        arrow = ""
        if arrowhead is not None:
            (tx, ty), (ax, ay), (bx, by) = arrowhead
            d = _nz("M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z" % (tx, ty, ax, ay, bx, by))  # noqa: UP031 - 1.5x faster than an f-string
            arrow = f'\n<path class="arrow" d="{d}" fill="{colour}" stroke="none"/>'
        self.out.append(
            f'<g{attrs} data-src="{xml_attr(e.src)}" data-dst="{xml_attr(e.dst)}">{title}\n<path d="{head}{_path_d(pts)}"/>{arrow}\n</g>'
        )

    # ---------------------------------------------------------------- nodes

    def _nodes(self) -> None:
        if not self.nodes:
            return
        self.out.append('<g class="nodes">')
        for box, node in self.nodes:
            if len(self.out) >= JOIN_PARTS:
                self._slice()
            self._node(box, node)
        self.out.append("</g>")

    def _node(self, box: NodeBox, node: Node | None) -> None:
        t = self.theme
        fam = family(node) if node is not None else "other"
        style = t.style(fam)
        kind = node.kind if node is not None else "eqn"
        self.out.append(f'<g class="node {fam}" data-path="{xml_attr(box.path)}">')
        if self.tooltips:
            tip = node_tooltip(node, box.path.partition("#")[0]) if node is not None else box.path
            self.out.append(f"<title>{xml_text(tip)}</title>")
        x, y = box.x - box.w / 2, box.y - box.h / 2
        fill = f'fill="{style.fill}"' + (f' fill-opacity="{t.fill_opacity:g}"' if t.fill_opacity != 1 else "")
        measured = self.overlay.colour(box.path.partition("#")[0]) if self.overlay is not None else None
        if measured is not None:
            fill = f'fill="{measured}"'
        stroke = f'stroke="{style.border}"'
        geom = _nz('x="%.1f" y="%.1f" width="%.1f" height="%.1f"' % (x, y, box.w, box.h))  # noqa: UP031 - 1.5x faster than an f-string
        if kind == "literal":
            self.out.append(
                f'<ellipse cx="{_f(box.x)}" cy="{_f(box.y)}" rx="{_f(box.w / 2)}" ry="{_f(box.h / 2)}" {fill} {stroke} stroke-width="1.0"/>'
            )
        elif kind in ("input", "output"):
            width = "2.0" if kind == "output" else "1.4"
            self.out.append(f'<rect {geom} rx="{_f(min(box.h, box.w) / 2)}" {fill} {stroke} stroke-width="{width}"/>')
        elif kind == "const":
            self.out.append(f'<rect {geom} rx="2.0" {fill} {stroke} stroke-width="1.4" stroke-dasharray="4.0 2.0"/>')
        else:
            if node is not None and node.subgraphs:
                cx, cy = x + CARD_OFFSET, y + CARD_OFFSET
                self.out.append(
                    f'<rect x="{_f(cx)}" y="{_f(cy)}" width="{_f(box.w)}" height="{_f(box.h)}" rx="4.0" '
                    f'{fill} {stroke} stroke-width="1.0"/>'
                )
            self.out.append(f'<rect {geom} rx="4.0" {fill} {stroke} stroke-width="1.2"/>')
        lines = labels.box_lines(node, box.path, self.annotations)
        self._node_text(box, lines, muted_first=kind == "literal", on_dark=measured is not None and self._dark(box.path))
        if self.highlight and box.path.partition("#")[0] in self.highlight:
            self._highlight(box, kind, card=node is not None and kind == "eqn" and bool(node.subgraphs))
        self.out.append("</g>")

    def _highlight(self, box: NodeBox, kind: str, card: bool) -> None:
        colour = HIGHLIGHT.get(self.theme.name, HIGHLIGHT["light"])
        pad = HIGHLIGHT_PAD + (CARD_OFFSET if card else 0.0)
        w, h = box.w + 2 * pad, box.h + 2 * pad
        rx = h / 2 if kind in ("input", "output", "literal") else 6.0
        self.out.append(
            f'<rect class="highlight" x="{_f(box.x - w / 2)}" y="{_f(box.y - h / 2)}" width="{_f(w)}" height="{_f(h)}" '
            f'rx="{_f(min(rx, w / 2))}" fill="none" stroke="{colour}" stroke-width="{_f(HIGHLIGHT_W)}"/>'
        )

    def _dark(self, path: str) -> bool:
        o = self.overlay
        if o is not None and o.keys:
            return False  # categories are light fills
        value = o.values.get(path.partition("#")[0], 0.0) if o is not None else 0.0
        return o is not None and value > 0 and o.position(value) >= DARK_FROM

    def _node_text(self, box: NodeBox, lines: list[str], muted_first: bool, on_dark: bool = False) -> None:
        t = self.theme
        top = box.y - len(lines) * labels.LINE_H / 2
        for i, line in enumerate(lines):
            muted = muted_first or i > 0
            colour = ("#f3f4f6" if muted else "#ffffff") if on_dark else t.muted if muted else t.text
            opacity = f' fill-opacity="{t.muted_opacity:g}"' if muted and t.muted_opacity != 1 else ""
            y = top + (i + 0.5) * labels.LINE_H + _BASELINE
            xy = _nz('x="%.1f" y="%.1f"' % (box.x, y))  # noqa: UP031 - 1.5x faster than an f-string
            self.out.append(f'<text {xy} text-anchor="middle" fill="{colour}"{opacity}{_space(line)}>{xml_text(line)}</text>')

    # ---------------------------------------------------------------- legend

    def _legend_items(self) -> list[str]:
        present = {family(node) if node is not None else "other" for _, node in self.nodes}
        return [fam for fam in FAMILIES if fam in present]

    def _legend_rows(self) -> tuple[list[list[tuple[str, float]]], float]:
        """Items wrapped into rows no wider than the drawing (at least 320 px); and the width used."""
        if not self.legend_items:
            return [], 0.0
        avail = max(self.layout.width, 320.0) - 2 * MARGIN
        rows: list[list[tuple[str, float]]] = [[]]
        x = 0.0
        used = 0.0
        for fam in self.legend_items:
            w = 18.0 + 6.0 + len(family_title(fam)) * labels.CHAR_W + 14.0
            if rows[-1] and x + w > avail:
                rows.append([])
                x = 0.0
            rows[-1].append((fam, x))
            x += w
            used = max(used, x)
        return rows, used + 2 * MARGIN

    def _legend(self) -> None:
        t = self.theme
        top = self.top + self.layout.height + MARGIN / 2
        self.out.append(f'<g class="legend" transform="translate({_f(MARGIN)},{_f(top)})">')
        for r, row in enumerate(self.legend_rows):
            cy = r * LEGEND_ROW + LEGEND_ROW / 2
            for fam, x in row:
                style = t.style(fam)
                fill = f'fill="{style.fill}"' + (f' fill-opacity="{t.fill_opacity:g}"' if t.fill_opacity != 1 else "")
                geom = f'x="{_f(x)}" y="{_f(cy - 6)}" width="18.0" height="12.0"'
                if fam == "literal":
                    shape = f'<ellipse cx="{_f(x + 9)}" cy="{_f(cy)}" rx="9.0" ry="6.0" {fill} stroke="{style.border}"/>'
                elif fam in ("input", "output"):
                    width = "2.0" if fam == "output" else "1.4"
                    shape = f'<rect {geom} rx="6.0" {fill} stroke="{style.border}" stroke-width="{width}"/>'
                elif fam == "const":
                    shape = f'<rect {geom} rx="2.0" {fill} stroke="{style.border}" stroke-width="1.4" stroke-dasharray="4.0 2.0"/>'
                else:
                    shape = f'<rect {geom} rx="3.0" {fill} stroke="{style.border}" stroke-width="1.2"/>'
                self.out.append(shape)
                self.out.append(f'<text x="{_f(x + 24)}" y="{_f(cy + _BASELINE)}" fill="{t.text}">{xml_text(family_title(fam))}</text>')
        self.out.append("</g>")

    def _scale_caption(self) -> str:
        o = self.overlay
        assert o is not None
        if o.high <= 0:
            return f"{o.caption or o.measure}: none"
        return f"{o.caption or o.measure}: {human(o.low)} … {human(o.high)} (log scale; grey: none)"

    def _scale(self) -> None:
        """The overlay's colour scale under the drawing: a ramp with its measure and range."""
        t = self.theme
        top = self.scale_top + 14.0
        o = self.overlay
        if o is not None and o.keys:
            self._swatches(top)
            return
        stops = "".join(f'<stop offset="{i / (len(RAMP) - 1):.2f}" stop-color="{c}"/>' for i, c in enumerate(RAMP))
        self.out.append(f'<g class="overlay-scale" transform="translate({_f(MARGIN)},{_f(top)})">')
        self.out.append(f'<defs><linearGradient id="overlay-ramp">{stops}</linearGradient></defs>')
        self.out.append(f'<rect x="0.0" y="0.0" width="{_f(SCALE_W)}" height="12.0" fill="url(#overlay-ramp)" stroke="{t.muted}"/>')
        self.out.append(f'<text x="{_f(SCALE_W + 8)}" y="{_f(6 + _BASELINE)}" fill="{t.text}">{xml_text(self._scale_caption())}</text>')
        self.out.append("</g>")

    def _swatches(self, top: float) -> None:
        """A categorical overlay's key: a swatch and a name per category, then the caption."""
        t, o = self.theme, self.overlay
        assert o is not None
        self.out.append(f'<g class="overlay-scale" transform="translate({_f(MARGIN)},{_f(top)})">')
        x = 0.0
        for name, colour in o.keys:
            self.out.append(f'<rect x="{_f(x)}" y="0.0" width="14.0" height="12.0" fill="{colour}" stroke="{t.muted}"/>')
            self.out.append(f'<text x="{_f(x + 20)}" y="{_f(6 + _BASELINE)}" fill="{t.text}">{xml_text(name)}</text>')
            x += 28.0 + labels.CHAR_W * len(name)
        if o.caption:
            self.out.append(f'<text x="{_f(x + 12)}" y="{_f(6 + _BASELINE)}" fill="{t.text}">{xml_text(o.caption)}</text>')
        self.out.append("</g>")


SCALE_H = 40.0  # the overlay's scale band over the drawing
DARK_FROM = 0.6  # along the overlay's scale, fills from here on take white text
SCALE_W = 240.0


def _space(text: str) -> str:
    """``xml:space="preserve"`` where collapsing white space would change the text."""
    return ' xml:space="preserve"' if "  " in text or text[:1].isspace() or text[-1:].isspace() else ""


def _path_d(pts: Sequence[Point]) -> str:
    if len(pts) == 4:  # one cubic, by far the commonest: one format for the whole path
        (a, b), (c, d), (e, f), (g, h) = pts
        return _nz("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" % (a, b, c, d, e, f, g, h))  # noqa: UP031 - 1.5x faster than an f-string
    first = f"M{_f(pts[0][0])},{_f(pts[0][1])}"
    if (len(pts) - 1) % 3 == 0:
        parts = [first]
        for i in range(1, len(pts), 3):
            (a, b), (c, d), (e, f) = pts[i], pts[i + 1], pts[i + 2]
            parts.append(f"C{_f(a)},{_f(b)} {_f(c)},{_f(d)} {_f(e)},{_f(f)}")
        return " ".join(parts)
    return " ".join([first] + [f"L{_f(x)},{_f(y)}" for x, y in pts[1:]])
