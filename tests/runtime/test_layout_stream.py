"""LayoutClient.stream fed by a real worker's trace reply: the layout process decodes the graph as
it arrives, the GUI side binds its own copy, and every way a trace can end leaves no stream hanging."""

from __future__ import annotations

import concurrent.futures
import os
import threading

import pytest

from jaxscope.layout.engine import compute_layout
from jaxscope.layout.wire import LayoutError
from jaxscope.runtime import layout_client
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.runtime.worker_client import WorkerClient, WorkerError
from jaxscope.schema.expansion import auto_expanded
from jaxscope.schema.trace import FunctionRef, TraceRequest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "tests", "faults", "cases")
BASICS = os.path.join(ROOT, "examples", "basics.py")
PREDICT_ARGS = "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}, f32[16,4]"


@pytest.fixture(scope="module")
def clients():
    with WorkerClient(spare=False, timeouts={"load": 10.0, "trace": 10.0}) as worker, LayoutClient() as layouts:
        yield worker, layouts


def predict_request() -> TraceRequest:
    return TraceRequest(FunctionRef(qualname="predict", path=BASICS), args=PREDICT_ARGS, jaxpr_text=False, record_flow=False)


def test_streamed_layout_is_the_layout_of_the_traced_graph(clients, monkeypatch):
    worker, layouts = clients
    stream = layouts.stream()
    result = worker.trace(predict_request(), tap=stream.feed).result(timeout=60)
    stream.bind(result.graph)
    layout = stream.future.result(timeout=60)
    chosen = auto_expanded(result.graph)
    assert chosen and stream.expanded == chosen  # the layout process picked what the GUI would
    expected = compute_layout(result.graph, chosen)
    assert [(b.path, b.x, b.y) for b in layout.nodes] == [(b.path, b.x, b.y) for b in expected.nodes]

    # bound: expanding more of the same graph does not send it again
    sent: list[object] = []
    real = layout_client.graph_to_wire
    monkeypatch.setattr(layout_client, "graph_to_wire", lambda obj: sent.append(obj) or real(obj))
    layouts.layout(result.graph, frozenset())
    assert sent == []
    # an explicit `expanded` is laid out as asked
    stream = layouts.stream(frozenset())
    other = worker.trace(predict_request(), tap=stream.feed).result(timeout=60)
    stream.bind(other.graph)
    assert len(stream.future.result(timeout=60).nodes) < len(layout.nodes) and stream.expanded == frozenset()


def test_a_failed_trace_fails_its_stream_and_the_next_layout_works(clients):
    worker, layouts = clients
    stream = layouts.stream()
    bad = TraceRequest(FunctionRef(qualname="f", path=os.path.join(CASES, "raises_in_call.py")), args="f32[3]")
    with pytest.raises(WorkerError):
        worker.trace(bad, tap=stream.feed).result(timeout=60)
    with pytest.raises(LayoutError, match="without a graph"):
        stream.future.result(timeout=60)
    result = worker.trace(predict_request()).result(timeout=60)
    assert layouts.layout(result.graph, frozenset()).nodes


def test_a_cancelled_trace_ends_its_stream(clients):
    worker, layouts = clients
    stream = layouts.stream()
    reached = threading.Event()
    hang = TraceRequest(FunctionRef(qualname="f", path=os.path.join(CASES, "infinite_loop.py")), args="f32[3]")
    future = worker.trace(hang, on_phase=lambda p: p == "trace" and reached.set(), tap=stream.feed)
    assert reached.wait(60)
    worker.cancel()
    with pytest.raises(WorkerError):
        future.result(timeout=10)
    with pytest.raises(LayoutError):
        stream.future.result(timeout=30)


def test_cancelling_the_stream_while_it_waits_for_lines(clients):
    _, layouts = clients
    stream = layouts.stream()  # nothing feeds it
    layouts.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        stream.future.result(timeout=30)


def test_the_graph_goes_ahead_of_the_result(clients):
    worker, _ = clients
    lines: list[bytes | None] = []
    result = worker.trace(predict_request(), tap=lines.append).result(timeout=60)
    assert lines[-1] is None
    events = [line for line in lines[:-1] if line is not None and b'"event":"' in line]
    kinds = [e.split(b'"event":"')[1].split(b'"')[0] for e in events]
    assert kinds.index(b"graph") < kinds.index(b"done") and kinds[-1] == b"done"
    assert b'"graph":{"wire":"sent"}' in events[-1]  # the result does not carry it twice
    assert result.graph.top.nodes and result.diagnostics is not None


def test_dot_over_budget_before_the_graph_is_bound_waits_for_bind(clients):
    """With no dot budget the stream's first attempt times out in dot and is laid out again with
    the layered engine; that retry needs the caller's graph, so it waits for `bind` (binding late
    here, on purpose) instead of failing."""
    worker, _ = clients
    with LayoutClient(budget_s=0.0) as layouts:
        stream = layouts.stream()
        result = worker.trace(predict_request(), tap=stream.feed).result(timeout=60)
        threading.Timer(1.0, stream.bind, (result.graph,)).start()
        layout = stream.future.result(timeout=60)
    assert "budget" in layout.notes[0] and layout.engine == "layered"
    assert stream.expanded == auto_expanded(result.graph)
