"""`jaxscope.load` and `jaxscope.diff` (issue 36): saved traces and their comparison in a notebook."""

from __future__ import annotations

from dataclasses import replace

import pytest

import jaxscope
from jaxscope.saved_traces import write
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.schema.trace_file import TraceDocument
from tests.graphs import mk_body, mk_graph


def _saved(tmp_path, name: str, eqns: list) -> str:
    graph = mk_graph(mk_body("b0", 1, eqns, [f"e{len(eqns) - 1}"]))
    trace = TraceResult(TraceRequest(FunctionRef("f", path=str(tmp_path / "f.py"))), replace(graph, function="f"), jaxpr_text="{ lambda }")
    path = str(tmp_path / name)
    write(TraceDocument(trace, sources={str(tmp_path / "f.py"): "def f(x): ...\n"}, created="2026-12-06T00:00:00Z"), path)
    return path


def test_load_and_diff_display_in_a_notebook(tmp_path) -> None:
    a = _saved(tmp_path, "a.jaxscope", [("sin", ["in0"]), ("tanh", ["e0"])])
    b = _saved(tmp_path, "b.jaxscope", [("sin", ["in0"]), ("exp", ["e0"]), ("tanh", ["e1"])])
    saved = jaxscope.load(a)
    assert saved.jaxpr == "{ lambda }" and saved.hlo() == "" and saved.graph.top.total_eqns == 2
    html = saved._repr_html_()
    assert "f.py::f" in html and "<svg" in html
    found = jaxscope.diff(saved, b)
    assert found.counts() == {"matched": 1, "added": 1, "removed": 0, "changed": 1}
    assert str(found).endswith("matched 1, added 1, removed 0, changed 1")
    drawn = found._repr_html_()
    assert "<pre>" in drawn and drawn.count('fill="#8fd694"') == 2  # the key's swatch and the one added box


def test_load_refuses_what_is_no_saved_trace(tmp_path) -> None:
    bad = tmp_path / "x.jaxscope"
    bad.write_text("not a trace")
    with pytest.raises(jaxscope.JaxscopeError, match="is not a jaxscope trace document"):
        jaxscope.load(bad)
