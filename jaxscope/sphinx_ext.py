"""Sphinx directive ``jaxscope-graph``: draw a function's jaxpr graph at docs build time.

In ``conf.py``: ``extensions = ["jaxscope.sphinx_ext"]``; in a page::

    .. jaxscope-graph:: ../examples/control_flow.py::step
       :args: f32[4,8], f32[8,8], training=False
       :theme: light            (light | dark | transparent)
       :collapse: 1             (sub-graph depth to expand; default automatic)
       :flat:                   (the program's own structure; by default a model is drawn as the window draws it)
       :scopes:                 (group any program by its calls and scopes, as `export --scopes`)
       :interactive:            (the HTML page: expand, search, click a box for its source; in a frame)
       :direction: LR           (TB | LR)
       :highlight: tanh         (a graph search: primitive, name, :LINE)
       :long-edges: whole       (auto | ends | whole: as for ``jaxscope export --long-edges``)
       :legend:
       :caption: The step function, unrolled.   (makes a figure)
       :alt: text for screen readers
       :width: / :align: / :class: / :name:  as for ``image``

``sphinx.ext.graphviz`` is no help (the pygraphviz wheel ships no ``dot`` binary, and this is
jaxscope's own drawing). The target is traced in a worker process, as ``jaxscope export`` does.
A relative file path is taken from ``jaxscope_graph_root`` (default: the source directory).
Images are rendered into ``<doctreedir>/jaxscope/`` under a name hashed from the target, the
options, the target file's bytes and the versions, so a rebuild reuses them; the normal image
machinery copies them into the output's ``_images/``. ``jaxscope_graph_formats`` (default
``["svg"]``) adds e.g. ``"pdf"`` for LaTeX builders. Failures (the user's code raised, a bad
spec) are build warnings naming the page and line, not tracebacks.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import jaxscope
from jaxscope.layout.edge_shape import LONG_EDGES

logger = logging.getLogger(__name__)
_FORMATS = ("svg", "png", "pdf")


def _choice(values: tuple[str, ...]) -> Any:
    """An option converter accepting `values` in any case and giving back their own spelling."""
    canonical = {v.lower(): v for v in values}
    return lambda arg: canonical[directives.choice(arg, tuple(canonical))]


class JaxscopeGraph(SphinxDirective):
    """``.. jaxscope-graph:: TARGET``: an image (a figure with ``:caption:``) of TARGET's graph."""

    required_arguments = 1
    final_argument_whitespace = False
    option_spec = {
        "args": directives.unchanged,
        "theme": _choice(("light", "dark", "transparent")),
        "collapse": directives.nonnegative_int,
        "scopes": directives.flag,
        "flat": directives.flag,
        "interactive": directives.flag,
        "direction": _choice(("TB", "LR")),
        "highlight": directives.unchanged,
        "long-edges": _choice(LONG_EDGES),
        "legend": directives.flag,
        "caption": directives.unchanged,
        "alt": directives.unchanged,
        "width": directives.length_or_percentage_or_unitless,
        "align": _choice(("left", "center", "right")),
        "class": directives.class_option,
        "name": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        target = self.arguments[0]
        try:
            resolved, stem, missing = self._plan(target)
            if missing:
                self._render(resolved, missing)
        except Exception as exc:  # the user's code, a bad spec, a missing file: a warning, not a crash
            message = str(exc).strip() or type(exc).__name__
            logger.warning("jaxscope-graph %s: %s", target, message, location=self.get_location(), type="jaxscope")
            return []
        return self._nodes(target, stem)

    # ------------------------------------------------------------------ render

    def _resolve(self, target: str) -> tuple[str, str | None]:
        """The target with its file made absolute, and that file (None for ``pkg.mod:func``)."""
        file, sep, func = target.partition("::")
        if not sep and not target.endswith(".py"):
            return target, None  # a module target: importable from the build's environment
        root = self.config.jaxscope_graph_root or str(self.env.srcdir)
        path = os.path.normpath(os.path.join(root, file))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {path} (relative paths start at {root})")
        return path + sep + func, path

    def _plan(self, target: str) -> tuple[str, str, dict[str, str]]:
        """The resolved target, the staged file stem, and the formats still to render (format -> path)."""
        resolved, file = self._resolve(target)
        if file is not None:
            self.env.note_dependency(file)  # editing the example re-reads this page
        key: dict[str, Any] = {o: self.options.get(o) for o in ("args", "theme", "collapse", "direction", "highlight", "long-edges")}
        key.update(
            target=target,
            legend="legend" in self.options,
            scopes="scopes" in self.options,
            flat="flat" in self.options,
            interactive="interactive" in self.options,
            versions=_versions(),
        )
        if file is not None:
            with open(file, "rb") as fh:
                key["source"] = hashlib.sha256(fh.read()).hexdigest()
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
        out_dir = os.path.join(str(self.env.doctreedir), "jaxscope")
        os.makedirs(out_dir, exist_ok=True)
        stem = os.path.join(out_dir, f"jaxscope-{digest}")
        formats = self._formats()
        cache = file is not None  # a module target's source is unknown: always render it
        missing = {f: f"{stem}.{f}" for f in formats if not (cache and os.path.exists(f"{stem}.{f}"))}
        return resolved, stem, missing

    def _render(self, resolved: str, missing: dict[str, str]) -> None:
        from jaxscope.api import graph

        image = graph(
            resolved,
            args_spec=self.options.get("args"),
            theme=self.options.get("theme", "light"),
            collapse=self.options.get("collapse"),
            direction=self.options.get("direction", "TB"),
            legend="legend" in self.options,
            highlight=self.options.get("highlight", ""),
            long_edges=self.options.get("long-edges", "auto"),
            scopes="scopes" in self.options,
            flat="flat" in self.options,
            interactive="interactive" in self.options,
        )
        for fmt, path in missing.items():
            if fmt == "html":
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(image.page)
            else:
                image.save(path, fmt=fmt, dpi=192)

    def _formats(self) -> list[str]:
        """An interactive graph is its HTML page; else the configured image formats."""
        if "interactive" in self.options:
            return ["html"]
        return [f for f in self.config.jaxscope_graph_formats if f in _FORMATS] or ["svg"]

    # ------------------------------------------------------------------ nodes

    def _nodes(self, target: str, stem: str) -> list[nodes.Node]:
        if "interactive" in self.options:  # the page in its own frame, inline: the built docs need no copy of it
            import html

            with open(f"{stem}.html", encoding="utf-8") as fh:
                page = fh.read()
            frame = (
                f'<iframe class="jaxscope-graph" title="{html.escape(target, quote=True)}" srcdoc="{html.escape(page, quote=True)}" '
                'style="width:100%;height:640px;border:1px solid #d0d7de" sandbox="allow-scripts"></iframe>'
            )
            return [nodes.raw("", frame, format="html")]
        formats = self._formats()
        docdir = os.path.dirname(str(self.env.doc2path(self.env.docname)))
        uri = os.path.relpath(stem, docdir).replace(os.sep, "/") + (f".{formats[0]}" if len(formats) == 1 else ".*")
        image = nodes.image(uri=uri, alt=self.options.get("alt", f"jaxscope graph of {target}"))
        for opt in ("width", "align"):
            if opt in self.options:
                image[opt] = self.options[opt]
        image["classes"] += ["jaxscope-graph", *self.options.get("class", [])]
        self.set_source_info(image)
        caption = self.options.get("caption")
        if not caption:
            self.add_name(image)
            return [image]
        figure = nodes.figure("", image)
        self.set_source_info(figure)
        if "align" in self.options:
            figure["align"] = self.options["align"]
        text_nodes, messages = self.state.inline_text(caption, self.lineno)
        figure += nodes.caption(caption, "", *text_nodes)
        self.add_name(figure)
        return [figure, *messages]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"jaxscope": jaxscope.__version__}
    for name in ("jax", "jaxlib"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = ""
    return out


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive and its two settings; safe for parallel reads and writes."""
    app.add_directive("jaxscope-graph", JaxscopeGraph)
    app.add_config_value("jaxscope_graph_root", None, "env", types=(str, type(None)))
    app.add_config_value("jaxscope_graph_formats", ["svg"], "env", types=(list, tuple))
    return {"version": jaxscope.__version__, "parallel_read_safe": True, "parallel_write_safe": True}
