"""Linking IR text lines to graph nodes and source lines.

Nodes: exactly, per equation and call site, by the marks the worker lowered with (`hlo_marks`),
when it sent them. Else (and always for source lines) through the locations XLA keeps: a
StableHLO op and an optimized-HLO instruction both carry the jaxpr op name ("jit(f)/sin") and the
user's frame; an equation carries its primitive and the same frame. (file, line, primitive) is
then the join key, falling back to (file, line) when XLA renamed the op. Which frames are the
user's is decided by the graph itself: the files its equations came from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jaxscope.ir import hlo_marks, linking
from jaxscope.ir.hlo_locations import Frame, parse_stablehlo
from jaxscope.ir.hlo_module import parse_hlo
from jaxscope.schema.graph import Graph


@dataclass(frozen=True, slots=True)
class FusionInfo:
    """One kernel XLA made: the fused instructions' equations and source lines."""

    name: str
    kind: str
    line: int  # the fusion instruction's line in the HLO text
    n_ops: int
    nodes: tuple[str, ...]
    source_lines: tuple[int, ...]  # lines of the open file


class IrLinks:
    """Both directions between the lines of one IR text and the graph's nodes and source lines."""

    def __init__(
        self, graph: Graph, ops: dict[int, tuple[str, tuple[str, int, int] | None]], exact: dict[int, list[str]] | None = None
    ) -> None:
        self._graph = graph
        self.exact = exact  # IR line -> its own equations (`hlo_marks.line_paths`), if the worker marked them
        self._exact_lines: dict[str, list[int]] = {}
        for n, paths in sorted((exact or {}).items()):
            for path in paths:
                self._exact_lines.setdefault(path, []).append(n)
        self._colours: dict[str, dict[int, int]] = {}  # `colour_index` by file
        self._sources = linking.node_sources(graph)
        labels = linking.node_labels(graph)
        self._nodes_at: dict[tuple[str, int], list[str]] = {}
        for path, loc in self._sources.items():
            self._nodes_at.setdefault((loc.file, loc.line), []).append(path)
        self._labels = labels
        self._nodes_by_key: dict[tuple[str, int, str], list[str]] | None = None  # made on first use
        self._ops = ops  # IR line -> (primitive, user frame)
        self._by_key: dict[tuple[str, int, str], list[int]] = {}
        self._by_line: dict[tuple[str, int], list[int]] = {}
        for n, (prim, frame) in sorted(ops.items()):
            if frame is None:
                continue
            self._by_key.setdefault((frame[0], frame[1], prim), []).append(n)
            self._by_line.setdefault((frame[0], frame[1]), []).append(n)

    def primitive_of(self, n: int) -> str | None:
        """The primitive IR line `n` was lowered from, as its location says (None: no op there)."""
        op = self._ops.get(n)
        return op[0] if op is not None else None

    def source_for_line(self, n: int) -> tuple[str, int] | None:
        op = self._ops.get(n)
        return (op[1][0], op[1][1]) if op is not None and op[1] is not None else None

    def lines_for_source(self, file: str, line: int) -> list[int]:
        return list(self._by_line.get((file, line), ()))

    def lines_for_nodes(self, paths: list[str]) -> list[int]:
        """IR lines of the equations at `paths`: their own (exact), else same source line and
        primitive, else same source line."""
        out: set[int] = set()
        if self.exact is not None:
            for path in paths:
                out.update(self._exact_lines.get(path, ()))
            return sorted(out)
        for path in paths:
            loc = self._sources.get(path)
            if loc is None:
                continue
            exact = self._by_key.get((loc.file, loc.line, self._labels.get(path, "")))
            out.update(exact if exact else self._by_line.get((loc.file, loc.line), ()))
        return sorted(out)

    def nodes_for_line(self, n: int) -> list[str]:
        """Equations behind IR line `n`: its own (exact: a fused or merged instruction names every
        equation it holds), else same source line and primitive, else all of that line."""
        if self.exact is not None:
            return list(self.exact.get(n, ()))
        op = self._ops.get(n)
        if op is None:
            return []
        prim, frame = op
        if frame is None:
            return []
        by_key = self._nodes_by_key
        if by_key is None:  # a loop's source line can hold thousands of equations: no scan of them per IR line
            by_key = {}
            for (file, line), paths in self._nodes_at.items():
                for path in paths:
                    by_key.setdefault((file, line, self._labels.get(path, "")), []).append(path)
            self._nodes_by_key = by_key
        same = by_key.get((frame[0], frame[1], prim))
        return list(same) if same else list(self._nodes_at.get((frame[0], frame[1]), ()))

    def colour_index(self, file: str) -> dict[int, int]:
        """IR line -> the palette index of its source line in `file` (`linking.line_colours`), made
        once per file: on the thread that parsed the IR (tens of thousands of lines at 50k
        equations, which the GUI thread would otherwise take when the text is shown)."""
        got = self._colours.get(file)
        if got is None:
            got = self._colours[file] = self.line_colours(linking.line_colours(self._graph, file), file)
        return got

    def line_colours(self, source_colours: dict[int, int], file: str) -> dict[int, int]:
        """IR line -> the colour index of its source line in `file` (as the source pane colours it)."""
        out = {}
        same: dict[str, bool] = {}  # per distinct file: tens of thousands of ops name a few files
        for n, (_prim, frame) in self._ops.items():
            if frame is not None and frame[1] in source_colours:
                ok = same.get(frame[0])
                if ok is None:
                    ok = same[frame[0]] = linking.same_file(frame[0], file)
                if ok:
                    out[n] = source_colours[frame[1]]
        return out


