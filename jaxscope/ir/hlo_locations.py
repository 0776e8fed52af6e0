"""Source locations in JAX's IR texts, so an IR line can be linked to user code.

StableHLO (``Lowered.as_text(debug_info=True)``): each op line ends with ``loc(...)``, usually a
``#locN`` alias printed at the end of the text: ``"<name stack>/<primitive>"(callsite(... at ...))``.
The compiled-HLO side (``metadata=`` + stack-frame tables) is `jaxscope.ir.hlo_module`; both
share the conventions and helpers here.

Pure text parsing, one linear pass plus memoized alias/frame resolution, no jax: the GUI process
links lines without a worker. Garbage in gives an empty or partial map, never an error. Lines are
1-based lines of ``text.split("\\n")``; columns are as printed (Python's 0-based ``col_offset``,
the `SourceLoc` convention). Frames are innermost first and include the frames of whoever called
``.lower()``, so `user` is the innermost frame in a user file, not frame 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

Frame = tuple[str, int, int]  # (file, line, col)
UserFile = Callable[[str], bool]


def default_user_file(path: str) -> bool:
    """True for a file the user wrote: not ``<...>``, not inside jax, jaxlib or installed packages."""
    if not path or (path.startswith("<") and path.endswith(">")):
        return False
    parts = set(path.replace("\\", "/").split("/"))
    return not parts & {"site-packages", "dist-packages", "jax", "jaxlib"}


@lru_cache(maxsize=4096)
def primitive_of(op_name: str) -> str:
    """``"jit(f)/jit(inner)/sin"`` -> ``"sin"``; ``"jit(f)/jit(g)"`` and ``"jit:"`` -> ``"jit"``."""
    last = op_name.rsplit("/", 1)[-1]
    m = re.match(r"[^(:]*", last)
    return m.group(0) if m and m.group(0) else last


@dataclass(frozen=True)
class SourceIndex:
    """(file, line) -> IR lines, for the user frame only and for any frame of the stacks."""

    by_user: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    by_frame: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)

    def lines(self, file: str, line: int, any_frame: bool = False) -> list[int]:
        """Sorted IR lines; `file` also matches a printed path it ends with (or that ends with it)."""
        table = self.by_frame if any_frame else self.by_user
        out: set[int] = set()
        for f, rows in table.items():
            if f == file or f.endswith("/" + file) or file.endswith("/" + f):
                out.update(rows.get(line, ()))
        return sorted(out)


def build_index(entries: Iterable[tuple[int, Frame | None, tuple[Frame, ...]]]) -> SourceIndex:
    """The index of (IR line, user frame, frames) rows; a line is listed once per file:line."""
    by_user: dict[str, dict[int, list[int]]] = {}
    by_frame: dict[str, dict[int, list[int]]] = {}
    keys: dict[int, list[list[int]]] = {}  # id(frames) -> the line lists it goes into
    for n, user, frames in entries:
        if user:
            by_user.setdefault(user[0], {}).setdefault(user[1], []).append(n)
        if (lists := keys.get(id(frames))) is None:
            places = dict.fromkeys((fr[0], fr[1]) for fr in frames)
            lists = keys[id(frames)] = [by_frame.setdefault(f, {}).setdefault(ln, []) for f, ln in places]
        for rows in lists:
            rows.append(n)

    def freeze(t: dict[str, dict[int, list[int]]]) -> dict[str, dict[int, tuple[int, ...]]]:
        return {f: {k: tuple(v) for k, v in rows.items()} for f, rows in t.items()}

    return SourceIndex(freeze(by_user), freeze(by_frame))


def user_picker(user_file: UserFile | None) -> Callable[[tuple[Frame, ...]], Frame | None]:
    """frames -> the innermost user frame; the predicate runs once per distinct file."""
    pred = user_file or default_user_file
    cache: dict[str, bool] = {}

    def pick(frames: tuple[Frame, ...]) -> Frame | None:
        for fr in frames:
            if (ok := cache.get(fr[0])) is None:
                ok = cache[fr[0]] = bool(pred(fr[0]))
            if ok:
                return fr
        return None

    return pick


def unescape(s: str) -> str:
    """Undo the backslash escapes of a printed string literal."""
    return re.sub(r"\\(.)", r"\1", s) if "\\" in s else s


# ------------------------------------------------------------------------------------ StableHLO


@dataclass(frozen=True)
class HloOpLoc:
    """One op's resolved MLIR location: name stack, primitive, stack (innermost first)."""

    name: str  # the outermost named location: "jit(f)/jit(inner)/sin"; "" when unnamed/unknown
    primitive: str  # "sin"
    frames: tuple[Frame, ...] = ()
    functions: tuple[str, ...] = ()  # function name of each frame ("" when not printed)
    user: Frame | None = None  # innermost frame in a user file
    op: str = ""  # the MLIR op on the line: "stablehlo.sine", "func.call", "stablehlo.while"


