"""core.flow_marks: one mark per line from hand-made flows and graphs (pure, no jax)."""

from __future__ import annotations

from jaxscope.analysis.flow import analyse
from jaxscope.analysis.flow_marks import line_marks
from jaxscope.schema.graph import Body, Graph, Node, SourceLoc, SubgraphRef

FILE = "/virtual/model.py"

SOURCE = """\
def f(x, training, n):
    for _ in range(n):
        x = x + 1
    if training:
        x = x * 2
        x = x - 1
    else:
        x = x / 2
    if n > 100:
        x = x + 3
    return x
"""


def eqn(i: int, line: int, subgraphs: tuple[SubgraphRef, ...] = ()) -> Node:
    return Node(id=f"e{i}", kind="eqn", label="add", source=SourceLoc(FILE, line), subgraphs=subgraphs)


def graph(*lines: int, staged: tuple[int, ...] = ()) -> Graph:
    nodes = [eqn(i, ln) for i, ln in enumerate(lines)]
    bodies = {}
    if staged:
        bodies["b1"] = Body("b1", "branch", tuple(eqn(i, ln) for i, ln in enumerate(staged)), (), len(staged), len(staged))
        nodes.append(eqn(len(nodes), staged[0], (SubgraphRef("cond branch 0", "b1"),)))
    bodies["b0"] = Body("b0", "f", tuple(nodes), (), len(nodes), len(nodes))
    return Graph(function="f", bodies=bodies)


def test_loop_branch_not_taken_never_and_emitted():
    hits = {2: 4, 3: 3, 4: 1, 8: 1, 9: 1, 11: 1}
    flow = analyse(SOURCE, FILE, hits)
    marks = line_marks(flow, graph(3, 3, 3, 8), FILE, {"training": "False"}, source=SOURCE)
    assert (marks[2].kind, marks[2].badge) == ("python", "×3")
    assert "unrolled 3 times" in marks[2].why
    assert (marks[3].kind, marks[3].eqns, marks[3].hits) == ("emitted", 3, 3)
    assert marks[4].kind == "python"
    assert "else taken (`training` was False, static)" in marks[4].why
    assert marks[5].kind == marks[6].kind == "not-taken"
    assert "branch not taken" in marks[5].why
    assert marks[8].kind == "emitted"
    assert marks[10].kind == "not-taken"  # `if n > 100:` false: its body
    assert "`training`" not in marks[9].why  # not a bare static name
    assert 1 not in marks and 7 not in marks  # the def line and `else:` carry no mark
    assert marks[11].kind == "python"


def test_static_note_skipped_when_the_value_disagrees_with_the_verdict():
    flow = analyse(SOURCE, FILE, {2: 1, 4: 1, 5: 1, 6: 1, 9: 1, 11: 1})
    marks = line_marks(flow, graph(5), FILE, {"training": "False"}, source=SOURCE)
    assert marks[4].why == "`if training:` — body taken"
    assert marks[8].kind == "not-taken"
    marks = line_marks(flow, graph(5), FILE, {"training": "True"}, source=SOURCE)
    assert "(`training` was True, static)" in marks[4].why


def test_never_reached_after_an_early_return_and_zero_iterations():
    src = "def g(x, n):\n    for i in range(n):\n        x = x + i\n    return x\n    x = x + 1\n"
    flow = analyse(src, FILE, {2: 1, 4: 1})
    marks = line_marks(flow, graph(), FILE, source=src)
    assert marks[2].badge == "×0"
    assert marks[3].kind == "not-taken" and "0 times" in marks[3].why
    assert marks[5].kind == "never"
    # a function that never ran gets no "never" marks
    src2 = src + "\n\ndef unused(y):\n    return y\n"
    marks = line_marks(analyse(src2, FILE, {2: 1, 4: 1}), graph(), FILE, source=src2)
    assert 9 not in marks


def test_staged_wins_over_emitted_and_says_which_primitive():
    src = "def h(x):\n    y = cond(x, lambda a: a + 1, lambda a: a - 1, x)\n    return y\n"
    flow = analyse(src, FILE, {2: 3, 3: 1})
    marks = line_marks(flow, graph(2, staged=(2, 2)), FILE, source=src)
    assert marks[2].kind == "staged"
    assert marks[2].eqns == 4  # e0, the cond owner, its 2 branch equations
    assert "lax.cond" in marks[2].why
    assert 3 in marks and marks[3].kind == "python"


def test_per_call_badge_and_unparsable_source():
    src = "def k(x, n):\n    for i in range(n):\n        x = x + i\n    return x\n"
    flow = analyse(src, FILE, {2: 6, 3: 3, 4: 3}, loop_calls={2: [1, 2, 3], 3: [0, 1, 2], 4: [1, 1, 1]})
    marks = line_marks(flow, graph(3, 3, 3), FILE, source=src)
    assert marks[2].badge == "×0,1,2"
    assert "over 3 calls" in marks[2].why
    bad = line_marks(analyse("def (:", FILE, {1: 1}), graph(), FILE, source="def (:")
    assert bad[1].kind == "python"
