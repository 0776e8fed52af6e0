"""What a drawing is, for every caller that draws one: `jaxscope export`, `jaxscope diff -o`,
`jaxscope.export` / `jaxscope.graph`, the Sphinx directive (through the API), the window's Export
Graph and Copy Graph Image. A `DrawRequest` (a view, its `DrawOptions`, its `Decorations`) goes to
the one drawer (`jaxscope.drawer`), which lays it out and answers a `Drawing`, written in any format.

The drawn view is the window's by default (`scope_view.for_window`: a model grouped by module and
pass, opened to its repeated blocks; a small plain function as it is), so a picture exported for a
doc page is the one a user saw. `DrawOptions` holds every choice the callers share, checked once
before any work. `Decorations` are keyed by program path (the equations' own, as the analyses give
them) and mapped to the drawn paths once, here (`ScopedGraph.drawn`), never by a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from jaxscope.analysis.scope_view import ScopedGraph, expand_scopes, first_open, for_window, scoped
from jaxscope.exporter import MIN_LABEL_PX, PNG_MAX_PX, export, highlight_paths, png_scale, resolve_format, write_text
from jaxscope.layout import labels
from jaxscope.layout.edge_shape import check_long_edges
from jaxscope.render.overlay import Overlay
from jaxscope.render.styles import get_theme
from jaxscope.schema.expansion import expanded_to_depth
from jaxscope.schema.graph import Graph

if TYPE_CHECKING:
    from jaxscope.render.html import BodyLayouts
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
class Measured:
    """A measure's value per equation, by program path (`analysis.measures`), drawn as a colour scale."""

    name: str
    values: Mapping[str, float]
    caption: str

    def overlay(self, view: ScopedGraph | None) -> Overlay:
        """The boxes of `view` (None: the program as it is) filled by the measure: groups and owners
        by what they hold."""
        return Overlay.drawn(self.name, view.drawn(self.values) if view is not None else dict(self.values), self.caption)


@dataclass(frozen=True)
class Categorised:
    """Each equation's category by program path (a diff's added/removed/changed), in `colours`' order;
    a group or a collapsed owner shows what its equations share (`diff_view.shown_status`)."""

    name: str
    status: Mapping[str, str]
    colours: Mapping[str, str]
    caption: str = ""

    def overlay(self, view: ScopedGraph | None) -> Overlay:
        from jaxscope.analysis.diff_view import shown_status

        shown = shown_status(dict(self.status), view if view is not None and view.grouped else None)
        return Overlay.categories(self.name, shown, dict(self.colours), caption=self.caption)


@dataclass(frozen=True)
class Decorations:
    """What is drawn over a view besides its boxes, keyed by program path: a `fill` (a measure or
    categories), `notes` on the boxes (what the partitioner did: `partition.notes_of`), the stages'
    `links` (stage -> `link_tables.export_entry`, for JSON and HTML) and the user's `sources` (file
    -> text, an HTML page's panel)."""

    fill: Measured | Categorised | None = None
    notes: Mapping[str, str] = field(default_factory=dict)
    links: Mapping[str, Any] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)

    def annotations(self, view: ScopedGraph) -> list[tuple[str, str]]:
        """The notes by drawn path, as a layout carries them (`Layout.annotations`)."""
        return sorted(view.drawn(self.notes).items())


@dataclass(frozen=True)
class DrawRequest:
    """One drawing asked of the drawer: `view` laid out as `options` say, with `decorations`.
    `opened`: the clusters drawn open (None: as the window opens them, or `options.collapse` levels,
    and `options.expand`); `layout`: one already made of `view` (the window's own), drawn as it is;
    `page`: every body laid out ahead too, for an HTML page."""

    view: ScopedGraph
    options: DrawOptions = field(default_factory=DrawOptions)
    decorations: Decorations = field(default_factory=Decorations)
    opened: frozenset[str] | None = None
    layout: Layout | None = None
    page: bool = False

    def expanded(self) -> frozenset[str]:
        """The clusters to open (ValueError for an `--expand` name no group has)."""
        if self.opened is not None:
            return self.opened
        return opened(self.view.graph, self.options.collapse, self.options.expand)


@dataclass(frozen=True)
class Drawing:
    """A laid-out view, ready to write in any format, its decorations on the drawn paths; `notes`
    are for the person who asked. `bodies`: every body laid out ahead (an HTML page's), when asked."""

    view: ScopedGraph
    layout: Layout
    options: DrawOptions
    highlight: frozenset[str] = frozenset()
    overlay: Overlay | None = None
    decorations: Decorations = field(default_factory=Decorations)
    bodies: BodyLayouts | None = None

    @property
    def graph(self) -> Graph:
        return self.view.graph

    @classmethod
    def of(cls, request: DrawRequest, layout: Layout, bodies: BodyLayouts | None = None) -> Drawing:
        """`request` placed by `layout`; ValueError when the highlight matches nothing."""
        view, options = request.view, request.options
        marks: frozenset[str] = frozenset()
        if options.highlight:
            marks = highlight_paths(view.graph, layout, options.highlight)
            if not marks:
                raise ValueError(f"--highlight {options.highlight!r} matches no node of {view.graph.function}")
        fill = request.decorations.fill
        overlay = fill.overlay(view) if fill is not None else None
        return cls(view, layout, options, marks, overlay, request.decorations, bodies)

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

    def write(self, path: str, fmt: str | None = None) -> str:
        """Write the drawing to `path` (the suffix or `fmt` picks the format); returns the format.
        JSON carries the stages' links by its nodes' paths; an HTML page needs `bodies`."""
        o = self.options
        if resolve_format(path, fmt) == "html":
            write_text(path, self.page())
            return "html"
        links = {stage: {**entry, "lines": self.view.drawn(entry["lines"])} for stage, entry in self.decorations.links.items()}
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
            links=links or None,
            overlay=self.overlay,
        )

    def page(self) -> str:
        """The drawing as an interactive HTML page (`render.html`): every body laid out ahead. Its
        links stay by program path: the page finds a box's equation by dropping the groups."""
        from jaxscope.render.html import PageTexts, render_html

        if self.bodies is None:
            raise ValueError("an HTML page lays out every body ahead: ask the drawer for a page (DrawRequest.page)")
        o, d = self.options, self.decorations
        return render_html(
            self.graph, self.bodies, theme=o.theme, legend=o.legend, overlay=self.overlay, texts=PageTexts(dict(d.sources), dict(d.links))
        )

    def svg(self) -> str:
        """The drawing as one SVG document (tooltips on), as the svg export writes it."""
        from jaxscope.render.svg import render_svg

        o = self.options
        return render_svg(
            self.graph, self.layout, theme=o.theme, legend=o.legend, highlight=self.highlight, long_edges=o.long_edges, overlay=self.overlay
        )
