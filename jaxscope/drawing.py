"""One way from a traced graph to a drawing, for every caller that draws one: `jaxscope export`,
`jaxscope diff -o`, `jaxscope.export` / `jaxscope.graph`, the Sphinx directive (through the API)
and the window's Export Graph; an HTML page too (`Drawing.page`: every body laid out ahead).

The drawn view is the window's by default (`scope_view.for_window`: a model grouped by module and
pass, opened to its repeated blocks; a small plain function as it is), so a picture exported for a
doc page is the one a user saw. `DrawOptions` holds every choice the callers share, checked once
before any work; `Drawing` is the result, with the notes the caller should print (a layout engine
that gave up on dot, a PNG scaled under its cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from jaxscope.analysis.scope_view import ScopedGraph, expand_scopes, first_open, for_window, scoped
from jaxscope.exporter import MIN_LABEL_PX, PNG_MAX_PX, export, highlight_paths, png_scale, resolve_format, write_text
from jaxscope.layout import labels
from jaxscope.layout.edge_shape import check_long_edges
from jaxscope.render.styles import get_theme
from jaxscope.schema.expansion import expanded_to_depth
from jaxscope.schema.graph import Graph

if TYPE_CHECKING:
    from jaxscope.render.html import BodyLayouts
    from jaxscope.render.overlay import Overlay
    from jaxscope.schema.layout import Layout

Grouping = Literal["auto", "scopes", "flat"]
Direction = Literal["TB", "LR"]
GROUPINGS: tuple[str, ...] = get_args(Grouping)
READABLE_PX = 6.0  # a PNG's label height under which it is scaled past reading: said, with what fits


@dataclass(frozen=True)
class DrawOptions:
    """What a drawing looks like. `grouping`: "auto" draws what the window draws (grouped where the
    program has modules or is too big to read flat), "scopes" groups any program, "flat" draws the
    program's own structure. `collapse`: sub-graph levels to open (None: as the window opens)."""

    theme: str = "light"
    direction: Direction = "TB"
    collapse: int | None = None
    grouping: Grouping = "auto"
    legend: bool = False
    highlight: str = ""
    long_edges: str = "auto"
    dpi: int = 96
    layout_budget: float = 5.0
    expand: tuple[str, ...] = ()  # groups drawn open besides the first view's (`scope_view.expand_scopes`)

    def check(self) -> DrawOptions:
        """ValueError naming the first bad option (before a trace spends seconds)."""
        get_theme(self.theme)
        check_long_edges(self.long_edges)
        if self.direction not in get_args(Direction):
            raise ValueError(f"direction must be TB or LR, got {self.direction!r}")
        if self.grouping not in GROUPINGS:
            raise ValueError(f"grouping must be one of {', '.join(GROUPINGS)}, got {self.grouping!r}")
        if self.collapse is not None and self.collapse < 0:
            raise ValueError(f"collapse must be 0 or more, got {self.collapse}")
        if self.dpi <= 0:
            raise ValueError(f"dpi must be positive, got {self.dpi}")
        return self


def grouping_for(fmt: str, scopes: bool, flat: bool) -> Grouping:
    """The grouping `--scopes` / `--flat` (the API's `scopes=` / `flat=`) ask for in `fmt`: JSON keeps
    the program's own structure (its paths are the program's), so it is flat and refuses `scopes`."""
    if scopes and flat:
        raise ValueError("--scopes groups any program, --flat none: give one of them")
    if scopes and fmt == "json":
        raise ValueError(
            "--scopes draws a grouped view: use it with svg, png, pdf, dot or html (the JSON keeps the program's own structure)"
        )
    return "scopes" if scopes else "flat" if flat or fmt == "json" else "auto"


def view_of(graph: Graph, grouping: Grouping) -> ScopedGraph:
    """The view drawn of `graph` under `grouping` (see `DrawOptions`)."""
    if grouping == "flat":
        return ScopedGraph(graph, {}, graph)
    return scoped(graph) if grouping == "scopes" else for_window(graph)


def opened(graph: Graph, collapse: int | None, expand: tuple[str, ...] = ()) -> frozenset[str]:
    """The clusters a drawing opens: as the window opens them, or `collapse` levels down, and the
    groups `expand` names with the way to them (ValueError for a name no group has)."""
    base = first_open(graph) if collapse is None else frozenset(expanded_to_depth(graph, collapse))
    return base | expand_scopes(graph, expand) if expand else base


