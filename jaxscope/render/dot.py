"""Graph (+ Layout) -> a Graphviz DOT file for users who want to restyle or re-render a graph.

The file is plain text, deterministic and self-describing:

* node ids are their paths (``"e4:1/e0"``, stub copies ``"in0#2"``), always quoted;
* labels are the same lines the SVG shows (`labels.node_lines`), each escaped with
  `sanitize.dot_escape` and joined with ``\\n`` escapes written here, never taken from user text,
  so ``\\N``, ``<...>``, quotes and backslashes in names render literally;
* fill, border and font colours follow the theme and the node's family; ``currentColor`` (which
  Graphviz rejects) becomes the theme's `ink`, and a translucent fill becomes ``#rrggbbaa``;
* expanded sub-graphs are ``subgraph "cluster_<path>"`` with the cluster title as label; an edge
  that ends at a cluster itself (see `layout`) ends at an invisible point node named after the
  cluster path, with ``lhead``/``ltail`` so ``dot`` clips it at the cluster border.

With a layout, every node has ``pos="x,y!"`` (points, y up, from the layout's px with y down),
``width``/``height`` in inches and ``fixedsize=true``, and every cluster its ``bb``:
``neato -n -Tsvg file.dot`` (pygraphviz: ``layout(prog="nop")``) reproduces the jaxscope
placement with straight edges, while ``dot -Tsvg file.dot`` lays the graph out afresh. Without a layout the
file holds the top-level body only (sub-graphs collapsed into their owner nodes).
"""

from __future__ import annotations

from jaxscope.layout import labels
from jaxscope.render.sanitize import dot_id, dot_string
from jaxscope.render.styles import Theme, family, get_theme
from jaxscope.render.svg import NodeIndex
from jaxscope.schema.graph import Graph, Node
from jaxscope.schema.layout import Layout

INDENT = "  "


def render_dot(graph: Graph, layout: Layout | None = None, *, theme: str = "light") -> str:
    """The DOT text of `graph`, placed as in `layout` when given."""
    return _DotWriter(graph, layout, get_theme(theme)).document()


def _num(v: float) -> str:
    text = f"{v:.1f}"
    return "0.0" if text == "-0.0" else text


def _inches(px: float) -> str:
    return f"{px / 72.0:.4f}"


def _alpha(colour: str, opacity: float) -> str:
    if opacity >= 1 or not colour.startswith("#") or len(colour) != 7:
        return colour
    return f"{colour}{round(opacity * 255):02x}"


