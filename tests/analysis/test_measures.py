"""The measures table (issue 61.3): each entry's values function reads what its `needs` says —
the graph's cost rows or liveness, or a profiled compiled run (a TPU's, saved with `save --time`) —
and gives values by program path; a measure without what it needs says why."""

from __future__ import annotations

import pathlib

import pytest

from jaxscope.analysis.measures import MEASURES, MeasureData, measure
from jaxscope.saved_traces import load
from jaxscope.schema.graph import resolve

SAVED = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "vit_step.jaxscope"


def test_every_measure_reads_what_it_needs_and_names_program_paths() -> None:
    doc = load(str(SAVED))
    for name, m in MEASURES.items():
        values, caption = m.values(MeasureData(doc.trace.graph, doc.compiled if m.needs == "profile" else None))
        assert values and sum(values.values()) > 0, name
        assert caption.startswith(m.caption), (name, caption)
        for path in list(values)[:50]:
            resolve(doc.trace.graph, path)
    assert "on TPU v5 lite, device busy" in MEASURES["time"].values(MeasureData(compiled=doc.compiled))[1]


def test_a_measure_without_what_it_needs_says_so() -> None:
    doc = load(str(SAVED))
    with pytest.raises(ValueError, match="run under the profiler"):
        MEASURES["time"].values(MeasureData(doc.trace.graph))
    with pytest.raises(ValueError, match="of a graph alone"):
        measure(doc.trace.graph, "time")
    assert measure(doc.trace.graph, "flops") == MEASURES["flops"].values(MeasureData(doc.trace.graph))[0]
