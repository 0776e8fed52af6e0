"""The jaxscope side of one workload, in a fresh GUI process (offscreen Qt), as the app runs it.

    python benchmarks/gui_stages.py FILE ARGS_FILE --reps 3 [--extras] [--png] [--pan N]

Drives the real `jaxscope.qt.app.controller.Controller` (worker process + layout process) and a real
`QtGraphView`: ``Controller.trace(TraceRequest)`` -> ``trace_finished`` (a PreparedTrace: its ``first_open`` of the view drawn:
a model's modules as groups, as the app; ``--flat`` for the program as traced) ->
``Controller.layout`` -> ``layout_finished`` -> ``QtGraphView.set_graph`` -> first paint
(``viewport().grab()``), with a 10 ms QTimer measuring how late the GUI event loop runs the whole
time. The worker is warm (JAX imported, a tiny trace done) before the clock starts, as it is
when a user opens a function in a running app.

Prints one JSON object per line, ``{"key": ..., "value": ...}``, as each stage finishes, so a
run killed by the harness's timeout still reports what it measured; the last line is
``{"key": "done"}``. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication

from jaxscope.layout.preview import Region
from jaxscope.qt.app.controller import Controller
from jaxscope.qt.app.ir_side import AUTO_COMPILE_MAX_EQNS
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace
from jaxscope.qt.graph.view import QtGraphView
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.runtime.worker_client import DEFAULT_TIMEOUTS, WorkerClient
from jaxscope.schema.expansion import expandable
from jaxscope.schema.graph import Graph
from jaxscope.schema.hlo import HloRequest
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult

TICK_MS = 10
VIEW_W, VIEW_H = 1600, 1000
BENCH_TIMEOUT_S = 900.0  # the harness bounds the whole process; the worker must not time out first


def emit(key: str, value: Any) -> None:
    print(json.dumps({"key": key, "value": value}), flush=True)


def vm_hwm_mb(pid: int | None) -> float | None:
    """Peak RSS (VmHWM) of a live process, in MB (Linux); None when unknown."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss / 2**20
    except Exception:
        return None


def self_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


