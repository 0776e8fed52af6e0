"""Exact equation links through lowering: each IR line to the equations (per call site) it came from.

The worker lowers the traced program once more with every equation's name stack extended by a
mark, ``_jxs{body}_{index}_`` (`worker.hlo`): body numbers as the graph's ``b{n}``, the index as
its ``e{i}``. JAX writes the name stack into every op's location (StableHLO) and XLA keeps it in
every instruction's ``op_name`` metadata (compiled HLO), ``;``-joined where it merged ops. The
marks of one op name, outer first, are the chain of equations that emitted it (a `jit` call, then
the equation in its body), which names one call site; an op in a body that StableHLO shares
between call sites (``func.func private``) names every call site. The marks are then stripped: the
compiled text shown is the marked one with its marks removed (XLA's choices do not depend on
metadata), and a StableHLO text is matched line by line to the plain lowering, which is shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MARK = re.compile(r"_jxs(\d+)_(\d+)_")
_MARK_SLASH = re.compile(r"_jxs\d+_\d+_/")
_MARK_ANY = re.compile(r"/?_jxs\d+_\d+_")
_LOC_DEF = re.compile(r"^#loc(\d+) = (.*)$")
_LOC_REF = re.compile(r"#loc(\d+)")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')

Chain = tuple[tuple[int, int], ...]  # (body number, equation index) of each mark in one op name, outer first
Structure = Mapping[int, Mapping[int, tuple[int, ...]]]  # body -> equation index -> its sub-bodies, in order


def mark_name(body: int, index: int) -> str:
    return f"_jxs{body}_{index}_"


def strip(text: str) -> str:
    """`text` without marks: ``a/_jxs0_3_/sin`` -> ``a/sin``, ``jvp(_jxs0_3_)/mul`` -> ``jvp()/mul``."""
    if "_jxs" not in text:
        return text
    return _MARK_ANY.sub("", _MARK_SLASH.sub("", text))


def chains_of(name: str) -> list[Chain]:
    """The chains of one location name or op_name (``;`` separates the ops XLA merged)."""
    out = []
    for part in name.split(";"):
        chain = tuple((int(b), int(i)) for b, i in MARK.findall(part))
        if chain:
            out.append(chain)
    return out


def compiled_chains(marked: str) -> dict[int, list[Chain]]:
    """1-based line -> chains, for every instruction line of a marked compiled-HLO text."""
    out: dict[int, list[Chain]] = {}
    for number, line in enumerate(marked.split("\n"), 1):
        if "_jxs" in line:
            found = [c for name in _OP_NAME.findall(line) for c in chains_of(name)]
            if found:
                out[number] = found
    return out


def stablehlo_chains(plain: str, marked: str) -> dict[int, list[Chain]] | None:
    """1-based line of the plain StableHLO text -> chains, from the marked text of the same program.

    The two texts differ only in location numbers (``loc(#loc12)``), the marks in the names on a line
    and the location tables (at the end, and a few aliases MLIR prints before the module); any other
    difference (a lowering that depends on names) returns None, so nothing is linked by a line that
    is not the same op."""
    plain_lines, marked_lines = plain.split("\n"), marked.split("\n")
    body_end = _table_start(marked_lines)
    table: dict[int, str] = {}
    for line in marked_lines:
        if line.startswith("#loc"):
            m = _LOC_DEF.match(line)
            if m:
                table[int(m.group(1))] = m.group(2)
    # the ops, paired in order; the #loc lines (aliases MLIR prints before the module, more of them
    # in the marked text where a lowering names its own locations: a cumsum's reduce_window) apart
    plain_ops = [n for n in range(_table_start(plain_lines)) if not plain_lines[n].startswith("#loc")]
    marked_ops = [n for n in range(body_end) if not marked_lines[n].startswith("#loc")]
    if len(plain_ops) != len(marked_ops):
        return None
    memo: dict[int, list[Chain]] = {}
    out: dict[int, list[Chain]] = {}
    for number, at in zip(plain_ops, marked_ops, strict=True):
        a, b = plain_lines[number], marked_lines[at]
        # (a private function's arguments are named after the caller, whose mark they then carry: where
        # the plain text has no name, `loc(unknown)`, the marked one has `loc("<mark>")`)
        if a != b and _LOC_REF.sub("#loc", a) != _LOC_REF.sub("#loc", _MARK_ANY.sub("", b)).replace('loc("")', "loc(unknown)"):
            return None
        if "loc(" not in b:
            continue
        found = [c for name in _QUOTED.findall(b) for c in chains_of(name)]
        for ref in _LOC_REF.findall(b):
            found += _resolve(int(ref), table, memo)
        if found:
            out[number + 1] = found
    return out


def _table_start(lines: list[str]) -> int:
    """Index of the first line of the trailing ``#locN = loc(...)`` table (len(lines) if none)."""
    n = len(lines)
    while n > 0 and (lines[n - 1].startswith("#loc") or not lines[n - 1].strip()):
        n -= 1
    return n


def _resolve(ref: int, table: dict[int, str], memo: dict[int, list[Chain]]) -> list[Chain]:
    """The chains of location ``#loc{ref}``: its own names, else those of the locations it fuses."""
    got = memo.get(ref)
    if got is not None:
        return got
    memo[ref] = []  # a cycle (none in valid MLIR) ends here
    text = table.get(ref, "")
    found = [c for name in _QUOTED.findall(text) for c in chains_of(name)]
    if not found and "fused" in text:
        for inner in _LOC_REF.findall(text):
            found += _resolve(int(inner), table, memo)
    memo[ref] = found
    return found


def call_sites(structure: Structure) -> dict[tuple[int, int], list[str]]:
    """(body, equation index) -> the path of every call site of that equation (as the SVG's data-path)."""
    out: dict[tuple[int, int], list[str]] = {}
    stack: list[tuple[int, str, int]] = [(0, "", 0)]
    while stack:
        body, prefix, depth = stack.pop()
        if depth > 200:
            continue
        for index, subs in structure.get(body, {}).items():
            path = f"{prefix}e{index}"
            out.setdefault((body, index), []).append(path)
            for k, sub in enumerate(subs):
                stack.append((sub, f"{path}:{k}/", depth + 1))
    return out


def resolve(chain: Chain, structure: Structure, sites: dict[tuple[int, int], list[str]]) -> list[str]:
    """The equation paths one chain names: its first mark's call sites, narrowed mark by mark."""
    paths = list(sites.get(chain[0], ()))
    for (body, index), (next_body, next_index) in zip(chain, chain[1:], strict=False):
        subs = structure.get(body, {}).get(index, ())
        ks = [k for k, sub in enumerate(subs) if sub == next_body]
        if not ks:  # a mark with no link to the one before (not seen): its own call sites
            return list(sites.get(chain[-1], ()))
        paths = [f"{p}:{k}/e{next_index}" for p in paths for k in ks]
    return paths


def line_paths(chains: dict[int, list[Chain]], structure: Structure) -> dict[int, list[str]]:
    """1-based line -> the equation paths it holds, deduplicated, in first-seen order."""
    sites = call_sites(structure)
    memo: dict[Chain, list[str]] = {}
    out: dict[int, list[str]] = {}
    for line, found in chains.items():
        paths: dict[str, None] = {}
        for chain in found:
            got = memo.get(chain)
            if got is None:
                got = memo[chain] = resolve(chain, structure, sites)
            paths.update(dict.fromkeys(got))
        if paths:
            out[line] = list(paths)
    return out


def to_wire(lines: dict[int, list[str]]) -> dict[str, list[Any]]:
    """`line_paths` for the wire: each path once, lines as [line, [path index, ...]]."""
    index: dict[str, int] = {}
    rows = [[line, [index.setdefault(p, len(index)) for p in paths]] for line, paths in sorted(lines.items())]
    return {"paths": list(index), "lines": rows}


def from_wire(data: Mapping[str, object]) -> dict[int, list[str]]:
    """`to_wire` undone; ValueError if `data` is not that form."""
    try:
        paths = [str(p) for p in data["paths"]]  # type: ignore[attr-defined]
        return {int(line): [paths[i] for i in idx] for line, idx in data["lines"]}  # type: ignore[attr-defined]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"malformed exact links: {exc}") from None
