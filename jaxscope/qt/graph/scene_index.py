"""The scene model's records and look-ups: one `NodeRec` per drawn box (made on first use from
numpy columns), boxes by base path (`BoxIndex`) and a uniform grid for hit tests (`GridIndex`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRectF

from jaxscope.layout import labels
from jaxscope.render.styles import family
from jaxscope.schema.graph import Graph, Node

CELL = 256.0  # hit-test grid cell, scene px


EMPTY_I = np.zeros(0, dtype=np.int64)


@dataclass(slots=True)
class NodeRec:
    """One drawn box (a stub copy is its own record); `base` is the path without ``#k``."""

    path: str
    base: str
    node: Node | None
    x: float  # top-left corner and size, scene px
    y: float
    w: float
    h: float
    kind: str
    fam: str
    owner: bool  # a collapsed owner of sub-graphs (double-click expands it)
    tile: int = -1
    annotations: Mapping[str, str] | None = None  # the layout's (`Layout.annotations`): its own, if any, is its last line
    lines: list[str] | None = None  # computed on first full-detail paint
    _rect: QRectF | None = None

    @property
    def rect(self) -> QRectF:
        """The box as a QRectF, made on first use (most boxes of a big graph never need one)."""
        r = self._rect
        if r is None:
            r = self._rect = QRectF(self.x, self.y, self.w, self.h)
        return r

    def contains(self, x: float, y: float, slop: float = 0.0) -> bool:
        return self.x - slop <= x <= self.x + self.w + slop and self.y - slop <= y <= self.y + self.h + slop

    def text_lines(self) -> list[str]:
        if self.lines is None:
            self.lines = labels.box_lines(self.node, self.path, self.annotations)
        return self.lines


