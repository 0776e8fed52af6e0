"""The run report's text: each equation named with its file and line."""

from __future__ import annotations

from jaxscope.analysis.runs.verdicts import format_run, short_loc
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import EqnDivergence, RunRequest, RunResult
from jaxscope.schema.trace import FunctionRef


def test_per_equation_rows_name_file_and_line():
    """Issue 32.3: two files' "line 11" were told apart by nothing in run's per-equation table."""
    rows = (
        EqnDivergence("e1", "exp", SourceLoc("/p/model.py", 11), "f32[3]", 1e-6, 1e-6),
        EqnDivergence("e2", "log", SourceLoc("/p/layers/helpers.py", 11), "f32[3]", 1e-5, 1e-5),
        EqnDivergence("e3", "add", None, "f32[3]", 1e-7, 1e-7),
    )
    result = RunResult(RunRequest(FunctionRef(qualname="f", path="/p/model.py")), divergence=rows)
    text = format_run(result)
    assert "helpers.py:11" in text and "model.py:11" in text and "first to differ: e1 exp (model.py:11)" in text
    assert short_loc(None) == "-"
