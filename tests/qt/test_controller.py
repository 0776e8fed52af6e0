"""Controller edge cases that the window tests reach only by timing (fake worker, no processes)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace
from jaxscope.schema.graph import Body, Edge, Graph, Node
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult


class _ResolvedWorker:
    """Answers every job at once with its request; enough for the IR path."""

    def submit(self, op: str, request: Any, decode: Any, on_phase: Any = None) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(request)
        return future

    def close(self) -> None:
        pass


class _Layouts:
    def close(self) -> None:
        pass


def test_close_with_a_parse_queued_reports_nothing(qtbot):
    """close() cancels queued IR parses; their cancelled futures must not reach the slot as failures
    (CI saw CancelledError raised in the Qt event loop at teardown), nor a parse the pool's thread
    took off the queue while it was being emptied reach it as a result."""
    controller = Controller(worker=_ResolvedWorker(), layouts=_Layouts())  # type: ignore[arg-type]
    release = threading.Event()
    finished: list[Any] = []
    failed: list[Any] = []
    controller.jaxpr_finished.connect(lambda *a: finished.append(a))
    controller.jaxpr_failed.connect(lambda *a: failed.append(a))
    controller.jaxpr("first", lambda r: release.wait(10))  # type: ignore[arg-type]  # holds the parse thread
    controller.jaxpr("second", lambda r: r)  # type: ignore[arg-type]  # queued behind it
    controller.close()  # cancels "second"
    release.set()
    qtbot.wait(50)
    assert failed == [] and finished == []


class _TracingWorker(_ResolvedWorker):
    """A trace answered from another thread, as the real client's reader thread does."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def trace(self, request: Any, on_phase: Any = None, tap: Any = None) -> Future[Any]:
        future: Future[Any] = Future()
        threading.Timer(0.05, future.set_result, (self.result,)).start()  # after the callback is on
        return future


class _StreamLayouts(_Layouts):
    def __init__(self) -> None:
        self.bound: list[Any] = []

    def cancel(self) -> None:
        pass

    def stream(self, expanded: Any, scopes: bool = False) -> Any:
        layouts = self

        class Stream:
            def feed(self, line: Any) -> None:
                pass

            def bind(self, graph: Any) -> None:
                layouts.bound.append((graph, threading.current_thread()))

        return Stream()


