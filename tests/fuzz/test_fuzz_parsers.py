"""Fuzz the text parsers users and workers feed: a parse or a clear error, never a crash or a hang.

Targets (all pure Python, no jax, no Qt): the input-spec language (core.argspec), the StableHLO
and HLO location parsers (core.hlo_locations, core.hlo_module), the IR lexers (core.hlo_lexer),
the tutorial guide parser (core.guide) and the JSON decoder (core.serialize). Inputs are grammar-
generated valid texts, the golden IR texts, mutations of both, and plain hostile text.

Reproducible and bounded: every test is derandomized (the same examples on every run, no example
database) with a small `max_examples`, and has a pytest timeout so a hang fails instead of stalling
CI. JAXSCOPE_FUZZ_SCALE=20 runs 20x the examples, for a longer hunt by hand. Every bug the fuzzer
found is pinned with `@example` on the test that found it.
"""

from __future__ import annotations

import dataclasses
import json
import keyword
import math
import os
import pathlib
import pickle
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pygments.token import Error, Whitespace

from jaxscope.analysis.guide import Guide, Span, parse_guide
from jaxscope.ir.hlo_lexer import HloLexer, StableHloLexer
from jaxscope.ir.hlo_locations import HloOpLoc, StableHloMap, parse_stablehlo, unescape
from jaxscope.ir.hlo_module import HloModuleMap, parse_hlo
from jaxscope.schema.codec import from_jsonable, loads, to_jsonable
from jaxscope.schema.graph import Graph
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import ErrorInfo, TraceResult
from jaxscope.targets.argspec import (
    DTYPES,
    ArraySpec,
    CallSpec,
    DictSpec,
    ListSpec,
    SpecError,
    StaticValue,
    TupleSpec,
    format_call,
    format_spec,
    parse_call,
    parse_spec,
)
from tests.conftest import build_sample, merge_tokens

GOLDENS = pathlib.Path(__file__).resolve().parents[1] / "goldens" / "hlo"
STABLE_TEXTS = [p.read_text(encoding="utf-8") for p in sorted(GOLDENS.glob("*.stablehlo.mlir"))]
HLO_TEXTS = [p.read_text(encoding="utf-8") for p in sorted(GOLDENS.glob("*.hlo.txt"))]


SCALE = float(os.environ.get("JAXSCOPE_FUZZ_SCALE", "1"))
TIMEOUT = round(120 * max(1.0, SCALE))  # a hang fails the test; it never stalls the run


