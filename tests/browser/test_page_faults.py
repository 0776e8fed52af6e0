"""Issue 59.5: pages that go wrong, in headless Chromium. A page of 200k equations becomes ready, draws
its first view (only what is in and round it: all 200k as elements took over a minute) and answers
a search (`Math.min(0, ...items)` over 200k boxes threw "Maximum call stack size exceeded" and the
page stayed blank); a page whose data is damaged says so on the page; a seeded fuzzer of page
data. The pages are made from synthetic laid-out graphs: no jax and no Graphviz run."""

from __future__ import annotations

import copy
import json
import os
import pathlib
import random
from typing import Any

import pytest

from jaxscope.render.html import BodyLayouts, json_for_script, render_html
from jaxscope.schema.graph import Body, Edge, Graph, Node
from jaxscope.schema.layout import EdgePath, Layout, NodeBox
from tests.browser.harness import Page

N, COLUMNS, W, H = 200_000, 400, 90.0, 30.0


def big_page(path: pathlib.Path) -> pathlib.Path:
    """One body of N chained equations (every 1000th a `sin`, the rest `add`), on a grid."""
    nodes = [Node("in0", "input", "x", ("f32[4]",))]
    nodes += [Node(f"e{k}", "eqn", "sin" if k % 1000 == 0 else "add", ("f32[4]",), ("f32[4]",)) for k in range(N)]
    edges = [Edge("in0" if k == 0 else f"e{k - 1}", f"e{k}", 0, 0, "f32[4]") for k in range(N)]
    graph = Graph("big", {"b0": Body("b0", "big", tuple(nodes), tuple(edges), N, N)}, "b0")

    def at(k: int) -> tuple[float, float]:
        return 60 + (k % COLUMNS) * (W + 20), 60 + (k // COLUMNS) * (H + 40)

    boxes = [NodeBox("in0", 20, 20, W, H)] + [NodeBox(f"e{k}", *at(k), W, H) for k in range(N)]
    drawn = [EdgePath(e.src, e.dst, ((0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (3.0, 3.0))) for e in edges[:: N // 2000]]
    width, height = 60 + COLUMNS * (W + 20), 60 + (N // COLUMNS + 1) * (H + 40)
    layout = Layout(width, height, tuple(boxes), tuple(drawn), engine="layered")
    path.write_text(render_html(graph, BodyLayouts({"b0": layout})), encoding="utf-8")
    return path


def test_a_page_of_200k_equations_opens_draws_and_searches(page: Page, tmp_path: pathlib.Path) -> None:
    html = big_page(tmp_path / "big.html")
    page.open(html, timeout=120)
    assert page.errors() == []
    assert len(page.drawn()) == N + 1  # all laid out
    assert 0 < len(page.in_view()) < 2000, "the first view draws nothing, or every box"  # what is in and round the view
    assert page.search("sin") == f"1 of {N // 1000}"
    assert page.js("return window.jaxscopePage.state.selected") in page.in_view()  # the match brought into view, drawn
    page.driver.find_element("id", "fit").click()  # the whole drawing: every box, one outline path per colour
    assert page.in_view() == [] and page.js("return document.querySelectorAll('g.nodes path.far').length") == 2  # input, add/sin
    marks = page.js("return document.querySelector('path.far-marks').getAttribute('d')")
    assert marks.count("z") == N // 1000 + 1  # each match outlined, and the one selected


def test_a_page_whose_data_is_damaged_says_so_on_the_page(page: Page, tmp_path: pathlib.Path) -> None:
    """Issue 59.5: 47 of 150 mutated pages never became ready, blank, with no message."""
    good = render_html(
        Graph("f", {"b0": Body("b0", "f", (Node("in0", "input", "x", ("f32[4]",)),), (), 0, 0)}, "b0"),
        BodyLayouts({"b0": Layout(100, 60, (NodeBox("in0", 50, 30, 90, 30),), ())}),
    )
    for k, broken in enumerate((good.replace('"bodies"', '"bodiez"', 1), good.replace('"root":"b0"', '"root":b0', 1))):
        path = tmp_path / f"damaged{k}.html"
        path.write_text(broken, encoding="utf-8")
        with pytest.raises(RuntimeError, match="This graph cannot be shown: its data is damaged"):
            page.open(path)


def _small_page() -> str:
    """A real page of a body with a nested sub-graph (a call), as html.py writes it."""
    from tests.graphs import mk_body, mk_graph

    inner = mk_body("b1", 1, [("sin", ["in0"]), ("mul", ["e0", "in0"])], ["e1"])
    root = mk_body("b0", 2, [("add", ["in0", "in1"]), ("jit", ["e0"], [("jit(blk)", "b1", "jaxpr")]), ("exp", ["e1"])], ["e2"])
    graph = mk_graph(root, inner)

    def laid(body: Body) -> Layout:
        boxes = tuple(NodeBox(n.id, 60 + 110 * i, 40 + 50 * i, 90, 30) for i, n in enumerate(body.nodes))
        return Layout(200 + 110 * len(boxes), 100 + 50 * len(boxes), boxes, (), engine="layered")

    return render_html(graph, BodyLayouts({b.id: laid(b) for b in (root, inner)}), legend=True)


def _mutated(data: Any, rng: random.Random) -> Any:
    """`data` with one to three values somewhere in it replaced by a value of another type."""
    data = copy.deepcopy(data)
    for _ in range(rng.choice((1, 2, 3))):
        parent = data
        while True:  # down to a random value: it is replaced, or, a container, maybe walked into
            children = list(parent.items()) if isinstance(parent, dict) else list(enumerate(parent))
            if not children:
                break
            key, child = rng.choice(children)
            if isinstance(child, (dict, list)) and child and rng.random() < 0.7:
                parent = child
                continue
            parent[key] = rng.choice((None, -1, 1e308, "x", "</script><script>window.pwned=1</script>", [], {}, [[1, 2]], True))
            break
    return data


def test_fuzzed_page_data_shows_the_graph_or_says_it_is_damaged(page: Page, tmp_path: pathlib.Path) -> None:
    """A seeded fuzzer over the page's data: every page becomes ready or says it is damaged (never blank),
    and no value from the data runs as code (JAXSCOPE_PAGE_FUZZ_RUNS for more)."""
    good = _small_page()
    start = good.index('id="jaxscope-data">') + len('id="jaxscope-data">')
    end = good.index("</script>", start)
    data = json.loads(good[start:end])
    rng = random.Random(59)
    said = 0
    for k in range(int(os.environ.get("JAXSCOPE_PAGE_FUZZ_RUNS", "24"))):
        path = tmp_path / f"fuzz{k}.html"
        path.write_text(good[:start] + json_for_script(_mutated(data, rng)) + good[end:], encoding="utf-8")
        try:
            page.open(path, timeout=20)
        except RuntimeError as exc:
            assert "This graph cannot be shown" in str(exc)
            said += 1
        assert page.js("return window.pwned === undefined"), k
    assert said > 0  # the fuzzer does reach damage the page must report
