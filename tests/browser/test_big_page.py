"""Issue 59.5: a page of 200k equations in headless Chromium becomes ready, draws its first view and
answers a search (`Math.min(0, ...items)` over 200k boxes threw "Maximum call stack size exceeded"
and the page stayed blank). The page is made from a synthetic laid-out body, so no jax and no
Graphviz run: this tests the page, not the export's speed."""

from __future__ import annotations

import pathlib

import pytest

from jaxscope.render.html import BodyLayouts, render_html
from jaxscope.schema.graph import Body, Edge, Graph, Node
from jaxscope.schema.layout import EdgePath, Layout, NodeBox
from tests.browser.harness import Page, browser_missing

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


@pytest.fixture()
def page() -> Page:
    missing = browser_missing()
    assert not missing, missing  # (fails, never skips: `.ci/run` installs it)
    p = Page()
    yield p
    p.close()


def test_a_page_of_200k_equations_opens_draws_and_searches(page: Page, tmp_path: pathlib.Path) -> None:
    html = big_page(tmp_path / "big.html")
    page.open(html, timeout=120)
    assert page.errors() == []
    assert page.drawn(), "the first view draws nothing"
    assert page.search("sin") == f"1 of {N // 1000}"


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
