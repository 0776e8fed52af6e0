"""Call-argument specs in jaxpr notation: ``f32[8,128], {"b": f32[128]}, 3, training=True``.

The text is read exactly like the argument list of a Python call, with `ast` (never evaluated).
An array spec is ``dtype[dims]`` (``f32[]`` is a scalar); dicts, lists and tuples holding array
specs are pytrees; every other Python literal is a *static* value. Because ``f32[]`` is not valid
Python, a `tokenize` pass first rewrites ``NAME[]`` to ``NAME[()]`` (string literals untouched)
and keeps a map back to the user's character offsets, so every error points at the user's text.
"""

from __future__ import annotations

import ast
import cmath
import keyword
import math
import tokenize
from dataclasses import dataclass

from jaxscope.schema.errors import JaxscopeError
from jaxscope.targets.tokens import PREFIX, SUFFIX, Token, tokens_of

# ---------------------------------------------------------------------------- dtypes

SHORT_TO_LONG: dict[str, str] = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "bool",
    "c64": "complex64",
    "c128": "complex128",
    "key": "key",
}
SHORT: dict[str, str] = {long: short for short, long in SHORT_TO_LONG.items()}
"""Canonical (long) dtype name -> its jaxpr short name."""
DTYPES: dict[str, str] = {**SHORT_TO_LONG, **{long: long for long in SHORT}}
"""Every accepted dtype name -> its canonical (long, numpy-style) name."""
ITEM_BYTES: dict[str, int] = {
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1, "complex64": 8, "complex128": 16, "key": 8,
}  # fmt: skip
MAX_ARRAY_BYTES = 2**63 - 1

ACCEPTED_FORMS = """\
accepted forms (written as the arguments of a Python call, separated by commas):
  arrays    f32[8,128]  bf16[2,3]  i32[]  bool[4]  u32[2]  key[]   dtype[dims]; [] is a scalar
  dtypes    f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool c64 c128 key (or float32, int8, ...)
  pytrees   {"w": f32[4,3], "b": f32[3]}  [f32[2], f32[2]]  (f32[2], 3)
  static    3  0.5  -1  "relu"  None  (1, 2)      Python literals are static arguments
  keywords  training=True  x=f32[4]
  example   f32[8,128], {"b": f32[128]}, 3, training=True"""


# ---------------------------------------------------------------------------- the specs


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """An abstract array: canonical dtype name (e.g. "float32", "key") and a concrete shape."""

    dtype: str
    shape: tuple[int, ...]

    def short(self) -> str:
        """Jaxpr notation, e.g. ``f32[8,128]``; it round-trips through `parse_spec`."""
        return f"{SHORT.get(self.dtype, self.dtype)}[{','.join(_int_text(d) for d in self.shape)}]"


@dataclass(frozen=True, slots=True)
class StaticValue:
    """A Python literal, passed as is (and made static when traced)."""

    value: object


@dataclass(frozen=True, slots=True)
class TupleSpec:
    """A tuple pytree holding at least one array spec (a tuple of literals is a StaticValue)."""

    items: tuple[Spec, ...]


@dataclass(frozen=True, slots=True)
class ListSpec:
    """A list pytree holding at least one array spec (a list of literals is a StaticValue)."""

    items: tuple[Spec, ...]


@dataclass(frozen=True, slots=True)
class DictSpec:
    """A dict pytree holding at least one array spec: literal keys, in the order written."""

    items: tuple[tuple[object, Spec], ...]


Spec = ArraySpec | StaticValue | TupleSpec | ListSpec | DictSpec


@dataclass(frozen=True, slots=True)
class CallSpec:
    """The arguments of one call: positional specs, keyword specs in order, and the source text."""

    args: tuple[Spec, ...] = ()
    kwargs: tuple[tuple[str, Spec], ...] = ()
    text: str = ""


