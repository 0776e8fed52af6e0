"""The layout process (`python -m jaxscope.runtime.layout_server`): reads layout requests on stdin,
lays out with `jaxscope.layout.engine`, writes the answers on stdout. See `layout_client` for the
protocol; `LayoutClient` starts and talks to it."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from jaxscope.analysis.scope_view import first_open, for_window
from jaxscope.layout.preview import Region, region_part
from jaxscope.layout.types import Tenths
from jaxscope.layout.wire import LAYOUT_OPTIONS, layout_wire_lines
from jaxscope.runtime import protocol
from jaxscope.runtime.pipes import PipeLines
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.graph import Graph
from jaxscope.schema.graph_wire import graph_from_jsonable


def _idle_s() -> float:
    """Quiet time before `lay_out_ahead` runs (JAXSCOPE_LAYOUT_IDLE_S, default 1 s)."""
    try:
        return max(0.0, float(os.environ.get("JAXSCOPE_LAYOUT_IDLE_S", "1.0")))
    except ValueError:
        return 1.0


AHEAD_IDLE_S = _idle_s()


def serve(stdin: Any = None, stdout: Any = None) -> None:
    """The worker loop: read requests from stdin, write answers to stdout (binary streams)."""
    from jaxscope.layout import engine  # noqa: F401  # loaded now, while no request waits, not on the first

    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    # Anything else printing to fd 1 (Graphviz warnings, a stray print) must not corrupt the
    # protocol: keep the real stdout for answers and point fd 1 at stderr.
    out = os.fdopen(os.dup(stdout.fileno()), "wb") if hasattr(stdout, "fileno") else stdout
    try:
        os.dup2(2, stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass

    def write(*lines: str) -> None:
        for line in lines:
            out.write(line.encode("utf-8"))
            out.write(b"\n")
        out.flush()

    lines = PipeLines(stdin)
    held = _Held()
    ahead: Iterator[str] | None = None  # `lay_out_ahead` for the last answer, run while no request waits
    idle = AHEAD_IDLE_S
    while True:
        raw = lines.readline() if ahead is None else lines.next_within(idle)
        if raw is None and ahead is not None:  # idle (only next_within gives None): lay out a body the user may expand next
            idle = 0.0
            try:
                if next(ahead, None) is None:
                    ahead = None
            except Exception:  # only a head start was lost: the request lays it out again
                traceback.print_exc()
                ahead = None
            continue
        if not raw:
            return
        request = _request(raw)
        if request is None or request.get("op") not in ("quit", "layout"):
            continue
        if request["op"] == "quit":
            return
        rid = request.get("id")
        ahead = None
        try:
            ahead, idle = held.answer(request, lines, write), AHEAD_IDLE_S
        except Exception:
            write(json.dumps({"id": rid, "ok": False, "error": traceback.format_exc()[-4000:]}))


def _request(raw: bytes) -> dict[str, Any] | None:
    """A request line as a dict; None for anything else (skipped)."""
    try:
        request = json.loads(raw)
    except ValueError:
        return None
    return request if isinstance(request, dict) else None


class _Held:
    """What the server holds between requests: the graph (by the client's key), its sub-layouts,
    and its last few answers by request (sent again without encoding)."""

    def __init__(self) -> None:
        self.graph: Graph | None = None
        self.key: object = None
        self.cache: dict[object, object] = {}
        self.answers: dict[str, str] = {}

    def _graph(self, request: dict[str, Any], lines: PipeLines) -> Graph:
        if request.get("has_graph"):
            self.graph = None
            self.cache, self.answers = {}, {}
            graph = _read_graph(lines, streamed=request.get("has_graph") == "stream")
            if request.get("scopes"):  # what the GUI draws of a trace's graph (it makes the same view)
                graph = for_window(graph).graph
            self.graph, self.key = graph, request.get("graph_key")
        elif self.graph is None or self.key != request.get("graph_key"):
            raise RuntimeError("the layout worker does not hold the requested graph")
        return self.graph

    def answer(self, request: dict[str, Any], lines: PipeLines, write: Callable[..., None]) -> Iterator[str]:
        """Lay out what `request` asks (or send its kept answer again); returns the laying out
        ahead of the bodies the user may open next."""
        from jaxscope.layout.engine import compute_tenths, lay_out_ahead, trim

        rid = request.get("id")
        graph = self._graph(request, lines)
        write(json.dumps({"id": rid, "event": "started"}))
        opts = {k: v for k, v in (request.get("opts") or {}).items() if k in LAYOUT_OPTIONS}
        chosen = request.get("expanded")
        expanded = tuple(sorted(first_open(graph))) if chosen is None else tuple(chosen)
        ok = json.dumps({"id": rid, "ok": True, "expanded": expanded})
        key = json.dumps([expanded, sorted(opts.items())])
        if key in self.answers:
            write(ok, self.answers[key])
        else:

            def progress(event: str, n: int, rid: Any = rid) -> None:
                write(json.dumps({"id": rid, "event": event, "n": n}))

            layout = compute_tenths(graph, expanded, cache=self.cache, progress=progress, **opts)
            trim(self.cache)  # a very long session
            preview = preview_lines(layout, request.get("region"))
            if preview:
                write(json.dumps({"id": rid, "event": "preview", "lines": len(preview)}), *preview)
            write(ok)
            sent = []
            with gc_paused():
                for line in layout_wire_lines(layout):
                    write(line)
                    sent.append(line)
            if len(self.answers) >= 4:
                del self.answers[next(iter(self.answers))]
            self.answers[key] = "\n".join(sent)
        return lay_out_ahead(graph, expanded, self.cache, **opts)


def preview_lines(layout: Tenths, region: Any) -> list[str]:
    """The wire lines of `layout`'s part in `region` (a `Region.to_json`), or none: no region, a
    malformed one, or no part worth sending ahead (`layout_preview.region_part`). A preview that
    fails costs only itself, never the layout."""
    if region is None:
        return []
    try:
        part = region_part(layout, Region.from_json(region))
        return list(layout_wire_lines(part)) if part is not None else []
    except ValueError:
        return []
    except Exception:  # see the docstring
        traceback.print_exc()
        return []


def _read_graph(stdin: Any, streamed: bool) -> Graph:
    """The Graph that follows a request: its own message, or (`streamed`) the one in a worker's
    trace reply, forwarded line by line (phase events first; the reply is the "done" message)."""
    with gc_paused() as pause:
        while True:
            message = protocol.read(stdin)
            if message is None:
                raise RuntimeError("the graph did not arrive")
            if not streamed:
                graph = graph_from_jsonable(message["graph"])
                break
            if message.get("event") == "graph":  # a trace's graph, ahead of its result
                graph = graph_from_jsonable(message["graph"])
                break
            if message.get("event") == "done":
                result = message.get("result") if message.get("ok") else None
                if not isinstance(result, dict) or "graph" not in result:
                    raise RuntimeError("the trace ended without a graph")
                graph = graph_from_jsonable(result["graph"])
                break
        pause.freeze_at_end(graph)
    return graph


if __name__ == "__main__":
    serve()
    # Straight out: a normal interpreter exit would wait on stdin's lock, which the reader thread
    # (`PipeLines`) holds while it blocks in a read, until the client kills the process a second later.
    sys.stderr.flush()
    os._exit(0)
