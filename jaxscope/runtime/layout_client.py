"""Run `compute_layout` in a separate process, with a time budget per call.

pygraphviz holds the GIL for the whole of a dot run and dot is superlinear, so a GUI must never
run dot itself. `LayoutClient` keeps one long-lived worker process
(``python -m jaxscope.runtime.layout_server``; not multiprocessing, so the caller's ``__main__`` is
never re-imported) and talks to it over its stdin/stdout, one JSON document per line, never pickle:

    client -> worker   {"op": "layout", "id": n, "graph_key": k, "has_graph": bool,
                        "expanded": [...], "opts": {...}, "region": [...] (optional)}
                       <the Graph: {"graph": graph_wire.graph_to_wire(g)} as runtime.protocol lines>  (if has_graph)
    worker -> client   {"id": n, "event": "started"}            graph decoded, laying out
                       {"id": n, "event": "dot", "n": boxes}     a dot run starts ...
                       {"id": n, "event": "dot-done", "n": ...}  ... and ends (0 or more pairs)
                       {"id": n, "event": "preview", "lines": m}  then m lines: the part of the
                                              layout the view shows first (`layout_preview`;
                                              only with a "region", for a big layout)
                       {"id": n, "ok": true}  then the Layout: a header line saying how
                                              many lines follow, then those (`layout_to_wire`)
                   or  {"id": n, "ok": false, "error": "<traceback>"}

A graph can also be streamed (`LayoutClient.stream`): the header says ``"has_graph": "stream"``
and ``"expanded": null`` (let the layout process pick with `scope_view.first_open`) or a list, and what follows is
a jaxscope worker's trace reply, forwarded line by line as it arrives, then `STREAM_END`; the
worker reads up to the reply's "done" message and answers ``{"id": n, "ok": true, "expanded": [...]}``.

The worker keeps the last graph it was sent (a graph object goes over once per worker) and a
cache of sub-layouts for it, so expanding one cluster re-lays out only what changed. When no
request has come for `AHEAD_IDLE_S` after an answer, it lays out the sub-graphs of the owners
still collapsed in that answer, one at a time, checking for a request between two
(`layout.engine.lay_out_ahead`): the first expand of an owner then only grows its parent's drawing.

The budget (default 5 s) is dot time: the client adds up the time between "dot" and "dot-done"
events. When it runs out, the worker is killed (the only way to stop dot), the same request is
laid out with the layered engine in a fresh worker, and the Layout's notes start with
"dot exceeded its 5 s budget; used the layered layout". The whole layout has a looser limit
(`TOTAL_LIMIT_S`, or 10x the budget). If the worker dies (a crash in Graphviz, an OOM kill) the
same fallback runs, and if even that fails, the layered layout is computed in the calling process.

Requests run one at a time, in order, on one background thread, so every method is safe to call
from any thread. `cancel()` drops queued requests and kills the worker if one is running; their
futures raise CancelledError.

The Graph crosses the pipe as `runtime.protocol` lines (its long lists in parts), the Layout in the
compact array form of `layout_to_wire` / `layout_from_wire` below, also in chunks; the Layout read
back keeps its edges as those columns (`layout_tables.EdgeTable`), EdgePaths made on demand.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import queue
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO, Any

from jaxscope.layout.preview import Region
from jaxscope.layout.wire import LAYOUT_OPTIONS, LayoutError, WireReader, layout_from_wire, wire_lines
from jaxscope.runtime import protocol
from jaxscope.runtime.interpreter import command, helper_env
from jaxscope.runtime.layout_requests import LayoutRequest, LayoutStream
from jaxscope.runtime.pipes import PipeLines, widen_pipes
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.graph_wire import graph_to_wire
from jaxscope.schema.layout import Layout

DEFAULT_BUDGET_S = 5.0
DECODE_TIMEOUT_S = 120.0  # reading the request in the worker; generous, it is plain Python
TOTAL_LIMIT_S = 60.0  # a whole layout (at least; 10x the budget when that is more)
BIND_WAIT_S = 30.0  # a stream laid out again waits this long for its caller to bind the graph


STREAM_END = {"event": "done", "ok": False, "stream_end": True}  # after a stream's lines: ends it if the reply never came


def _holds(worker: _Worker, graph: Graph | None) -> bool:
    held = worker.graph
    return graph is not None and (held is graph or (isinstance(held, LayoutRequest) and held.graph is graph))


class _WorkerGoneError(Exception):
    pass


class _LayoutTimeoutError(TimeoutError):
    def __init__(self, in_dot: bool) -> None:
        super().__init__("dot budget" if in_dot else "time limit")
        self.in_dot = in_dot


class _Worker:
    """One worker process plus a thread that turns its stdout into a queue of lines."""

    def __init__(self, python: str) -> None:
        env = helper_env(str(Path(__file__).resolve().parents[2]))
        self.proc = subprocess.Popen(
            command(python, "-u", "-m", "jaxscope.runtime.layout_server"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both PIPEs
        self.stdin: IO[bytes] = self.proc.stdin
        widen_pipes(self.stdin, self.proc.stdout)
        self.lines = PipeLines(self.proc.stdout, "layout-worker-out")  # read in big chunks on a thread of its own
        self.stderr_tail = b""
        self.graph: Graph | LayoutRequest | None = None  # the graph object this worker holds (a stream's: its request)
        self.graph_key = 0
        threading.Thread(target=self._read_err, args=(self.proc.stderr,), daemon=True, name="layout-worker-err").start()

    def _read_err(self, stream: Any) -> None:
        try:
            for chunk in iter(lambda: stream.read1(4096), b""):
                self.stderr_tail = (self.stderr_tail + chunk)[-4000:]
        except (OSError, ValueError):
            pass

    def send(self, *lines: str) -> None:
        try:
            for line in lines:
                self.stdin.write(line.encode("utf-8"))
                self.stdin.write(b"\n")
            self.stdin.flush()
        except (OSError, ValueError) as exc:
            raise _WorkerGoneError(self.describe_exit()) from exc

    def send_raw(self, line: bytes) -> None:
        """One line already framed (it ends with a newline)."""
        try:
            self.stdin.write(line)
            self.stdin.flush()
        except (OSError, ValueError) as exc:
            raise _WorkerGoneError(self.describe_exit()) from exc

    def read(self, timeout: float) -> bytes:
        """The next line; TimeoutError after `timeout` s, _WorkerGoneError at end of output."""
        line = self.lines.next_within(max(0.0, timeout))
        if line is None:
            raise TimeoutError
        if not line:
            raise _WorkerGoneError(self.describe_exit())
        return line

    def describe_exit(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        tail = self.stderr_tail.decode("utf-8", "replace").strip()
        return f"layout worker exited (code {code})" + (f": {tail[-800:]}" if tail else "")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:  # never: all three are PIPEs
                    stream.close()
            except (OSError, ValueError):
                pass

    def quit(self) -> None:
        try:
            self.send(json.dumps({"op": "quit"}))
            self.proc.wait(timeout=1.0)
        except (_WorkerGoneError, subprocess.TimeoutExpired):
            pass
        self.kill()


class LayoutClient:
    """compute_layout in a worker process; see the module docstring.

    >>> with LayoutClient() as client:
    ...     layout = client.layout(graph, expanded, direction="TB")
    """

    def __init__(self, budget_s: float = DEFAULT_BUDGET_S, *, python: str | None = None) -> None:
        self.budget_s = float(budget_s)
        self.python = python or sys.executable
        self._queue: queue.Queue[LayoutRequest | None] = queue.Queue()
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._current: LayoutRequest | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._next_id = 0
        self._next_key = 0

    # -- public

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The layout process now (None: none started yet, or it was closed)."""
        with self._lock:
            return self._worker.proc if self._worker is not None else None

    def submit(
        self,
        graph: Graph,
        expanded: Collection[str] = (),
        *,
        budget_s: float | None = None,
        region: Region | None = None,
        on_preview: Callable[[Layout], None] | None = None,
        **opts: Any,
    ) -> concurrent.futures.Future[Layout]:
        """Queue a layout; the Future resolves to a Layout (or raises LayoutError/CancelledError).
        With a `region` (what the view shows, see `layout_preview`), a big layout's part in it
        goes to `on_preview` first, on the client's thread, before the Future resolves."""
        unknown = set(opts) - set(LAYOUT_OPTIONS)
        if unknown:
            raise TypeError(f"unknown layout option(s): {', '.join(sorted(unknown))}")
        future: concurrent.futures.Future[Layout] = concurrent.futures.Future()
        budget = self.budget_s if budget_s is None else budget_s
        request = LayoutRequest(future, graph, sorted(set(expanded)), opts, budget, region=region, on_preview=on_preview)
        self._enqueue(request)
        return future

    def _enqueue(self, request: LayoutRequest) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("LayoutClient is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="layout-client")
                self._thread.start()
            self._queue.put(request)

    def stream(
        self, expanded: Collection[str] | None = None, *, budget_s: float | None = None, scopes: bool = False, **opts: Any
    ) -> LayoutStream:
        """Queue a layout of the graph in a trace reply yet to come: pass `feed` as the trace's tap.
        `expanded` None: the layout process opens what `scope_view.first_open` picks (see `LayoutStream.expanded`).
        `scopes`: what is laid out (and bound) is `scope_view.for_window` of that graph."""
        unknown = set(opts) - set(LAYOUT_OPTIONS)
        if unknown:
            raise TypeError(f"unknown layout option(s): {', '.join(sorted(unknown))}")
        future: concurrent.futures.Future[Layout] = concurrent.futures.Future()
        chosen = None if expanded is None else sorted(set(expanded))
        request = LayoutRequest(future, None, chosen, opts, self.budget_s if budget_s is None else budget_s, queue.Queue())
        request.scopes = scopes
        self._enqueue(request)
        return LayoutStream(request)

    def layout(self, graph: Graph, expanded: Collection[str] = (), **opts: Any) -> Layout:
        """Blocking `submit(...).result()`. Not from a future's done-callback: those run on the
        client's own thread, which would then wait for itself."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("LayoutClient.layout() called from the client's own thread (a done-callback?)")
        return self.submit(graph, expanded, **opts).result()

    def cancel(self) -> None:
        """Cancel every queued request and kill the worker if it is laying one out."""
        while True:
            try:
                request = self._queue.get_nowait()
            except queue.Empty:
                break
            if request is None:
                self._queue.put(None)
                break
            request.future.cancel()
        with self._lock:
            current, worker = self._current, self._worker
            if current is not None:
                current.cancelled = True
                current.bound.set()
                if current.lines is not None:
                    current.lines.put(None)  # a stream waiting for lines: wake it
                if worker is not None:
                    worker.kill()

    def close(self) -> None:
        """Cancel what is pending, stop the worker and the background thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.cancel()
        self._queue.put(None)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10.0)
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.quit()

    def __enter__(self) -> LayoutClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort: do not leave a worker behind
        try:
            worker = self._worker
            if worker is not None:
                worker.kill()
        except Exception:
            pass

    # -- background thread

    def _run(self) -> None:
        while True:
            request = self._queue.get()
            if request is None:
                return
            if not request.future.set_running_or_notify_cancel():
                continue
            with self._lock:
                self._current = request
            try:
                result = annotated(self._serve(request), request.opts)
            except BaseException as exc:  # everything goes to the future
                if request.cancelled:
                    request.future.set_exception(concurrent.futures.CancelledError())
                else:
                    request.future.set_exception(exc)
            else:
                if request.cancelled:
                    request.future.set_exception(concurrent.futures.CancelledError())
                else:
                    request.future.set_result(result)
            finally:
                with self._lock:
                    self._current = None

    def _ensure_worker(self) -> _Worker:
        with self._lock:
            worker = self._worker
            if worker is None or not worker.alive():
                if worker is not None:
                    worker.kill()
                worker = self._worker = _Worker(self.python)
            return worker

    def _drop_worker(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            if self._worker is worker:
                self._worker = None

    def _serve(self, request: LayoutRequest) -> Layout:
        budget = request.budget
        limit = max(TOTAL_LIMIT_S, 10 * budget)
        try:
            return self._remote(request, request.opts, budget, limit)
        except LayoutError:
            raise
        except (TimeoutError, _WorkerGoneError) as exc:
            if request.cancelled:
                raise concurrent.futures.CancelledError() from None
            if isinstance(exc, _LayoutTimeoutError) and exc.in_dot:
                note = f"dot exceeded its {budget:g} s budget; used the layered layout"
            elif isinstance(exc, TimeoutError):
                if request.opts.get("engine") == "layered":
                    raise LayoutError(f"the layered layout took more than {limit:g} s") from None
                note = f"the layout took more than {limit:g} s; used the layered layout"
            else:
                note = f"the layout worker failed ({str(exc)[:300]}); used the layered layout"
        opts = dict(request.opts, engine="layered")
        try:
            layout = self._remote(request, opts, budget, limit)
        except LayoutError:
            raise
        except (TimeoutError, _WorkerGoneError):
            if request.cancelled:
                raise concurrent.futures.CancelledError() from None
            from jaxscope.analysis.scope_view import first_open
            from jaxscope.layout.engine import compute_layout

            graph = request.graph
            assert graph is not None  # (a stream is bound before its layout is waited on)
            if request.expanded is None:  # a stream the layout process never answered
                request.expanded = sorted(first_open(graph))
            layout = compute_layout(graph, request.expanded, **opts)
        return Layout(
            width=layout.width,
            height=layout.height,
            nodes=layout.nodes,
            edges=layout.edges,
            clusters=layout.clusters,
            engine=layout.engine,
            notes=(note, *layout.notes),
        )

    def _remote(self, request: LayoutRequest, opts: dict[str, Any], budget: float, limit: float) -> Layout:
        """One request to the worker. `budget`: seconds of dot time (summed over the dot runs of
        this layout); `limit`: seconds for the whole layout. _LayoutTimeoutError when either runs out."""
        if request.cancelled:
            raise concurrent.futures.CancelledError()
        worker = self._ensure_worker()
        if request.cancelled:  # cancel() may have raced with the start
            raise concurrent.futures.CancelledError()
        self._next_id += 1
        rid = self._next_id
        stream = request.lines is not None and not request.streamed
        if not stream and request.graph is None:
            # A stream laid out again (dot over budget, the worker died) before its caller bound the
            # graph: the trace's reply is complete, so that happens in a moment.
            request.bound.wait(BIND_WAIT_S)
            if request.cancelled:
                raise concurrent.futures.CancelledError()
            if request.graph is None:
                raise LayoutError("the streamed graph was never bound to this layout")
        send_graph: bool | str = "stream" if stream else not _holds(worker, request.graph)
        if send_graph:
            self._next_key += 1
            worker.graph_key = self._next_key
        header = {
            "op": "layout",
            "id": rid,
            "graph_key": worker.graph_key,
            "has_graph": send_graph,
            "expanded": request.expanded,
            "opts": opts,
        }
        if stream and request.scopes:
            header["scopes"] = True
        if request.region is not None and request.on_preview is not None:
            header["region"] = request.region.to_json()
        lines = [json.dumps(header)]
        if send_graph is True:  # in parts: no single json.dumps holds the GUI's GIL for long
            assert request.graph is not None  # (only a stream's graph comes another way)
            lines.append(protocol.dumps({"graph": graph_to_wire(request.graph)}, plain=True).decode("utf-8").rstrip("\n"))
        try:
            worker.send(*lines)
            if stream:
                request.streamed = True
                self._pump(worker, request)
            if send_graph:
                worker.graph = request if stream else request.graph
            try:
                reply = self._expect(worker, rid, DECODE_TIMEOUT_S)
            except TimeoutError:
                raise _LayoutTimeoutError(in_dot=False) from None
            if reply.get("event") == "started":
                deadline = time.monotonic() + limit
                dot_left, dot_since = budget, None
                while True:
                    now = time.monotonic()
                    timeout = deadline - now
                    if dot_since is not None:
                        timeout = min(timeout, dot_left - (now - dot_since))
                        if timeout <= 0:  # spent, even if dot's answer is already queued (a zero budget means no dot)
                            raise _LayoutTimeoutError(in_dot=True)
                    try:
                        reply = self._expect(worker, rid, timeout)
                    except TimeoutError:
                        raise _LayoutTimeoutError(in_dot=dot_since is not None) from None
                    event = reply.get("event")
                    if event == "preview":
                        self._preview(worker, reply, request)
                    elif event == "dot":
                        dot_since = time.monotonic()
                    elif event == "dot-done":
                        if dot_since is not None:
                            dot_left -= time.monotonic() - dot_since
                        dot_since = None
                    else:
                        break
            return self._finish(worker, rid, reply, request)
        except (TimeoutError, _WorkerGoneError):
            self._drop_worker(worker)
            raise

    @staticmethod
    def _pump(worker: _Worker, request: LayoutRequest) -> None:
        """Forward a stream's lines until its reply is complete, then an end marker (the layout
        process reads up to the reply's "done" message; if the trace failed, up to this)."""
        assert request.lines is not None
        while (line := request.lines.get()) is not None:
            if request.cancelled:
                raise concurrent.futures.CancelledError()
            worker.send_raw(line)
        if request.cancelled:
            raise concurrent.futures.CancelledError()
        worker.send(json.dumps(STREAM_END))

    @staticmethod
    def _preview(worker: _Worker, reply: dict[str, Any], request: LayoutRequest) -> None:
        """Read a preview's lines and hand its Layout to the request's `on_preview`: a preview that
        does not decode, or a callback that raises, costs only the head start (the whole layout
        follows)."""
        lines = [worker.read(TOTAL_LIMIT_S) for _ in range(int(reply.get("lines") or 0))]  # already written
        if request.on_preview is None or request.cancelled or not lines:
            return
        try:
            part = annotated(layout_from_wire(b"\n".join(lines)), request.opts)
            request.on_preview(part)
        except Exception:  # see the docstring
            traceback.print_exc()

    def _finish(self, worker: _Worker, rid: int, reply: dict[str, Any], request: LayoutRequest) -> Layout:
        if reply.get("ok"):
            if request.expanded is None:
                request.expanded = [str(p) for p in reply.get("expanded") or ()]
            header = worker.read(TOTAL_LIMIT_S)  # already being written: do not time out on it
            with gc_paused(freeze=request.graph):
                reader = WireReader(header)
                for _ in range(wire_lines(header)):  # decoded while the worker encodes the next one
                    reader.feed(worker.read(TOTAL_LIMIT_S))
                layout = reader.layout()
            return layout
        worker.graph = None  # it may not hold the graph now: send it again next time
        raise LayoutError(str(reply.get("error", "layout failed in the worker")))

    @staticmethod
    def _expect(worker: _Worker, rid: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            line = worker.read(deadline - time.monotonic())
            try:
                message = json.loads(line)
            except ValueError:
                continue  # stray output (a library printing to stdout): skip it
            if isinstance(message, dict) and message.get("id") == rid:
                return message


def annotated(layout: Layout, opts: dict[str, Any]) -> Layout:
    """A layout as the layout process sent it, with the annotations it was asked to make room for
    (`Layout.annotations`: they are not sent back)."""
    notes = opts.get("annotations")
    return dataclasses.replace(layout, annotations=tuple((str(p), str(t)) for p, t in notes)) if notes else layout