def fuzz(n: int) -> settings:
    """`n` examples (times JAXSCOPE_FUZZ_SCALE), the same ones every run; no deadline (CI machines
    are slow and shared)."""
    return settings(
        max_examples=max(1, round(n * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# ------------------------------------------------------------------------- shared text strategies

# Characters that break parsers: quotes, escapes, brackets, the IR's punctuation, whitespace and
# line breaks of every kind, NUL and other controls, non-ASCII letters, a lone surrogate, an emoji.
NASTY_CHARS = "\"'\\()[]{}<>=:;,.#%@^!*/-+`~|&$?\x00\x01\x0b\x0c\x1b\x1c\x7f\x85\t\r\n \u00a0\u2028\u2029é中\ufeff\ud800😀"
NASTY_SNIPPETS = [
    *NASTY_CHARS,
    "loc(",
    "#loc3",
    "callsite(",
    " at ",
    "fused<",
    ">[",
    "unknown",
    '"f.py":1:2',
    " to :9",
    "metadata={",
    'op_name="',
    "stack_frame_id=",
    "calls=",
    "kind=kLoop",
    "/*",
    "*/",
    "->",
    "ROOT ",
    "ENTRY ",
    "FileNames",
    "StackFrames",
    "1 {file_location_id=1 parent_frame_id=1}",
    "f32[",
    "tensor<",
    "dense<",
    "!stablehlo.token",
    '\\"',
    "\\\\",
    "0x",
    "1e999",
    "\r\n",
]
nasty_text = st.text(alphabet=st.sampled_from(NASTY_CHARS), max_size=60) | st.text(max_size=60)
snippet = st.sampled_from(NASTY_SNIPPETS) | nasty_text


LINE_EDIT = st.sampled_from(["del", "dup", "swap", "splice", "insert", "cut", "repeat", "truncate"])
ANY_SEED = st.sampled_from(STABLE_TEXTS + HLO_TEXTS)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str], max_edits: int = 8) -> str:
    """A seed text after a few line edits (delete, duplicate, swap, splice from another seed),
    character edits (insert a nasty snippet, delete or repeat a span) or a truncation."""
    lines = draw(st.sampled_from(seeds)).split("\n")
    for _ in range(draw(st.integers(0, max_edits))):
        op = draw(LINE_EDIT)
        i = draw(st.integers(0, len(lines) - 1))  # split() never gives an empty list
        line = lines[i]
        a = draw(st.integers(0, len(line)))
        b = draw(st.integers(a, len(line)))
        if op == "del" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "splice":  # a line of any other seed (an HLO line in a StableHLO text...)
            other = draw(ANY_SEED).split("\n")
            lines.insert(i, draw(st.sampled_from(other)))
        elif op == "insert":
            lines[i] = line[:a] + draw(snippet) + line[a:]
        elif op == "cut":
            lines[i] = line[:a] + line[b:]
        elif op == "repeat":  # long lines: the place for super-linear regexes
            lines[i] = line[:a] + line[a:b] * draw(st.integers(2, 300)) + line[b:]
        else:
            text = "\n".join(lines)
            lines = text[: draw(st.integers(0, len(text)))].split("\n")
    return "\n".join(lines)


# ------------------------------------------------------------------------- argspec: the spec language

DTYPE_NAMES = sorted(DTYPES)
IDENTIFIERS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s) and s not in DTYPES)


# Strategies are built once, at import: one built per draw costs Hypothesis its set-up every time.
BEFORE = st.sampled_from(["", "", " ", "  ", "\n", "\t"])
AFTER = st.sampled_from(["", "", " ", "\n", " # note\n", "\r\n"])
# shapes XLA can address (at most 2**63 - 1 bytes): one big dimension, or a few small ones
DIMS = st.lists(st.integers(0, 2**40), max_size=1) | st.lists(st.integers(0, 2**14) | st.integers(0, 16), max_size=4)
SCALAR_SHAPE = st.sampled_from(["", " ", "()"])
DTYPE = st.sampled_from(DTYPE_NAMES)


def spaced(draw: st.DrawFn, text: str) -> str:
    """`text` with optional blanks, a comment or a line break around it (inside brackets they are free)."""
    return draw(BEFORE) + text + draw(AFTER)


@st.composite
def array_text(draw: st.DrawFn) -> str:
    dims = draw(DIMS)
    forms = [str(d) for d in dims]
    if dims and draw(st.booleans()):
        forms[0] = hex(dims[0])
    inner = ",".join(spaced(draw, f) for f in forms) if dims else draw(SCALAR_SHAPE)
    trailing = "," if dims and draw(st.booleans()) else ""
    return f"{draw(DTYPE)}[{inner}{trailing}]"


literal_text = st.one_of(
    st.integers(-(2**70), 2**70).map(repr),
    st.floats(allow_nan=False).map(lambda f: "1e999" if f == math.inf else "-1e999" if f == -math.inf else repr(f)),
    st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=1e6).map(repr),
    st.text(max_size=12).map(repr),
    st.binary(max_size=6).map(repr),
    st.sampled_from(["None", "True", "False", "1e999j", "-1e999", "0x" + "f" * 4000, "()", "[]", "{}", "-0.0"]),
)


CONTAINER_KIND = st.sampled_from(["tuple", "list", "dict"])
SEPARATOR = st.sampled_from([",", ", ", " ,\n", ",  # comment\n"])
ENDING = st.sampled_from(["", "", ",", "\n", "  "])
EMPTY_ENDING = st.sampled_from(["", "\n  "])


def containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Tuples, lists and dicts (literal keys, distinct) of `children`, as text."""
    items = st.lists(children, max_size=4)
    dict_keys = st.lists(st.integers(-5, 50) | st.text(string.ascii_letters, max_size=4), max_size=4, unique=True)

    @st.composite
    def container(draw: st.DrawFn) -> str:
        kind = draw(CONTAINER_KIND)
        if kind == "dict":
            pairs = [f"{spaced(draw, repr(k))}:{spaced(draw, draw(children))}" for k in draw(dict_keys)]
            return "{" + ",".join(pairs) + "}"
        parts = [spaced(draw, p) for p in draw(items)]
        if kind == "tuple":
            return "(" + ",".join(parts) + ("," if len(parts) == 1 else "") + ")"
        return "[" + ",".join(parts) + ("," if parts and draw(st.booleans()) else "") + "]"

    return container()


value_text = st.recursive(array_text() | literal_text, containers, max_leaves=12)
"""Grammar-generated values: array specs and literals, nested in tuples, lists and dicts."""


@st.composite
def call_text(draw: st.DrawFn) -> str:
    """A valid call: positional values, then keyword values with distinct names."""
    args = draw(st.lists(value_text, max_size=4))
    names = draw(st.lists(IDENTIFIERS, max_size=3, unique=True))
    parts = args + [f"{name}={draw(value_text)}" for name in names]
    return draw(SEPARATOR).join(parts) + draw(ENDING if parts else EMPTY_ENDING)


CHAR_EDIT = st.sampled_from(["insert", "delete", "replace"])


@st.composite
def mutated_call_text(draw: st.DrawFn) -> str:
    text = draw(call_text())
    for _ in range(draw(st.integers(1, 4))):
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + 6)))
        op = draw(CHAR_EDIT)
        new = draw(snippet) if op != "delete" else ""
        text = text[:a] + new + text[(b if op != "insert" else a) :]
    return text


# Inputs that found bugs, or that are the classic ways to break a recursive parser.
DEEP = ["[" * 5000, "(" * 5000, "{" * 5000, "[" * 5000 + "]" * 5000, "f32[" + "[" * 300 + "]" * 300 + "]"]
BUGS = [
    "-" * 3000 + "1",  # was RecursionError from ast.parse (deep unary ops)
    "-" * 10000 + "1",  # was MemoryError ("parser stack overflowed")
    "1" + "+1" * 5000,  # was RecursionError (a deep left-leaning BinOp)
    "not " * 10000 + "1",  # was MemoryError
    "x" + "[0]" * 5000,  # was RecursionError
    "\ud800",  # was UnicodeEncodeError from compile()
    "a=1, b='\udcff'",  # was UnicodeEncodeError
    "{0x" + "f" * 4000 + ": 1, 0x" + "f" * 4000 + ": 2}",  # was ValueError: repr of a > 4300-digit int
]


def check_call(text: str) -> CallSpec | None:
    """The contract: a CallSpec whose canonical text parses back to it, or a SpecError that
    locates the culprit inside the text and renders; nothing else escapes."""
    try:
        call = parse_call(text)
    except SpecError as exc:
        assert exc.text == text and exc.message
        assert exc.offset is None or 0 <= exc.offset <= len(text), (exc.offset, len(text))
        assert isinstance(str(exc), str) and isinstance(exc.token, str)
        again = pickle.loads(pickle.dumps(exc))
        assert (again.message, again.offset, again.token) == (exc.message, exc.offset, exc.token)
        return None
    assert isinstance(call, CallSpec) and call.text == text
    canonical = format_call(call)
    back = parse_call(canonical)
    # Equal values, not always equal texts: repr(-1j) is "(-0-1j)", which parses to (0-1j), whose
    # repr is "-1j" again (complex signed zeros); == does not see them, and neither does a spec.
    assert (back.args, back.kwargs) == (call.args, call.kwargs), canonical
    for spec in call.args:
        assert parse_spec(format_spec(spec)) == spec
    return call


def check_spec(text: str) -> None:
    try:
        spec = parse_spec(text)
    except SpecError as exc:
        assert exc.offset is None or 0 <= exc.offset <= len(text), (exc.offset, len(text))
        str(exc)
        return
    assert isinstance(spec, (ArraySpec, StaticValue, TupleSpec, ListSpec, DictSpec))
    assert parse_spec(format_spec(spec)) == spec


@pytest.mark.timeout(TIMEOUT)
@fuzz(120)
@given(call_text())
@example('f32[8,128], {"b": f32[128]}, 3, training=True')
@example("1e999j, -1e999-1e999j, (1e999+1e999j,)")  # format_call printed "infj": no round trip
@example("0x" + "f" * 4000 + ", u8[0x7fffffffffffffff]")  # format_call raised ValueError (int repr limit)
@example("{(1e999j,): f32[2]}")
def test_valid_specs_parse_and_round_trip(text: str) -> None:
    assert check_call(text) is not None, text


@pytest.mark.timeout(TIMEOUT)
@fuzz(250)
@given(mutated_call_text() | nasty_text | st.text(max_size=200))
@example("")
@example("\x00")
@example("\r\n\r")
@example("f32[] \\\n, 2")
@example("x" * 200_000)
@example("(bf16[],-0j)")
@example("A=0,B={0:-1j}")
def test_any_spec_text_parses_or_raises_spec_error(text: str) -> None:
    check_call(text)
    check_spec(text)


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("text", DEEP + BUGS, ids=lambda t: repr(t[:12]) + f"x{len(t)}")
def test_deep_and_pinned_spec_texts(text: str) -> None:
    """Deep nesting is a SpecError (CPython's parser limits), never RecursionError or MemoryError."""
    check_call(text)
    check_spec(text)


# ------------------------------------------------------------------------- StableHLO and HLO text


def check_stablehlo(text: str) -> StableHloMap:
    """Garbage in gives an empty or partial map, never an error (the module's promise)."""
    m = parse_stablehlo(text)
    n_lines = text.count("\n") + 1
    assert isinstance(m, StableHloMap)
    for n, op in m.ops.items():
        assert 1 <= n <= n_lines and isinstance(op, HloOpLoc)
        assert all(isinstance(f, str) and isinstance(ln, int) and isinstance(c, int) for f, ln, c in op.frames)
        if op.user is not None:
            assert op.user in op.frames and m.source_for_line(n) == op.user
            assert n in m.lines_for_source(op.user[0], op.user[1])
    return m


def check_hlo(text: str) -> HloModuleMap:
    m = parse_hlo(text)
    n_lines = text.count("\n") + 1
    assert isinstance(m, HloModuleMap)
    for n, ins in m.instructions.items():
        assert 1 <= n <= n_lines and ins.line == n and ins.computation in m.computations
        if ins.user is not None:
            assert n in m.lines_for_source(ins.user[0], ins.user[1])
    for comp in m.computations.values():
        assert 1 <= comp.line <= comp.end_line <= n_lines
    for fusion in m.fusions.values():
        assert m.fusion_of_line(fusion.line) == fusion
    return m


LONG_LINES = [  # each was super-linear (a backtracking regex rescanning a long line): seconds, not ms
    "a(" + ")->" * 20000,  # hlo_module._COMP
    "c {\n  %x = f32[] add(), metadata={" + "a" * 40000 + "}\n}",  # hlo_module._META_KV
    "FileLocations\n1 {" + "a" * 40000 + "}",  # hlo_module._KV_INT
    'c {\n  %x = f32[] add(), metadata={"' + 'metadata={\\"' * 20000 + "\n}",  # hlo_module._META: 144 s
    "c {\n  %x = f32[] fusion(), calls={" + "calls={" * 20000 + "\n}",  # hlo_module._CALLS
    "#a = loc(" + '\\"' * 20000 + ")",  # hlo_locations._TOKEN: an unterminated string
    "#a = loc(" + " " * 40000 + ")",  # hlo_locations._TOKEN: trailing blanks
]


@pytest.mark.timeout(TIMEOUT)
@fuzz(60)
@given(mutated(STABLE_TEXTS) | nasty_text)
@example(STABLE_TEXTS[0])
@example(LONG_LINES[5])
@example(LONG_LINES[6])
def test_stablehlo_parser_never_raises(text: str) -> None:
    check_stablehlo(text)


@pytest.mark.timeout(TIMEOUT)
@fuzz(60)
@given(mutated(HLO_TEXTS) | nasty_text)
@example(HLO_TEXTS[0])
@example(LONG_LINES[0])
@example(LONG_LINES[1])
@example(LONG_LINES[2])
@example(LONG_LINES[3])
@example(LONG_LINES[4])
def test_hlo_parser_never_raises(text: str) -> None:
    check_hlo(text)


@pytest.mark.timeout(TIMEOUT)
@fuzz(20)
@given(mutated(STABLE_TEXTS + HLO_TEXTS, max_edits=3))
def test_each_parser_survives_the_other_format(text: str) -> None:
    check_stablehlo(text)
    check_hlo(text)


def test_goldens_parse_to_something() -> None:
    """The seeds are real: every golden links some line (so the mutations start from real parses)."""
    assert all(check_stablehlo(t).index.by_user for t in STABLE_TEXTS)
    assert all(check_hlo(t).index.by_user for t in HLO_TEXTS)
    for parse in (parse_stablehlo, parse_hlo):
        with pytest.raises(TypeError):
            parse(b"bytes")  # type: ignore[arg-type]


@pytest.mark.timeout(TIMEOUT)
@fuzz(150)
@given(st.text(max_size=40) | st.text(alphabet='\\"xé\n', max_size=40))
@example("\\")
@example("a\\")
@example("\\\n")
def test_unescape_drops_one_backslash_per_escape(s: str) -> None:
    out = unescape(s)
    assert isinstance(out, str) and len(out) <= len(s)
    assert unescape(s.replace("\\", "\\\\")) == s  # escaping the backslashes is undone exactly


# ------------------------------------------------------------------------- the IR lexers


def lex(lexer_cls: type, text: str) -> list[tuple[Any, str]]:
    return list(lexer_cls(stripnl=False, ensurenl=False).get_tokens(text))


def check_lexer(lexer_cls: type, text: str) -> None:
    """Tokens cover the text exactly (Pygments drops a leading BOM and turns \\r\\n and \\r into
    \\n), none is an Error, and lexing line by line gives the same tokens (a view may lex any
    line on its own)."""
    expected = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    tokens = lex(lexer_cls, text)
    assert "".join(v for _, v in tokens) == expected
    assert not [v for t, v in tokens if t is Error]
    lexer = lexer_cls(stripnl=False, ensurenl=False)
    per_line: list[tuple[Any, str]] = []
    for line in expected.split("\n"):
        per_line += [(t, v) for _, t, v in lexer.get_tokens_unprocessed(line)] + [(Whitespace, "\n")]
    assert merge_tokens(per_line[:-1]) == merge_tokens(tokens)
    # with Pygments' defaults: leading and trailing newlines stripped, one added at the end
    default = "".join(v for _, v in lexer_cls().get_tokens(text))
    assert default == expected.strip("\n") + "\n"


LEXER_LONG_LINES = [  # each was quadratic: a failed match scanned to the end of the line from every start
    '\\"' * 20000,  # a string that never ends (both lexers)
    "/*a" * 20000,  # HloLexer: a comment that never ends
    'metadata={"' + '\\"' * 20000,  # HloLexer: metadata with a string that never ends
    "loc(" + '\\"' * 20000,  # StableHloLexer: the same inside loc(...)
    "f32[" * 20000,  # HloLexer: a shape that never ends
    "1." * 20000,  # HloLexer: a parameter-name lookahead rescanning a dotted number
]


@pytest.mark.timeout(TIMEOUT)
@fuzz(40)
@given(mutated(STABLE_TEXTS) | nasty_text)
@example(STABLE_TEXTS[0])
@example("a\n= 1")  # "\s*" let a rule span lines: per-line lexing gave other tokens
@example("#loc1\n=\nloc(unknown)")
@example("#l = loc(" + "callsite(" * 120 + "\n%0 = stablehlo.sine %a")  # 100+ "(" kept the next line in loc
@example(LEXER_LONG_LINES[0])
@example(LEXER_LONG_LINES[3])
def test_stablehlo_lexer_covers_the_text(text: str) -> None:
    check_lexer(StableHloLexer, text)


@pytest.mark.timeout(TIMEOUT)
@fuzz(40)
@given(mutated(HLO_TEXTS) | nasty_text)
@example(HLO_TEXTS[0])
@example("HloModule\nm")  # "\s+" let a rule span lines: per-line lexing gave other tokens
@example("x:\n")
@example(LEXER_LONG_LINES[0])
@example(LEXER_LONG_LINES[1])
@example(LEXER_LONG_LINES[2])
@example(LEXER_LONG_LINES[4])
@example(LEXER_LONG_LINES[5])
def test_hlo_lexer_covers_the_text(text: str) -> None:
    check_lexer(HloLexer, text)


# ------------------------------------------------------------------------- the tutorial guide

SAFE = string.ascii_letters + string.digits + " _-.,:"
word = st.text(alphabet=string.ascii_letters + string.digits + "_-.,:", min_size=1, max_size=8)
phrase = st.text(alphabet=SAFE, min_size=1, max_size=12).filter(str.strip)
PART = st.sampled_from(["word", "word", "code", "link"])
PARAGRAPH_BREAK = st.sampled_from([" ", "\n", "\n   "])


@st.composite
def guide_doc(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """A docstring built from words, `code` and [text](show:QUERY) links, and its links in order."""
    links: list[tuple[str, str]] = []
    paragraphs = []
    for _ in range(draw(st.integers(0, 4))):
        parts = []
        for _ in range(draw(st.integers(1, 8))):
            kind = draw(PART)
            if kind == "word":
                parts.append(draw(word))
            elif kind == "code":
                parts.append(f"`{draw(word)}`")
            else:
                text, query = draw(phrase), draw(phrase)
                links.append((text, query.strip()))
                parts.append(f"[{text}](show:{query})")
        paragraphs.append(draw(PARAGRAPH_BREAK).join(parts))
    title = draw(phrase)
    return title + "\n\n" + "\n\n".join(paragraphs), links


@pytest.mark.timeout(TIMEOUT)
@fuzz(100)
@given(guide_doc())
def test_guide_finds_every_link_in_order(doc: tuple[str, list[tuple[str, str]]]) -> None:
    text, links = doc
    guide = parse_guide(text)
    assert guide.links() == links
    assert guide.title == text.split("\n", 1)[0].strip()


GUIDE_PIECES = ["[a](show:b)", "](show:", "`x`", "\n\n", "a"]
GUIDE_LONG = [  # each was quadratic: every "[" (or "(show:") rescanned the rest of the paragraph
    "t\n\n" + "[" * 40000,
    "t\n\n" + "[a](show:" * 10000,
    "t\n\n" + "[" * 20000 + "]",
]


@pytest.mark.timeout(TIMEOUT)
@fuzz(120)
@given(st.lists(st.sampled_from([*NASTY_CHARS, *GUIDE_PIECES]), max_size=100).map("".join) | st.text(max_size=200))
@example("")
@example("[a [b](show:x)")
@example("[](show:)")
@example("[`f`](show: f )")
@example(GUIDE_LONG[0])
@example(GUIDE_LONG[1])
@example(GUIDE_LONG[2])
def test_guide_parses_any_docstring(text: str) -> None:
    guide = parse_guide(text)
    assert isinstance(guide, Guide) and isinstance(guide.title, str)
    for paragraph in guide.paragraphs:
        assert paragraph and all(isinstance(s, Span) for s in paragraph)
    for _, query in guide.links():
        assert query and query == query.strip()


# ------------------------------------------------------------------------- JSON -> dataclasses

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8) | st.sampled_from([[], {}]),
    lambda inner: st.lists(inner, min_size=1, max_size=4) | st.dictionaries(st.text(max_size=8), inner, min_size=1, max_size=4),
    max_leaves=20,
)


