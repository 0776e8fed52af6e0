"""Links between graph nodes, the user's source lines and the jaxpr text lines.

Pure functions (no jax, no Qt) so the desktop views and any other front end share one meaning
of "this node came from that line".

Node <-> source is exact: every equation node carries the `SourceLoc` the worker recorded.

Jaxpr text <-> node is *exact*, by program order (`jaxpr_order`): every equation, per call site,
owns its head line (a body hoisted as ``let name = { lambda ... } in`` is printed once, for all its
callers). When that walk does not line up, links fall back to *locations*: JAX's printer ends each
equation's first line with ``# file:line:col (function)``, and a line is linked to the nodes whose
`SourceLoc` has the same (file, line, col), narrowed by the primitive name; several equations of
one expression (``x @ w + b``) or of one line in a loop share a location.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from jaxscope.ir.jaxpr_order import equations, exact_lines
from jaxscope.schema.graph import Graph, SourceLoc
from jaxscope.schema.latest import LatestGraph

Loc = tuple[str, int, int]  # (file, line, col) as printed in a jaxpr comment

# ---------------------------------------------------------------------------- node <-> source


def node_sources(graph: Graph) -> dict[str, SourceLoc]:
    """Every equation node's path -> its source location, through every sub-graph occurrence.

    A body is walked once and its relative paths reused under each owner, so a block called
    200 times costs one walk plus the (unavoidable) 200 copies of its paths.
    """
    return {path: loc for path, loc, _label in _root_entries(graph)}


def node_labels(graph: Graph) -> dict[str, str]:
    """Every located equation node's path -> its label (the primitive name)."""
    return {path: label for path, _loc, label in _root_entries(graph)}


_Entry = tuple[str, SourceLoc, str]  # (path relative to a body, loc, label)
_ENTRIES: LatestGraph[list[_Entry]] = LatestGraph()


def _root_entries(graph: Graph) -> list[_Entry]:
    """The root body's entries; the latest graph's are reused, as views ask on every click."""
    return _ENTRIES.get(graph, None, lambda: _relative_sources(graph).get(graph.root, []))


def _relative_sources(graph: Graph) -> dict[str, list[_Entry]]:
    """Body id -> its located equations, sub-graphs included, built bottom-up without recursion."""
    done: dict[str, list[_Entry]] = {}
    active: set[str] = set()
    stack: list[str] = [graph.root]
    while stack:
        body_id = stack[-1]
        if body_id in done:
            stack.pop()
            continue
        body = graph.bodies.get(body_id)
        if body is None:  # a dangling reference: nothing to list
            done[body_id] = []
            stack.pop()
            continue
        if body_id not in active:
            active.add(body_id)
            missing = {r.body for n in body.nodes for r in n.subgraphs if r.body not in done and r.body not in active}
            if missing:
                stack.extend(sorted(missing))
                continue
        active.discard(body_id)
        out: list[_Entry] = []
        for node in body.nodes:
            if node.kind == "eqn" and node.source is not None:
                out.append((node.id, node.source, node.label))
            for index, ref in enumerate(node.subgraphs):
                prefix = f"{node.id}:{index}/"
                out.extend((prefix + path, loc, label) for path, loc, label in done.get(ref.body, ()))  # a cycle: nothing
        done[body_id] = out
        stack.pop()
    return done


def helper_files(graph: Graph, main: str) -> set[str]:
    """The user's files, other than `main`, that equations of `graph` were traced from (existing
    files outside installed packages): the modules whose edits change the graph."""
    files = {loc.file for body in graph.bodies.values() for node in body.nodes if (loc := node.source) is not None}
    main = os.path.abspath(main) if main else ""
    return {
        f
        for f in map(os.path.abspath, files)
        if f != main and os.path.isfile(f) and not any(part in ("site-packages", "dist-packages") for part in f.split(os.sep))
    }


def same_file(a: str, b: str) -> bool:
    """True when `a` and `b` name the same file: equal after normpath, or one is a relative path
    whose components are a tail of the other's (``examples/m.py`` vs ``/home/u/p/examples/m.py``)."""
    na, nb = os.path.normpath(a), os.path.normpath(b)
    if na == nb:
        return True
    pa, pb = _parts(na), _parts(nb)
    short, long = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    if not short or os.path.isabs(na if short is pa else nb):
        return False
    return long[-len(short) :] == short


