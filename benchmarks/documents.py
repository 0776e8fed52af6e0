"""Saved traces and diffs at scale (issue 36): a traced workload saved as a document (size, time to
write), opened again (time to read, against the time to lay its graph out as the window does),
and diffed against itself. Prints a table.

    python benchmarks/saved_traces.py [--size 10k] [--size 50k]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import workloads  # noqa: E402

from jaxscope.analysis.scope_view import first_open, for_window  # noqa: E402
from jaxscope.analysis.trace_diff import diff  # noqa: E402
from jaxscope.runtime.layout_client import LayoutClient  # noqa: E402
from jaxscope.saved_traces import snapshot, stamp, write  # noqa: E402
from jaxscope.schema.trace_file import TraceDocument, read  # noqa: E402
from jaxscope.session import trace  # noqa: E402


def best(fn, reps: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def measure(size: str, tmp: str) -> tuple:
    """One workload: trace it live, save it, open it again, lay it out, diff it with itself."""
    w = workloads.scoped(size)
    path = w.write(tmp)
    t = time.perf_counter()
    result = trace(f"{path}::{w.function}", w.args, timeout=900, jaxpr_text=True, record_flow=True)
    trace_s = time.perf_counter() - t
    doc = TraceDocument(result, sources=snapshot(result), created=stamp())
    out = os.path.join(tmp, f"{size}.jaxscope")
    write_s, size_b = best(lambda: write(doc, out), 1)
    read_s, _ = best(lambda: read(out))
    view = for_window(result.graph)
    with LayoutClient() as layouts:
        layout_s, _ = best(lambda: layouts.layout(view.graph, first_open(view.graph)), 1)
    diff_s, found = best(lambda: diff(result.graph, result.graph), 1)
    n = result.graph.top.total_eqns
    return (w.name, n, trace_s, size_b, write_s, read_s, layout_s, diff_s, found.summary())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", action="append", default=[], choices=workloads.SIZES)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="jaxscope-docs-") as tmp:
        rows = [measure(size, tmp) for size in opts.size or ["10k", "50k"]]
    head = ("workload", "eqns", "trace s", "file MB", "write s", "open s", "layout s", "diff s")
    print(f"{head[0]:<16} " + " ".join(f"{h:>8}" for h in head[1:]) + "  diff")
    for name, n, trace_s, size_b, write_s, read_s, layout_s, diff_s, summary in rows:
        cells = (trace_s, size_b / 2**20, write_s, read_s, layout_s, diff_s)
        print(f"{name:<16} {n:>8} " + " ".join(f"{c:>8.2f}" for c in cells) + f"  {summary}")
    print("targets: a 50k-equation trace in a few MB; open (read + decode) no slower than laying its graph out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
