"""A decoded layout's edges kept as the wire rows they came in, each EdgePath made when asked for.

Reading a 50k-box layout from the layout process made 75k EdgePaths (each with five tuples and
eight floats): 0.16-0.27 s of the GUI process's 0.2-0.3 s read, on the path of every open and
expand. The scene model needs only the coordinates (in numpy) and a view draws the edges on
screen, so `WireReader` hands over the rows instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from jaxscope.core.model import EdgePath
from jaxscope.core.serialize import maker

_EDGE = maker(EdgePath)
Row = list[Any]  # [src, dst, routed, aval, flat tenths [x0, y0, x1, y1, ...] or an earlier row's index]


def points_of(flat: Sequence[int]) -> tuple[tuple[float, float], ...]:
    """Flattened tenths -> an EdgePath's points in px."""
    if len(flat) == 8:
        x0, y0, x1, y1, x2, y2, x3, y3 = flat
        return ((x0 / 10, y0 / 10), (x1 / 10, y1 / 10), (x2 / 10, y2 / 10), (x3 / 10, y3 / 10))
    it = iter(flat)
    return tuple([(px / 10, py / 10) for px, py in zip(it, it)])


class EdgeTable(Sequence[EdgePath]):
    """`Layout.edges` as rows (`Row`); an edge whose row holds an index is drawn along that
    earlier edge's curve (several values between the same two boxes) and shares its points.
    An EdgePath got by index is kept (a view asks for the same ones at every repaint); one got by
    iterating is not (an export walks them all once). Equal to the tuple of its EdgePaths."""

    __slots__ = ("rows", "_made")

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self._made: list[EdgePath | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, j: int) -> EdgePath: ...
    @overload
    def __getitem__(self, j: slice) -> tuple[EdgePath, ...]: ...

    def __getitem__(self, j: int | slice) -> EdgePath | tuple[EdgePath, ...]:
        if isinstance(j, slice):
            return tuple([self[k] for k in range(*j.indices(len(self.rows)))])
        e = self._made[j]
        if e is None:
            e = self._made[j] = self._make(j)
        return e

    def __iter__(self) -> Iterator[EdgePath]:
        made = self._made
        for j in range(len(self.rows)):
            e = made[j]
            yield e if e is not None else self._make(j)

    def _make(self, j: int) -> EdgePath:
        src, dst, routed, aval, coords = self.rows[j]
        points = self[coords].points if isinstance(coords, int) else points_of(coords)
        return _EDGE(src, dst, points, routed, aval)

    def flats(self) -> list[list[int]]:
        """Each edge's curve, flattened in tenths of a px (a repeated curve's list is its first's)."""
        rows = self.rows
        out = [row[4] for row in rows]
        for j, coords in enumerate(out):
            if isinstance(coords, int):
                out[j] = out[coords]
        return out

    def ends(self) -> list[tuple[str, str]]:
        """Each edge's (src, dst) path, no EdgePath made."""
        return [(row[0], row[1]) for row in self.rows]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"EdgeTable({len(self.rows)} edges)"