def _parts(path: str) -> list[str]:
    return [p for p in path.split(os.sep) if p and p != "."]


def _matching_files(files: Iterable[str], file: str) -> set[str]:
    """The files in `files` that are `file`: exact normpath matches if any, else suffix matches."""
    distinct = set(files)
    want = os.path.normpath(file)
    exact = {f for f in distinct if os.path.normpath(f) == want}
    return exact or {f for f in distinct if same_file(f, file)}


_DIGITS = re.compile(r"(\d+)")


def natural_key(path: str) -> tuple[object, ...]:
    """Sort key putting ``e2`` before ``e10`` (and ``e1:0/e3`` after ``e1``)."""
    tail = path[1:]
    if tail.isdecimal() and path[0] == "e":  # a top-level equation, most paths: what the split would give
        return ("e", int(tail), "")
    return tuple([int(t) if t.isdecimal() else t for t in _DIGITS.split(path)])


_BY_LINE: LatestGraph[dict[int, list[str]]] = LatestGraph()


def nodes_by_line(graph: Graph, file: str) -> dict[int, list[str]]:
    """Source line -> node paths (naturally sorted) for the equations `file` emitted. The latest
    graph's answers are reused: a trace's window asks for it four times (line colours, flow marks,
    node colours, clicks), from three threads, and at 50k equations each took 0.4 s. Do not mutate
    what it returns."""
    return _BY_LINE.get(graph, file, lambda: _nodes_by_line(graph, file))


def _nodes_by_line(graph: Graph, file: str) -> dict[int, list[str]]:
    sources = node_sources(graph)
    files = _matching_files((loc.file for loc in sources.values()), file)
    out: dict[int, list[str]] = {}
    for path, loc in sources.items():
        if loc.file in files:
            out.setdefault(loc.line, []).append(path)
    return {line: sorted(paths, key=natural_key) for line, paths in sorted(out.items())}


def nodes_for_frame(graph: Graph, file: str, line: int) -> list[str]:
    """The equations (per call site) with `file`:`line` anywhere in their frames: a library's line
    (flax's Dense) or a user's call of a function (``block(x)``) selects every equation under it."""
    eqns = equations(graph)
    files = _matching_files((f.file for _, n in eqns for f in n.frames if f.line == line), file)
    return [path for path, node in eqns if any(f.line == line and f.file in files for f in node.frames)]


# ---------------------------------------------------------------------------- colours

# Soft backgrounds, ordered so that neighbouring indices differ strongly in hue (consecutive
# source lines get index 0, 1, 2, ...). Light: pastel tints behind dark text on white; dark: deep
# muted tints behind light text on a near-black editor. No reds or purples: the source pane's
# bars use those for "the trace failed here" and "staged", and a line's colour must not read as either.
PALETTE_LIGHT: list[str] = [
    "#d5f0dc",  # mint
    "#faecc8",  # sand
    "#d2eef3",  # sky
    "#fbdfcc",  # apricot
    "#e4f2cd",  # lime
    "#d8e4fb",  # cornflower
    "#f5f1bd",  # butter
    "#cff0ea",  # aqua
    "#f3e3cf",  # wheat
    "#dbe9d0",  # sage
]
PALETTE_DARK: list[str] = [
    "#23402c",  # mint
    "#473b1f",  # sand
    "#1f3f47",  # sky
    "#4a3122",  # apricot
    "#34431f",  # lime
    "#253552",  # cornflower
    "#45421c",  # butter
    "#1f4540",  # aqua
    "#463a2a",  # wheat
    "#2e3e26",  # sage
]


def line_colours(graph: Graph, file: str, n: int = len(PALETTE_LIGHT)) -> dict[int, int]:
    """Source line -> palette index, in line order, cycling `n` colours (Compiler Explorer style)."""
    return {line: i % n for i, line in enumerate(nodes_by_line(graph, file))}


