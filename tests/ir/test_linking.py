"""Node <-> source line <-> jaxpr line links (jaxscope.ir.linking) and the jaxpr lexer."""

from __future__ import annotations

import pathlib
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation

from jaxscope.ir import linking
from jaxscope.ir.jaxpr_lexer import JaxprLexer
from jaxscope.schema.graph import Body, Graph, Node, SourceLoc, SubgraphRef
from jaxscope.schema.trace import TraceResult

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
BASICS = "examples/basics.py"
CORPUS = "tests/worker/corpus/higher_order.py"


def load(name: str) -> TraceResult:
    return TraceResult.from_json((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def source_line(path: str, needle: str) -> int:
    """The 1-based line of `path` (relative to the repo) containing `needle`."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    hits = [i for i, text in enumerate(lines, 1) if needle in text]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def jaxpr_line(text: str, needle: str, nth: int = 0) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth]


@pytest.fixture(scope="module")
def predict() -> TraceResult:
    return load("basics_predict")


def loc(line: int, col: int = 0, file: str = "/p/m.py") -> SourceLoc:
    return SourceLoc(file=file, line=line, col=col)


def eqn(node_id: str, label: str, src: SourceLoc | None, subgraphs: tuple[SubgraphRef, ...] = ()) -> Node:
    return Node(node_id, "eqn", label, source=src, subgraphs=subgraphs)


def body(bid: str, *nodes: Node) -> Body:
    return Body(bid, bid, tuple(nodes), (), len(nodes), len(nodes))


# ---------------------------------------------------------------------------- node_sources


def test_node_sources_reach_into_sub_graphs(predict):
    sources = linking.node_sources(predict.graph)
    assert len(sources) == 13 + 4  # top-level equations + the four inside jit(layer)
    assert sources["e1"].line == source_line(BASICS, 'out = h @ params["w2"]')
    assert sources["e0:0/e3"].line == source_line(BASICS, "jnp.tanh(x @ w + b)")
    assert sources["e0:0/e3"].function == "layer"
    assert all(k.split("/")[-1].startswith("e") for k in sources)  # equations only, no inputs/literals


def test_shared_body_appears_under_every_owner():
    inner = body("b2", eqn("e0", "sin", loc(3)), eqn("e1", "cos", None))
    mid = body("b1", eqn("e0", "jit", loc(5), (SubgraphRef("jit", "b2"),)))
    top = body(
        "b0",
        eqn("e0", "jit", loc(8), (SubgraphRef("jit", "b2"),)),
        eqn("e1", "cond", loc(9), (SubgraphRef("false", "b1"), SubgraphRef("true", "b2"))),
        Node("in0", "input", "x", source=loc(1)),
    )
    graph = Graph("f", {"b0": top, "b1": mid, "b2": inner})
    assert list(linking.node_sources(graph)) == ["e0", "e0:0/e0", "e1", "e1:0/e0", "e1:0/e0:0/e0", "e1:1/e0"]
    assert linking.node_labels(graph)["e1:0/e0:0/e0"] == "sin"


def test_node_sources_survive_cycles_and_dangling_refs():
    a = body("b0", eqn("e0", "while", loc(2), (SubgraphRef("body", "b1"), SubgraphRef("gone", "b9"))))
    b = body("b1", eqn("e0", "add", loc(3), (SubgraphRef("loop", "b0"),)))  # not a real jaxpr shape
    sources = linking.node_sources(Graph("f", {"b0": a, "b1": b}))
    assert sources["e0"].line == 2 and sources["e0:0/e0"].line == 3


def test_node_sources_scale_to_50k_paths():
    inner = body("b1", *(eqn(f"e{i}", "mul", loc(10 + i % 7, i)) for i in range(50)))
    top = body("b0", *(eqn(f"e{i}", "jit", loc(100 + i), (SubgraphRef("jit", "b1"),)) for i in range(1000)))
    graph = Graph("f", {"b0": top, "b1": inner})
    t = time.perf_counter()
    sources = linking.node_sources(graph)
    by_line = linking.nodes_by_line(graph, "/p/m.py")
    elapsed = time.perf_counter() - t
    assert len(sources) == 1000 + 50_000
    assert len(by_line[10]) == 1000 * 8  # i % 7 == 0 for 8 of the 50 inner equations
    assert elapsed < 10, elapsed  # ~0.3 s here; generous for slow CI machines


# ---------------------------------------------------------------------------- files and lines


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("examples/basics.py", "examples/basics.py", True),
        ("./examples//basics.py", "examples/basics.py", True),
        ("examples/basics.py", "/work/main/examples/basics.py", True),
        ("/work/main/examples/basics.py", "basics.py", True),
        ("/a/examples/basics.py", "/b/examples/basics.py", False),  # both absolute: must be equal
        ("other/basics.py", "/work/main/examples/basics.py", False),
        ("asics.py", "/work/basics.py", False),  # whole components only
        ("", "/work/basics.py", False),
    ],
)
def test_same_file(a, b, same):
    assert linking.same_file(a, b) is same
    assert linking.same_file(b, a) is same


def test_nodes_by_line_on_the_fixture(predict):
    by_line = linking.nodes_by_line(predict.graph, BASICS)
    assert by_line[source_line(BASICS, 'out = h @ params["w2"]')] == ["e1"]
    tanh_line = source_line(BASICS, "jnp.tanh(x @ w + b)")
    assert by_line[tanh_line] == ["e0:0/e0", "e0:0/e1", "e0:0/e2", "e0:0/e3"]
    softmax = by_line[source_line(BASICS, "jax.nn.softmax")]
    assert softmax == sorted(softmax, key=linking.natural_key) and softmax.index("e9") < softmax.index("e10")
    assert list(by_line) == sorted(by_line)


def test_nodes_by_line_matches_absolute_and_relative_spellings(predict):
    rel = linking.nodes_by_line(predict.graph, BASICS)
    assert linking.nodes_by_line(predict.graph, str(ROOT / BASICS)) == rel
    assert linking.nodes_by_line(predict.graph, "basics.py") == rel
    assert linking.nodes_by_line(predict.graph, "other.py") == {}


def test_exact_file_match_wins_over_a_suffix_match():
    top = body("b0", eqn("e0", "sin", loc(1, file="/x/a/m.py")), eqn("e1", "cos", loc(2, file="m.py")))
    graph = Graph("f", {"b0": top})
    assert linking.nodes_by_line(graph, "m.py") == {2: ["e1"]}
    assert linking.nodes_by_line(graph, "/x/a/m.py") == {1: ["e0"]}


# ---------------------------------------------------------------------------- colours


def test_line_colours_in_line_order_cycling(predict):
    colours = linking.line_colours(predict.graph, BASICS)
    lines = sorted(linking.nodes_by_line(predict.graph, BASICS))
    assert list(colours) == lines
    assert [colours[n] for n in lines] == list(range(len(lines)))
    assert [linking.line_colours(predict.graph, BASICS, n=2)[n] for n in lines] == [i % 2 for i in range(len(lines))]


def test_node_colours_follow_their_line(predict):
    by_line = linking.nodes_by_line(predict.graph, BASICS)
    colours = linking.node_colours(predict.graph, BASICS, linking.PALETTE_DARK)
    index = linking.line_colours(predict.graph, BASICS)
    for line, paths in by_line.items():
        for path in paths:
            assert colours[path] == linking.PALETTE_DARK[index[line]]
    assert linking.node_colours(predict.graph, BASICS)["e1"] == linking.PALETTE_LIGHT[index[25]]


def _lightness(hex_: str) -> float:
    r, g, b = (int(hex_[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return (max(r, g, b) + min(r, g, b)) / 2


def test_palettes_are_soft_and_distinct():
    assert len(linking.PALETTE_LIGHT) == len(linking.PALETTE_DARK) == 10
    for pal in (linking.PALETTE_LIGHT, linking.PALETTE_DARK):
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in pal)
        assert len(set(pal)) == len(pal)
    assert all(_lightness(c) > 0.8 for c in linking.PALETTE_LIGHT)  # dark text stays readable
    assert all(_lightness(c) < 0.3 for c in linking.PALETTE_DARK)  # light text stays readable


# ---------------------------------------------------------------------------- jaxpr comments


def line_locs(text: str) -> dict[int, linking.Loc]:
    """1-based jaxpr line -> the (file, line, col) its comment prints, as `jaxpr_equations` reads it."""
    return {n: head.loc for n, head in linking.jaxpr_equations(text)[0].items() if head.loc is not None}


def test_jaxpr_comment_locations_on_the_fixture(predict):
    text = predict.jaxpr_text
    locs = line_locs(text)
    top_dot = jaxpr_line(text, "j:f32[16,3] = dot_general[")
    assert locs[top_dot] == (BASICS, 25, 10)
    assert locs[jaxpr_line(text, "= tanh i")] == (BASICS, 20, 11)
    assert top_dot + 1 not in locs  # continuation lines have no comment
    assert 1 not in locs  # "{ lambda ; ... let"
    assert len(locs) == 17
    assert all(file == BASICS for file, _, _ in locs.values())


@pytest.mark.parametrize(
    "line, expected",
    [
        ("    a:f32[] = sin b  # m.py:3:4 (f)", ("m.py", 3, 4)),
        ("    a:f32[] = sin b  # /my dir/x (copy).py:3:4 (f)", ("/my dir/x (copy).py", 3, 4)),
        ("    a:f32[] = sin b  # C:/a:b/m.py:12:0 (g.<locals>.<lambda>)", ("C:/a:b/m.py", 12, 0)),
        ("    a:f32[] = sin b  # m.py:3:4", ("m.py", 3, 4)),
        ("    a:f32[] = sin b  # /tmp/a#b/m.py:7:1 (f)", ("/tmp/a#b/m.py", 7, 1)),
        ("    a:f32[] = sin b  # m.py:2:5:3:4 (f)", ("m.py:2:5", 3, 4)),
        ("    a:f32[] = sin b  # ", None),  # JAX prints an empty comment for internal frames
        ("    a:f32[] = sin b", None),
        ("    a:f32[] = sin b  # m.py:x:4 (f)", None),
        ("    a:f32[] = sin b  #m.py:3:4 (f)", None),  # not a comment start
    ],
)
def test_jaxpr_comment_edge_cases(line, expected):
    assert line_locs(f"{{ lambda ; b:f32[]. let\n{line}\n  in (a,) }}").get(2) == expected


def test_jaxpr_comment_locations_empty_text():
    assert line_locs("") == {}
    assert linking.jaxpr_equations("") == ({}, {})


# ---------------------------------------------------------------------------- equations spanning lines


def test_continuation_lines_belong_to_their_equation(predict):
    text = predict.jaxpr_text
    heads, owner = linking.jaxpr_equations(text)
    jit = jaxpr_line(text, "= jit[")
    inner_dot = jaxpr_line(text, "g:f32[16,8] = dot_general[")
    top_dot = jaxpr_line(text, "j:f32[16,3] = dot_general[")
    assert heads[jit].primitive == "jit" and heads[top_dot].primitive == "dot_general"
    assert [owner[n] for n in range(top_dot + 1, top_dot + 4)] == [top_dot] * 3  # params and "] f d"
    assert owner[jit + 1] == jit  # name=layer
    assert owner[jit + 2] == jit  # jaxpr={ lambda ... let
    assert owner[inner_dot + 3] == inner_dot  # "] e c"
    assert owner[jaxpr_line(text, "in (f,) }")] == jit
    assert owner[jaxpr_line(text, "] e c a")] == jit
    assert 1 not in owner and jaxpr_line(text, "in (u,) }") not in owner


WRAPPED = """\
{ lambda ; r:key<fry>[]. let
    u:f32[3] = jit[                                                      # m.py:27:11 (f)
      name=_normal_real
      jaxpr={ lambda ; r:key<fry>[]. let
          v:f32[3] = jit[name=_uniform jaxpr=_uniform] r -0.99:f32[]     # m.py:5:1 (g)
            1.0:f32[]
          w:f32[3] = erf_inv v                                           # 
        in (w,) }
    ] r
  in (u,) }"""  # noqa: W291 - "erf_inv v  # " ends in the empty comment JAX prints for an internal frame


def test_wrapped_operands_continue_a_one_line_equation():
    heads, owner = linking.jaxpr_equations(WRAPPED)
    assert owner[6] == 5  # "1.0:f32[]" finishes v's operands
    assert heads[7].loc is None and heads[7].primitive == "erf_inv"
    assert owner[8] == 2 and owner[9] == 2 and owner[3] == 2


# ---------------------------------------------------------------------------- jaxpr <-> nodes


def test_jaxpr_links_on_predict(predict):
    text = predict.jaxpr_text
    links = linking.jaxpr_links(predict.graph, text)
    top_dot = jaxpr_line(text, "j:f32[16,3] = dot_general[")
    assert links.nodes_for_line(top_dot) == ["e1"]
    assert links.nodes_for_line(top_dot + 2) == ["e1"]  # a continuation line
    assert links.lines_for_node("e1") == [top_dot]
    assert links.equation_lines(top_dot) == [top_dot, top_dot + 1, top_dot + 2, top_dot + 3]
    tanh = jaxpr_line(text, "= tanh i")
    assert links.nodes_for_line(tanh) == ["e0:0/e3"]
    assert links.lines_for_node("e0:0/e3") == [tanh]
    assert links.source_for_line(tanh) == (BASICS, 20, 11)
    assert links.nodes_for_line(1) == [] and links.lines_for_node("in0") == [] and links.lines_for_node("nope") == []


def test_primitive_narrows_a_shared_location(predict):
    text = predict.jaxpr_text
    links = linking.jaxpr_links(predict.graph, text)
    bcast, add = jaxpr_line(text, "k:f32[1,3] = broadcast_in_dim"), jaxpr_line(text, "l:f32[16,3] = add j k")
    assert line_locs(text)[bcast] == line_locs(text)[add]  # one expression, one location
    assert links.nodes_for_line(bcast) == ["e2"] and links.nodes_for_line(add) == ["e3"]
    assert links.lines_for_node("e3") == [add]
    # Two broadcast_in_dims at the same spot in softmax: location and primitive cannot tell them
    # apart; program order (jaxpr_order) does.
    first, second = (jaxpr_line(text, "= broadcast_in_dim[broadcast_dimensions=(0,)]", k) for k in (0, 1))
    assert links.nodes_for_line(first) == ["e6"] and links.nodes_for_line(second) == ["e11"]
    assert links.lines_for_node("e6") == [first] and links.lines_for_node("e11") == [second]
    by_location = linking.JaxprLinks(links.heads, links.owner, links.sources, links.node_labels)  # no exact walk
    assert by_location.nodes_for_line(first) == by_location.nodes_for_line(second) == ["e6", "e11"]
    softmax_lines = list(range(jaxpr_line(text, "reduce_max"), jaxpr_line(text, "= div r t") + 1))
    assert links.lines_for_loc(BASICS, 28, 11, "no_such_prim") == softmax_lines


def test_source_line_to_jaxpr_lines(predict):
    text = predict.jaxpr_text
    links = linking.jaxpr_links(predict.graph, text)
    softmax = source_line(BASICS, "jax.nn.softmax")
    expected = list(range(jaxpr_line(text, "reduce_max"), jaxpr_line(text, "= div r t") + 1))
    assert links.lines_for_source_line(BASICS, softmax) == expected
    assert links.lines_for_source_line(str(ROOT / BASICS), softmax) == expected
    assert links.lines_for_source_line(BASICS, 1) == [] and links.lines_for_source_line("x.py", softmax) == []


def test_links_into_cond_branches_and_scan_bodies():
    cond = load("cond")
    links = linking.jaxpr_links(cond.graph, cond.jaxpr_text)
    sub, mul = jaxpr_line(cond.jaxpr_text, "= sub g 1.0"), jaxpr_line(cond.jaxpr_text, "= mul i 2.0")
    assert links.nodes_for_line(sub) == ["e3:0/e0"] and links.nodes_for_line(mul) == ["e3:1/e0"]
    assert links.nodes_for_line(jaxpr_line(cond.jaxpr_text, "branches=(")) == ["e3"]
    assert links.nodes_for_line(jaxpr_line(cond.jaxpr_text, "] e b")) == ["e3"]
    scan = load("scan")
    links = linking.jaxpr_links(scan.graph, scan.jaxpr_text)
    assert links.nodes_for_line(jaxpr_line(scan.jaxpr_text, "= add e f")) == ["e1:0/e0"]
    assert links.nodes_for_line(jaxpr_line(scan.jaxpr_text, "num_carry=1")) == ["e1"]
    assert links.lines_for_node("e1:0/e1") == [jaxpr_line(scan.jaxpr_text, "= mul g 2.0")]


HOISTED = """\
let block = { lambda ; a:f32[4] b:f32[4]. let
    c:f32[4] = sin a                               # /p/m.py:7:8 (block)
  in (c,) } in
{ lambda ; h:f32[4] i:f32[4]. let
    j:f32[4] = jit[name=block jaxpr=block] h i     # /p/m.py:12:8 (f)
    k:f32[4] = jit[name=block jaxpr=block] j i     # /p/m.py:13:8 (f)
  in (k,) }"""


def test_hoisted_body_links_to_every_call():
    inner = body("b1", eqn("e0", "sin", loc(7, 8)))
    top = body("b0", eqn("e0", "jit", loc(12, 8), (SubgraphRef("jit", "b1"),)), eqn("e1", "jit", loc(13, 8), (SubgraphRef("jit", "b1"),)))
    graph = Graph("f", {"b0": top, "b1": inner})
    links = linking.jaxpr_links(graph, HOISTED)
    assert links.nodes_for_line(2) == ["e0:0/e0", "e1:0/e0"]
    assert links.lines_for_node("e1:0/e0") == [2]
    assert links.nodes_for_line(1) == [] and links.nodes_for_line(3) == []
    assert links.nodes_for_line(6) == ["e1"]
    assert links.lines_for_node(
        "e0",
    ) == [5]


def test_jaxpr_parsing_scales_to_50k_lines():
    eq = (
        "    {v}:f32[4,4] = dot_general[                         # /p/m.py:{n}:4 (f)\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "    ] a b\n"
        "    {v}x:f32[4,4] = sin {v}                               # /p/m.py:{n}:9 (f)\n"
    )
    text = "{ lambda ; a:f32[4,4] b:f32[4,4]. let\n" + "".join(eq.format(v=f"v{i}", n=i % 300 + 1) for i in range(12_500)) + "  in (a,) }"
    assert text.count("\n") >= 50_000
    t = time.perf_counter()
    heads, owner = linking.jaxpr_equations(text)
    elapsed = time.perf_counter() - t
    assert len(heads) == 25_000 and len(owner) == 25_000
    assert elapsed < 10, elapsed  # ~0.3 s here


# ---------------------------------------------------------------------------- the jaxpr lexer (core)


def lex(line: str) -> list[tuple[object, str]]:
    return [(t, v) for _, t, v in JaxprLexer().get_tokens_unprocessed(line) if v.strip()]


def test_lexer_tokens_on_an_equation():
    toks = lex("    n:f32[16] = max -inf:f32[] m      # examples/basics.py:28:11 (predict)")
    assert toks == [
        (Name.Variable, "n"),
        (Punctuation, ":"),
        (Keyword.Type, "f32[16]"),
        (Operator, "="),
        (Name.Function, "max"),
        (Number, "-inf"),
        (Punctuation, ":"),
        (Keyword.Type, "f32[]"),
        (Name, "m"),
        (Comment.Single, "# examples/basics.py:28:11 (predict)"),
    ]


@pytest.mark.parametrize(
    "line, expect",
    [
        ("{ lambda ; a:f32[8] b:~f32[]. let", [(Keyword, "lambda"), (Keyword, "let"), (Keyword.Type, "~f32[]")]),
        (
            "let _uniform = { lambda ; a:key<fry>[] b:bool[]. let",
            [(Keyword, "let"), (Name.Label, "_uniform"), (Keyword.Type, "key<fry>[]"), (Keyword.Type, "bool[]")],
        ),
        ("  in (u,) } in", [(Keyword, "in")]),
        ("    d:bool[] = gt c 0.0:f32[]", [(Name.Function, "gt"), (Number, "0.0"), (Keyword.Type, "bool[]")]),
        (
            "    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d",
            [
                (Name.Function, "convert_element_type"),
                (Name.Attribute, "new_dtype"),
                (Name.Attribute, "weak_type"),
                (Keyword.Type, "int32"),
                (Keyword.Constant, "False"),
            ],
        ),
        ("      jaxpr={ lambda ; e:f32[16,4]. let", [(Name.Attribute, "jaxpr"), (Keyword, "lambda")]),
        ("    h:u32[3] = or g 1065353216:u32[]   # ", [(Name.Function, "or"), (Number, "1065353216"), (Comment.Single, "# ")]),
    ],
)
def test_lexer_picks_out(line, expect):
    toks = lex(line)
    for want in expect:
        assert want in toks, (want, toks)


def test_lexer_leaves_nothing_unclassified_in_the_fixtures():
    from pygments.token import Error, Text

    for name in ("basics_predict", "basics_loss", "cond", "scan"):
        for line in load(name).jaxpr_text.splitlines():
            bad = [(t, v) for t, v in lex(line) if t in (Error, Text)]
            assert not bad, (line, bad)


def test_jaxpr_lines_count_newlines_only_like_the_view():
    text = (
        "{ lambda ; a:f32[]. let\n    b:f32[] = foo[name=x\x85y\u2028z] a   # m.py:3:4 (f)\n"
        "    c:f32[] = sin b  # m.py:4:4 (f)\n  in (c,) }"
    )
    assert line_locs(text) == {2: ("m.py", 3, 4), 3: ("m.py", 4, 4)}
    assert set(linking.jaxpr_equations(text)[0]) == {2, 3}


@given(st.one_of(st.text(alphabet="e0123456789:/#²٣x", max_size=12), st.integers(0, 10**9).map(lambda n: f"e{n}")))
@settings(max_examples=400, deadline=None)
def test_natural_key_matches_the_plain_split(path):
    """The fast path for ``e<digits>`` gives what splitting on digit runs gives (a run is decimal
    digits; a lone "²" stays text)."""
    assert linking.natural_key(path) == tuple(int(t) if t.isdecimal() else t for t in re.split(r"(\d+)", path))


def test_nodes_by_line_answers_again_from_its_last_graph():
    graph = Graph("f", {"b0": Body("b0", "f", (Node("e0", "eqn", "sin", source=SourceLoc("m.py", 3, 0)),), (), 1, 1)})
    first = linking.nodes_by_line(graph, "m.py")
    assert first == {3: ["e0"]} and linking.nodes_by_line(graph, "m.py") is first
    assert linking.nodes_by_line(graph, "other.py") == {} and linking.nodes_by_line(graph, "m.py") == first


# ---------------------------------------------------------------------------- the line map on the wire


def test_the_line_map_travels_as_columns_and_comes_back_the_same(predict):
    for text in (predict.jaxpr_text, WRAPPED, ""):
        heads, owner = linking.jaxpr_equations(text)
        wire = linking.equations_to_wire(heads, owner)
        assert all(isinstance(v, int) for v in wire["rows"] + wire["owner"])
        assert linking.equations_from_wire(wire) == (heads, owner)


def test_a_malformed_line_map_costs_only_itself(predict, monkeypatch):
    text = predict.jaxpr_text
    good = linking.equations_to_wire(*linking.jaxpr_equations(text))
    for bad in ({}, {**good, "rows": good["rows"][:-1]}, {**good, "files": []}, {**good, "owner": [1]}, {**good, "prims": None}):
        with pytest.raises(ValueError):
            linking.equations_from_wire(bad)
        links = linking.jaxpr_links(predict.graph, text, bad)  # parsed from the text instead
        assert links.heads == linking.jaxpr_equations(text)[0]
    calls: list[str] = []
    real = linking.jaxpr_equations
    monkeypatch.setattr(linking, "jaxpr_equations", lambda t: calls.append(t) or real(t))
    links = linking.jaxpr_links(predict.graph, text, good)
    assert calls == [] and links.heads == real(text)[0] and links.owner == real(text)[1]
