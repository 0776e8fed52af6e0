"""A measure drawn over the graph (Model Explorer's node data, computed here): each box filled by its
value on a log colour scale, and a scale naming the measure under the drawing. Values are by
drawn path; an owner drawn collapsed (a jit, a module's group) shows the sum of what it holds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

RAMP = ("#fff4d1", "#fdd49e", "#fdae6b", "#f16913", "#d94801", "#8c2d04")  # light to dark: little to much
ZERO = "#eef0f3"  # a box that costs nothing on this measure (data movement for FLOPs)


@dataclass(frozen=True)
class Overlay:
    measure: str  # "flops", "bytes", "memory"
    values: dict[str, float]  # drawn path -> value
    caption: str = ""  # what the values are, e.g. "FLOPs per equation (per primitive)"
    # categories instead of a scale (a diff's added/removed/changed): value k (1-based) is keys[k - 1],
    # (name, colour); 0 or no value keeps the box's own colours
    keys: tuple[tuple[str, str], ...] = ()
    _range: tuple[float, float] = field(init=False, repr=False, default=(0.0, 0.0))

    @classmethod
    def drawn(cls, measure: str, values: dict[str, float], caption: str) -> Overlay:
        """The overlay of `values` by drawn path, with every owner and group showing what it holds
        (memory: the most of it)."""
        return cls(measure, with_owners(values, peak=measure == "memory"), caption)

    def __post_init__(self) -> None:
        positive = [v for v in self.values.values() if v > 0]
        object.__setattr__(self, "_range", (min(positive), max(positive)) if positive else (0.0, 0.0))

    @property
    def low(self) -> float:
        return self._range[0]

    @property
    def high(self) -> float:
        return self._range[1]

    def colour(self, path: str) -> str | None:
        """The fill of the box at `path`; None where the measure has no value (inputs, literals)."""
        value = self.values.get(path)
        if value is None:
            return None
        if self.keys:
            k = int(value)
            return self.keys[k - 1][1] if 1 <= k <= len(self.keys) else None
        return ZERO if value <= 0 else ramp(self.position(value))

    @classmethod
    def categories(cls, measure: str, status: dict[str, str], colours: dict[str, str], caption: str = "") -> Overlay:
        """Boxes coloured by category (`status`: path -> a name in `colours`), in `colours`' order."""
        names = list(colours)
        index = {name: k + 1 for k, name in enumerate(names)}
        return cls(
            measure, {p: float(index[v]) for p, v in status.items() if v in index}, caption, tuple((name, colours[name]) for name in names)
        )

    def position(self, value: float) -> float:
        """0..1 along the scale: log, as costs span orders of magnitude, then squared, so the lower
        half of the decades stays pale (an argmax over 8 values beside a 36M-FLOP matmul read orange
        on the plain log scale) and the colour goes to what costs most."""
        low, high = self._range
        if high <= low:
            return 1.0
        return ((math.log(value) - math.log(low)) / (math.log(high) - math.log(low))) ** 2


def ramp(t: float) -> str:
    t = min(max(t, 0.0), 1.0) * (len(RAMP) - 1)
    i = min(int(t), len(RAMP) - 2)
    a, b = _rgb(RAMP[i]), _rgb(RAMP[i + 1])
    f = t - i
    return "#" + "".join(f"{round(x + (y - x) * f):02x}" for x, y in zip(a, b))


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def with_owners(values: dict[str, float], peak: bool = False) -> dict[str, float]:
    """`values` plus, for every owner path above them ("e5" of "e5:0/e2", "g0" of "g0:0/g2"), the
    sum of what it holds (`peak`: the most of it, for memory): a collapsed owner is drawn with it."""
    out = dict(values)
    for path, value in values.items():
        parts = path.split("/")
        for k in range(1, len(parts)):
            owner = "/".join(parts[:k]).rpartition(":")[0]
            if owner:
                out[owner] = max(out.get(owner, 0.0), value) if peak else out.get(owner, 0.0) + value
    return out


def human(value: float) -> str:
    """A value with an SI prefix: 1.5k, 2.3G; below 1 (seconds measured per equation), 26µ, 8.1n."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    if 0 < abs(value) < 1:
        for unit, scale in (("m", 1e-3), ("µ", 1e-6), ("n", 1e-9)):
            if abs(value) >= scale:
                return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"
