"""One selection across the window's panes: nodes picked in the graph mark their source, jaxpr
and IR lines and show their call chain (the source pane opens any file of it); a line clicked in
the source (the user's file or a library's), the jaxpr or an IR text selects its nodes; a guide
link, a diagnostic or a run result selects nodes anywhere in the graph, expanding the clusters
that hide them (selected again once that layout is on screen)."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtWidgets import QStatusBar

from jaxscope.analysis.guide import find
from jaxscope.analysis.scopes import graph_pairs, read_scope
from jaxscope.ir import linking
from jaxscope.ir.hlo_links import IrLinks
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.qt.panes.ir_tabs import IrTabs
from jaxscope.qt.panes.jaxpr_view import QtJaxprView
from jaxscope.qt.panes.node_inspector import NodeInspector
from jaxscope.qt.panes.run_panel import RunPanel
from jaxscope.qt.panes.source_frames import SourceFrames
from jaxscope.qt.panes.source_view import QtSourceView
from jaxscope.schema.graph import Graph, owner_chain, resolve
from jaxscope.schema.trace import Diagnostic, TraceResult
from jaxscope.workbench import nearest_visible


class LinkedSelection:
    """The one selection across the panes it is given, read from the workbench (through `session`);
    a group picked is shown by `show_group` (the model's structure), the IR links are `ir_links()`."""

    def __init__(
        self,
        session: TraceSession,
        graph: QtGraphView,
        source: QtSourceView,
        source_frames: SourceFrames,
        inspector: NodeInspector,
        jaxpr: QtJaxprView,
        ir: IrTabs,
        ir_links: Callable[[], dict[str, IrLinks]],
        run_panel: RunPanel,
        show_group: Callable[[str, list[str]], None],
        status: QStatusBar,
    ) -> None:
        self.session, self.graph, self.source, self.source_frames, self.inspector = session, graph, source, source_frames, inspector
        self.jaxpr, self.ir, self.ir_links, self.run_panel, self.show_group, self.status = (
            jaxpr,
            ir,
            ir_links,
            run_panel,
            show_group,
            status,
        )
        self.by_line: dict[int, list[str]] = {}  # source line of the open file -> its nodes
        session.traced.connect(lambda prepared, _previous: self._traced(prepared.result))
        self.pending: list[str] = []  # select these once the layout that reveals them is shown
        self._paired: tuple[Graph | None, dict[str, list[str]]] = (None, {})

    def _traced(self, result: TraceResult) -> None:
        self.by_line = linking.nodes_by_line(result.graph, self.session.doc.path)

    def graph_selected(self, shown: list[str]) -> None:
        """Nodes picked in the graph pane (its paths: a module group stands for its equations)."""
        self.mark(self.session.doc.to_real(shown), shown)

    def mark(self, paths: list[str], shown: list[str] | None = None) -> None:
        """Mark the lines of the program's nodes `paths` in every pane; `shown`: as the graph pane
        names them, when they were picked there."""
        if self.session.doc.graph is None or self.session.links is None:
            return
        sources = self.session.links.sources
        lines = sorted({sources[p].line for p in paths if p in sources and linking.same_file(sources[p].file, self.session.doc.path)})
        self.source.mark_lines(lines)
        self.jaxpr.mark_lines(sorted({ln for p in paths for ln in self.session.links.lines_for_node(p)}))
        exact: dict[str, list[int]] = {}  # stage -> the selection's own lines, where the links are per equation
        for stage, links in self.ir_links().items():
            lines = links.lines_for_nodes(paths)
            self.ir.views[stage].mark_lines(lines)
            if links.exact is not None:
                exact[stage] = lines
        self.run_panel.show_values(paths[0] if len(paths) == 1 else "")
        if shown is not None and len(shown) == 1 and len(paths) != 1:  # a module group
            self.show_group(shown[0], paths)
        else:
            self._show_chain(paths, exact)

    def _show_chain(self, paths: list[str], exact: dict[str, list[int]]) -> None:
        """One node: the Node pane; for an equation, its frames over the source pane (a library file
        shown follows it), and what lowering did with it when it has no lines of its own in an IR text."""
        frames = self.source_frames
        node = None
        if len(paths) == 1 and self.session.doc.shown is not None:
            try:  # as drawn: the same node, with what the partitioner did when that is shown
                node = resolve(self.session.doc.shown, self.session.doc.to_shown(paths)[0])[1]
            except (KeyError, IndexError, ValueError):
                node = None
        if node is None:
            frames.show_chain(())
            self.inspector.show_nothing()
            return
        paired = tuple(self._pairs().get(paths[0], ())) if "/" not in paths[0] else ()
        own = {"jaxpr": self.session.links.all_lines_for_node(paths[0])} if self.session.links else {}
        self.inspector.show_node(paths[0], node, {**own, **exact} if node.kind == "eqn" else {}, list(paired))
        if node.kind != "eqn":
            frames.show_chain(())
            return
        scope = read_scope(node.name_stack)
        frames.show_chain(node.frames, node.label, scope.path, scope.pass_, paired)
        if frames.showing_other():
            here = [f for f in node.frames if f.file == frames.other.path]
            if here:
                frames.other.mark_lines([here[-1].line])
        missing = [stage for stage, lines in exact.items() if not lines]
        if missing and not node.subgraphs:  # a jit or cond owner lowers to its equations' ops, not its own
            why = {
                "stablehlo": "it lowers to no StableHLO op (e.g. x**1, a same-type convert)",
                "compiled": "XLA removed it or merged it into another equation's instruction",
            }
            said = "; ".join(f"no {s} line: {why.get(s, s)}" for s in missing)
            self.status.showMessage(f"{paths[0]} {node.label}: {said}", 8000)

    def select_nodes(self, paths: list[str]) -> None:
        """Select the program's nodes `paths` in the graph pane (where drawn, else what holds them)."""
        paths = self.session.doc.to_shown(paths)
        visible = self.session.doc.visible_paths()
        shown = sorted({v for p in paths if (v := nearest_visible(p, visible)) is not None})
        # an expanded owner (e.g. a `jit` drawn as a cluster) stands for what is drawn inside it
        shown += sorted(v for p in paths if p in self.session.doc.expanded for v in visible if v.startswith(p + ":"))
        self.graph.blockSignals(True)
        self.graph.select_paths(shown)
        self.graph.blockSignals(False)

    def source_line_clicked(self, line: int) -> None:
        if self.session.doc.graph is None or self.session.links is None:
            return
        own = self.by_line.get(line, [])
        # no equation of its own: a call (`block(x)`) selects the equations under it
        paths = own or linking.nodes_for_frame(self.session.doc.graph, self.session.doc.path, line)
        self.select_nodes(paths)
        self.source.mark_lines([line], scroll=False)
        self.jaxpr.mark_lines(sorted({ln for p in paths for ln in self.session.links.lines_for_node(p)}))
        for stage, links in self.ir_links().items():
            lines = links.lines_for_source(self.session.doc.path, line) if own else links.lines_for_nodes(paths)
            self.ir.views[stage].mark_lines(lines)

    def _pairs(self) -> dict[str, list[str]]:
        """Forward <-> backward equations of the document's graph, made once per graph."""
        graph = self.session.doc.graph
        if graph is None:
            return {}
        if self._paired[0] is not graph:
            self._paired = (graph, graph_pairs(graph))
        return self._paired[1]

    def frame_line_clicked(self, file: str, line: int) -> None:
        """A line of a file of the chain (a library's): the equations that came through it."""
        if self.session.doc.graph is None:
            return
        paths = linking.nodes_for_frame(self.session.doc.graph, file, line)
        self.select_nodes(paths)
        self.mark(paths)  # their jaxpr and IR lines, as a selection in the graph marks them
        self.source_frames.other.mark_lines([line], scroll=False)
        self.status.showMessage(f"{len(paths)} equation{'s' if len(paths) != 1 else ''} came through line {line}", 4000)

    def jaxpr_line_clicked(self, line: int) -> None:
        if self.session.doc.graph is None or self.session.links is None:
            return
        paths = self.session.links.nodes_for_line(line)
        self.select_nodes(paths)
        sources = self.session.links.sources
        self.source.mark_lines(sorted({sources[p].line for p in paths if p in sources}))
        self.jaxpr.mark_lines([line], scroll=False)

    def reveal(self, *paths: str) -> bool:
        """Expand the clusters that hide `paths` (diagnostics, tutorials); True when a re-layout started.

        The paths are selected again once the new layout is on screen."""
        chain = {owner for path in self.session.doc.to_shown(list(paths)) for owner in owner_chain(path)}
        if not chain or chain <= self.session.doc.expanded or self.session.doc.shown is None:
            return False
        self.pending = list(paths)
        self.session.relayout(self.session.doc.expanded | chain)
        return True

    def show_pending(self) -> None:
        """The nodes a reveal waited for, now drawn: selected, their lines marked."""
        paths, self.pending = self.pending, []
        if paths:
            self.select_nodes(paths)
            self.mark(paths)

    def show_nodes(self, paths: list[str]) -> None:
        """Select nodes by path, expanding the clusters that hide them."""
        self.reveal(*paths)
        self.select_nodes(paths)
        self.mark(paths)

    def show_query(self, query: str) -> list[str]:
        """A guide link: select what `query` finds anywhere in the graph, expanding what hides it."""
        if self.session.doc.graph is None:
            return []
        paths = find(self.session.doc.graph, query)
        self.show_nodes(paths)
        line = re.match(r"^\s*:(\d+)\s*$", query)
        if line:
            self.source.mark_lines([int(line.group(1))])
        self.status.showMessage(f"{len(paths)} node{'s' if len(paths) != 1 else ''} for {query!r}", 4000)
        return paths

    def show_diagnostic(self, diagnostic: Diagnostic) -> None:
        """Select the diagnostic's nodes (expanding what hides them) and mark its lines."""
        if diagnostic.nodes:
            self.show_nodes(list(diagnostic.nodes))
        lines = sorted({loc.line for loc in diagnostic.locations if linking.same_file(loc.file, self.session.doc.path)})
        if lines:
            self.source.mark_lines(lines)
