"""The interactive HTML page as text: one self-contained file (no network, no external script or
font), every string of the program inside a JSON block no name can close, no event handler or
code built from data; the same input gives the same bytes."""

from __future__ import annotations

import json
import re

from jaxscope.layout.engine import compute_layout
from jaxscope.render.html import BodyLayouts, PageTexts, render_html
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc, SubgraphRef

HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)> &amp; \u2028 \u202e"


def _graph() -> Graph:
    inner = Body(
        "b1",
        "jit(inner)",
        (
            Node("in0", "input", "x", ("f32[4]",)),
            Node("e0", "eqn", "sin", ("f32[4]",), ("f32[4]",)),
            Node("out0", "output", "y", ("f32[4]",)),
        ),
        (Edge("in0", "e0"), Edge("e0", "out0")),
        1,
        1,
    )
    src = SourceLoc("/u/model.py", 2, function="f")
    top = Body(
        "b0",
        "f",
        (
            Node("in0", "input", HOSTILE, ("f32[4]",)),
            Node(
                "e0",
                "eqn",
                "jit",
                ("f32[4]",),
                ("f32[4]",),
                params=(("name", HOSTILE),),
                source=src,
                name_stack=HOSTILE,
                subgraphs=(SubgraphRef("jit(inner)", "b1", "jaxpr"),),
            ),
            Node("out0", "output", "result", ("f32[4]",)),
        ),
        (Edge("in0", "e0"), Edge("e0", "out0")),
        1,
        2,
    )
    return Graph("f", {"b0": top, "b1": inner}, "b0")


def _page(graph: Graph) -> str:
    alone = {b: compute_layout(Graph(graph.function, graph.bodies, b), (), engine="layered") for b in graph.bodies}
    texts = PageTexts(
        {"/u/model.py": f"def f(x):\n    return jit_inner(x)  # {HOSTILE}\n"}, {"jaxpr": {"text": f"a\n{HOSTILE}\n", "lines": {"e0": [2]}}}
    )
    return render_html(graph, BodyLayouts(alone, frozenset({"e0"})), texts=texts)


def test_a_page_is_self_contained_and_carries_hostile_names_as_data() -> None:
    page = _page(_graph())
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data block and the viewer, no more
    assert not re.search(r"<(img|link|iframe|object|embed)\b", page)
    assert not re.search(r"""\s(src|href)\s*=\s*["']?(https?:|//)""", page)  # nothing fetched
    assert "@import" not in page and "url(" not in page and "fetch(" not in page and "XMLHttpRequest" not in page
    markup = re.sub(r'(<script type="application/json" id="jaxscope-data">).*?(</script>)', r"\1\2", page, flags=re.S)
    assert not re.search(r"""<[^>]*\son\w+\s*=""", markup)  # no inline handler in any tag outside the data
    assert "eval(" not in page and "new Function" not in page and "innerHTML" not in page
    block = re.search(r'<script type="application/json" id="jaxscope-data">(.*?)</script>', page, re.S)
    assert block is not None and "<" not in block.group(1) and "\u2028" not in block.group(1)
    data = json.loads(block.group(1))
    assert HOSTILE in data["strings"]  # read back exactly, as the script's JSON.parse reads it
    assert data["opened"] == ["e0"] and set(data["bodies"]) == {"b0", "b1"}
    assert data["sources"]["/u/model.py"]["2"].endswith(HOSTILE) and data["stages"]["jaxpr"]["text"]["2"] == HOSTILE


def test_the_same_graph_gives_the_same_bytes() -> None:
    assert _page(_graph()) == _page(_graph())


def test_a_jaxpr_lines_location_column_is_not_padded_into_the_page() -> None:
    """The spaces jax puts before a line's `# file:line` (to align the locations in a column, 200
    characters in a big step) are two in the page: the location stays, and the padding is not a
    fifth of a page's bytes, cut off at 200 characters with the location."""
    located = "    g:f32[16,8] = jit[" + " " * 190 + "# /u/model.py:2:4 (f)"
    long = "    h:f32[16,8] = " + "x " * 150 + "  # /u/model.py:3:4 (f)"
    texts = PageTexts({}, {"jaxpr": {"text": f"a\n{located}\n{long}\n", "lines": {"e0": [2, 3]}}})
    page = render_html(
        _graph(),
        BodyLayouts({b: compute_layout(Graph("f", _graph().bodies, b), (), engine="layered") for b in _graph().bodies}),
        texts=texts,
    )
    block = re.search(r'<script type="application/json" id="jaxscope-data">(.*?)</script>', page, re.S)
    assert block is not None
    text = json.loads(block.group(1))["stages"]["jaxpr"]["text"]
    assert text["2"] == "    g:f32[16,8] = jit[  # /u/model.py:2:4 (f)"
    assert len(text["3"]) == 200 and text["3"].endswith("…")  # a line longer than the panel's is still cut
