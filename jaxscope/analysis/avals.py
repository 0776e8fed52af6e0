"""Array sizes from the avals the graph carries as text (``f32[4,8]``): elements, bytes, shapes."""

from __future__ import annotations

import functools
import math
import re

from jaxscope.targets.argspec import SHORT_TO_LONG

_BITS = {"bool": 8, "key": 64}
# An aval of more dimensions, of one over 18 digits or of more elements is no array's (a damaged or
# hostile saved trace): read as none, so that no count made of it overflows a float.
MAX_RANK, MAX_ELEMS = 64, 1 << 62
_AVAL = re.compile(r"^([a-z]+[0-9]*)(?:<\w+>)?\[([0-9,\s]*)\]")


@functools.lru_cache(maxsize=8192)  # a program has few distinct avals, read once per equation
def aval_shape(aval: str) -> tuple[int, ...] | None:
    """``f32[4,8]`` -> (4, 8); ``f32[]`` -> (); None when it is no array's aval."""
    m = _AVAL.match(aval.strip())
    if not m:
        return None
    digits = [d for d in m.group(2).replace(" ", "").split(",") if d]
    if len(digits) > MAX_RANK or any(len(d) > 18 for d in digits):  # no array has these: a damaged or hostile saved trace
        return None
    shape = tuple(int(d) for d in digits)
    return shape if math.prod(shape) <= MAX_ELEMS else None


@functools.lru_cache(maxsize=8192)
def aval_elems(aval: str) -> int:
    """Elements of an array of aval text (0 when unknown)."""
    shape = aval_shape(aval)
    return math.prod(shape) if shape is not None else 0


@functools.lru_cache(maxsize=8192)
def aval_bytes(aval: str) -> int | None:
    """Bytes held by an array of aval text like ``f32[4,8]``; None when unknown."""
    m = _AVAL.match(aval.strip())
    if not m:
        return None
    dtype = SHORT_TO_LONG.get(m.group(1), m.group(1))
    bits = _BITS.get(dtype)
    if bits is None:
        digits = re.search(r"(\d+)$", dtype)
        if not digits or len(digits.group(1)) > 4:  # no dtype is wider than thousands of bits: a damaged or hostile trace
            return None
        bits = int(digits.group(1))
    shape = aval_shape(aval)
    return math.prod(shape) * bits // 8 if shape is not None else None


def format_bytes(n: int) -> str:
    """``16 B``, ``4.0 KiB``, ``3.2 MiB``: sizes as people read them."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