def sample_trace_result() -> TraceResult:
    from jaxscope.schema.trace import FunctionRef, TraceRequest

    graph, _ = build_sample()
    return TraceResult(TraceRequest(FunctionRef("predict", "/p/model.py")), graph, "{ lambda ; }", ("x",), ("out",))


VALID: dict[type, Any] = {
    TraceResult: to_jsonable(sample_trace_result()),
    Graph: to_jsonable(build_sample()[0]),
    Layout: to_jsonable(build_sample()[1]),
    ErrorInfo: {"kind": "user-code", "message": "boom", "traceback": [{"file": "f.py", "line": 1, "function": "f"}]},
}

# What a decoder may raise on JSON that does not fit the declared types: the same exceptions as
# the plain recursive definition in tests/schema/test_codec.py (ValueError for a non-object
# dataclass, TypeError for a missing field or a non-iterable, AttributeError for a non-object dict).
DECODE_ERRORS = (ValueError, TypeError, AttributeError)


@st.composite
def hostile_json(draw: st.DrawFn) -> tuple[type, Any]:
    """A valid encoding of a model type with random subtrees replaced or keys dropped, or any JSON."""
    tp = draw(st.sampled_from(sorted(VALID, key=lambda t: t.__name__)))
    if draw(st.integers(0, 4)) == 0:
        return tp, draw(json_value)
    data = json.loads(json.dumps(VALID[tp]))
    for _ in range(draw(st.integers(1, 3))):
        node, key = data, None
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 3)):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            key = draw(st.sampled_from(keys))
            if not isinstance(node[key], (dict, list)) or not node[key]:
                break
            node = node[key]
        if key is None or not isinstance(node, (dict, list)):
            continue
        if isinstance(node, dict) and draw(st.booleans()):
            node.pop(key, None)
        elif key in (node if isinstance(node, dict) else range(len(node))):
            node[key] = draw(json_value)
    return tp, data


