"""Trace documents (issue 36): what is saved comes back, and a file that is none, is cut short or
comes from a newer jaxscope is refused with a sentence that says which and why."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace

import pytest

from jaxscope.schema.flow import FileFlow, FlowReport
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from jaxscope.schema.trace_file import DOCUMENT_VERSION, DocumentError, TraceDocument, decode, encode, user_files
from tests.graphs import sample_graph


def _doc() -> TraceDocument:
    ref = FunctionRef("f", path="/p/model.py")
    text = "{ lambda ; a:f32[4]. let b = sin a in (b,) }"
    trace = TraceResult(TraceRequest(ref, args="f32[4]", inputs=""), sample_graph(), jaxpr_text=text)
    hlo = HloResult(HloRequest(ref, "f32[4]", "compiled"), "HloModule jit_f", cost={"flops": 4.0})
    return TraceDocument(trace, None, hlo, None, {"/p/model.py": "def f(x):\n    return jnp.sin(x)\n"}, "2026-12-06T00:00:00Z", "0.1.0")


def test_a_document_comes_back_whole() -> None:
    doc = _doc()
    blob = encode(doc)
    assert blob[:2] == b"\x1f\x8b" and encode(doc) == blob  # gzip, and the same trace saves to the same bytes
    back = decode(blob)
    assert back == doc
    assert back.hlo("compiled") is not None and back.hlo("stablehlo") is None
    assert back.target == "/p/model.py::f --args 'f32[4]'"


@pytest.mark.parametrize(
    ("blob", "said"),
    [  # mtime=0: the same bytes, so the same test ids, in every collecting process (pytest-xdist)
        (b"def f(x): pass\n", "not gzip-compressed"),
        (b'{"graph": {}}', "is JSON, not a saved trace"),
        (gzip.compress(b'{"format": "something"}', mtime=0), "no jaxscope trace document"),
        (gzip.compress(b"{not json", mtime=0), "not valid JSON"),
        (gzip.compress(json.dumps({"format": "jaxscope-trace", "version": 1}).encode(), mtime=0), "is damaged: trace: missing"),
        (
            gzip.compress(json.dumps({"format": "jaxscope-trace", "version": DOCUMENT_VERSION + 1, "jaxscope": "9.0"}).encode(), mtime=0),
            "saved by jaxscope 9.0 in trace format 2; this jaxscope reads format 1 and older: upgrade",
        ),
    ],
)
def test_bad_files_are_refused_with_a_reason(blob: bytes, said: str) -> None:
    with pytest.raises(DocumentError, match="x.jaxscope") as caught:
        decode(blob, "x.jaxscope")
    assert said in str(caught.value)


def test_a_file_cut_short_is_damaged() -> None:
    blob = encode(_doc())
    with pytest.raises(DocumentError, match="damaged: its compressed data is cut short"):
        decode(blob[: len(blob) // 2], "x.jaxscope")


def test_the_user_files_of_a_trace() -> None:
    doc = _doc()
    graph = doc.trace.graph
    top = graph.top
    lib = SourceLoc("/site-packages/flax/linen.py", 3, library="flax")
    user = SourceLoc("/p/helpers.py", 9)
    nodes = (replace(top.nodes[0], frames=(user, lib)), *top.nodes[1:])
    graph = replace(graph, bodies={**graph.bodies, top.id: replace(top, nodes=nodes)})
    flow = FlowReport(files=(FileFlow(path="/p/ran.py"),))
    trace = replace(doc.trace, graph=graph, flow=flow, request=replace(doc.trace.request, inputs="/p/make.py::make"))
    assert user_files(trace) == ["/p/model.py", "/p/make.py", "/p/ran.py", "/p/helpers.py"]


def test_a_wrong_typed_field_is_named_once() -> None:
    """Issue 59.6: "expected text, got an object an object of 1 items"."""
    from jaxscope.schema.trace_file_check import CheckError, text

    for value, said in (
        ({"a": 1}, "expected text, got an object of 1 item"),
        (5, "expected text, got an integer 5"),
        ([1, 2], "got a list of 2 items"),
    ):
        try:
            text(value, "here")
        except CheckError as exc:
            assert said in str(exc), str(exc)
        else:
            raise AssertionError(value)