def _user_files(graph: Graph) -> set[str]:
    return {loc.file for loc in linking.node_sources(graph).values()}


Ops = dict[int, tuple[str, Frame | None]]  # IR line -> (primitive, user frame)


def stablehlo_ops(graph: Graph, text: str) -> Ops:
    """Each op line of a StableHLO text -> (primitive, innermost frame in one of `graph`'s files)."""
    files = _user_files(graph)
    return {n: (op.primitive, op.user) for n, op in parse_stablehlo(text, files.__contains__).ops.items()}


def ops_to_wire(ops: Ops) -> dict[str, Any]:
    """`stablehlo_ops` for the wire (`linking.located_to_wire`): the worker parses the text it
    lowered, so the GUI process does not."""
    return linking.located_to_wire((n, prim, frame) for n, (prim, frame) in ops.items())


def ops_from_wire(data: dict[str, Any]) -> Ops:
    """`ops_to_wire` undone; ValueError if `data` is not that form."""
    return {n: (prim, frame) for n, prim, frame in linking.located_from_wire(data)}


def stablehlo_links(graph: Graph, text: str, ops: dict[str, Any] | None = None, exact: dict[str, Any] | None = None) -> IrLinks:
    """Links for a StableHLO text (`lowered.as_text(debug_info=True)`), from its op map if the
    worker sent it (`ops_to_wire`), else from the text; by equation where `exact` came with it."""
    return IrLinks(graph, linking.sent_or_parsed(ops, ops_from_wire, lambda: stablehlo_ops(graph, text)), _exact(exact))


def _exact(data: dict[str, Any] | None) -> dict[int, list[str]] | None:
    if data is None:
        return None
    try:
        return hlo_marks.from_wire(data)
    except ValueError:
        return None  # links by location, as without marks


Fused = list[tuple[str, str, int, tuple[int, ...]]]  # per fusion: name, kind, its line, its instructions' lines


def hlo_ops(graph: Graph, text: str) -> tuple[Ops, Fused]:
    """An optimized HLO text's op map (as `stablehlo_ops`) and its fusions."""
    parsed = parse_hlo(text, _user_files(graph).__contains__)
    ops = {n: (i.primitive, i.user) for n, i in parsed.instructions.items()}
    return ops, [(f.name, f.kind, f.line, tuple(i.line for i in f.instructions)) for f in parsed.fusions.values()]


def hlo_ops_to_wire(ops: Ops, fused: Fused) -> dict[str, Any]:
    """`hlo_ops` for the wire: the worker parses the text it compiled, so the GUI process does not."""
    return {**ops_to_wire(ops), "fusions": [[name, kind, line, list(lines)] for name, kind, line, lines in fused]}


def hlo_ops_from_wire(data: dict[str, Any]) -> tuple[Ops, Fused]:
    """`hlo_ops_to_wire` undone; ValueError if `data` is not that form."""
    try:
        fused = [(str(name), str(kind), int(line), tuple(map(int, lines))) for name, kind, line, lines in data["fusions"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed fusions: {exc}") from None
    return ops_from_wire({k: v for k, v in data.items() if k != "fusions"}), fused


def hlo_links(
    graph: Graph,
    text: str,
    ops: dict[str, Any] | None = None,
    exact: dict[str, Any] | None = None,
    extend: Callable[[dict[int, list[str]]], dict[int, list[str]]] | None = None,
) -> tuple[IrLinks, Fused]:
    """Links for an optimized HLO text (`compiled.as_text()`) and its fusions, from the worker's
    map if it sent one (`hlo_ops_to_wire`), else from the text; by equation where `exact` came
    (`extend` adds to those: `analysis.hlo_cost.merged_links`)."""
    got, fused = linking.sent_or_parsed(ops, hlo_ops_from_wire, lambda: hlo_ops(graph, text))
    lines = _exact(exact)
    return IrLinks(graph, got, extend(lines) if extend is not None and lines is not None else lines), fused


def fusions(fused: Fused, links: IrLinks, file: str) -> list[FusionInfo]:
    """The fusions (`hlo_links`) with the equations and source lines each one fused, biggest first."""
    found = [(name, kind, at, lines, {p for n in lines for p in links.nodes_for_line(n)}) for name, kind, at, lines in fused]
    # Sorted by one rank of every path found: an unrolled loop's fusions each name the same
    # thousands of equations, and comparing their natural keys again per fusion took ~40 ms at 1k.
    everything = set().union(*(paths for *_, paths in found))
    rank = dict(zip(sorted(everything, key=linking.natural_key), range(len(everything))))
    out = []
    for name, kind, at, lines, paths in found:
        nodes = sorted(paths, key=rank.__getitem__)
        src = sorted({s[1] for n in lines if (s := links.source_for_line(n)) and linking.same_file(s[0], file)})
        out.append(FusionInfo(name, kind, at, len(lines), tuple(nodes), tuple(src)))
    return sorted(out, key=lambda f: (-f.n_ops, f.line))
