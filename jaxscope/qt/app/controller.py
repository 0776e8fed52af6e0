"""Turns worker and layout futures into Qt signals on the main thread.

The GUI never waits: a trace goes to the worker process, its layout to the layout process, and
each finished future is re-emitted as a queued signal. Every request carries a generation
ticket from the workbench's job ledger (`jaxscope.job_ledger`), so a late answer to an old
request is dropped (the latest request wins) and the busy state is the ledger's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from jaxscope.analysis.scope_view import for_window
from jaxscope.job_ledger import JobLedger, Ticket
from jaxscope.layout.preview import Region
from jaxscope.qt.app.prepared import PreparedLayout, PreparedTrace, SceneBuilder, build_model, prepare_trace
from jaxscope.qt.graph.scene_model import SceneModel
from jaxscope.runtime.devices import device_env
from jaxscope.runtime.layout_client import LayoutClient
from jaxscope.runtime.layout_requests import LayoutStream
from jaxscope.runtime.saved_worker import SavedWorker
from jaxscope.runtime.worker_client import WorkerClient, WorkerError
from jaxscope.schema.codec import from_jsonable
from jaxscope.schema.graph import Graph
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.schema.layout import Layout
from jaxscope.schema.run import DeviceInfo
from jaxscope.schema.trace import ErrorInfo, JaxprText, TraceRequest, TraceResult

LAYOUT_CACHE_SIZE = 4  # layouts kept for reuse (a graph and its last few expanded sets)
# A layout is ~0.9 KB a box (gpt-50k: 56 MB for 62k). Room for the shown layout and one more of
# the biggest benchmark (mlp-50k, 72.5k boxes), so that collapsing and expanding again is a swap
# at 50k too; smaller layouts keep up to LAYOUT_CACHE_SIZE.
LAYOUT_CACHE_MAX_NODES = 100_000  # bigger layouts are not kept ...
LAYOUT_CACHE_BOXES = 160_000  # ... and the oldest go once those kept hold more boxes than this


class Controller(QObject):
    """Owns the worker client and layout client; speaks in signals."""

    phase_changed = Signal(str)
    trace_finished = Signal(object)  # PreparedTrace
    trace_failed = Signal(object)  # ErrorInfo
    layout_finished = Signal(object)  # PreparedLayout
    layout_preview = Signal(object)  # PreparedLayout: the part of the coming layout in the region asked
    layout_failed = Signal(str)
    output = Signal(str, str)  # stream, text (user prints, warnings)
    busy_changed = Signal(bool)
    job_finished = Signal(str, object)  # op ("retrace", "run"), its result
    job_failed = Signal(str, object)  # op, ErrorInfo
    hlo_finished = Signal(object, object)  # HloResult, its parsed links (whatever `link` returned)
    hlo_failed = Signal(object, object)  # HloRequest, ErrorInfo
    hlo_phase = Signal(str)
    jaxpr_finished = Signal(object, object)  # JaxprText, its links (whatever `link` returned)
    jaxpr_failed = Signal(object, object)  # TraceRequest, ErrorInfo
    devices_changed = Signal(object)  # tuple[DeviceInfo, ...] of the current worker setup

    _trace_done = Signal(object, object, object)  # each with its Ticket first
    _job_done = Signal(object, str, object)
    _ir_done = Signal(object, str, object, object, object)
    _layout_done = Signal(object, object, object, object, object)
    _layout_part = Signal(object, object)
    _phase = Signal(object, str)
    _ready = Signal(object)

    def __init__(
        self,
        worker: WorkerClient | None = None,
        layouts: LayoutClient | None = None,
        parent: QObject | None = None,
        cpu_devices: int = 1,
        platforms: str = "",
        python: str | None = None,
        x64: bool = False,
        scenes: SceneBuilder | None = None,
        jobs: JobLedger | None = None,
    ) -> None:
        """`scenes` builds the view's scene models ahead, on the threads results arrive on (the
        graph view; none in tests that lay out without one); `jobs`: the ledger that says which
        answers are wanted (the workbench's)."""
        super().__init__(parent)
        self.jobs = jobs or JobLedger()
        self.jobs.on_busy(self.busy_changed.emit)
        self.scenes = scenes
        self.x64 = x64  # JAX's 64-bit mode in the worker (JAX_ENABLE_X64)
        self.devices: tuple[DeviceInfo, ...] = ()  # of the latest worker that started; () until one has
        self.device_setup: dict[str, Any] = {"cpu_devices": cpu_devices, "platforms": platforms}
        self._ready.connect(self._on_ready)
        self.worker = worker or WorkerClient(
            spare=True,
            on_output=self._emit_output,
            on_ready=self._ready.emit,
            env=self._env(),
            python=python,
        )
        self.layouts = layouts or LayoutClient()
        self.saved: SavedWorker | None = None  # a saved trace shown (File -> Open NAME.jaxscope) answers in the worker's place
        self._palette: tuple[str, ...] = ()  # the source-line colours of the trace in flight
        self._grouping = True  # and whether its modules are drawn as groups (the workbench's say)
        self._preview_shown = threading.Event()
        self._trace_done.connect(self._on_trace_done)
        self._job_done.connect(self._on_job_done)
        self._ir_done.connect(self._on_ir_done)
        self._parser = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-ir-parse")
        self._preparer = ThreadPoolExecutor(1, thread_name_prefix="jaxscope-layout-prep")  # for a layout already at hand
        for pool in (self._parser, self._preparer):
            # Their threads started now, while nothing else runs: a pool starts its thread on its
            # first submit, and `Thread.start` waits until the new thread has run, which needs the
            # GIL; submitted from the GUI thread while a 50k graph was being decoded, that wait
            # took 19 ms of the GUI thread as it showed an open trace.
            pool.submit(int)
        self._layout_done.connect(
            self._on_layout_done, Qt.ConnectionType.QueuedConnection
        )  # a cached layout too: later, never inside layout()
        self._layout_part.connect(self._on_layout_part)
        self._layouts: dict[tuple[Any, ...], tuple[Graph, Layout]] = {}  # oldest first
        self._layouts_lock = threading.Lock()  # filled from the layout client's thread
        self._phase.connect(self._on_phase)
        self._stream: LayoutStream | None = None  # the layout of the trace in flight, as its reply streams in

    def _emit_output(self, stream: str, text: str) -> None:
        self.output.emit(stream, text)  # from a drain thread: queued to the GUI thread

    @Slot(object)
    def _on_ready(self, info: dict[str, Any]) -> None:
        devices = tuple(from_jsonable(DeviceInfo, d) for d in info.get("devices") or ())
        if devices != self.devices:
            self.devices = devices
            self.devices_changed.emit(devices)

    def set_device_setup(self, cpu_devices: int, platforms: str = "") -> None:
        """Restart the workers with `cpu_devices` simulated CPU devices and `platforms` backends."""
        device_env(cpu_devices, platforms, os.environ)  # validates: a bad count or backend raises here
        if {"cpu_devices": cpu_devices, "platforms": platforms} == self.device_setup:
            return
        self.device_setup = {"cpu_devices": cpu_devices, "platforms": platforms}
        self.devices = ()
        self.devices_changed.emit(())
        self.worker.reconfigure(self._env(), self.worker.python)

    def set_python(self, python: str | None) -> None:
        """Restart the workers in `python` (None: jaxscope's own), with the same devices."""
        if (python or None) == self.worker.python:
            return
        self.devices = ()
        self.devices_changed.emit(())
        self.worker.reconfigure(self._env(), python)

    def set_x64(self, on: bool) -> None:
        """Restart the workers with JAX's 64-bit mode on or off."""
        if on != self.x64:
            self.x64 = on
            self.worker.reconfigure(self._env(), self.worker.python)

    def _env(self) -> dict[str, str]:
        """What the workers start with on top of the app's environment: devices, backends, x64."""
        env = device_env(self.device_setup["cpu_devices"], self.device_setup["platforms"], os.environ)
        return {**env, "JAX_ENABLE_X64": "1"} if self.x64 else env

    # ------------------------------------------------------------------ trace

    def trace(
        self, request: TraceRequest, expanded: Collection[str] | None = None, palette: Sequence[str] = (), grouping: bool = True
    ) -> None:
        """Trace, and lay out the graph as its reply arrives (`LayoutClient.stream`), with `expanded`
        open (None: `auto_expanded`'s pick), its modules as groups when `grouping`, and default
        options. `layout()` then finds that layout under way. `trace_finished` hands over a
        `PreparedTrace` (source lines coloured from `palette`)."""
        gen = self.jobs.start("user")
        colours = self._palette = tuple(palette)
        self._grouping = grouping
        self.layouts.cancel()  # the last graph's pending layouts (and an earlier stream) are moot now
        # a saved trace has its graph at hand: it is laid out as any other (`layout`), not streamed
        stream = self._stream = self.layouts.stream(expanded, scopes=grouping) if self.saved is None else None
        future = self.source.trace(request, on_phase=lambda p: self._phase.emit(gen, p), tap=stream.feed if stream else None)
        future.add_done_callback(lambda f: self._prepare(gen, f, stream, grouping, colours))

    @property
    def source(self) -> WorkerClient | SavedWorker:
        """What answers the window's requests: the worker, or the saved trace the window shows."""
        return self.saved if self.saved is not None else self.worker

    def _prepare(
        self, gen: Ticket, future: Future[TraceResult], stream: LayoutStream | None, grouping: bool, palette: tuple[str, ...]
    ) -> None:
        """On the result's thread: the trace prepared for the window (`prepare_trace`: the view drawn
        of the graph, the same the layout process makes, bound to its layout stream at once), then
        handed to the GUI thread. A failure here only costs the head start."""
        prepared = None
        if self.jobs.current(gen) and not future.cancelled() and future.exception() is None:
            result = future.result()
            try:
                view = for_window(result.graph, grouping)
                if stream is not None:
                    stream.bind(view.graph)  # the layout need not wait for the GUI thread (also bound there)
                prepared = prepare_trace(result, grouping, palette, self.scenes, view)
            except Exception:
                prepared = None
        self._trace_done.emit(gen, future, prepared)

    def cancel(self) -> None:
        self.worker.cancel()

    def submit(self, op: str, request: Any, decode: Callable[[Any], Any]) -> None:
        """A user-asked worker job other than a trace ("retrace", "run"): busy while it runs, latest wins."""
        gen = self.jobs.start("user")
        future = self.source.submit(op, request, decode, lambda p: self._phase.emit(gen, p))
        future.add_done_callback(lambda f: self._job_done.emit(gen, op, f))

    def hlo(self, request: HloRequest, link: Callable[[HloResult], Any]) -> None:
        """Lower or compile in the worker; `link(result)` (parsing megabytes of IR) runs off the GUI thread.

        Not a busy state of the window: the graph is already usable. A trace submitted meanwhile
        cancels it (the worker runs one job at a time, the latest wins)."""
        self._background("hlo", request, lambda d: from_jsonable(HloResult, d), link, self.hlo_phase.emit)

    def jaxpr(self, request: TraceRequest, link: Callable[[JaxprText], Any]) -> None:
        """The printed jaxpr of the last trace, after the graph; `link(result)` runs off the GUI thread."""
        self._background("jaxpr", request, lambda d: from_jsonable(JaxprText, d), link, None)

    def _background(
        self, op: str, request: Any, decode: Callable[[Any], Any], link: Callable[[Any], Any], on_phase: Callable[[str], None] | None
    ) -> None:
        gen = self.jobs.start("ir")
        future = self.source.submit(op, request, decode, on_phase)

        def done(f: Future[Any]) -> None:
            try:
                result = f.result()
            except BaseException as exc:
                self._ir_done.emit(gen, op, request, None, exc)
                return
            try:
                linked = self._parser.submit(link, result)
            except RuntimeError:  # the window closed while the result was on its way
                return
            linked.add_done_callback(lambda lf: self._ir_done.emit(gen, op, request, result, lf))

        future.add_done_callback(done)

    @Slot(object, str, object, object, object)
    def _on_ir_done(self, gen: Ticket, op: str, request: Any, result: Any, outcome: Any) -> None:
        if not self.jobs.finish(gen) or (result is not None and outcome.cancelled()):
            return  # a newer job, or the parse was cancelled by close()
        finished, failed = (self.hlo_finished, self.hlo_failed) if op == "hlo" else (self.jaxpr_finished, self.jaxpr_failed)
        if result is None or outcome.exception() is not None:
            exc = outcome if result is None else outcome.exception()
            info = exc.info if isinstance(exc, WorkerError) else ErrorInfo(kind="internal", message=f"{type(exc).__name__}: {exc}")
            failed.emit(request, info)
            return
        finished.emit(result, outcome.result())

    @Slot(object, str, object)
    def _on_job_done(self, gen: Ticket, op: str, future: Future[Any]) -> None:
        if not self.jobs.finish(gen):
            return
        try:
            result = future.result()
        except WorkerError as exc:
            self.job_failed.emit(op, exc.info)
            return
        except Exception as exc:
            self.job_failed.emit(op, ErrorInfo(kind="internal", message=f"{type(exc).__name__}: {exc}"))
            return
        self.job_finished.emit(op, result)

    @Slot(object, str)
    def _on_phase(self, gen: Ticket, phase: str) -> None:
        if self.jobs.current(gen):
            self.phase_changed.emit(phase)

    @Slot(object, object, object)
    def _on_trace_done(self, gen: Ticket, future: Future[TraceResult], prepared: PreparedTrace | None) -> None:
        failed = future.cancelled() or future.exception() is not None
        if not self.jobs.finish(gen, more_to_come=not failed):  # its layout follows: still busy
            return
        try:
            result = future.result()
        except WorkerError as exc:
            self.trace_failed.emit(exc.info)
            return
        except Exception as exc:  # a bug on our side must still end the busy state
            self.trace_failed.emit(ErrorInfo(kind="internal", message=f"{type(exc).__name__}: {exc}"))
            return
        if prepared is None or prepared.result is not result:  # its preparation failed: made here
            prepared = prepare_trace(result, self._grouping, self._palette)
        if self._stream is not None:
            self._stream.bind(prepared.view.graph)
        self.trace_finished.emit(prepared)

    # ------------------------------------------------------------------ layout

    def layout(
        self,
        graph: Graph,
        expanded: Collection[str],
        region: Region | None = None,
        colours: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        """Lay out `graph` with `expanded` clusters open; a layout of the last few requests is reused
        (collapsing and expanding again costs no transfer and no decoding). With `region` (what
        the view shows, `QtGraphView.preview_region`), a big layout's part in it comes first, as
        `layout_preview`, when the layout process lays it out. Each comes as a `PreparedLayout`,
        its scene model built with the stripes of `colours` off the GUI thread."""
        gen = self.jobs.start("layout")
        self.phase_changed.emit("layout")
        frozen = frozenset(expanded)
        key = (id(graph), frozen, tuple(sorted(options.items())))
        stream, self._stream = self._stream, None
        with self._layouts_lock:
            for k in [k for k, (g, _) in self._layouts.items() if g is not graph]:
                del self._layouts[k]  # a new trace: the old graph's layouts go
            cached = self._layouts.get(key)
        if stream is not None and stream.graph is graph and not options and not stream.future.cancelled():
            future: Future[Layout] = Future()  # the streamed layout, if it has this `expanded`; else a new one
            stream.future.add_done_callback(lambda f: self._adopt(stream, frozen, options, future))
        elif cached is not None and cached[0] is graph:
            self.layouts.cancel()  # a newer layout makes queued or running ones pointless
            future = Future()
            future.set_result(cached[1])
        else:
            self.layouts.cancel()
            on_preview = None if region is None else lambda part: self._preview(gen, graph, frozen, part, colours)
            future = self.layouts.submit(graph, frozen, region=region, on_preview=on_preview, **options)
        future.add_done_callback(lambda f: self._remember_layout(key, graph, f))
        if future.done():
            # A layout kept from before (its scene is most likely kept too: nothing to build), or the
            # trace's streamed one, which often arrives before the trace's result: its scene model
            # (0.1-0.3 s at 14k-72k boxes) is built on a thread too, not on the GUI thread.
            try:
                self._preparer.submit(self._prepare_layout, gen, graph, frozen, future, colours)
            except RuntimeError:  # closed
                return
        else:
            future.add_done_callback(lambda f: self._prepare_layout(gen, graph, frozen, f, colours))

    def _prepare_layout(
        self, gen: Ticket, graph: Graph, expanded: frozenset[str], future: Future[Layout], colours: dict[str, str] | None
    ) -> None:
        """On the layout client's thread (the preparer's, for a layout at hand): the layout's scene
        model, then the layout handed to the GUI thread."""
        model = None
        if self.jobs.current(gen) and not future.cancelled() and future.exception() is None:
            model = build_model(self.scenes, graph, future.result(), colours)
        self._layout_done.emit(gen, graph, expanded, future, model)

    def _preview(self, gen: Ticket, graph: Graph, expanded: frozenset[str], part: Layout, colours: dict[str, str] | None) -> None:
        """On the layout client's thread, ahead of the whole layout: the part's scene model too, and
        the part handed over. Then wait (`PREVIEW_WAIT_S` at most) until it is on screen before the
        whole layout is read: decoding a 72k-box layout on this thread, holding the GIL in slices,
        made the GUI thread's show and paint of the part twice as long."""
        if self.jobs.current(gen):
            prepared = PreparedLayout(graph, part, expanded, build_model(self.scenes, graph, part, colours))
            self._preview_shown.clear()
            self._layout_part.emit(gen, prepared)
            self._preview_shown.wait(PREVIEW_WAIT_S)

    @Slot(object, object)
    def _on_layout_part(self, gen: Ticket, prepared: PreparedLayout) -> None:
        try:
            if self.jobs.current(gen):  # emitted before the whole layout's `_layout_done`: queued in order
                self.layout_preview.emit(prepared)  # shown and painted by its slots
        finally:
            self._preview_shown.set()

    def _adopt(self, stream: LayoutStream, expanded: frozenset[str], options: dict[str, Any], future: Future[Layout]) -> None:
        """The streamed layout resolved: pass it on if it is the one asked for, else lay out anew
        (the layout process holds the graph by now, or it is sent again)."""
        done = stream.future
        if not done.cancelled() and done.exception() is None and stream.expanded == expanded:
            future.set_result(done.result())
            return
        if stream.graph is None:  # never bound: the trace gave no graph
            future.set_exception(RuntimeError("the traced graph never reached the layout"))
            return
        try:
            again = self.layouts.submit(stream.graph, expanded, **options)
        except RuntimeError as exc:  # closed
            future.set_exception(exc)
            return
        again.add_done_callback(lambda f: _copy_outcome(f, future))

    def _remember_layout(self, key: tuple[Any, ...], graph: Graph, future: Future[Layout]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        layout = future.result()
        if len(layout.nodes) > LAYOUT_CACHE_MAX_NODES:
            return
        with self._layouts_lock:
            self._layouts.pop(key, None)
            self._layouts[key] = (graph, layout)
            while len(self._layouts) > LAYOUT_CACHE_SIZE or (
                len(self._layouts) > 1 and sum(len(lay.nodes) for _, lay in self._layouts.values()) > LAYOUT_CACHE_BOXES
            ):
                del self._layouts[next(iter(self._layouts))]

    @Slot(object, object, object, object, object)
    def _on_layout_done(
        self, gen: Ticket, graph: Graph, expanded: frozenset[str], future: Future[Layout], model: SceneModel | None
    ) -> None:
        if not self.jobs.finish(gen):
            return
        try:
            layout = future.result()
        except Exception as exc:
            self.layout_failed.emit(f"layout failed: {exc}")
            return
        self.layout_finished.emit(PreparedLayout(graph, layout, expanded, model))

    def close(self) -> None:
        self.jobs.drop("ir")  # a parse the pool's thread took as it shut down reports nothing
        self._parser.shutdown(wait=False, cancel_futures=True)
        self._preparer.shutdown(wait=False, cancel_futures=True)
        self.worker.close()
        self.layouts.close()


def _copy_outcome(source: Future[Any], target: Future[Any]) -> None:
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())
    else:
        target.set_result(source.result())


PREVIEW_WAIT_S = 0.1  # the layout client's thread waits this long at most for a preview to be painted
