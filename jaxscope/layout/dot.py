"""Graphviz dot on one body: DOT text in, node centres and edge splines out.

Units: one layout px is one Graphviz point (1/72 in), so a box of w px is `width = w / 72` in DOT
and plain-format inches are multiplied by 72. Plain output has y pointing up; it is flipped here.

Node names are generated (`n0`, `n1`, ...), never user text, every node is a fixed-size box with an
empty label (no text measuring), there are no edge labels and no arrowheads (the spline then ends
on the box boundary; renderers draw their own heads). Network simplex and crossing minimisation
are capped (`nslimit=1 nslimit1=1 mclimit=0.1`): on autodiff graphs those two phases are where
dot's time goes.

dot's time depends on structure more than on size. Measured here (2-core VM, busy; 2000 boxes):
one chain 0.2 s; 20 separate chains of 100 boxes 1.9 s (``pack=true`` makes that 0.13 s, but
scatters the components around the main one, so it is not used); a chain with an extra edge
skipping 3 ranks at every 3rd node 7-10 s. Hence the node limit in `layout`, and the time budget
in `layout_client`.

pygraphviz is imported inside `run_dot`, so the layout package imports without it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

PT_PER_IN = 72.0
RANKSEP_IN = 0.4  # 28.8 px between ranks: room for the curves
NODESEP_IN = 0.25  # 18 px between neighbours

Point = tuple[float, float]


def dot_available() -> bool:
    try:
        import pygraphviz  # noqa: F401 - imported only to see whether it loads
    except Exception:  # ImportError, or a broken libgvc
        return False
    return True


def dot_source(
    sizes: Sequence[tuple[float, float]],
    edges: Sequence[tuple[int, int]],
    *,
    direction: str = "TB",
    ranksep: float = RANKSEP_IN,
    nodesep: float = NODESEP_IN,
) -> str:
    """The DOT text for boxes of `sizes` (px) joined by `edges` (index pairs)."""
    out = [
        "digraph G {",
        f"graph [rankdir={'LR' if direction == 'LR' else 'TB'}, nslimit=1, nslimit1=1, mclimit=0.1, "
        f"ranksep={ranksep:g}, nodesep={nodesep:g}, splines=true];",
        'node [shape=box, fixedsize=true, label=""];',
        "edge [arrowhead=none, arrowtail=none];",
    ]
    for i, (w, h) in enumerate(sizes):
        out.append(f"n{i} [width={w / PT_PER_IN:.4f}, height={h / PT_PER_IN:.4f}];")
    for u, v in edges:
        out.append(f"n{u} -> n{v};")
    out.append("}")
    return "\n".join(out)


def parse_plain(text: str, n: int) -> tuple[list[Point], dict[tuple[int, int], list[Point]]]:
    """Node centres (px, y down) and edge control points from dot's `plain` output."""
    centres: list[Point] = [(0.0, 0.0)] * n
    routes: dict[tuple[int, int], list[Point]] = {}
    height = 0.0
    for line in text.splitlines():
        if line.startswith("node "):
            f = line.split(None, 6)
            centres[int(f[1][1:])] = (float(f[2]) * PT_PER_IN, (height - float(f[3])) * PT_PER_IN)
        elif line.startswith("edge "):
            f = line.split()
            k = int(f[3])
            pts = [(float(f[4 + 2 * j]) * PT_PER_IN, (height - float(f[5 + 2 * j])) * PT_PER_IN) for j in range(k)]
            routes[(int(f[1][1:]), int(f[2][1:]))] = pts
        elif line.startswith("graph "):
            height = float(line.split()[3])
    return centres, routes


def run_dot(
    sizes: Sequence[tuple[float, float]],
    edges: Sequence[tuple[int, int]],
    *,
    direction: str = "TB",
) -> tuple[list[Point], dict[tuple[int, int], list[Point]]]:
    """Lay out with dot: (centres, routes) in px, y down, origin where dot put it.

    `edges` must hold each (u, v) pair once; routes are keyed by that pair. Raises whatever
    pygraphviz raises (ImportError when it is missing).
    """
    import pygraphviz

    graph = pygraphviz.AGraph(string=dot_source(sizes, edges, direction=direction))
    real = sys.stderr
    sys.stderr = _DropSizeWarning(real)  # pygraphviz prints "graph has N nodes..." above 1000
    try:
        plain = graph.draw(format="plain", prog="dot")
    finally:
        if isinstance(sys.stderr, _DropSizeWarning):
            sys.stderr = real
    text = plain.decode("utf-8", "replace") if isinstance(plain, bytes) else str(plain)
    return parse_plain(text, len(sizes))


class _DropSizeWarning:
    """A stand-in for sys.stderr that drops pygraphviz's size warning and passes the rest on."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if text.startswith("Warning: graph has ") and "may take a long time" in text:
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
