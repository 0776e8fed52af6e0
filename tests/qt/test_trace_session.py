"""The trace session: the one owner of the trace shown. A trace goes one way (asked, prepared off
the GUI thread, taken, laid out, taken), and each signal comes once the session's state is whole."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace
from jaxscope.qt.app.trace_session import TraceSession
from jaxscope.schema.graph import Body, Edge, Graph, Node, SourceLoc, SubgraphRef
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import TraceRequest, TraceResult

FILE = "/p/model.py"


def _graph(name: str) -> Graph:
    """A function whose one equation owns a body (a cluster to open and close)."""
    at = SourceLoc(FILE, 3)
    inner = Body("b1", "jit(g)", (Node("in0", "input", "x"), Node("e0", "eqn", "sin", source=at), Node("out0", "output", "y")), (), 1, 1)
    top = (Node("in0", "input", "x"), Node("e0", "eqn", "jit", source=at, subgraphs=(SubgraphRef("jit(g)", "b1", "jaxpr"),)))
    return Graph(name, {"b0": Body("b0", name, top, (Edge("in0", "e0"),), 1, 2), "b1": inner}, "b0")


class _Worker:
    """Answers a trace from another thread with the graph of the function asked for."""

    def __init__(self) -> None:
        self.results: list[TraceResult] = []

    def trace(self, request: TraceRequest, on_phase: Any = None, tap: Any = None) -> Future[TraceResult]:
        result = TraceResult(request, _graph(request.function.qualname))
        self.results.append(result)
        future: Future[TraceResult] = Future()
        threading.Timer(0.02, future.set_result, (result,)).start()
        return future

    def close(self) -> None:
        pass


class _Layouts:
    """Lays out at once; remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[Graph, frozenset[str]]] = []

    def stream(self, expanded: Any, scopes: bool = False) -> None:
        return None

    def cancel(self) -> None:
        pass

    def submit(self, graph: Graph, expanded: frozenset[str], **options: Any) -> Future[Layout]:
        self.asked.append((graph, expanded))
        future: Future[Layout] = Future()
        future.set_result(Layout(nodes=(), edges=(), clusters=(), width=1.0, height=1.0))
        return future

    def close(self) -> None:
        pass


def _session() -> tuple[TraceSession, _Worker, _Layouts]:
    worker, layouts = _Worker(), _Layouts()
    controller = Controller(worker=worker, layouts=layouts)  # type: ignore[arg-type]
    session = TraceSession(controller)
    session.set_palette(["#aa0000", "#00aa00"])
    session.open_file(FILE)
    return session, worker, layouts


def test_a_trace_goes_one_way_and_each_signal_finds_the_state_whole(qtbot) -> None:
    session, worker, layouts = _session()
    seen: list[str] = []

    def traced(prepared: PreparedTrace, previous: TraceResult | None) -> None:
        assert session.doc.result is prepared.result and session.doc.view is prepared.view and previous is None
        assert session.links is prepared.links and session.colours() is prepared.colours  # made off the GUI thread, used as is
        seen.append("traced")

    def laid_out(prepared: PreparedLayout, keep: bool) -> None:
        assert session.doc.layout is prepared.layout and session.doc.expanded == prepared.expanded and not keep
        seen.append("laid out")

    session.traced.connect(traced)
    session.laid_out.connect(laid_out)
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.trace("f", "f32[4]")
    assert seen == ["traced", "laid out"]
    assert session.colours() == {"e0": "#aa0000", "e0:0/e0": "#aa0000"}  # both equations of source line 3
    ((graph, expanded),) = layouts.asked
    assert graph is worker.results[0].graph  # the view of a program without modules: as traced
    assert expanded == session.doc.expanded == frozenset({"e0"})  # its first view opens the small call


def test_a_toggle_keeps_its_place_and_a_re_trace_keeps_what_the_user_opened(qtbot) -> None:
    session, worker, layouts = _session()
    keeps: list[bool] = []
    session.laid_out.connect(lambda _p, keep: keeps.append(keep))
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.trace("f", "f32[4]")
    assert session.doc.expanded == frozenset({"e0"})  # the first view opens the small call
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.toggle("e0")
    assert session.doc.expanded == frozenset() and session.doc.user_toggled
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.trace("f", "f32[4]")  # the file saved: traced again
    assert session.doc.expanded == frozenset() and layouts.asked[-1][1] == frozenset()
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.trace("g", "f32[4]")  # another function: its own first view, fitted
    assert session.doc.expanded == frozenset({"e0"}) and not session.doc.user_toggled
    assert keeps == [False, True, True, False]


def test_a_layout_of_a_graph_no_longer_shown_is_dropped(qtbot) -> None:
    session, _worker, _layouts = _session()
    with qtbot.waitSignal(session.laid_out, timeout=5000):
        session.trace("f", "f32[4]")
    shown = session.doc.layout
    got: list[Any] = []
    session.laid_out.connect(lambda p, keep: got.append(p))
    late = PreparedLayout(_graph("old"), Layout(nodes=(), edges=(), clusters=(), width=2.0, height=2.0), frozenset())
    session.controller.layout_finished.emit(late)
    assert got == [] and session.doc.layout is shown


def test_another_file_is_a_new_document() -> None:
    session, _worker, _layouts = _session()
    session.doc.function = "f"
    assert not session.open_file(FILE) and session.doc.function == "f"
    assert session.open_file("/p/other.py") and session.doc.function == "" and session.doc.path == "/p/other.py"
