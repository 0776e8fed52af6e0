"""Where the time goes, stage by stage, in one process (for finding hotspots, not for targets).

    python benchmarks/profile_stages.py gpt-10k [--top 12] [--only trace,graph,...]

Runs the pipeline's pieces in-process on one workload (benchmarks/workloads.py) and prints, per
stage, its wall time and cProfile's top functions by own time. The JSON encode/decode steps are
single C calls that hold the GIL for their whole duration: their time is how long they can stall
the GUI thread when they run on a background thread of the GUI process.

Stages: trace (worker.trace.run_trace: jit trace + graph + diagnose + jaxpr text), encode (the
worker's reply: to_jsonable + protocol.dumps), decode (client: json.loads + result_from_jsonable),
graph_dumps (LayoutClient sends the Graph), graph_loads (layout worker), layout (compute_layout),
wire (layout_to_wire + layout_from_wire), scene (QtGraphView.set_graph), paint_fit, paint_zoom1,
svg (render_svg), jaxpr_pane (QtJaxprView.set_text), links (linking.jaxpr_links).
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", help="e.g. gpt-10k, mlp-1k, gpt_scan-50k")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--only", default="", help="comma-separated stage names to profile (others are only timed)")
    opts = ap.parse_args()
    family, size = opts.workload.rsplit("-", 1)
    w = workloads.make(family, size)
    profiled = set(filter(None, opts.only.split(","))) or None
    tmp = tempfile.mkdtemp(prefix="jaxscope-profile-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # its exports and settings: megabytes a run
    path = w.write(tmp)

    import jax  # noqa: F401  (imported before the clock, as in the warm worker)
    from PySide6.QtWidgets import QApplication

    from jaxscope.ir import linking
    from jaxscope.layout.engine import compute_layout
    from jaxscope.layout.wire import layout_from_wire, layout_to_wire
    from jaxscope.qt.graph.view import QtGraphView
    from jaxscope.qt.panes.jaxpr_view import QtJaxprView
    from jaxscope.render.svg import render_svg
    from jaxscope.runtime import protocol
    from jaxscope.schema.codec import dumps, loads, to_jsonable
    from jaxscope.schema.expansion import auto_expanded
    from jaxscope.schema.graph import Graph
    from jaxscope.schema.trace import FunctionRef, TraceRequest, result_from_jsonable
    from jaxscope.worker.trace import run_trace

    app = QApplication.instance() or QApplication([sys.argv[0]])
    run_trace(TraceRequest(FunctionRef("warm", path=path), "f32[4]", record_flow=False), lambda p: None)

    def stage(name: str, fn: Callable[[], Any]) -> Any:
        prof = cProfile.Profile() if profiled is None or name in profiled else None
        t = time.perf_counter()
        if prof is not None:
            prof.enable()
        out = fn()
        if prof is not None:
            prof.disable()
        dt = time.perf_counter() - t
        print(f"\n## {name}: {dt:.3f} s" + (" (under cProfile: slower than real)" if prof else ""))
        if prof is not None:
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(opts.top)
            text = buf.getvalue()
            body = text[text.find("   ncalls") :] if "   ncalls" in text else text
            print("\n".join("   " + ln for ln in body.strip().splitlines()))
        return out

    req = TraceRequest(FunctionRef(w.function, path=path), w.args, jaxpr_text=True, record_flow=False)
    result = stage("trace", lambda: run_trace(req, lambda p: None))
    print("   worker timings:", {k: round(v, 3) for k, v in result.timings.items()})
    graph = result.graph
    print(f"   equations: {graph.top.n_eqns} top level / {graph.top.total_eqns} total; jaxpr text {len(result.jaxpr_text) / 1e6:.1f} MB")
    line = stage("encode", lambda: protocol.dumps({"id": 1, "ok": True, "result": to_jsonable(result)}))
    lines = line.splitlines()
    longest = 0.0
    for one in lines:
        t = time.perf_counter()
        json.loads(one)
        longest = max(longest, time.perf_counter() - t)
    print(
        f"   reply: {len(line) / 1e6:.1f} MB in {len(lines)} lines; longest json.loads of one line "
        f"(one GIL hold in the client's reader thread): {longest:.3f} s"
    )
    stage("decode", lambda: result_from_jsonable(protocol.read(io.BytesIO(line))["result"]))
    expanded = stage("auto_expanded", lambda: auto_expanded(graph))
    text = stage("graph_dumps", lambda: dumps(graph))
    print(f"   graph JSON: {len(text) / 1e6:.1f} MB")
    stage("graph_loads", lambda: loads(Graph, text))
    layout = stage("layout", lambda: compute_layout(graph, expanded))
    print(f"   engine {layout.engine}; {len(layout.nodes)} nodes, {len(layout.edges)} edges; notes {list(layout.notes)}")
    wire = stage("wire_encode", lambda: layout_to_wire(layout))
    stage("wire_decode", lambda: layout_from_wire(wire))
    view = QtGraphView()
    view.resize(1600, 1000)
    view.show()
    app.processEvents()
    stage("scene", lambda: view.set_graph(graph, layout, "light"))
    stage("paint_fit", lambda: view.viewport().grab())
    if hasattr(view, "_set_scale"):
        view.set_scale(1.0)
    view.centerOn(view.content_rect().center())
    stage("paint_zoom1", lambda: view.viewport().grab())
    stage("svg", lambda: render_svg(graph, layout))
    jv = QtJaxprView()
    stage("jaxpr_pane", lambda: jv.set_text(result.jaxpr_text))
    stage("links", lambda: linking.jaxpr_links(graph, result.jaxpr_text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