class NodeRecs(Sequence[NodeRec]):
    """`SceneModel.nodes`: box i's NodeRec, made from the columns when first asked for and kept.
    A paint asks for the visible tiles' boxes only (a far one for none): making all 72k up front
    took ~0.2 s of every open and expand of a 50k-box drawing."""

    __slots__ = ("paths", "x", "y", "w", "h", "tile", "resolved", "made", "annotations")

    def __init__(
        self,
        paths: list[str],
        x: np.ndarray,
        y: np.ndarray,
        w: np.ndarray,
        h: np.ndarray,
        tile: np.ndarray,
        resolved: Resolved,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        self.paths = paths
        self.annotations = annotations
        self.x, self.y, self.w, self.h, self.tile = x, y, w, h, tile  # top-left corner and size, scene px
        self.resolved = resolved
        self.made: list[NodeRec | None] = [None] * len(paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> NodeRec:  # type: ignore[override]  # no slices
        rec = self.made[i]
        if rec is None:
            path = self.paths[i]
            base, node, kind, fam, owner = self.resolved[path]
            rec = self.made[i] = NodeRec(
                path,
                base,
                node,
                float(self.x[i]),
                float(self.y[i]),
                float(self.w[i]),
                float(self.h[i]),
                kind,
                fam,
                owner,
                int(self.tile[i]),
                self.annotations,
            )
        return rec

    def __iter__(self) -> Iterator[NodeRec]:
        for i in range(len(self.paths)):
            yield self[i]


class BoxIndex(Mapping[str, list[int]]):
    """Base path -> the indices of its boxes (the original's and its stub copies'), ascending.
    Made in C and numpy: a list per base made in Python took ~45 ms of every 72k-box open and
    expand (mlp-50k draws ~20k stub copies). The grouping of stub copies is made on the first
    look-up of boxes: a membership test (is the selection still drawn?) needs only the bases."""

    __slots__ = ("_bases", "_last", "_grouped")

    def __init__(self, bases: list[str]) -> None:
        self._bases = bases
        self._last = dict(zip(bases, range(len(bases))))  # each base's last box, in first-seen order
        self._grouped: tuple[np.ndarray, np.ndarray] | None = None

    def _groups(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The boxes grouped by their base's last box (order, codes in that order); None without
        stub copies."""
        if self._grouped is None and len(self._last) < len(self._bases):
            bases = self._bases
            code = np.fromiter(map(self._last.__getitem__, bases), dtype=np.int64, count=len(bases))
            order = np.argsort(code, kind="stable")  # a group's boxes stay ascending
            self._grouped = (order, code[order])
        return self._grouped

    @property
    def grouped(self) -> bool:
        """Whether the stub copies are grouped by base yet (a look-up of a base with copies does
        it; a membership test never needs to)."""
        return self._grouped is not None

    def warm(self) -> None:
        """Group the stub copies now (on the thread that makes the model)."""
        self._groups()

    def __getitem__(self, base: str) -> list[int]:
        k = self._last[base]
        grouped = self._groups()
        if grouped is None:
            return [k]
        order, code = grouped
        a, b = np.searchsorted(code, (k, k + 1)).tolist()
        return [k] if b - a == 1 else order[a:b].tolist()

    def __contains__(self, base: object) -> bool:
        return base in self._last

    def __iter__(self) -> Iterator[str]:
        return iter(self._last)

    def __len__(self) -> int:
        return len(self._last)

    def firsts(self) -> Iterator[tuple[str, int]]:
        """(base, its first box) for every base, in first-seen order, without a list made per base."""
        last = np.fromiter(self._last.values(), dtype=np.int64, count=len(self._last))
        grouped = self._groups()
        if grouped is not None:
            order, code = grouped
            starts = np.flatnonzero(np.concatenate([[True], code[1:] != code[:-1]]))
            first_of = np.arange(len(code))
            first_of[code[starts]] = order[starts]
            last = first_of[last]
        return zip(self._last, last.tolist())


class GridIndex:
    """Rects bucketed into square cells by their centre (a rect bigger than a cell goes into
    every cell it covers); a point query reads the 3×3 cells around the point."""

    def __init__(self, cell: float = CELL) -> None:
        self.cell = cell
        self.buckets: dict[tuple[int, int], list[int]] = {}

    def insert(self, key: int, x0: float, y0: float, x1: float, y1: float) -> None:
        c = self.cell
        buckets = self.buckets
        if x1 - x0 <= c and y1 - y0 <= c:
            cell = (int((x0 + x1) / 2 // c), int((y0 + y1) / 2 // c))
            bucket = buckets.get(cell)
            if bucket is None:
                buckets[cell] = [key]
            else:
                bucket.append(key)
            return
        for gx in range(int(x0 // c), int(x1 // c) + 1):
            for gy in range(int(y0 // c), int(y1 // c) + 1):
                buckets.setdefault((gx, gy), []).append(key)

    def near(self, x: float, y: float) -> set[int]:
        """Keys of every rect that may contain (x, y)."""
        gx, gy = int(x // self.cell), int(y // self.cell)
        out: set[int] = set()
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                out.update(self.buckets.get((gx + dx, gy + dy), ()))
        return out


class _Resolver:
    """Base path -> Node, caching the body of every path prefix (``e4:1/``): resolving 50k paths
    one by one from the root (`model.resolve`) would dominate building the scene."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.bodies: dict[str, dict[str, Node] | None] = {"": self._nodes(graph.root)}

    def _nodes(self, body_id: str) -> dict[str, Node]:
        return {n.id: n for n in self.graph.bodies[body_id].nodes}

    def get(self, base: str) -> Node | None:
        prefix, _, local = base.rpartition("/")
        if prefix in self.bodies:
            nodes = self.bodies[prefix]
        else:
            owner_path, _, index = prefix.rpartition(":")
            owner = self.get(owner_path) if owner_path else None  # its body is cached: no walk from the root
            try:
                ref = owner.subgraphs[int(index)] if owner is not None else None
                nodes = self._nodes(ref.body) if ref is not None else None
            except (IndexError, ValueError, KeyError):
                nodes = None
            self.bodies[prefix] = nodes
        return nodes.get(local) if nodes else None


Resolution = tuple[str, "Node | None", str, str, bool]  # base path, node, kind, family, collapsed owner?


class Resolved(dict[str, Resolution]):
    """Box path -> what its record takes from the graph, for one graph: made once a path, then
    shared by every model of that graph (an expand re-draws mostly the same boxes)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self._get: Callable[[str], Node | None] | None = None

    def __missing__(self, path: str) -> Resolution:
        if self._get is None:
            self._get = _Resolver(self.graph).get
        base = path.partition("#")[0] if "#" in path else path  # the same str, not a copy
        node = self._get(base)
        if node is None:
            r: Resolution = (base, None, "eqn", "other", False)
        else:
            bodies = self.graph.bodies
            r = (base, node, node.kind, family(node), bool(node.subgraphs) and all(ref.body in bodies for ref in node.subgraphs))
        self[path] = r
        return r