@dataclass(frozen=True)
class StableHloMap:
    """Every op line of a StableHLO text -> its location (unknown locations included, empty)."""

    ops: dict[int, HloOpLoc] = field(default_factory=dict)
    index: SourceIndex = field(default_factory=SourceIndex, repr=False)

    def lines_for_source(self, file: str, line: int, any_frame: bool = False) -> list[int]:
        """Op lines whose user frame (or, with `any_frame`, any frame) is at file:line."""
        return self.index.lines(file, line, any_frame)

    def source_for_line(self, n: int) -> Frame | None:
        """The user frame of the op on line `n`, if any."""
        op = self.ops.get(n)
        return op.user if op else None


_ALIAS_DEF = re.compile(r"^(#[\w.$\-]+)\s*=\s*loc\((.*)\)\s*$")
_OP = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w.$\-]*)')
_LABEL = re.compile(r"^\s*\}?\s*\w+\s*\{\s*$")  # "cond {", "} do {" open a region, no op
# No leading \s* (a failed token after a long blank run rescanned it from every blank) and an
# unterminated string is one "open" token to the end (or every quote of '\"\"\"...' rescans the
# rest of the line): both kept lexing linear in the line's length.
_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")|("(?:[^"\\]|\\.)*)|(#[\w.$\-]+)|(-?\d+)|([A-Za-z_][\w.$\-]*)|(\S)')
_KINDS = ("str", "open", "ref", "num", "word", "punct")
_REF = r"#[\w.$\-]+"
_FAST_REF = re.compile(_REF)
_FAST_NAME = re.compile(rf'"((?:[^"\\]|\\.)*)"\(({_REF})\)')
_FAST_CALLSITE = re.compile(rf"callsite\(({_REF}) at ({_REF})\)")
_FAST_FILE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?: to (?:\d+)?:\d+)?')
# A parsed location expression, tagged by its first item (see `_parse_loc`): the shapes differ by
# tag, which a tuple type cannot express, so the items are Any.
LocNode = tuple[Any, ...]
Resolved = tuple[str, tuple[Frame, ...], tuple[str, ...]]  # (name, frames, function names)
_UNKNOWN: LocNode = ("u",)
_EMPTY: Resolved = ("", (), ())
_MAX_DEPTH = 200


class _LocSyntaxError(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(_KINDS[m.lastindex - 1], m.group(m.lastindex)) for m in _TOKEN.finditer(text) if m.lastindex]


def _parse_loc(text: str) -> LocNode:
    """A location expression -> nested tuples ("u"), ("r", alias), ("l", file, line, col),
    ("n", name, child|None), ("c", callee, caller), ("f", children); ("u") if unparsable."""
    if _FAST_REF.fullmatch(text):  # the printed forms, without tokenizing
        return ("r", text)
    if m := _FAST_NAME.fullmatch(text):
        return ("n", unescape(m.group(1)), ("r", m.group(2)))
    if m := _FAST_CALLSITE.fullmatch(text):
        return ("c", ("r", m.group(1)), ("r", m.group(2)))
    if m := _FAST_FILE.fullmatch(text):
        return ("l", unescape(m.group(1)), int(m.group(2)), int(m.group(3)))
    toks = _tokens(text)
    toks.append(("end", ""))

    def expect(i: int, value: str) -> int:
        if toks[i][1] != value:
            raise _LocSyntaxError
        return i + 1

    def expr(i: int, depth: int) -> tuple[int, LocNode]:
        if depth > _MAX_DEPTH:
            raise _LocSyntaxError
        kind, val = toks[i]
        if kind == "ref":
            return i + 1, ("r", val)
        if kind == "str":
            s = unescape(val[1:-1])
            if toks[i + 1][1] == ":" and toks[i + 2][0] == "num":
                line, col, i = int(toks[i + 2][1]), 0, i + 3
                if toks[i][1] == ":" and toks[i + 1][0] == "num":
                    col, i = int(toks[i + 1][1]), i + 2
                if toks[i][1] == "to":  # a range: " to :C", " to L:C", " to L"
                    i += 1 + (toks[i + 1][0] == "num")
                    if toks[i][1] == ":" and toks[i + 1][0] == "num":
                        i += 2
                return i, ("l", s, line, col)
            if toks[i + 1][1] == "(":
                i, child = expr(i + 2, depth + 1)
                return expect(i, ")"), ("n", s, child)
            return i + 1, ("n", s, None)
        if val == "unknown":
            return i + 1, _UNKNOWN
        if val == "callsite":
            i, callee = expr(expect(i + 1, "("), depth + 1)
            i, caller = expr(expect(i, "at"), depth + 1)
            return expect(i, ")"), ("c", callee, caller)
        if val == "loc":
            i, inner = expr(expect(i + 1, "("), depth + 1)
            return expect(i, ")"), inner
        if val == "fused":
            i, nest = i + 1, 0
            while toks[i][1] == "<" or nest:  # fused<metadata>[...]: skip the metadata
                nest += {"<": 1, ">": -1}.get(toks[i][1], 0)
                if toks[i][0] == "end":
                    raise _LocSyntaxError
                i += 1
            i, kids = expect(i, "["), []
            while toks[i][1] != "]":
                i, kid = expr(i, depth + 1)
                kids.append(kid)
                if toks[i][1] == ",":
                    i += 1
                elif toks[i][1] != "]":
                    raise _LocSyntaxError
            return i + 1, ("f", tuple(kids))
        raise _LocSyntaxError

    try:
        return expr(0, 0)[1]
    except (_LocSyntaxError, IndexError, ValueError, RecursionError):
        return _UNKNOWN


def _trailing_loc(line: str) -> str | None:
    """The expression of the ``loc(...)`` that ends the line (an op's own location), else None."""
    end = len(line.rstrip())
    if end == 0 or line[end - 1] != ")":
        return None
    start = line.rfind("loc(", 0, end)
    if start >= 0 and (start == 0 or line[start - 1] in " \t"):
        inner = line[start + 4 : end - 1]
        if "(" not in inner and ")" not in inner and '"' not in inner:
            return inner  # loc(#loc12), loc(unknown)
    for _ in range(8):  # a real line has one or two; a junk line of many stays linear
        if start < 0:
            break
        if start == 0 or not (line[start - 1].isalnum() or line[start - 1] in "_."):
            depth, in_str, i = 0, False, start + 3
            while i < end:
                c = line[i]
                if in_str:
                    i += c == "\\"
                    in_str = c != '"'
                elif c == '"':
                    in_str = True
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            if depth == 0 and i == end - 1:
                return line[start + 4 : end - 1]
        start = line.rfind("loc(", 0, start)
    return None


def parse_stablehlo(text: str, user_file: UserFile | None = None) -> StableHloMap:
    """Locations of every op line of a StableHLO/MLIR text printed with ``debug_info=True``.

    ``#locN`` aliases may be used before they are defined (they are printed at the end), so op
    lines are resolved after the whole text is read. A region op (``stablehlo.while``, ``case``)
    prints its location on its closing ``}`` line; that location is also given to the op's
    first line (the line at the same indentation that opened it).
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_stablehlo expects str, not {type(text).__name__}")
    aliases, pending = _scan_stablehlo(text)
    memo: dict[str, Resolved] = {}

    def deref(node: LocNode) -> LocNode:
        for _ in range(_MAX_DEPTH):
            if node[0] != "r":
                return node
            node = aliases.get(node[1], _UNKNOWN)
        return _UNKNOWN

    def resolve(node: LocNode, depth: int = 0) -> Resolved:
        kind = node[0]
        if depth > _MAX_DEPTH or kind == "u":
            return _EMPTY
        if kind == "r":
            if node[1] not in memo:
                memo[node[1]] = _EMPTY  # a cycle resolves to nothing
                memo[node[1]] = resolve(aliases.get(node[1], _UNKNOWN), depth + 1)
            return memo[node[1]]
        if kind == "l":
            return "", ((node[1], node[2], node[3]),), ("",)
        if kind == "n":
            if node[2] is None:
                return node[1], (), ()
            _, frames, funcs = resolve(node[2], depth + 1)
            if deref(node[2])[0] == "l":  # "fn"("file":l:c): a frame and its function name
                funcs = (node[1],)
            return node[1], frames, funcs
        if kind == "c":
            n1, f1, fn1 = resolve(node[1], depth + 1)
            _, f2, fn2 = resolve(node[2], depth + 1)
            return "", f1 + f2, fn1 + fn2
        kids = [resolve(k, depth + 1) for k in node[1]]  # fused: first name, first stack
        return (next((k[0] for k in kids if k[0]), ""), *next((k[1:] for k in kids if k[1]), ((), ())))

    try:
        for alias in aliases:  # in printed order, so dependencies are mostly memoized first
            resolve(("r", alias))
    except RecursionError:
        pass
    pick = user_picker(user_file)
    ops: dict[int, HloOpLoc] = {}
    made: dict[tuple[int, str], HloOpLoc] = {}  # ops sharing a location share one HloOpLoc
    for n, node, op in pending:
        if (loc := made.get((id(node), op))) is None:
            try:
                name, frames, funcs = resolve(node)
            except RecursionError:
                name, frames, funcs = _EMPTY
            loc = made[id(node), op] = HloOpLoc(name, primitive_of(name) if name else "", frames, funcs, pick(frames), op)
        ops[n] = loc
    ops = dict(sorted(ops.items()))
    return StableHloMap(ops, build_index((n, o.user, o.frames) for n, o in ops.items()))


def _scan_stablehlo(text: str) -> tuple[dict[str, LocNode], list[tuple[int, LocNode, str]]]:
    """One pass over the text: the ``#locN`` aliases, and each op line's location expression
    with its op (a region op's location, printed on its closing line, given to its first line)."""
    aliases: dict[str, LocNode] = {}
    pending: list[tuple[int, LocNode, str]] = []  # (line, loc expression, op)
    starts: dict[int, tuple[int, str]] = {}  # indentation -> (line, op) of the latest op start
    has_loc: set[int] = set()
    parsed: dict[str, LocNode] = {}  # expression text -> node: op lines repeat a few aliases

    def parse(expr: str) -> LocNode:
        if (node := parsed.get(expr)) is None:
            node = parsed[expr] = _parse_loc(expr)
        return node

    for n, line in enumerate(text.split("\n"), 1):
        if line[:1] == "#" and (a := _ALIAS_DEF.match(line)):
            aliases[a.group(1)] = _parse_loc(a.group(2))
            continue
        body = line.lstrip()
        if not body or body.startswith(("#", "^", "//")):
            continue
        indent = len(line) - len(body)
        expr = _trailing_loc(line) if "loc(" in line else None
        if body[0] == "}":
            if expr is not None:  # "}, {" and "} do {" continue the op; "} loc(...)" ends it
                first = starts.pop(indent, None)
                node = parse(expr)
                pending.append((n, node, first[1] if first else ""))
                if first is not None and first[0] not in has_loc:
                    pending.append((first[0], node, first[1]))
            continue
        if line[-1] == "{" and _LABEL.match(line):
            continue
        m = _OP.match(line)
        op = m.group(1) if m else ""
        starts[indent] = (n, op)
        if expr is not None:
            pending.append((n, parse(expr), op))
            has_loc.add(n)
    return aliases, pending
