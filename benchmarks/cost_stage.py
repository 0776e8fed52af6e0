"""The cost analysis's own time on a workload (issue 34.6): `jaxscope cost`'s and the Cost pane's
figures (every equation's cost, the total, the liveness) of a traced program, best of N, against
which `run_all` holds bare make_jaxpr. Prints one JSON line.

    python benchmarks/cost_stage.py FILE ARGS_FILE [--function train_step] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import time

from jaxscope.analysis import cost as costs
from jaxscope.analysis.liveness import liveness
from jaxscope.session import trace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("args_file")
    ap.add_argument("--function", default="train_step")
    ap.add_argument("--reps", type=int, default=3)
    opts = ap.parse_args()
    with open(opts.args_file) as fh:
        args = fh.read()
    graph = trace(f"{opts.path}::{opts.function}", args, timeout=900).graph
    times = []
    for _ in range(opts.reps):
        costs._last.clear()  # nothing kept from the last round
        t = time.perf_counter()
        found = costs.rows(graph)
        costs.total(graph, found)
        liveness(graph)
        times.append(time.perf_counter() - t)
    print(json.dumps({"analysis_s": min(times), "times": times, "eqns": graph.top.total_eqns}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
