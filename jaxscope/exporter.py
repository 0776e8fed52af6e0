"""Write a laid-out graph to a file: svg, png, pdf, dot or json, picked by suffix or `fmt`.

* ``svg``: `svg.render_svg` (deterministic, self-contained, no Graphviz).
* ``png`` / ``pdf``: that SVG rasterised by QtSvg (`jaxscope.qt.graph.raster`, imported only for
  these two formats, so the others never load Qt). PNG size is ``dpi / 96`` pixels per px, the
  long side capped at `PNG_MAX_PX`; a PNG scaled down so far that its labels would be under
  `MIN_LABEL_PX` high is an overview: boxes, edges and clusters painted straight from the layout
  (`raster.overview_png`), without labels.
* ``dot``: `render.dot.render_dot`, for Graphviz users.
* ``json``: the graph and its layout as plain data, for tests, bug reports and other tools::

      {
       "graph": {...},          # schema.graph.Graph via codec.to_jsonable: function, root, bodies
       "layout": {...} | null,  # schema.layout.Layout the same way: width, height, nodes, edges, clusters
       "links": {stage: {"text": str, "lines": {path: [line, ...]}}},  # each equation's own lines
       "schema_version": 1      # schema.graph.SCHEMA_VERSION
      }

  Keys are sorted and indented by one space, text is UTF-8 (non-ASCII kept; a lone surrogate,
  which UTF-8 cannot hold, as a ``\\udXXX`` escape), so the file is deterministic and diffs well.
  The text is faithful, not sanitised: it is data, not markup. `read_json` turns it back into ``(Graph, Layout | None)``.

Files are written atomically: to a temporary file in the target directory, then `os.replace`,
so a reader (a docs build, an editor) never sees half a file and a failed export leaves any
previous file untouched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from typing import Any

from jaxscope.layout import labels
from jaxscope.layout.edge_shape import check_long_edges
from jaxscope.render.dot import render_dot
from jaxscope.render.overlay import Overlay
from jaxscope.render.styles import get_theme
from jaxscope.render.svg import render_svg, svg_parts
from jaxscope.schema.codec import from_jsonable, to_jsonable
from jaxscope.schema.graph import SCHEMA_VERSION, Graph
from jaxscope.schema.graph_wire import graph_from_readable
from jaxscope.schema.layout import Layout

FORMATS: tuple[str, ...] = ("svg", "png", "pdf", "dot", "json", "html")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SUFFIXES = {"svg": "svg", "png": "png", "pdf": "pdf", "dot": "dot", "gv": "dot", "json": "json", "html": "html", "htm": "html"}


def export(
    graph: Graph,
    layout: Layout | None,
    path: str,
    *,
    theme: str = "light",
    dpi: int = 96,
    fmt: str | None = None,
    title: str | None = None,
    legend: bool = False,
    highlight: frozenset[str] = frozenset(),
    long_edges: str = "auto",
    links: dict[str, Any] | None = None,
    overlay: Overlay | None = None,
) -> str:
    """Write `graph` (placed by `layout`) to `path`; returns the format written. Drawn nodes whose
    base path is in `highlight` (see `highlight_paths`) get an accent outline in svg/png/pdf; long
    edges are drawn as `long_edges` says (`svg.render_svg`); JSON carries `links` (stage -> the
    text and each equation's lines in it, `link_tables.export_entry`); an `overlay` colours the
    boxes by a measure, with its scale (svg, and png/pdf drawn from it).

    ValueError for an unknown format, theme or `long_edges`, a non-positive dpi, or a drawing
    format without a layout; OSError when the file cannot be written.
    """
    fmt = resolve_format(path, fmt)
    get_theme(theme)  # fail before any work
    check_long_edges(long_edges)
    if fmt in ("svg", "png", "pdf") and layout is None:
        raise ValueError(f"{fmt} export needs a layout")
    if fmt == "html":  # each body laid out on its own: `jaxscope.drawing.Drawing.write` makes those
        raise ValueError("html export goes through jaxscope.drawing (it lays out every group ahead)")
    if fmt == "svg":
        assert layout is not None
        write_text(
            path,
            svg_parts(graph, layout, theme=theme, title=title, legend=legend, highlight=highlight, long_edges=long_edges, overlay=overlay),
        )
    elif fmt == "dot":
        write_text(path, render_dot(graph, layout, theme=theme))
    elif fmt == "json":
        write_text(path, to_json(graph, layout, links))
    else:
        assert layout is not None
        _write_image(
            graph,
            layout,
            path,
            fmt,
            dpi,
            theme=theme,
            title=title,
            legend=legend,
            highlight=highlight,
            long_edges=long_edges,
            overlay=overlay,
        )
    return fmt


def _write_image(
    graph: Graph,
    layout: Layout,
    path: str,
    fmt: str,
    dpi: int,
    *,
    theme: str,
    title: str | None,
    legend: bool,
    highlight: frozenset[str],
    long_edges: str,
    overlay: Overlay | None,
) -> None:
    """A PNG or PDF: painted by Qt from the SVG, or, for a PNG too big to read, from the layout."""
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    # an overview: painted from the layout, no SVG written and parsed again
    if fmt == "png" and overlay is None and labels.FONT_SIZE * png_scale(layout, dpi) < MIN_LABEL_PX:
        from jaxscope.qt.graph.raster import overview_png

        write_output(
            path,
            check=_ends_with(b"IEND", "PNG"),
            write=lambda tmp: overview_png(
                graph,
                layout,
                tmp,
                theme=theme,
                title=title,
                legend=legend,
                highlight=highlight,
                dpi=dpi,
                max_px=PNG_MAX_PX,
                long_edges=long_edges,
            ),
        )
        return
    svg_text = render_svg(  # no image shows a tooltip
        graph,
        layout,
        theme=theme,
        title=title,
        legend=legend,
        highlight=highlight,
        tooltips=False,
        long_edges=long_edges,
        overlay=overlay,
    )
    from jaxscope.qt.graph.raster import svg_to_pdf, svg_to_png  # the one place core touches Qt

    if fmt == "png":
        write_output(path, lambda tmp: svg_to_png(svg_text, tmp, dpi=dpi, max_px=PNG_MAX_PX), _ends_with(b"IEND", "PNG"))
    else:
        write_output(path, lambda tmp: svg_to_pdf(svg_text, tmp, title=title or graph.function), _ends_with(b"%%EOF", "PDF"))


PNG_MAX_PX = 16_000  # the long side of a PNG, whatever its dpi (a 50k-equation graph is a million px tall)
MIN_LABEL_PX = 2.0  # node labels smaller than this in a PNG are left out: a grey smudge that costs seconds


def png_scale(layout: Layout, dpi: int) -> float:
    """Pixels per px of a PNG of `layout` at `dpi`, once its long side is capped at `PNG_MAX_PX`."""
    scale = dpi / 96.0
    longest = max(layout.width, layout.height, 1.0) * scale
    return scale * min(1.0, PNG_MAX_PX / longest)


def highlight_paths(graph: Graph, layout: Layout, query: str) -> frozenset[str]:
    """The drawn base paths matching a graph search (``--highlight``): a primitive, a name, a shape,
    ``:12`` or a bare ``12`` for a source line. A match inside a collapsed sub-graph marks the drawn
    node that holds it, so a line stays findable at any ``--collapse`` depth."""
    from jaxscope.analysis.guide import find  # networkx: only when highlighting

    query = query.strip()
    if query.isdigit():
        query = f":{query}"
    drawn = {box.path.partition("#")[0] for box in layout.nodes}
    found: set[str] = set()
    for path in find(graph, query):
        while path not in drawn and "/" in path:
            path = path.rsplit("/", 1)[0].rsplit(":", 1)[0]  # "e4:1/e2:0/e0" -> "e4:1/e2", its owner
        if path in drawn:
            found.add(path)
    return frozenset(found)


def resolve_format(path: str, fmt: str | None = None) -> str:
    """The format named by `fmt`, or else by the suffix of `path`; ValueError listing FORMATS."""
    if fmt is not None:
        name = fmt.lower().lstrip(".")
        if name in FORMATS:
            return name
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    what = f"suffix {'.' + suffix!r}" if suffix else "no suffix"
    raise ValueError(f"cannot tell the format from {path!r} ({what}); use one of: {', '.join(FORMATS)}")


def to_json(graph: Graph, layout: Layout | None, links: dict[str, Any] | None = None) -> str:
    """The ``json`` export text (see the module docstring)."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "graph": to_jsonable(graph),
        "layout": to_jsonable(layout) if layout is not None else None,
        "links": links or {},
    }
    text = json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False)
    # A lone surrogate (only ever inside a JSON string) cannot be written as UTF-8: escape it.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def read_json(text: str | bytes) -> tuple[Graph, Layout | None]:
    """Parse a ``json`` export back; ValueError for a schema newer than this reader."""
    data: Any = json.loads(text)
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"export schema {version!r} is newer than supported ({SCHEMA_VERSION})")
    graph = graph_from_readable(data["graph"])
    layout = from_jsonable(Layout, data["layout"]) if data.get("layout") is not None else None
    return graph, layout