def node_colours(graph: Graph, file: str, palette: list[str] | None = None) -> dict[str, str]:
    """Node path -> hex background: the colour of the source line the node came from."""
    pal = palette or PALETTE_LIGHT
    by_line = nodes_by_line(graph, file)
    out: dict[str, str] = {}
    for i, (_line, paths) in enumerate(by_line.items()):
        for path in paths:
            out[path] = pal[i % len(pal)]
    return out


# ---------------------------------------------------------------------------- jaxpr text

_LOC = re.compile(r"(?P<file>.+):(?P<line>\d+):(?P<col>\d+)(?:\s+\((?P<func>.*)\))?\s*$")
_PRIM = re.compile(r"\s=\s+(?P<prim>[A-Za-z_][\w\-]*)")


def split_comment(line: str) -> tuple[str, str | None]:
    """(code, comment text after ``#``) for one jaxpr line; comment is None when there is none.

    The first ``#`` with whitespace (or the line's edge) on both sides starts the comment, so a
    path holding ``#`` is kept whole.
    """
    at = line.find("#")
    while at >= 0:
        before_ok = at == 0 or line[at - 1].isspace()
        after_ok = at + 1 == len(line) or line[at + 1].isspace()
        if before_ok and after_ok:
            return line[:at], line[at + 1 :].strip()
        at = line.find("#", at + 1)
    return line, None


_INSTALLED = re.compile(r"^\S*/(?:site|dist)-packages/")  # where pip put a library


def tidy_comments(text: str, column: int = 88) -> str:
    """The jaxpr text with its location comments at `column` (or two spaces after longer code), not
    at JAX's column past the longest line (210 in a train step: 350-character lines), and no empty
    comment or trailing blanks, and a library's file named from its package (``flax/nnx/module.py``,
    not its site-packages path): for a reader (`jaxscope jaxpr`). Every line keeps its number; the
    links read the text as JAX printed it."""
    out = []
    for line in text.split("\n"):
        code, comment = split_comment(line)
        code, comment = code.rstrip(), _INSTALLED.sub("", comment or "")
        if not comment:
            out.append(code)
        elif not code:
            out.append(line.rstrip())
        else:
            out.append(f"{code.ljust(column)}  # {comment}" if len(code) < column else f"{code}  # {comment}")
    return "\n".join(out)


def parse_loc(comment: str) -> Loc | None:
    """``examples/m.py:22:11 (predict)`` -> ("examples/m.py", 22, 11); None when not a location.

    The rightmost ``:line:col`` wins, so paths with colons or spaces survive.
    """
    m = _LOC.match(comment.strip())
    if m is None:
        return None
    return m.group("file").strip(), int(m.group("line")), int(m.group("col"))


@dataclass(frozen=True, slots=True)
class JaxprLine:
    """One equation head in the jaxpr text: its location (if printed) and primitive name."""

    number: int
    loc: Loc | None
    primitive: str


def jaxpr_equations(text: str) -> tuple[dict[int, JaxprLine], dict[int, int]]:
    """Equation heads (lines with a ``#`` comment) and continuation line -> head line.

    A long equation spans lines (``f = jit[`` ... ``] e c a``); its later lines have no comment.
    Open brackets say which equation a bare line belongs to; a bare line indented deeper than a
    just-finished one-line equation continues that equation's operands.
    """
    heads: dict[int, JaxprLine] = {}
    owner: dict[int, int] = {}
    open_eqns: list[tuple[int, int]] = []  # (head line, bracket depth before it)
    depth = 0
    trailing: tuple[int, int] | None = None  # (head line, indent) of a balanced head we may continue
    for number, line in enumerate(text.split("\n"), 1):  # "\n" only, as Qt splits blocks
        code, comment = split_comment(line)
        indent = len(code) - len(code.lstrip())
        before = depth
        depth = max(0, depth + _bracket_delta(code))
        if comment is not None:
            prim = _PRIM.findall(code)
            heads[number] = JaxprLine(number, parse_loc(comment) if comment else None, prim[-1] if prim else "")
            if depth > before:
                open_eqns.append((number, before))
                trailing = None
            else:
                trailing = (number, indent)
        elif code.strip():
            if trailing is not None and indent > trailing[1]:
                owner[number] = trailing[0]
            else:
                trailing = None
                if open_eqns:
                    owner[number] = open_eqns[-1][0]
        while open_eqns and open_eqns[-1][1] >= depth:
            open_eqns.pop()
    return heads, owner