@dataclass(frozen=True)
class Drawing:
    """A laid-out view, ready to write in any format; `notes` are for the person who asked."""

    view: ScopedGraph
    layout: Layout
    options: DrawOptions
    highlight: frozenset[str]

    @property
    def graph(self) -> Graph:
        return self.view.graph

    @classmethod
    def of(cls, view: ScopedGraph, layout: Layout, options: DrawOptions) -> Drawing:
        """A drawing of `view` placed by `layout`; ValueError when the highlight matches nothing."""
        marks: frozenset[str] = frozenset()
        if options.highlight:
            marks = highlight_paths(view.graph, layout, options.highlight)
            if not marks:
                raise ValueError(f"--highlight {options.highlight!r} matches no node of {view.graph.function}")
        return cls(view, layout, options, marks)

    def notes(self, fmt: str) -> list[str]:
        """What the person should know about the file written as `fmt`: the layout's notes, and a
        PNG scaled under its size cap so far that its labels are hard to read, with what fits."""
        out = list(self.layout.notes)
        if fmt != "png":
            return out
        scale = png_scale(self.layout, self.options.dpi)
        wanted = self.options.dpi / 96.0
        if scale < wanted * 0.999:
            w, h = round(self.layout.width * wanted), round(self.layout.height * wanted)
            px = labels.FONT_SIZE * scale
            said = f"the PNG would be {w} x {h} px, over the {PNG_MAX_PX} px cap: scaled to {100 * scale:.0f} %"
            if px < READABLE_PX:
                said += f" (labels {px:.1f} px high{', left out' if px < MIN_LABEL_PX else ''}); draw less to read it: "
                said += self._fewer()
            elif self.options.dpi != 96:
                said += f" (--dpi {self.options.dpi} gives no more pixels than fit)"
            out.append(said)
        return out

    def _fewer(self) -> str:
        depth = self.options.collapse
        if not self.view.grouped and self.options.grouping == "flat":
            return "leave out --flat (the grouped view), or --collapse 0"
        if not self.view.grouped:
            return "--scopes (grouped by calls), or --collapse 0"
        return f"--collapse {max(0, (depth if depth is not None else 2) - 1)}, or SVG (no cap)"

    def write(
        self,
        path: str,
        fmt: str | None = None,
        *,
        links: dict[str, Any] | None = None,
        overlay: Overlay | None = None,
        sources: dict[str, str] | None = None,
    ) -> str:
        """Write the drawing to `path` (the suffix or `fmt` picks the format); returns the format.
        HTML lays out every body ahead (`body_layouts`) and carries `sources` (file -> text) and
        the stages' `links` for its panel."""
        o = self.options
        if resolve_format(path, fmt) == "html":
            write_text(path, self.page(links=links, overlay=overlay, sources=sources))
            return "html"
        return export(
            self.graph,
            self.layout,
            path,
            theme=o.theme,
            dpi=o.dpi,
            fmt=fmt,
            legend=o.legend,
            highlight=self.highlight,
            long_edges=o.long_edges,
            links=links,
            overlay=overlay,
        )

    def page(self, *, links: dict[str, Any] | None = None, overlay: Overlay | None = None, sources: dict[str, str] | None = None) -> str:
        """The drawing as an interactive HTML page (`render.html`): every body laid out ahead."""
        from jaxscope.render.html import PageTexts, render_html

        o = self.options
        return render_html(
            self.graph,
            body_layouts(self.view.graph, self.layout, o),
            theme=o.theme,
            legend=o.legend,
            overlay=overlay,
            texts=PageTexts(sources or {}, links or {}),
        )


def body_layouts(graph: Graph, shown: Layout, options: DrawOptions) -> BodyLayouts:
    """Every body of `graph` laid out on its own, its sub-graphs shut, for the HTML page to open
    in place: the top one as the drawing places it (dot, in the layout process, under its budget),
    the others here with dot up to `AHEAD_DOT_NODES` boxes, else the layered layout (a body drawn
    whole in a page need not match the window's pixel for pixel). `shown` says what opens first."""
    from jaxscope.layout.engine import annotations_by_body, compute_layout
    from jaxscope.render.html import BodyLayouts
    from jaxscope.runtime.layout_client import LayoutClient

    if options.direction != "TB":
        raise ValueError("an HTML page draws top to bottom: leave out --direction LR")
    out: dict[str, Layout] = {}
    notes = {body: sorted(on.items()) for body, on in annotations_by_body(graph, shown.annotations).items()}  # by node id
    with LayoutClient(budget_s=options.layout_budget) as layouts:
        out[graph.root] = layouts.layout(graph, (), **({"annotations": notes[graph.root]} if graph.root in notes else {}))
    for body_id in _reachable(graph):
        if body_id != graph.root:
            alone = Graph(graph.function, graph.bodies, body_id)
            small = len(graph.bodies[body_id].nodes) <= AHEAD_DOT_NODES
            engine = "auto" if small else "layered"
            out[body_id] = compute_layout(alone, (), engine=engine, dot_max_nodes=AHEAD_DOT_NODES, annotations=notes.get(body_id, ()))
    opened = frozenset(p.split("#")[0] for c in shown.clusters for p in [c.path.rsplit(":", 1)[0]])
    return BodyLayouts(out, opened)


AHEAD_DOT_NODES = 120  # a body this small is laid out by dot in this process (a fraction of a second)


def _reachable(graph: Graph) -> list[str]:
    seen, todo = [graph.root], [graph.root]
    while todo:
        for n in graph.bodies[todo.pop()].nodes:
            for ref in n.subgraphs:
                if ref.body not in seen and ref.body in graph.bodies:
                    seen.append(ref.body)
                    todo.append(ref.body)
    return seen


def draw(graph: Graph, options: DrawOptions) -> Drawing:
    """Lay out the view of `graph` that `options` asks for (dot runs in the layout process, under
    its budget: it can hang) and return the drawing."""
    from jaxscope.runtime.layout_client import LayoutClient

    view = view_of(graph, options.grouping)
    with LayoutClient(budget_s=options.layout_budget) as layouts:
        layout = layouts.layout(view.graph, opened(view.graph, options.collapse, options.expand), direction=options.direction)
    return Drawing.of(view, layout, options)