def write_text(path: str, text: str | list[str]) -> None:
    """Write `text` (or its slices) to `path` as `write_output` does."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for part in [text] if isinstance(text, str) else text:  # a slice at a time: short GIL holds
                fh.write(part)

    write_output(path, write)


def write_output(path: str, write: Callable[[str], object], check: Callable[[str], None] | None = None) -> None:
    """Write an output file so that no failure costs the previous one, and through links.

    `write(tmp)` writes a temporary file, which is synced to disk (a full disk shows here at the
    latest) and, with `check`, checked whole (`check(tmp)` raises for a file cut short by a writer
    that ignores write errors, as Qt's PDF writer does). Only then does it become the output: moved
    over a regular file atomically; for a symlink, over the file it points to (the link stays); for
    a file with several hard links, copied into it (every link sees it; a failure while copying can
    cut that file short); for anything else (a FIFO, a device), copied into it, never replacing it.
    """
    target = os.path.realpath(path)
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    regular = info is None or stat.S_ISREG(info.st_mode)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) if regular else None, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if check is not None:
            check(tmp)
        if regular and (info is None or info.st_nlink == 1):
            os.chmod(tmp, _file_mode(target))
            os.replace(tmp, target)
        else:
            with open(tmp, "rb") as src, open(target, "wb") as dst:  # into the existing file, device or pipe
                shutil.copyfileobj(src, dst, 1 << 20)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _ends_with(marker: bytes, what: str) -> Callable[[str], None]:
    """A `write_output` check: the file's last KB holds `marker` (a PDF's ``%%EOF``, a PNG's ``IEND``)."""

    def check(tmp: str) -> None:
        with open(tmp, "rb") as fh:
            fh.seek(max(0, os.path.getsize(tmp) - 1024))
            if marker not in fh.read():
                raise OSError(f"the {what} was cut short while it was written (is the disk full?)")

    return check


def _file_mode(target: str) -> int:
    """Keep an existing file's permissions; a new file gets the usual 0666 minus the umask."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