class SpecError(JaxscopeError, ValueError):
    """An argument spec (`--args`) that does not parse; `offset` (0-based, into `text`) and `token`
    locate the culprit. Remedy: write it as a Python call, arrays as `f32[8,128]`."""

    def __init__(self, message: str, text: str = "", offset: int | None = None, token: str = "") -> None:
        super().__init__(message, text, offset, token)  # all four, so the error pickles
        self.message = message
        self.text = text
        self.offset = offset
        self.token = token

    def __str__(self) -> str:
        lines = [self.message]
        if self.text.strip():
            if self.offset is None:
                lines.append("  " + self.text.split("\n", 1)[0])
            else:
                start = self.text.rfind("\n", 0, self.offset) + 1
                end = self.text.find("\n", self.offset)
                line = self.text[start : end if end >= 0 else len(self.text)]
                col = self.offset - start
                width = max(1, min(len(self.token.split("\n", 1)[0]), len(line) - col))
                pad = "".join(c if c == "\t" else " " for c in line[:col])
                lines += ["  " + line, "  " + pad + "^" * width]
        lines.append(ACCEPTED_FORMS)
        return "\n".join(lines)


# ---------------------------------------------------------------------------- public API


def parse_call(text: str) -> CallSpec:
    """Parse call-argument text ("" is an empty call); raise SpecError pointing at the bad token."""
    return _Parser(text).call()


def parse_spec(text: str) -> Spec:
    """Parse exactly one value (an array spec, a pytree or a literal); raise SpecError otherwise."""
    parser = _Parser(text)
    call = parser.call()
    if len(call.args) == 1 and not call.kwargs:
        return call.args[0]
    if parser.parsed is None or not (call.args or call.kwargs):
        raise SpecError("expected a value", text, None, "")
    if call.kwargs:
        start, token = parser.span(parser.parsed.keywords[0])
        raise SpecError("expected a single value, got a keyword argument", text, start, token)
    start, token = parser.span(parser.parsed.args[1])
    raise SpecError(f"expected a single value, got {len(call.args)} values", text, start, token)


def contains_array(spec: Spec) -> bool:
    """True when an ArraySpec is anywhere inside: such an argument is traced, otherwise static."""
    if isinstance(spec, ArraySpec):
        return True
    if isinstance(spec, (TupleSpec, ListSpec)):
        return any(contains_array(s) for s in spec.items)
    if isinstance(spec, DictSpec):
        return any(contains_array(s) for _, s in spec.items)
    return False


def is_static(spec: Spec) -> bool:
    """True when the argument holds no array: it is passed as a static value."""
    return not contains_array(spec)


def format_spec(spec: Spec) -> str:
    """Canonical text; ``parse_spec(format_spec(s)) == s`` for every spec `parse_spec` returns."""
    if isinstance(spec, ArraySpec):
        return spec.short()
    if isinstance(spec, StaticValue):
        return _format_literal(spec.value)
    if isinstance(spec, TupleSpec):
        inner = ", ".join(format_spec(s) for s in spec.items)
        return f"({inner},)" if len(spec.items) == 1 else f"({inner})"
    if isinstance(spec, ListSpec):
        return "[" + ", ".join(format_spec(s) for s in spec.items) + "]"
    if isinstance(spec, DictSpec):
        return "{" + ", ".join(f"{_format_literal(k)}: {format_spec(s)}" for k, s in spec.items) + "}"
    raise TypeError(f"not a spec: {spec!r}")


def format_call(call: CallSpec) -> str:
    """Canonical call text; `parse_call` of it gives back the same args and kwargs."""
    parts = [format_spec(s) for s in call.args] + [f"{k}={format_spec(s)}" for k, s in call.kwargs]
    return ", ".join(parts)


def _format_literal(value: object) -> str:
    """`repr`, except that infinities (reachable as ``1e999``, ``1e999j``) and ints too long for
    `repr` (``0xfff...``) stay parseable literals."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "1e999" if value > 0 else "-1e999"
    if isinstance(value, int) and not isinstance(value, bool):
        return _int_text(value)
    if isinstance(value, complex) and not cmath.isfinite(value):  # repr gives "infj"; NaN is unreachable
        sign = "-" if math.copysign(1.0, value.imag) < 0 else "+"
        imag = "1e999" if math.isinf(value.imag) else repr(abs(value.imag))
        return f"({_format_literal(value.real)} {sign} {imag}j)"
    if isinstance(value, set):  # never empty: "{}" parses as a dict
        return "{" + ", ".join(_format_literal(v) for v in value) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_format_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_format_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_literal(k)}: {_format_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _int_text(value: int) -> str:
    """`repr`, or hex past Python's int-to-decimal digit limit (``0x`` literals have none)."""
    try:
        return repr(value)
    except ValueError:
        return hex(value)


