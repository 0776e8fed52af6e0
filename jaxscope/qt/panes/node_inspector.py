"""The Node pane: everything about the selected equation in one place: primitive, types, params,
scope and pass, its call chain, its twins in the other pass and its lines in the jaxpr and the IR
texts (what the graph's tooltip and the chain bar show, without hovering); for a module group,
what it holds and the identical layers it repeats."""

from __future__ import annotations

import html
import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from jaxscope.analysis.scopes import read_scope
from jaxscope.schema.graph import Node, group_of


def node_html(path: str, node: Node, lines: dict[str, list[int]], twins: list[str]) -> str:
    """The pane's text; every user string escaped. `lines`: text name -> the node's own lines in it."""
    esc = html.escape
    rows = [("path", path), ("kind", node.kind)]
    if node.in_avals:
        rows.append(("operands", ", ".join(node.in_avals)))
    if node.avals:
        rows.append(("results", ", ".join(node.avals)))
    scope = read_scope(node.name_stack)
    if node.name_stack:
        rows.append(("scope", f"{scope.path or '-'}" + (f" · {scope.pass_}" if scope.pass_ else "") + f"   ({node.name_stack})"))
    if twins:
        rows.append(("other pass", ", ".join(twins)))
    for name, value in node.params:
        rows.append((f"param {name}", value))
    for name, found in lines.items():
        rows.append((f"{name} lines", ", ".join(map(str, found)) if found else "none (lowered to nothing, or merged)"))
    if node.detail:
        rows.append(("note", node.detail))
    chain = [f"{f.library + ' · ' if f.library else ''}{os.path.basename(f.file)}:{f.line} {f.function}" for f in node.frames]
    if not chain and node.source is not None:
        chain = [f"{os.path.basename(node.source.file)}:{node.source.line} {node.source.function}"]
    table = "".join(f"<tr><td style='color:gray; padding-right:10px'>{esc(k)}</td><td><code>{esc(v)}</code></td></tr>" for k, v in rows)
    frames = "".join(f"<li><code>{esc(c)}</code></li>" for c in chain)
    called = f"<p>called from (outermost first):</p><ol>{frames}</ol>" if frames else ""
    return f"<h3>{esc(node.label)}</h3><table>{table}</table>{called}"


def group_html(path: str, node: Node, lines: dict[str, list[int]], twins: list[tuple[str, str]]) -> str:
    """A module group's text (`analysis.scope_view`): what it holds, and its identical instances
    (`twins`: path, title), each a link ("show:PATH"), with "only:PATH" to open this one alone."""
    esc = html.escape
    kind, pass_ = group_of(node) or ("scope", "")
    rows = [("path", path), ("kind", "module group" if kind == "scope" else "inputs or outputs")]
    if pass_:
        rows.append(("pass", pass_))
    if node.name_stack:
        rows.append(("scope", node.name_stack))
    rows += [(name, value) for name, value in node.params]
    rows += [("inputs", str(len(node.in_avals))), ("outputs", str(len(node.avals)))]
    for name, found in lines.items():
        rows.append((f"{name} lines", _spans(found)))
    if node.detail:
        rows.append(("note", node.detail))
    table = "".join(f"<tr><td style='color:gray; padding-right:10px'>{esc(k)}</td><td><code>{esc(v)}</code></td></tr>" for k, v in rows)
    same = ""
    if twins:
        links = " · ".join(esc(title) + " (this one)" if p == path else f"<a href='show:{esc(p)}'>{esc(title)}</a>" for p, title in twins)
        same = (
            f"<p>identical layers (same equations on the same shapes, up to names): {links}</p>"
            f"<p><a href='only:{esc(path)}'>open this one, close the others</a></p>"
        )
    return f"<h3>{esc(node.label)}</h3><table>{table}</table>{same}"


def _spans(lines: list[int]) -> str:
    """1, 2, 3, 7 -> "1-3, 7": a module's lines are runs."""
    out: list[str] = []
    last = -2
    for n in lines:
        if out and n == last + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
        last = n
    return ", ".join(out) if out else "none"


class NodeInspector(QTextBrowser):
    link_clicked = Signal(str)  # a group's "show:PATH" or "only:PATH"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nodeInspector")
        self.setOpenLinks(False)
        self.anchorClicked.connect(lambda url: self.link_clicked.emit(url.toString()))
        self.show_nothing()

    def show_nothing(self) -> None:
        self.setPlainText("Select one box in the graph to see its primitive, types, params, scope, call chain and lines.")

    def show_node(self, path: str, node: Node, lines: dict[str, list[int]], twins: list[str]) -> None:
        self.setHtml(node_html(path, node, lines, twins))

    def show_group(self, path: str, node: Node, lines: dict[str, list[int]], twins: list[tuple[str, str]]) -> None:
        self.setHtml(group_html(path, node, lines, twins))