def _attrs(pairs: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _container(path: str) -> str:
    """The cluster path a node path sits in ("" for the top level)."""
    real = path.partition("#")[0]
    return real.rpartition("/")[0]


def _cluster_parent(path: str) -> str:
    return path.rpartition("/")[0]


class _DotWriter:
    def __init__(self, graph: Graph, layout: Layout | None, theme: Theme) -> None:
        self.graph = graph
        self.layout = layout
        self.annotations = dict(layout.annotations) if layout is not None else {}
        self.theme = theme
        self.index = NodeIndex(graph)
        self.out: list[str] = []

    def colour(self, c: str, opacity: float = 1.0) -> str:
        return dot_string(_alpha(self.theme.concrete(c), opacity))

    def document(self) -> str:
        t = self.theme
        font = dot_string(labels.FONT_FAMILY.split(",")[0].strip())
        bg = dot_string("transparent") if t.background is None else self.colour(t.background)
        self.out.append(f"digraph {dot_id(self.graph.function or 'jaxscope')} {{")
        graph_attrs = [
            ("bgcolor", bg),
            ("fontname", font),
            ("fontsize", _num(labels.FONT_SIZE)),
            ("fontcolor", self.colour(t.title_text)),
            ("rankdir", "TB"),
            ("compound", "true"),
            ("labeljust", "l"),
            ("labelloc", "t"),
            ("nodesep", "0.25"),
            ("ranksep", "0.35"),
        ]
        if self.layout is not None:
            bb = f"0,0,{_num(self.layout.width)},{_num(self.layout.height)}"
            graph_attrs += [("bb", dot_string(bb)), ("notranslate", "true")]  # neato -n: keep the origin
        self.out.append(INDENT + "graph " + _attrs(graph_attrs) + ";")
        self.out.append(
            INDENT
            + "node "
            + _attrs(
                [
                    ("shape", "box"),
                    ("style", dot_string("rounded,filled")),
                    ("fontname", font),
                    ("fontsize", _num(labels.FONT_SIZE)),
                    ("fontcolor", self.colour(t.text)),
                    ("penwidth", "1.2"),
                    ("margin", dot_string("0.11,0.07")),
                ]
            )
            + ";"
        )
        self.out.append(
            INDENT
            + "edge "
            + _attrs(
                [
                    ("color", self.colour(t.edge, t.edge_opacity)),
                    ("arrowsize", "0.6"),
                    ("penwidth", "1.2"),
                ]
            )
            + ";"
        )
        if self.layout is None:
            self._flat()
        else:
            self._placed(self.layout)
        self.out.append("}")
        return "\n".join(self.out) + "\n"

    # ---------------------------------------------------------------- nodes

    def _node_line(self, path: str, node: Node | None, pos: tuple[float, float, float, float] | None, depth: int) -> str:
        t = self.theme
        fam = family(node) if node is not None else "other"
        style = t.style(fam)
        lines = labels.box_lines(node, path, self.annotations)
        kind = node.kind if node is not None else "eqn"
        attrs = [
            ("label", dot_string("\n".join(lines))),
            ("fillcolor", self.colour(style.fill, t.fill_opacity)),
            ("color", self.colour(style.border)),
        ]
        if kind == "literal":
            attrs += [("shape", "ellipse"), ("style", "filled"), ("fontcolor", self.colour(t.muted, t.muted_opacity))]
        elif kind == "const":
            attrs += [("style", dot_string("rounded,filled,dashed"))]
        elif kind == "output":
            attrs += [("penwidth", "2.0")]
        elif node is not None and node.subgraphs:
            attrs += [("peripheries", "2")]
        if pos is not None:
            x, y, w, h = pos
            assert self.layout is not None
            attrs += [
                ("pos", dot_string(f"{_num(x)},{_num(self.layout.height - y)}!")),
                ("width", _inches(w)),
                ("height", _inches(h)),
                ("fixedsize", "true"),
            ]
        return INDENT * depth + f"{dot_id(path)} " + _attrs(attrs) + ";"

    def _anchor_line(self, path: str, point: tuple[float, float], depth: int) -> str:
        assert self.layout is not None
        x, y = point
        return (
            INDENT * depth
            + f"{dot_id(path)} "
            + _attrs(
                [
                    ("shape", "point"),
                    ("style", "invis"),
                    ("label", '""'),
                    ("width", "0.01"),
                    ("pos", dot_string(f"{_num(x)},{_num(self.layout.height - y)}!")),
                ]
            )
            + ";"
        )

    def _lookup(self, path: str) -> Node | None:
        return self.index.get(path)

    # ---------------------------------------------------------------- without a layout

    def _flat(self) -> None:
        body = self.graph.top
        for node in body.nodes:
            self.out.append(self._node_line(node.id, node, None, 1))
        for e in body.edges:
            self.out.append(INDENT + f"{dot_id(e.src)} -> {dot_id(e.dst)};")

    # ---------------------------------------------------------------- with a layout

    def _placed(self, layout: Layout) -> None:
        t = self.theme
        cluster_paths = {c.path for c in layout.clusters}
        members: dict[str, list[str]] = {"": []}
        for c in layout.clusters:
            members.setdefault(c.path, [])
        for box in layout.nodes:
            home = _container(box.path)
            members.setdefault(home if home in cluster_paths else "", []).append(box.path)
        boxes = {b.path: b for b in layout.nodes}
        # Edge ends that are no NodeBox (a cluster itself, see `layout`) become invisible points
        # where the edge ends, inside their cluster, so `neato -n` still finds every position.
        anchors: dict[str, tuple[float, float]] = {}
        for e in layout.edges:
            if e.points:
                for end, point in ((e.src, e.points[0]), (e.dst, e.points[-1])):
                    if end not in boxes and end not in anchors:
                        anchors[end] = point
        loose = [p for p in anchors if p not in cluster_paths]
        children: dict[str, list[str]] = {}
        for c in layout.clusters:
            parent = _cluster_parent(c.path)
            while parent and parent not in cluster_paths:
                parent = _cluster_parent(parent)
            children.setdefault(parent, []).append(c.path)
        clusters = {c.path: c for c in layout.clusters}

        def emit(container: str, depth: int) -> None:
            for path in members.get(container, []):
                b = boxes[path]
                self.out.append(self._node_line(path, self._lookup(path), (b.x, b.y, b.w, b.h), depth))
            for sub in children.get(container, []):
                c = clusters[sub]
                pad = INDENT * (depth + 1)
                self.out.append(INDENT * depth + f"subgraph {dot_id('cluster_' + sub)} {{")
                bb = f"{_num(c.x)},{_num(layout.height - c.y - c.h)},{_num(c.x + c.w)},{_num(layout.height - c.y)}"
                self.out.append(
                    pad
                    + "graph "
                    + _attrs(
                        [
                            ("label", dot_string(c.title)),
                            ("style", dot_string("rounded,filled")),
                            ("fillcolor", self.colour(t.cluster_fill(c.depth), t.cluster_opacity)),
                            ("color", self.colour(t.cluster_border)),
                            ("fontcolor", self.colour(t.title_text)),
                            ("bb", dot_string(bb)),
                        ]
                    )
                    + ";"
                )
                if sub in anchors:
                    self.out.append(self._anchor_line(sub, anchors[sub], depth + 1))
                emit(sub, depth + 1)
                self.out.append(INDENT * depth + "}")

        emit("", 1)
        for path in loose:
            self.out.append(self._anchor_line(path, anchors[path], 1))
        for e in layout.edges:
            if not e.points and (e.src not in boxes or e.dst not in boxes):
                continue  # nowhere to draw it
            attrs: list[tuple[str, str]] = []
            if e.dst in clusters:
                attrs.append(("lhead", dot_id("cluster_" + e.dst)))
            if e.src in clusters:
                attrs.append(("ltail", dot_id("cluster_" + e.src)))
            if not e.routed:
                attrs += [("style", "dashed"), ("color", self.colour(t.edge_unrouted, t.unrouted_opacity))]
            tail = " " + _attrs(attrs) if attrs else ""
            self.out.append(INDENT + f"{dot_id(e.src)} -> {dot_id(e.dst)}{tail};")
