"""Saved traces and diffs at scale (issue 36): a traced workload saved as a document (size, time to
write), opened again (time to read, against the time to lay its graph out as the window does),
and diffed against itself. Prints a table.

    python benchmarks/documents.py [--size 10k] [--size 50k]
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
from jaxscope.documents import snapshot, stamp, write  # noqa: E402
from jaxscope.runtime.layout_client import LayoutClient  # noqa: E402
from jaxscope.schema.document import TraceDocument, read, user_files  # noqa: E402
from jaxscope.session import trace  # noqa: E402


def best(fn, reps: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", action="append", default=[], choices=workloads.SIZES)
    opts = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="jaxscope-docs-") as tmp:
        for size in opts.size or ["10k", "50k"]:
            w = workloads.scoped(size)
            path = w.write(tmp)
            t = time.perf_counter()
            result = trace(f"{path}::{w.function}", w.args, timeout=900, jaxpr_text=True, record_flow=True)
            trace_s = time.perf_counter() - t
            doc = TraceDocument(result, sources=snapshot(user_files(result)), created=stamp())
            out = os.path.join(tmp, f"{size}.jaxscope")
            write_s, size_b = best(lambda: write(doc, out), 1)
            read_s, _ = best(lambda: read(out))
            view = for_window(result.graph)
            with LayoutClient() as layouts:
                layout_s, _ = best(lambda: layouts.layout(view.graph, first_open(view.graph)), 1)
            diff_s, found = best(lambda: diff(result.graph, result.graph), 1)
            rows.append((w.name, result.graph.top.total_eqns, trace_s, size_b, write_s, read_s, layout_s, diff_s, found.summary()))
    print(f"{'workload':<16} {'eqns':>7} {'trace s':>8} {'file MB':>8} {'write s':>8} {'open s':>7} {'layout s':>9} {'diff s':>7}  diff")
    for name, n, trace_s, size_b, write_s, read_s, layout_s, diff_s, summary in rows:
        print(f"{name:<16} {n:>7} {trace_s:>8.2f} {size_b / 2**20:>8.2f} {write_s:>8.2f} {read_s:>7.2f} {layout_s:>9.2f} {diff_s:>7.2f}  {summary}")
    print("targets: a 50k-equation trace in a few MB; open (read + decode) no slower than laying its graph out")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
