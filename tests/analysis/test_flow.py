"""core.flow: mapping hand-made line hits onto the AST, and staged lines from a Graph."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from jaxscope.analysis.flow import analyse, mark_staged
from jaxscope.schema.flow import FileFlow, FlowReport
from jaxscope.schema.graph import Body, Graph, Node, SourceLoc, SubgraphRef


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def at(flow: FileFlow, line: int, kind: str | None = None):
    c = flow.construct_at(line, kind)
    assert c is not None, (line, kind, flow.constructs)
    return c


IF_ELIF = src(
    """
    def f(x, mode):
        if mode == 1:
            x = 1
        elif mode == 2:
            x = 2
        else:
            x = 3
        return x
    """
)


def test_if_elif_else():
    body = analyse(IF_ELIF, "f.py", {2: 1, 3: 1, 8: 1})
    assert (at(body, 2).kind, at(body, 2).verdict) == ("if", "body taken")
    assert (at(body, 4).kind, at(body, 4).verdict) == ("elif", "never reached")
    elif_ = analyse(IF_ELIF, "f.py", {2: 1, 4: 1, 5: 1, 8: 1})
    assert at(elif_, 2).verdict == "else taken" and at(elif_, 4).verdict == "body taken"
    else_ = analyse(IF_ELIF, "f.py", {2: 1, 4: 1, 7: 1, 8: 1})
    assert at(else_, 2).verdict == "else taken" and at(else_, 4).verdict == "else taken"
    both = analyse(IF_ELIF, "f.py", {2: 3, 3: 2, 4: 1, 5: 1, 8: 3})
    assert at(both, 2).verdict == "both taken" and at(both, 2).count == 3


def test_else_then_if_is_not_an_elif():
    code = src(
        """
        if a:
            x = 1
        else:
            if b:
                x = 2
        """
    )
    flow = analyse(code, "f.py", {1: 1, 4: 1, 5: 1})
    assert at(flow, 1).verdict == "else taken"
    assert (at(flow, 4).kind, at(flow, 4).verdict) == ("if", "body taken")


def test_if_without_else_and_one_line_if():
    code = src(
        """
        if a:
            x = 1
        if b: y = 2
        """
    )
    flow = analyse(code, "f.py", {1: 1, 3: 1})
    assert at(flow, 1).verdict == "else taken"  # condition false, nothing ran
    assert at(flow, 3).verdict == "line ran"  # body shares the test's line: not guessed


def test_for_counts_and_per_call():
    code = src(
        """
        def g(n):
            for i in range(n):
                y = i
            return y
        """
    )
    total = analyse(code, "f.py", {2: 7, 3: 4, 4: 3})
    assert (at(total, 2).verdict, at(total, 2).count, at(total, 2).per_call) == ("unrolled", 4, ())
    # three calls: n = 0, 1, 3 (header runs n + 1 times per call)
    per = analyse(code, "f.py", {2: 7, 3: 4, 4: 3}, {2: [1, 2, 4], 3: [0, 1, 3], 4: [1, 1, 1]})
    c = at(per, 2)
    assert (c.count, c.per_call) == (4, (0, 1, 3))
    assert "3 calls" in c.detail


def test_per_call_skips_calls_that_never_reached_the_loop():
    code = src(
        """
        def g(n, on):
            if on:
                for i in range(n):
                    y = i
            return 0
        """
    )
    calls = {2: [1, 1], 3: [3, 0], 4: [2, 0], 5: [1, 1]}
    c = at(analyse(code, "f.py", {2: 2, 3: 3, 4: 2, 5: 2}, calls), 3, "for")
    assert c.per_call == (2,)


def test_nested_loop_first_in_body():
    code = src(
        """
        for i in range(2):
            for j in range(3):
                y = j
        """
    )
    hits = {1: 3, 2: 8, 3: 6}
    flow = analyse(code, "f.py", hits, {1: [3], 2: [8], 3: [6]})
    assert (at(flow, 1).count, at(flow, 2).count) == (2, 6)
    assert at(analyse(code, "f.py", hits), 1).verdict == "line ran"  # unknown without per-call data


def test_while_and_never_reached():
    code = src(
        """
        k = 0
        while k < 2:
            k += 1
        while False:
            pass
        """
    )
    flow = analyse(code, "f.py", {1: 1, 2: 3, 3: 2})
    assert (at(flow, 2).verdict, at(flow, 2).count, at(flow, 2).test) == ("unrolled", 2, "k < 2")
    assert at(flow, 4).verdict == "never reached"


def test_ifexp_boolop_comprehension():
    code = src(
        """
        y = a if c else b
        z = (a
             if c
             else b)
        w = p and q
        v = [i for i in range(3)]
        """
    )
    flow = analyse(code, "f.py", {1: 1, 2: 1, 3: 1, 5: 1, 6: 5})
    assert at(flow, 1, "ifexp").verdict == "line ran"
    assert at(flow, 2, "ifexp").verdict == "body taken"  # parts on separate lines: decidable
    assert at(flow, 5, "boolop").verdict == "line ran"
    assert at(flow, 6, "comprehension").verdict == "ran"


def test_match_cases():
    code = src(
        """
        match mode:
            case "a":
                x = 1
            case "b" | "c":
                x = 2
            case _:
                x = 3
        """
    )
    one = at(analyse(code, "f.py", {1: 1, 2: 1, 4: 1, 5: 1}), 1)
    assert one.verdict == "body taken" and "'b' | 'c'" in one.detail
    several = at(analyse(code, "f.py", {1: 2, 2: 2, 3: 1, 4: 1, 5: 1}), 1)
    assert several.verdict == "both taken"
    assert at(analyse(code, "f.py", {}), 1).verdict == "never reached"


def test_unparsable_source_keeps_raw_hits():
    flow = analyse("def (:\n", "bad.py", {1: 2})
    assert flow.constructs == () and flow.line_hits == ((1, 2),)


def _graph() -> Graph:
    def eqn(i: int, label: str, line: int, subs=()):
        return Node(id=f"e{i}", kind="eqn", label=label, source=SourceLoc(file="/u/m.py", line=line), subgraphs=subs)

    branches = (SubgraphRef("cond branch 0 (false)", "b1"), SubgraphRef("cond branch 1 (true)", "b2"))
    top = Body("b0", "top", (eqn(0, "cond", 9, branches), eqn(1, "jit", 10, (SubgraphRef("jit(f)", "b3"),))), (), 2, 5)
    b1 = Body("b1", "false", (eqn(0, "sub", 3),), (), 1, 1)
    b2 = Body("b2", "true", (eqn(0, "mul", 5), eqn(1, "jit", 5, (SubgraphRef("jit(g)", "b4"),))), (), 2, 2)
    b3 = Body("b3", "jit", (eqn(0, "sin", 12),), (), 1, 1)
    b4 = Body("b4", "jit in cond", (eqn(0, "cos", 14),), (), 1, 1)
    return Graph(function="f", bodies={b.id: b for b in (top, b1, b2, b3, b4)})


def test_mark_staged_uses_staged_bodies_only():
    code = "\n".join(["x = 1"] * 4 + ["y = a if c else b"] + ["x = 1"] * 10) + "\n"
    report = FlowReport(files=(analyse(code, "/u/m.py", {5: 1}), FileFlow(path="/u/other.py")))
    marked = mark_staged(report, _graph())
    f = marked.file("/u/m.py")
    assert f is not None
    assert f.staged_lines == (3, 5, 14)  # cond branches, and a jit nested in one; not 9, 10, 12
    assert at(f, 5, "ifexp").verdict == "staged"
    assert marked.file("/u/other.py").staged_lines == ()


def test_core_flow_imports_no_jax():
    code = (
        "import sys, jaxscope.analysis.flow, jaxscope.schema.graph, jaxscope.schema.trace, jaxscope.schema.layout;"
        " assert 'jax' not in sys.modules and 'PySide6' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