def located_to_wire(rows: Iterable[tuple[int, str, Loc | None]]) -> dict[str, Any]:
    """(text line, primitive, location) rows as flat int columns over a file and a primitive table:
    the maps the worker makes of the texts it prints (`equations_to_wire`, `hlo_links.ops_to_wire`),
    so the GUI process need not parse them (~0.2-0.5 s of Python each at 50k equations)."""
    files: dict[str, int] = {}
    prims: dict[str, int] = {}
    flat: list[int] = []
    for n, prim, loc in rows:
        f = -1 if loc is None else files.setdefault(loc[0], len(files))
        flat += (n, prims.setdefault(prim, len(prims)), f, loc[1] if loc else 0, loc[2] if loc else 0)
    return {"files": list(files), "prims": list(prims), "rows": flat}


T = TypeVar("T")


def sent_or_parsed(sent: dict[str, Any] | None, decode: Callable[[dict[str, Any]], T], parse: Callable[[], T]) -> T:
    """A map the worker sent with its text (`decode`d), else the parse of the text: a malformed
    map (`decode` raising ValueError) costs only its head start."""
    if sent is not None:
        try:
            return decode(sent)
        except ValueError:
            pass
    return parse()


def located_from_wire(data: dict[str, Any]) -> list[tuple[int, str, Loc | None]]:
    """`located_to_wire` undone; ValueError if `data` is not that form."""
    try:
        files, prims, flat = data["files"], data["prims"], data["rows"]
        if len(flat) % 5:
            raise ValueError("its columns do not divide into rows")
        it = iter(flat)
        return [(n, prims[p], (files[f], line, col) if f >= 0 else None) for n, p, f, line, col in zip(it, it, it, it, it)]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"not a line map: {exc}") from None


def equations_to_wire(heads: dict[int, JaxprLine], owner: dict[int, int]) -> dict[str, Any]:
    """`jaxpr_equations`' maps, for the wire (`located_to_wire`, the continuation lines as pairs)."""
    wire = located_to_wire((n, info.primitive, info.loc) for n, info in heads.items())
    wire["owner"] = [x for pair in owner.items() for x in pair]
    return wire


def equations_from_wire(data: dict[str, Any]) -> tuple[dict[int, JaxprLine], dict[int, int]]:
    """`equations_to_wire` undone; ValueError if `data` is not that form."""
    heads = {n: JaxprLine(n, loc, prim) for n, prim, loc in located_from_wire(data)}
    try:
        pairs = data["owner"]
        if len(pairs) % 2:
            raise ValueError("its continuation lines do not pair up")
        o = iter(pairs)
        return heads, dict(zip(o, o))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a jaxpr line map: {exc}") from None


def _bracket_delta(code: str) -> int:
    opens = code.count("[") + code.count("{") + code.count("(")
    closes = code.count("]") + code.count("}") + code.count(")")
    return opens - closes