class _Scenes:
    """A scene builder that says which thread built what (the graph view builds real models)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.threads: list[threading.Thread] = []

    def prepare_graph(self, graph: Any) -> None:
        self.threads.append(threading.current_thread())
        if self.fail:
            raise RuntimeError("a bug in the scene builder")

    def model_for(self, graph: Any, layout: Any, line_colours: Any = None) -> Any:
        self.threads.append(threading.current_thread())
        return ("a model", graph, layout, line_colours)


def _result() -> TraceResult:
    nodes = (Node("in0", "input", "x"), Node("e0", "eqn", "sin"))
    graph = Graph("f", {"b0": Body("b0", "f", nodes, (Edge("in0", "e0"),), 1, 1)}, "b0")
    return TraceResult(TraceRequest(FunctionRef("f", path="/p/model.py"), args="f32[4]"), graph)


def test_a_trace_is_prepared_off_the_gui_thread_and_bound_before_it_is_handed_over(qtbot):
    """The trace's preparation (the view drawn, its boxes resolved, the window's source-line maps:
    0.3-0.5 s at 50k equations) runs on the thread that got the result, the layout stream is bound
    there too, and the slot gets the finished `PreparedTrace`; a preparation that fails costs
    nothing but the head start."""
    result = _result()
    layouts, scenes = _StreamLayouts(), _Scenes()
    controller = Controller(worker=_TracingWorker(result), layouts=layouts, scenes=scenes)  # type: ignore[arg-type]
    seen: list[PreparedTrace] = []
    controller.trace_finished.connect(seen.append)
    with qtbot.waitSignal(controller.trace_finished, timeout=5000):
        controller.trace("request", palette=["#111111"])  # type: ignore[arg-type]
    (prepared,) = seen
    assert prepared.result is result and prepared.palette == ("#111111",)
    assert scenes.threads and threading.main_thread() not in scenes.threads
    # what is bound is the graph drawn: a small function with no scopes is drawn as it is
    assert prepared.view.graph is result.graph and prepared.expanded == frozenset()
    assert layouts.bound and layouts.bound[0][0] is result.graph and layouts.bound[0][1] is not threading.main_thread()

    controller = Controller(worker=_TracingWorker(result), layouts=_StreamLayouts(), scenes=_Scenes(fail=True))  # type: ignore[arg-type]
    seen.clear()
    controller.trace_finished.connect(seen.append)
    with qtbot.waitSignal(controller.trace_finished, timeout=5000):
        controller.trace("request")  # type: ignore[arg-type]
    assert [p.result for p in seen] == [result]  # made on the GUI thread instead


class _LayoutsAnsweringLater(_Layouts):
    def __init__(self, layout: Any) -> None:
        self.layout = layout

    def cancel(self) -> None:
        pass

    def submit(self, graph: Any, expanded: Any, **options: Any) -> Future[Any]:
        future: Future[Any] = Future()
        threading.Timer(0.05, future.set_result, (self.layout,)).start()
        return future


def test_a_layout_is_prepared_off_the_gui_thread(qtbot):
    """The view's scene model is built on the thread the layout arrives on, with the very colour
    map asked for (the view then is given the same one: stripes made once), and comes with it."""
    layout = type("Layout", (), {"nodes": ()})()
    scenes = _Scenes()
    controller = Controller(worker=_ResolvedWorker(), layouts=_LayoutsAnsweringLater(layout), scenes=scenes)  # type: ignore[arg-type]
    got: list[PreparedLayout] = []
    controller.layout_finished.connect(got.append)
    colours = {"e1": "#123456"}
    with qtbot.waitSignal(controller.layout_finished, timeout=5000):
        controller.layout("graph", ["e1"], colours=colours)  # type: ignore[arg-type]
    (prepared,) = got
    assert prepared.graph == "graph" and prepared.layout is layout and prepared.expanded == frozenset({"e1"})
    assert prepared.model == ("a model", "graph", layout, colours) and prepared.model[3] is colours
    assert scenes.threads and threading.main_thread() not in scenes.threads


def test_a_layout_at_hand_is_prepared_off_the_gui_thread_too(qtbot):
    """A layout already there when asked for (kept from an earlier request, or the trace's streamed
    one when it came before the trace's result) gets its scene model on a thread as well: built in
    the slot, it stalled the GUI thread 0.1-0.3 s at 14k-72k boxes."""
    layout = type("Layout", (), {"nodes": ()})()
    scenes = _Scenes()
    controller = Controller(worker=_ResolvedWorker(), layouts=_LayoutsAnsweringLater(layout), scenes=scenes)  # type: ignore[arg-type]
    got: list[PreparedLayout] = []
    controller.layout_finished.connect(got.append)
    for _ in range(2):  # the second time the layout is kept: at hand
        with qtbot.waitSignal(controller.layout_finished, timeout=5000):
            controller.layout("graph", ["e1"])  # type: ignore[arg-type]
    assert [p.model for p in got] == [("a model", "graph", layout, None)] * 2
    assert len(scenes.threads) == 2 and threading.main_thread() not in scenes.threads


def test_the_helper_threads_are_started_with_the_controller(qtbot, monkeypatch):
    """A pool starts its thread on its first submit, and `Thread.start` waits for the new thread to
    run, which needs the GIL: submitted from the GUI thread while a 50k graph was being decoded,
    that took 19 ms of the first open. The controller's helper threads (the IR parse, the layout
    preparation) run once it is made, and a later parse or layout at hand starts none."""
    before = set(threading.enumerate())
    layout = type("Layout", (), {"nodes": ()})()
    controller = Controller(worker=_ResolvedWorker(), layouts=_LayoutsAnsweringLater(layout), scenes=_Scenes())  # type: ignore[arg-type]
    started_with = {t.name.rpartition("_")[0] for t in set(threading.enumerate()) - before}
    assert {"jaxscope-ir-parse", "jaxscope-layout-prep"} <= started_with
    with qtbot.waitSignal(controller.layout_finished, timeout=5000):
        controller.layout("graph", ["e1"])  # type: ignore[arg-type]  # kept: the next one is at hand
    started: list[threading.Thread] = []
    real = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self) or real(self))
    with qtbot.waitSignal(controller.jaxpr_finished, timeout=5000):
        controller.jaxpr("request", lambda r: r)  # type: ignore[arg-type]  # parsed on the IR thread
    with qtbot.waitSignal(controller.layout_finished, timeout=5000):
        controller.layout("graph", ["e1"])  # type: ignore[arg-type]  # at hand: prepared on the preparation thread
    assert started == []
    controller.close()


class _LateWorker(_ResolvedWorker):
    """Answers a job only when told: after the window has closed."""

    def __init__(self) -> None:
        self.pending: list[Future[Any]] = []

    def submit(self, op: str, request: Any, decode: Any, on_phase: Any = None) -> Future[Any]:
        future: Future[Any] = Future()
        self.pending.append(future)
        return future


def test_a_result_arriving_after_close_is_dropped_quietly(qtbot, caplog):
    """Issue 37.10: closing the window while a result arrived printed `RuntimeError: cannot schedule
    new futures after shutdown` (the reply's callback handed it to the closed parse pool)."""
    worker = _LateWorker()
    controller = Controller(worker=worker, layouts=_Layouts())  # type: ignore[arg-type]
    controller.jaxpr("request", lambda r: r)  # type: ignore[arg-type]
    controller.close()
    with caplog.at_level("ERROR"):
        worker.pending[0].set_result("result")  # the reply lands now
    assert "cannot schedule new futures" not in caplog.text and "exception calling callback" not in caplog.text