class LoopProbe:
    """A 10 ms precise timer; lateness = interval between two ticks minus 10 ms."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def start(self) -> None:
        self.ticks = [time.perf_counter()]
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def stats(self, t_from: float, t_to: float, skip: tuple[float, float] | None = None) -> dict[str, float]:
        """Max and p99 lateness (ms) of the ticks that fired in (t_from, t_to]; with `skip`, not
        of those whose interval overlaps it (the GUI thread's own scene build and paint)."""
        late = []
        for a, b in zip(self.ticks, self.ticks[1:]):
            if skip is not None and a < skip[1] and skip[0] < b:
                continue
            if t_from < b <= t_to:
                late.append(max(0.0, (b - a) * 1000 - TICK_MS))
        if not late:
            return {"max_ms": 0.0, "p99_ms": 0.0, "ticks": 0}
        late.sort()
        p99 = late[min(len(late) - 1, int(round(0.99 * (len(late) - 1))))]
        return {"max_ms": late[-1], "p99_ms": p99, "ticks": len(late)}


def wait_until(loop_cond, timeout: float) -> bool:
    """Spin the Qt event loop until `loop_cond()` or the timeout."""
    end = time.monotonic() + timeout
    while not loop_cond():
        if time.monotonic() > end:
            return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        time.sleep(0.002)
    return True


class Bench:
    def __init__(self, path: str, args: str) -> None:
        self.path = path
        self.args = args
        timeouts = {k: BENCH_TIMEOUT_S for k in DEFAULT_TIMEOUTS}
        # No pre-warmed spare: the app keeps one, but the clock starts only once it is up anyway
        # (it only costs CPU while it imports jax), so the bench skips it to save time.
        self.worker = WorkerClient(spare=False, timeouts=timeouts)
        self.view = QtGraphView()
        self.view.resize(VIEW_W, VIEW_H)
        self.view.show()
        # as the app: the view builds scene models on the threads results arrive on
        self.controller = Controller(worker=self.worker, layouts=LayoutClient(), scenes=self.view)
        self.probe = LoopProbe()
        self.events: dict[str, Any] = {}
        c = self.controller
        c.trace_finished.connect(self._on_trace)
        c.trace_failed.connect(self._on_failed)
        c.layout_finished.connect(self._on_layout)
        c.layout_preview.connect(self._on_preview)
        c.layout_failed.connect(lambda msg: self._on_failed(msg))
        self.loop = QEventLoop()
        self.layout_on_trace = True

    # -- signal handlers: what the app does on these signals, timed
    def _on_trace(self, prepared: PreparedTrace) -> None:
        ev = self.events
        ev["t_trace"] = time.perf_counter()
        ev["result"] = prepared.result
        if not self.layout_on_trace:
            self.loop.quit()
            return
        view = ev["view"] = prepared.view  # as the app: a model's modules as groups, made off the GUI thread
        expanded = prepared.expanded
        ev["t_auto"] = time.perf_counter()
        self.controller.layout(view.graph, expanded)

    def _on_layout(self, prepared: PreparedLayout) -> None:
        ev = self.events
        ev["t_layout"] = time.perf_counter()
        graph, layout = prepared.graph, prepared.layout
        ev["layout"], ev["expanded"] = layout, prepared.expanded
        self.view.set_graph(graph, layout, "light", keep_view=ev.get("keep_view", False), model=prepared.model)
        ev["t_scene"] = time.perf_counter()
        self.view.viewport().grab()
        ev["t_paint"] = time.perf_counter()
        self.loop.quit()

    def _on_preview(self, prepared: PreparedLayout) -> None:
        ev = self.events
        ev["t_preview"] = time.perf_counter()
        ev["preview_nodes"] = len(prepared.layout.nodes)
        self.view.show_preview(prepared.graph, prepared.layout, prepared.model)  # painted, as in the app
        ev["t_preview_paint"] = time.perf_counter()

    def _on_failed(self, info: Any) -> None:
        self.events["t_failed"] = time.perf_counter()
        self.events["failure"] = getattr(info, "kind", None) or str(info)
        self.events["failure_text"] = info.summary() if hasattr(info, "summary") else str(info)
        self.loop.quit()

    def request(self, function: str = "train_step", args: str | None = None) -> TraceRequest:
        # as the app: the graph first, the printed jaxpr asked for once it is on screen (`jaxpr_after`)
        return TraceRequest(FunctionRef(function, path=self.path), self.args if args is None else args, jaxpr_text=False, record_flow=False)

    def jaxpr_after(self, graph: Graph, timeout_s: float) -> tuple[float, str, float]:
        """The app's next step after the first paint: the worker prints the jaxpr and it is linked on
        the parse thread. (seconds from the request to the linked text, the text, worker print time)."""
        from jaxscope.ir import linking

        got: list[Any] = []
        done = self.controller.jaxpr_finished.connect(lambda printed, links: (got.append(printed), self.loop.quit()))
        failed = self.controller.jaxpr_failed.connect(lambda request, info: (got.append(info), self.loop.quit()))
        t = time.perf_counter()
        self.controller.jaxpr(self.request(), lambda printed: linking.jaxpr_links(graph, printed.text))
        self.run_loop(timeout_s)
        dt = time.perf_counter() - t
        self.controller.jaxpr_finished.disconnect(done)
        self.controller.jaxpr_failed.disconnect(failed)
        printed = got[0] if got and hasattr(got[0], "text") else None
        return dt, printed.text if printed else "", printed.seconds if printed else 0.0

    def run_loop(self, timeout_s: float) -> None:
        guard = QTimer()
        guard.setSingleShot(True)
        guard.timeout.connect(self.loop.quit)
        guard.start(int(timeout_s * 1000))
        self.loop.exec()
        guard.stop()

    # -- stages
    def warm(self) -> None:
        t = time.perf_counter()
        info = self.worker.worker_info()
        emit("worker_startup_s", time.perf_counter() - t)
        emit("worker_pid", info.get("pid"))
        self.events = {}
        self.controller.trace(self.request("warm", "f32[4]"))
        self.run_loop(120)
        if "failure" in self.events:
            raise SystemExit(f"warm-up trace failed: {self.events['failure_text']}")
        spare = getattr(self.worker, "_spare", None)  # the pre-warmed spare: let it finish importing jax
        if spare is not None:
            wait_until(lambda: spare.ready.is_set() or not spare.alive, 120)
        QCoreApplication.processEvents()

    def open_once(self, timeout_s: float) -> dict[str, Any]:
        """One "open function -> interactive" run: trace, auto-expanded layout, scene, first paint."""
        gc.collect()
        self.events = {}
        self.probe.start()
        t0 = time.perf_counter()
        self.controller.trace(self.request())
        self.run_loop(timeout_s)
        # let the tick that the scene build delayed fire, so "including scene" sees it
        end = time.perf_counter() + 0.05
        wait_until(lambda: time.perf_counter() > end, 1)
        self.probe.stop()
        ev = self.events
        if "failure" in ev:
            raise RuntimeError(ev["failure_text"])
        if "t_paint" not in ev:
            raise TimeoutError(f"no graph on screen after {timeout_s:.0f} s")
        result: TraceResult = ev["result"]
        layout: Layout = ev["layout"]
        jaxpr_s, text, print_s = self.jaxpr_after(result.graph, timeout_s)
        ev["result"] = replace(result, jaxpr_text=text)
        w = dict(result.timings)
        worker_total = sum(w.values())
        return {
            "total_s": ev["t_paint"] - t0,
            "worker": w,
            "worker_trace_s": w.get("trace", 0.0),
            "worker_graph_s": w.get("graph", 0.0),
            "worker_other_s": worker_total - w.get("trace", 0.0) - w.get("graph", 0.0),
            "transfer_s": (ev["t_trace"] - t0) - worker_total,
            "trace_request_s": ev["t_trace"] - t0,
            "auto_expanded_s": ev["t_auto"] - ev["t_trace"],
            "layout_s": ev["t_layout"] - ev["t_auto"],
            "scene_s": ev["t_scene"] - ev["t_layout"],
            "paint_s": ev["t_paint"] - ev["t_scene"],
            "engine": layout.engine,
            "layout_notes": list(layout.notes),
            "nodes_drawn": len(layout.nodes),
            "edges_drawn": len(layout.edges),
            "expanded": len(ev["expanded"]),
            "loop": self.probe.stats(t0, ev["t_layout"]),
            "loop_trace": self.probe.stats(t0, ev["t_trace"]),
            "loop_layout": self.probe.stats(ev["t_auto"], ev["t_layout"]),
            "loop_with_scene": self.probe.stats(t0, time.perf_counter()),
            "jaxpr_after_s": jaxpr_s,
            "jaxpr_print_s": print_s,
            "jaxpr_text_mb": len(text) / 1e6,
            "top_eqns": result.graph.top.n_eqns,
            "total_eqns": result.graph.top.total_eqns,
        }

    def relayout(self, graph: Graph, expanded: frozenset[str], timeout_s: float, region: Region | None = None) -> dict[str, Any]:
        """Expand/collapse as the app does it: layout in the worker, scene rebuilt keeping the view
        (with `region`, the part the view shows painted first when the layout process sends it)."""
        gc.collect()
        self.events = {"keep_view": True}
        self.probe.start()
        t0 = time.perf_counter()
        self.events["t_auto"] = t0
        self.controller.layout(graph, expanded, region=region)
        self.run_loop(timeout_s)
        end = time.perf_counter() + 0.05
        wait_until(lambda: time.perf_counter() > end, 1)
        self.probe.stop()
        ev = self.events
        if "failure" in ev or "t_paint" not in ev:
            raise RuntimeError(ev.get("failure_text", "relayout timed out"))
        return {
            "layout_s": ev["t_layout"] - t0,
            "scene_s": ev["t_scene"] - ev["t_layout"],
            "paint_s": ev["t_paint"] - ev["t_scene"],
            "total_s": ev["t_paint"] - t0,
            "first_paint_s": ev.get("t_preview_paint", ev["t_paint"]) - t0,
            "preview_nodes": ev.get("preview_nodes"),
            "preview_s": ev["t_preview"] - t0 if "t_preview" in ev else None,  # its arrival (then shown and painted)
            "nodes_drawn": len(ev["layout"].nodes),
            # as for an open, the GUI thread's own scene build and first paint (of the preview) aside
            "loop": self.probe.stats(t0, ev["t_layout"], (ev["t_preview"], ev["t_preview_paint"]) if "t_preview" in ev else None),
            "loop_with_preview": self.probe.stats(t0, ev["t_layout"]),
        }

    def expand_zoomed_in(self, graph: Graph, expanded: frozenset[str], owner: str, timeout_s: float) -> dict[str, Any]:
        """A first expand as a user makes it: zoomed in to 1 on the owner's box, double-clicked (the
        view anchors it and sends what it shows). Timed to the first paint and to the whole one."""
        view = self.view
        view.zoom_by(1.0 / view.zoom(), view.viewport().rect().center())
        rect = view.scene_node_rect(owner)
        if rect is None:
            raise RuntimeError(f"{owner} is not drawn")
        view.centre_at(rect.center())
        view.viewport().grab()
        view.keep_place_of(owner)  # what the double-click does
        got = self.relayout(graph, frozenset(expanded | {owner}), timeout_s, view.preview_region(owner))
        view.fit_all()
        view.viewport().grab()
        return got

    def cancel_latency(self, after_s: float) -> dict[str, Any]:
        """Start a trace, cancel it after `after_s`: how long cancel() blocks, and until trace_failed."""
        self.events = {}
        self.layout_on_trace = False
        marks: dict[str, float] = {}

        def do_cancel() -> None:
            marks["t_cancel"] = time.perf_counter()
            self.controller.cancel()
            marks["t_returned"] = time.perf_counter()

        self.controller.trace(self.request())
        QTimer.singleShot(int(after_s * 1000), do_cancel)
        self.run_loop(after_s + 30)
        self.layout_on_trace = True
        ev = self.events
        if "t_cancel" not in marks:
            return {"error": "no cancel happened"}
        if "t_failed" not in ev:
            return {"error": "the trace finished before the cancel" if "t_trace" in ev else "no answer after cancel"}
        return {
            "after_s": after_s,
            "call_ms": (marks["t_returned"] - marks["t_cancel"]) * 1000,
            "to_failed_ms": (ev["t_failed"] - marks["t_cancel"]) * 1000,
            "kind": ev.get("failure"),
        }


def biggest_collapsed(graph: Graph, expanded: frozenset[str]) -> list[tuple[int, str]]:
    """(sub-graph equations, owner path) of every collapsed owner that is visible, biggest first."""
    out: list[tuple[int, str]] = []

    def visit(body_id: str, prefix: str) -> None:
        for node in graph.bodies[body_id].nodes:
            if not expandable(graph, node):
                continue
            path = prefix + node.id
            if path in expanded:
                for i, ref in enumerate(node.subgraphs):
                    visit(ref.body, f"{path}:{i}/")
            else:
                out.append((sum(graph.bodies[r.body].total_eqns for r in node.subgraphs), path))

    visit(graph.root, "")
    out.sort(key=lambda t: -t[0])
    return out


def app_open(path: str, function: str, args: str, timeout_s: float) -> dict[str, Any]:
    """The whole app, as a user opens a file: a real MainWindow (its own workers, control-flow
    recording on as on a first open, every pane filled) from `open_target` to the graph on screen,
    and the GUI loop's lateness from there until the printed jaxpr is shown too. What the
    Controller-level runs above leave out: the window's own work on the GUI thread (line colours,
    flow marks, node sources, the jaxpr pane, the parameter list)."""
    from jaxscope.qt.app.window import MainWindow

    win = MainWindow(theme="light")
    win.confirm_run = lambda _path: True
    win.resize(1400, 900)
    win.show()
    probe = LoopProbe()
    hlo: list[tuple[HloRequest, float]] = []  # each IR stage the window got (shown, or failed), and when
    win.controller.hlo_finished.connect(lambda result, _made: hlo.append((result.request, time.perf_counter())))
    win.controller.hlo_failed.connect(lambda request, _info: hlo.append((request, time.perf_counter())))
    try:
        tiny = os.path.join(os.path.dirname(path), "jaxscope_bench_warm.py")
        with open(tiny, "w") as fh:
            fh.write("import jax.numpy as jnp\n\nJAXSCOPE_ARGS = {'f': 'f32[3]'}\n\n\ndef f(x):\n    return jnp.sin(x)\n")
        win.open_target(tiny + "::f")  # the window's workers up, JAX imported and warm
        if not wait_until(lambda: win.doc.layout is not None and win.jaxpr.document().characterCount() > 1, timeout_s):
            return {"error": "the warm-up trace did not finish"}
        # the window also lowers the warm-up (and may compile it), and its spare worker imports JAX:
        # both done first, or the trace below would wait for them
        wait_until(lambda: bool(hlo), 30)
        spare = getattr(win.controller.worker, "_spare", None)
        if spare is not None:
            wait_until(lambda: spare.ready.is_set() or not spare.alive, timeout_s)
        wait_until(lambda: False, 1.0)
        win.doc.layout = None
        gc.collect()
        probe.start()
        t0 = time.perf_counter()
        win.open_target(f"{path}::{function}", args)
        if not wait_until(lambda: win.doc.layout is not None, timeout_s):
            return {"error": win.problem.text() or win.inputs.error.text() or "no graph in time"}
        win.graph.viewport().grab()
        t_graph = time.perf_counter()
        # characterCount, not toPlainText: copying out a 13 MB document took the GUI thread ~0.3 s,
        # which the loop probe then counted as the app's own lateness
        wait_until(lambda: win.jaxpr.document().characterCount() > 100, timeout_s)
        t_jaxpr = time.perf_counter()
        wait_until(lambda: False, 0.1)
        t_open = time.perf_counter()
        # Then the IR, as the window makes it on its own: lowered to StableHLO and shown, and for a
        # program small enough, compiled by XLA and its HLO shown (T3: "compile" must not block either)
        eqns = win.doc.graph.top.total_eqns if win.doc.graph is not None else 0
        stages = 2 if win.auto_compile.isChecked() and eqns <= AUTO_COMPILE_MAX_EQNS else 1
        here = os.path.abspath(path)

        def mine() -> list[float]:  # when each IR stage of this program came
            return [t for request, t in hlo if os.path.abspath(request.function.path or "") == here]

        got_ir = wait_until(lambda: len(mine()) >= stages, timeout_s)
        t_ir = mine()[-1] if got_ir else None
        wait_until(lambda: False, 0.1)
        probe.stop()
        return {
            "graph_s": t_graph - t0,
            "jaxpr_s": t_jaxpr - t0,
            "flow": win.doc.result.flow is not None if win.doc.result is not None else False,
            "loop": probe.stats(t0, t_open),
            "ir_s": t_ir - t0 if t_ir is not None else None,
            "ir_stages": stages,
            "ir_loop": probe.stats(t_open, time.perf_counter()),
        }
    finally:
        win.close()
        win.deleteLater()


def pan_and_fit(view: QtGraphView, pans: int) -> dict[str, Any]:
    """Pan at zoom 1 (scroll 40 px, full viewport repaint) and fit-all repaints, in ms."""
    vp = view.viewport()
    content = view.content_rect()
    if hasattr(view, "_set_scale"):
        view.set_scale(1.0)
    view.centerOn(content.center())
    zoom = view.zoom()
    vp.repaint()
    h = view.horizontalScrollBar()
    v = view.verticalScrollBar()
    pan = []
    for i in range(pans):
        bar, step = (h, 40) if i % 2 == 0 else (v, 40)
        bar.setValue(bar.value() + (step if (i // 2) % 8 < 4 else -step))
        t = time.perf_counter()
        vp.repaint()
        pan.append((time.perf_counter() - t) * 1000)
    view.fit_all()
    vp.repaint()
    fit = []
    for _ in range(3):
        t = time.perf_counter()
        vp.repaint()
        fit.append((time.perf_counter() - t) * 1000)
    return {
        "zoom": zoom,
        "pan_median_ms": statistics.median(pan),
        "pan_max_ms": max(pan),
        "fit_median_ms": statistics.median(fit),
        "fit_max_ms": max(fit),
        "fit_zoom": view.zoom(),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("args_file", help="a file holding the argument spec text")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="per open, seconds")
    ap.add_argument("--pan", type=int, default=20, help="pan steps (0: skip pan and fit-all)")
    ap.add_argument("--png", action="store_true", help="also time PNG export (core.export, capped size)")
    ap.add_argument("--no-expand", action="store_true")
    ap.add_argument("--no-cancel", action="store_true")
    ap.add_argument("--no-extras", action="store_true", help="skip the jaxpr pane / linking timings")
    ap.add_argument("--no-app", action="store_true", help="skip the open in a real MainWindow")
    ap.add_argument("--flat", action="store_true", help="View -> Group by Module off: the program drawn as traced")
    opts = ap.parse_args()
    with open(opts.args_file) as fh:
        args = fh.read()

    QCoreApplication.setOrganizationName("jaxscope-bench")
    QCoreApplication.setApplicationName("jaxscope-bench")
    settings_dir = tempfile.mkdtemp(prefix="jaxscope-bench-settings-")
    atexit.register(shutil.rmtree, settings_dir, ignore_errors=True)  # its exports and settings: megabytes a run
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    emit("gui_rss_start_mb", self_peak_mb())
    bench = Bench(os.path.abspath(opts.path), args)
    bench.controller.grouping = not opts.flat
    try:
        bench.warm()
        emit("gui_rss_warm_mb", self_peak_mb())
        runs = []
        for _ in range(opts.reps):
            run = bench.open_once(opts.timeout)
            runs.append(run)
            emit("run", run)
        emit("gui_peak_after_open_mb", self_peak_mb())
        emit("worker_peak_mb", vm_hwm_mb(bench.worker.worker_info().get("pid")))
        lw = getattr(bench.controller.layouts, "_worker", None)
        emit("layout_worker_peak_mb", vm_hwm_mb(getattr(getattr(lw, "proc", None), "pid", None)))
        result: TraceResult = bench.events["result"]
        graph, layout, expanded = bench.events["view"].graph, bench.events["layout"], bench.events["expanded"]
        emit("grouped", bench.events["view"].grouped)

        # as the app exports (qt.export_job): core.export to a file, on a thread, while the GUI loop keeps ticking
        from concurrent.futures import ThreadPoolExecutor

        from jaxscope.exporter import export

        svg_path = os.path.join(settings_dir, "graph.svg")
        with ThreadPoolExecutor(1) as pool:
            bench.probe.start()
            t = time.perf_counter()
            job = pool.submit(export, graph, layout, svg_path)
            wait_until(job.done, opts.timeout)
            dt = time.perf_counter() - t
            bench.probe.stop()
            job.result()
        emit("svg", {"s": dt, "mb": os.path.getsize(svg_path) / 1e6, "loop": bench.probe.stats(t, t + dt + 1)})
        os.unlink(svg_path)

        if opts.pan:
            emit("pan", pan_and_fit(bench.view, opts.pan))

        if not opts.no_extras:
            extras: dict[str, Any] = {}
            try:  # what the main window does on the GUI thread when a trace arrives (app, not Controller)
                from jaxscope.ir import linking
                from jaxscope.qt.panes.jaxpr_view import QtJaxprView

                jv = QtJaxprView()
                t = time.perf_counter()
                jv.set_text(result.jaxpr_text)
                extras["jaxpr_pane_s"] = time.perf_counter() - t
                t = time.perf_counter()
                linking.jaxpr_links(result.graph, "")  # node sources; the jaxpr lines are linked on the parse thread
                extras["jaxpr_links_s"] = time.perf_counter() - t
                t = time.perf_counter()
                linking.nodes_by_line(result.graph, bench.path)
                linking.node_colours(result.graph, bench.path, list(linking.PALETTE_LIGHT))
                extras["line_maps_s"] = time.perf_counter() - t
                jv.deleteLater()
            except Exception as exc:  # the app's internals move; the core numbers must still come out
                extras["error"] = f"{type(exc).__name__}: {exc}"
            emit("app_extras", extras)

        if not opts.no_expand:
            candidates = biggest_collapsed(graph, expanded)
            picks = candidates[:1]
            small = [c for c in candidates if c[0] <= 2500]
            if small and small[0] not in picks:
                picks.append(small[0])
            expands = []
            for eqns, owner in picks:
                grown = frozenset(expanded | {owner})
                first = bench.relayout(graph, grown, opts.timeout)
                back = bench.relayout(graph, frozenset(expanded), opts.timeout)
                cached = bench.relayout(graph, grown, opts.timeout)
                if len(picks) > 1:
                    bench.relayout(graph, frozenset(expanded), opts.timeout)
                expands.append({"owner": owner, "eqns": eqns, "first": first, "collapse": back, "cached": cached})
            zoomed = next((c for c in small if c not in picks), None)  # a first expand of another small owner
            if zoomed is not None:
                eqns, owner = zoomed
                at = bench.expand_zoomed_in(graph, frozenset(expanded), owner, opts.timeout)
                bench.relayout(graph, frozenset(expanded), opts.timeout)
                expands.append({"owner": owner, "eqns": eqns, "zoomed": at})
            emit("expand", expands)

        emit("gui_peak_mb", self_peak_mb())

        if not opts.no_cancel:
            trace_s = statistics.median(r["worker_trace_s"] for r in runs)
            emit("cancel", bench.cancel_latency(min(0.5, max(0.05, 0.3 * trace_s))))

        if opts.png:
            from jaxscope.exporter import export

            out = os.path.join(settings_dir, "graph.png")
            t = time.perf_counter()
            export(graph, layout, out)
            emit("png", {"s": time.perf_counter() - t, "mb": os.path.getsize(out) / 1e6})
            emit("gui_peak_with_png_mb", self_peak_mb())
    finally:
        bench.controller.close()
    if not opts.no_app:  # last, with the bench's own workers gone
        emit("app", app_open(bench.path, "train_step", args, opts.timeout))
    emit("done", True)
    app.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