@pytest.mark.timeout(TIMEOUT)
@fuzz(200)
@given(hostile_json())
@example((ErrorInfo, "boom"))
@example((ErrorInfo, {"message": "no kind"}))
@example((ErrorInfo, {"kind": "x", "message": "m", "traceback": 5}))
@example((TraceResult, {**VALID[TraceResult], "timings": []}))
@example((Graph, {"function": "f", "bodies": {"b0": [1]}}))
def test_from_jsonable_decodes_or_raises_a_decode_error(case: tuple[type, Any]) -> None:
    tp, data = case
    try:
        value = from_jsonable(tp, data)
    except DECODE_ERRORS:
        return
    assert value is None or isinstance(value, tp)
    if value is not None and dataclasses.is_dataclass(value):
        to_jsonable(value)  # whatever decoded also encodes


def test_valid_samples_round_trip() -> None:
    for tp, data in VALID.items():
        value = from_jsonable(tp, data)
        assert isinstance(value, tp) and from_jsonable(tp, json.loads(json.dumps(to_jsonable(value)))) == value


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, "", "[1,", "\x00", "[" + "9" * 5000 + "]"])
def test_loads_raises_value_error_on_bad_json(text: str) -> None:
    """Deep nesting in json.loads was a RecursionError; every bad text is now a ValueError."""
    with pytest.raises(ValueError):
        loads(Graph, text)
