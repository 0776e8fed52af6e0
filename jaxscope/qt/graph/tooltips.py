"""What the graph view's tooltips say: a box's node (its label, shapes, source line, what a
double-click does, its long edges drawn as ends) and a cluster's title. Plain text, made rich
(escaped, monospace) only by `tooltip_html`."""

from __future__ import annotations

import html

from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.render.svg import node_tooltip


def tooltip_html(text: str) -> str:
    """QToolTip reads rich text: user strings (labels, params, file names) are escaped, and the
    lines kept as they are, in monospace."""
    return f"<pre>{html.escape(text, quote=False)}</pre>"


def box_tooltip(model: SceneModel, i: int, long_ends_shown: bool) -> str:
    """Box `i`'s tooltip; `long_ends_shown`: its long edges are drawn as their two ends now."""
    rec = model.nodes[i]
    if rec.node is None:
        return rec.path
    text = node_tooltip(rec.node, rec.base)
    if rec.owner:
        text += "\ndouble-click to expand"
    long = len(model.long_edges_at().get(rec.base, ())) if long_ends_shown else 0
    if long:
        them = "them" if long > 1 else "it"
        text += (
            f"\n{long} long edge{'s' if long > 1 else ''} drawn as {'their' if long > 1 else 'its'} ends: click the box to see {them} whole"
        )
    return text


def cluster_tooltip(model: SceneModel, path: str) -> str:
    title = next(c.title for c in model.clusters if c.path == path)
    return f"{title}\npath: {path}\ndouble-click to collapse"