class JaxprLinks:
    """Index between jaxpr text lines and graph nodes, built once per trace (see module doc)."""

    def __init__(
        self,
        heads: dict[int, JaxprLine],
        owner: dict[int, int],
        sources: dict[str, SourceLoc],
        node_labels: dict[str, str],
        exact: dict[str, int] | None = None,
    ) -> None:
        self.heads = heads
        self.exact = exact or {}  # equation path -> its own head line (`jaxpr_order`), when the walk lined up
        self._paths_at: dict[int, list[str]] = {}
        for path, head in self.exact.items():
            self._paths_at.setdefault(head, []).append(path)
        self.owner = owner
        self.sources = sources
        self.node_labels = node_labels
        self._continuations: dict[int, list[int]] = {}
        for number, head in owner.items():
            self._continuations.setdefault(head, []).append(number)
        self._lines_by_loc: dict[Loc, list[int]] = {}
        self._lines_by_source_line: dict[tuple[str, int], list[int]] = {}
        for number, info in heads.items():
            if info.loc is not None:
                f = os.path.normpath(info.loc[0])
                self._lines_by_loc.setdefault((f, info.loc[1], info.loc[2]), []).append(number)
                self._lines_by_source_line.setdefault((f, info.loc[1]), []).append(number)
        self._nodes_by_loc: dict[Loc, list[str]] = {}
        for path, loc in sources.items():
            self._nodes_by_loc.setdefault((os.path.normpath(loc.file), loc.line, loc.col), []).append(path)
        self._line_files = frozenset(k[0] for k in self._lines_by_loc)
        self._node_files = frozenset(k[0] for k in self._nodes_by_loc)
        self._alias: dict[tuple[bool, str], str | None] = {}

    def head_of(self, line: int) -> int | None:
        """The equation head line for any line of that equation (None outside equations)."""
        return line if line in self.heads else self.owner.get(line)

    def equation_lines(self, head: int) -> list[int]:
        """All lines of the equation starting at `head`: the head and its continuation lines."""
        return [head, *self._continuations.get(head, ())]

    def source_for_line(self, line: int) -> Loc | None:
        """The location printed for the equation on jaxpr `line` (continuation lines included)."""
        head = self.head_of(line)
        info = self.heads.get(head) if head is not None else None
        return info.loc if info is not None else None

    def nodes_for_line(self, line: int) -> list[str]:
        """The equations printed on jaxpr `line` (every call site of a hoisted body), exactly; without
        an exact walk, the nodes located where it is, same primitive preferred."""
        head = self.head_of(line)
        if head is not None and head in self._paths_at:
            return sorted(self._paths_at[head], key=natural_key)
        info = self.heads.get(head) if head is not None else None
        if info is None or info.loc is None:
            return []
        f = self._file(info.loc[0], nodes=True)
        paths = self._nodes_by_loc.get((f, info.loc[1], info.loc[2]), []) if f else []
        same = [p for p in paths if self.node_labels.get(p) == info.primitive]
        return sorted(same or paths, key=natural_key)

    def lines_for_node(self, path: str) -> list[int]:
        """The equation's own jaxpr head line; without an exact walk, the head lines printed with node
        `path`'s location, same primitive preferred."""
        if path in self.exact:
            return [self.exact[path]]
        loc = self.sources.get(path)
        if loc is None:
            return []
        return self.lines_for_loc(loc.file, loc.line, loc.col, self.node_labels.get(path, ""))

    def all_lines_for_node(self, path: str) -> list[int]:
        """Every line of the node's printed equations: head and continuation lines, in order."""
        return sorted({n for head in self.lines_for_node(path) for n in self.equation_lines(head)})

    def lines_for_loc(self, file: str, line: int, col: int, primitive: str = "") -> list[int]:
        """Jaxpr head lines printed with this location (narrowed to `primitive` when any match)."""
        f = self._file(file, nodes=False)
        lines = self._lines_by_loc.get((f, line, col), []) if f else []
        same = [n for n in lines if self.heads[n].primitive == primitive]
        return sorted(same or lines)

    def lines_for_source_line(self, file: str, line: int) -> list[int]:
        """Jaxpr head lines whose printed location is on source `line` of `file`, any column."""
        f = self._file(file, nodes=False)
        return sorted(self._lines_by_source_line.get((f, line), [])) if f else []

    def _file(self, raw: str, nodes: bool) -> str | None:
        """How `raw` is spelled on the nodes' (or the text's) side: exact normpath, else a suffix match."""
        normed = os.path.normpath(raw)
        files = self._node_files if nodes else self._line_files
        if normed in files:
            return normed
        key = (nodes, normed)
        if key not in self._alias:
            hits = sorted(f for f in files if same_file(f, normed))
            self._alias[key] = hits[0] if hits else None
        return self._alias[key]


def jaxpr_links(graph: Graph, text: str, equations: dict[str, Any] | None = None) -> JaxprLinks:
    """Build the jaxpr line <-> node index for one trace, from the text's line map if the worker
    sent it (`equations_to_wire`: several times faster), else from the text."""
    heads, owner = sent_or_parsed(equations, equations_from_wire, lambda: jaxpr_equations(text))
    entries = _root_entries(graph)
    exact = exact_lines(graph, text, {n: h.primitive for n, h in heads.items()}, owner) if text else {}
    return JaxprLinks(heads, owner, {p: loc for p, loc, _ in entries}, {p: label for p, _, label in entries}, exact)