def _short_repr(value: object, fallback: str) -> str:
    """`repr` for a message; `fallback` (the user's text) when it fails (an int too long to print)."""
    try:
        return repr(value)
    except ValueError:
        return fallback


# ---------------------------------------------------------------------------- the parser

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_UNPACKING = "*args/**kwargs are not supported: write each argument out"


MAX_DEPTH = 200  # expression nesting a spec may have (CPython's parser alone allows 200 brackets)
_NOT_NESTING = frozenset("()[]{},:=")  # operator tokens that add no expression level by themselves


def _deeper_than(node: ast.AST, limit: int) -> bool:
    """Whether the tree under `node` is more than `limit` levels deep (walked without recursion)."""
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(current))
    return False


class _Parser:
    """One parse of one text: a tokenize pre-pass (checks, ``NAME[]`` rewrite), then the AST walk."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.clean = text.replace("\r\n", " \n").replace("\r", "\n")  # same length: offsets hold
        self.tokens: list[Token] = []
        self.truncated = False  # the tokenizer stopped inside the text: the checks saw a prefix
        self.new = self.clean  # after the rewrite
        self.origin: list[int] = list(range(len(self.clean) + 1))  # index in `new` -> in `text`
        self.parsed: ast.Call | None = None
        self._lines: list[str] | None = None  # of the wrapped `new`, once it is final
        self._starts: list[int] = []

    # -- offsets and errors

    def error(self, message: str, start: int | None, token: str = "") -> SpecError:
        return SpecError(message, self.text, start, token)

    def span(self, node: ast.expr | ast.keyword) -> tuple[int, str]:
        """Offset into the text and the user's source text of a node of the parsed tree."""
        assert node.end_lineno is not None and node.end_col_offset is not None  # ast.parse sets every end
        start = self.origin[self._new_index(node.lineno, node.col_offset, byte_col=True)]
        end_new = self._new_index(node.end_lineno, node.end_col_offset, byte_col=True)
        end = self.origin[end_new - 1] + 1 if end_new > 0 else 0
        return start, self.text[start : max(start, end)]

    def _new_index(self, lineno: int, col: int, *, byte_col: bool) -> int:
        """(line, column) in the wrapped rewritten text -> index into `new`, clamped to it."""
        if self._lines is None:
            self._lines = (PREFIX + self.new + SUFFIX).split("\n")
            self._starts = [0]
            for x in self._lines:
                self._starts.append(self._starts[-1] + len(x) + 1)
        lines = self._lines
        lineno = min(max(lineno, 1), len(lines))
        line = lines[lineno - 1]
        if byte_col and not line.isascii():  # AST columns count UTF-8 bytes
            col = len(line.encode("utf-8")[: max(col, 0)].decode("utf-8", errors="ignore"))
        absolute = self._starts[lineno - 1] + min(max(col, 0), len(line))
        return min(max(absolute - len(PREFIX), 0), len(self.new))

    def _token_at(self, offset: int) -> str:
        for _, start, end, string in self.tokens:
            if start <= offset < end:
                return string
        return self.text[offset : offset + 1].strip()

    # -- pass 1: tokens

    def _tokenize(self) -> None:
        """Collect the text's tokens; stop at a tokenizer error inside the text (the parser reports it)."""
        self.tokens, self.truncated = tokens_of(self.clean)

    def _check_brackets(self) -> None:
        stack: list[tuple[str, int]] = []
        for kind, start, _, string in self.tokens:
            if kind != tokenize.OP:
                continue
            if string in _OPEN:
                stack.append((string, start))
            elif string in _CLOSE:
                if not stack:
                    raise self.error(f"unbalanced brackets: {string!r} closes nothing", start, string)
                opener, _ = stack.pop()
                if _OPEN[opener] != string:
                    raise self.error(f"unbalanced brackets: {opener!r} closed by {string!r}", start, string)
        if stack and not self.truncated:
            opener, at = stack[-1]
            raise self.error(f"unbalanced brackets: {opener!r} is never closed", at, opener)

    def _check_argument_order(self) -> None:
        """Report a positional argument after a keyword one at the argument itself."""
        depth = 0
        seen_keyword = False
        segment: list[Token] = []
        for tok in [*self.tokens, (tokenize.OP, len(self.clean), len(self.clean), ",")]:
            kind, _, _, string = tok
            if kind == tokenize.OP and string in _OPEN:
                depth += 1
            elif kind == tokenize.OP and string in _CLOSE:
                depth -= 1
            if depth != 0 or kind != tokenize.OP or string != ",":
                segment.append(tok)
                continue
            if segment:
                head = segment[0]
                if head[3] == "**" or (len(segment) > 1 and head[0] == tokenize.NAME and segment[1][3] == "="):
                    seen_keyword = True
                elif seen_keyword and head[3] != "*":
                    token = self.text[head[1] : segment[-1][2]]
                    raise self.error("positional argument follows keyword argument", head[1], token)
            segment = []

    def _rewrite_empty_shapes(self) -> None:
        """``NAME [ ]`` -> ``NAME[()]``: jaxpr's scalar shape, made valid Python."""
        pieces: list[str] = []
        origin: list[int] = []
        pos = 0
        for name, lb, rb in zip(self.tokens, self.tokens[1:], self.tokens[2:], strict=False):
            if (
                name[0] == tokenize.NAME
                and not keyword.iskeyword(name[3])
                and (lb[0], lb[3], rb[0], rb[3]) == (tokenize.OP, "[", tokenize.OP, "]")
            ):
                pieces.append(self.clean[pos : lb[1]])
                origin.extend(range(pos, lb[1]))
                pieces.append("[()]")
                origin.extend([lb[1], rb[1], rb[1], rb[1]])
                pos = rb[2]
        if pieces:
            pieces.append(self.clean[pos:])
            origin.extend(range(pos, len(self.clean) + 1))
            self.new = "".join(pieces)
            self.origin = origin

    # -- pass 2: the AST

    def tree(self) -> ast.Call:
        """The text parsed as the arguments of a call ``_(...)``; SyntaxErrors become SpecErrors."""
        if "\0" in self.text:
            raise self.error("the text contains a NUL character", self.text.index("\0"), "\0")
        try:
            self.text.encode("utf-8")  # what the compiler does first; a lone surrogate cannot be encoded
        except UnicodeEncodeError as exc:
            bad = self.text[exc.start]
            raise self.error("the text contains an unpaired surrogate character", exc.start, bad) from None
        self._tokenize()
        self._check_brackets()
        self._check_argument_order()
        self._rewrite_empty_shapes()
        wrapped = PREFIX + self.new + SUFFIX
        try:
            body = ast.parse(wrapped, mode="eval").body
        except (RecursionError, MemoryError):  # "-" * 3000 + "1": CPython's parser gives up on depth
            raise self._locate_error() or self.error("the text is nested too deeply to parse", None) from None
        except SyntaxError as exc:
            raise self._error_at(self._new_index(exc.lineno or 1, (exc.offset or 1) - 1, byte_col=False), exc.msg) from None
        # Python 3.13's parser takes "-" * 3000 + "1" (3.11 and 3.12 give up), and the walks below
        # would not; only operators nest without brackets, so a text with few of them is not walked
        operators = sum(1 for kind, _, _, string in self.tokens if kind == tokenize.OP and string not in _NOT_NESTING)
        if operators > MAX_DEPTH // 2 and _deeper_than(body, MAX_DEPTH):
            raise self.error("the text is nested too deeply to parse", None)
        last_line = wrapped.count("\n") + 1
        if not (isinstance(body, ast.Call) and body.func.col_offset == 0 and (body.end_lineno, body.end_col_offset) == (last_line, 1)):
            raise self.error("unbalanced brackets", None)  # only if the pre-pass stopped early
        self.parsed = body
        return body

    def _locate_error(self) -> SpecError | None:
        """The first syntax error, found one bracketed item at a time; None if there is none.

        CPython's parser also gives up when a syntax error sits in a long sequence (a stray comma
        in a 1000-item list: its error pass recurses per item), though nothing is deep. Each item
        of each container is parsed alone, in its brackets, with the brackets nested in it
        emptied (what is inside them is checked as a container of its own)."""
        text = self.new
        tokens = tokens_of(text)[0]
        closer: dict[int, int] = {}  # token index of an opening bracket -> of its closing one
        stack: list[int] = []
        for i, (kind, _, _, string) in enumerate(tokens):
            if kind == tokenize.OP and string in _OPEN:
                stack.append(i)
            elif kind == tokenize.OP and string in _CLOSE and stack:
                closer[stack.pop()] = i
        found: list[SpecError] = []
        for a, b in [(-1, len(tokens)), *closer.items()]:
            opening, closing = (PREFIX, SUFFIX) if a < 0 or tokens[a][3] == "(" else (tokens[a][3], "\n" + _OPEN[tokens[a][3]])
            start = tokens[a][2] if a >= 0 else 0
            end = tokens[b][1] if b < len(tokens) else len(text)
            # each item: (start, end, what the brackets nested in it hold as (start, length)); a comma ends it
            items: list[tuple[int, int, list[tuple[int, int]] | None]] = []  # None: an item without a token
            emptied: list[tuple[int, int]] = []
            i, at, held = a + 1, start, False
            while i < b:
                kind, t0, t1, string = tokens[i]
                if kind == tokenize.OP and string == ",":
                    items.append((at, t0, emptied if held else None))
                    at, held, emptied = t0 + 1, False, []
                    i += 1
                    continue
                held = True
                if i in closer:
                    emptied.append((t1, tokens[closer[i]][1] - t1))
                    i = closer[i]
                i += 1
            items.append((at, end, emptied if held else None))
            for k, (i0, i1, inner) in enumerate(items):
                if inner is None:  # no token: only the last item may be empty (a trailing comma, an empty container)
                    if k < len(items) - 1:
                        found.append(self._error_at(i1, "invalid syntax"))
                    continue
                item = text[i0:i1]
                for n0, n in inner:  # every offset kept: "f32[4, 4]" -> "f32[0   ]"
                    if n:
                        item = item[: n0 - i0] + "0" + " " * (n - 1) + item[n0 - i0 + n :]
                try:
                    ast.parse(opening + item + closing, mode="eval")
                except SyntaxError as exc:
                    lines = (opening + item + closing).split("\n")
                    line = min(max(exc.lineno or 1, 1), len(lines))
                    col = sum(len(x) + 1 for x in lines[: line - 1]) + (exc.offset or 1) - 1 - len(opening)
                    found.append(self._error_at(i0 + min(max(col, 0), len(item)), exc.msg))
                except (RecursionError, MemoryError):
                    found.append(self.error("the text is nested too deeply to parse", self.origin[i0]))
        return min(found, key=lambda e: e.offset or 0, default=None)

    def _error_at(self, new_index: int, msg: str) -> SpecError:
        """A parser's `msg` at an index into `new`, located in the user's text."""
        at = self.origin[min(new_index, len(self.new))]
        token = self._token_at(at) if at < len(self.text) else ""
        return self.error(msg if msg.startswith("invalid syntax") else f"invalid syntax: {msg}", at, token)

    def call(self) -> CallSpec:
        if not self.text.strip():
            return CallSpec((), (), self.text)
        tree = self.tree()
        args: list[Spec] = []
        for node in tree.args:
            if isinstance(node, ast.Starred):
                raise self.error(_UNPACKING, *self.span(node))
            args.append(self.value(node))
        kwargs: list[tuple[str, Spec]] = []
        names: set[str] = set()
        for kw in tree.keywords:
            if kw.arg is None:
                start, token = self.span(kw)
                raise self.error(_UNPACKING, start, token)
            if kw.arg in names:
                start, _ = self.span(kw)
                raise self.error(f"duplicate keyword argument {kw.arg!r}", start, kw.arg)
            names.add(kw.arg)
            kwargs.append((kw.arg, self.value(kw.value)))
        return CallSpec(tuple(args), tuple(kwargs), self.text)

    def value(self, node: ast.expr) -> Spec:
        """One argument or pytree leaf -> a Spec; containers without arrays become StaticValues."""
        if isinstance(node, ast.Subscript):
            return self.array(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = tuple(self.value(e) for e in node.elts)
            is_tuple = isinstance(node, ast.Tuple)
            statics = [s for s in items if isinstance(s, StaticValue)]
            if len(statics) == len(items):
                values = [s.value for s in statics]
                return StaticValue(tuple(values) if is_tuple else values)
            return TupleSpec(items) if is_tuple else ListSpec(items)
        if isinstance(node, ast.Dict):
            return self.dict(node)
        if isinstance(node, ast.Set):
            items = tuple(self.value(e) for e in node.elts)
            statics = [s for s in items if isinstance(s, StaticValue)]
            if len(statics) != len(items):
                raise self.error("a set cannot hold array specs: use a tuple or a list", *self.span(node))
            try:
                return StaticValue({s.value for s in statics})
            except TypeError:
                raise self.error("set items must be hashable", *self.span(node)) from None
        if isinstance(node, ast.Starred):
            raise self.error("* unpacking is not supported", *self.span(node))
        if isinstance(node, ast.Name) and node.id in DTYPES:
            start, token = self.span(node)
            raise self.error(f"array spec {token!r} needs a shape, e.g. {token}[8], or {token}[] for a scalar", start, token)
        if isinstance(node, (ast.Constant, ast.UnaryOp, ast.BinOp)):
            try:
                return StaticValue(ast.literal_eval(node))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
        start, token = self.span(node)
        raise self.error(f"{token!r} is not a literal or an array spec", start, token)

    def dict(self, node: ast.Dict) -> Spec:
        items: list[tuple[object, Spec]] = []
        seen: set[object] = set()
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                start, token = self.span(value_node)
                at = self.text.rfind("**", 0, start)
                raise self.error("** unpacking is not supported", at, self.text[at : start + len(token)])
            key = self.value(key_node)
            if not isinstance(key, StaticValue):
                raise self.error("dict keys must be literals, not array specs", *self.span(key_node))
            try:
                duplicate = key.value in seen
                seen.add(key.value)
            except TypeError:
                raise self.error("dict keys must be hashable literals", *self.span(key_node)) from None
            if duplicate:
                start, token = self.span(key_node)
                raise self.error(f"duplicate dict key {_short_repr(key.value, token)}", start, token)
            items.append((key.value, self.value(value_node)))
        statics = [(k, s) for k, s in items if isinstance(s, StaticValue)]
        if len(statics) == len(items):
            return StaticValue({k: s.value for k, s in statics})
        return DictSpec(tuple(items))

    def array(self, node: ast.Subscript) -> ArraySpec:
        if not isinstance(node.value, ast.Name):
            start, token = self.span(node)
            raise self.error(f"{token!r} is not a literal or an array spec", start, token)
        if node.value.id not in DTYPES:
            (dtype_start, dtype), (_, token) = self.span(node.value), self.span(node)
            raise self.error(f"unknown dtype {dtype!r} in {token!r}", dtype_start, dtype)
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape: list[int] = []
        for dim in dims:
            value = dim.value if isinstance(dim, ast.Constant) else None
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                dim_start, dim_text = self.span(dim)
                hint = " (symbolic dimensions are not supported yet)" if isinstance(dim, ast.Name) else ""
                raise self.error(f"shape dimensions must be non-negative integers, got {dim_text!r}{hint}", dim_start, dim_text)
            if value > MAX_ARRAY_BYTES:
                dim_start, dim_text = self.span(dim)
                raise self.error(f"shape dimension {dim_text} is beyond what XLA takes (2**63 - 1)", dim_start, dim_text)
            shape.append(value)
        dtype = DTYPES[node.value.id]
        size = math.prod(shape) * ITEM_BYTES.get(dtype, 4)
        if size > MAX_ARRAY_BYTES:  # XLA aborts on a shape whose byte size overflows int64
            start, token = self.span(node)
            raise self.error(f"{token!r} would take {size:.3g} bytes: more than XLA can address (2**63 - 1)", start, token)
        return ArraySpec(dtype, tuple(shape))
