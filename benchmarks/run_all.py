"""`make bench`: jaxscope against bare `jax.make_jaxpr` and against the naive DOT script (issue 10).

    python benchmarks/run_all.py [--quick] [--only NAME ...] [--reps N] [--naive-timeout S]
                                 [--no-naive] [--no-export] [--jpviz-path DIR] [--out FILE]

For each workload (benchmarks/workloads.py: mlp, gpt, gpt_scan, gpt_jit at ~1k, ~10k, ~50k
equations) it prints one table: equations, bare make_jaxpr, every jaxscope stage (worker trace
+ graph, transfer, layout, scene build, first paint), open -> interactive and its ratio, GUI
event-loop lateness, SVG export, peak RSS, expanding a cluster, pan/fit-all repaint, cancel, and
the naive baseline; then the targets of issue 10 with PASS/MISS. Every stage runs in a fresh
subprocess. Results go to benchmarks/results.json (machine info included) to compare runs.
Not a test: the numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from importlib import metadata
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402 - after sys.path gets this directory
import stages  # noqa: E402 - after sys.path gets this directory
import workloads  # noqa: E402 - after sys.path gets this directory

REPS = {"1k": 3, "10k": 3, "50k": 1}
QUICK_S = 2.0  # a 50k workload whose bare make_jaxpr takes less gets 3 runs too (gpt_jit-50k: one ~1.5 s open
# decided T1 and T2 alone, and it moved 1.0 -> 1.55 s between two runs of the same code)
GUI_TIMEOUT_S = {"1k": 240.0, "10k": 400.0, "50k": 600.0}
PNG_AT = {"gpt-50k"}  # PNG export is timed once, on the biggest unrolled model
EXPORT_AT = ("gpt-10k", "mlp-10k", "gpt-1k", "mlp-1k")  # the first one selected is used


def machine_info() -> dict[str, Any]:
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    t = time.perf_counter()
    n = 0
    for i in range(2_000_000):  # a rough speed figure for this Python on this machine
        n += i
    loop_s = time.perf_counter() - t
    try:
        import psutil

        mem_gb = psutil.virtual_memory().total / 2**30
    except Exception:
        mem_gb = None
    return {
        "cpu_count": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": mem_gb,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "jax": version("jax"),
        "jaxlib": version("jaxlib"),
        "PySide6": version("PySide6-Essentials") if version("PySide6-Essentials") != "-" else version("PySide6"),
        "pygraphviz": version("pygraphviz"),
        "python_loop_2M_s": loop_s,
        "loadavg_start": os.getloadavg(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the ~1k-equation workloads only")
    ap.add_argument(
        "--only", action="append", default=[], help="a family (gpt), a size (10k) or one workload (gpt-10k); repeatable, or comma-separated"
    )
    ap.add_argument("--reps", type=int, default=0, help="runs per workload (default: 3 at 1k and 10k, 1 at 50k)")
    ap.add_argument("--naive-timeout", type=float, default=30.0, help="seconds before the naive script is killed (default 30)")
    ap.add_argument(
        "--naive-max-size",
        default="10k",
        choices=workloads.SIZES,
        help="largest size the naive script runs at (default 10k: at 50k it cannot finish)",
    )
    ap.add_argument("--no-naive", action="store_true")
    ap.add_argument("--no-export", action="store_true", help="skip `jaxscope export` vs bare python")
    ap.add_argument(
        "--jpviz-path", default=os.environ.get("JAXSCOPE_BENCH_JPVIZ", ""), help="a directory holding jpviz and pydot<2 (see README)"
    )
    ap.add_argument("--out", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--report", metavar="FILE", help="print the tables of a saved results file again (with today's targets); run nothing")
    opts = ap.parse_args()
    if opts.report:
        return reprint(opts.report)
    only = [o for item in opts.only for o in item.split(",") if o]
    chosen = workloads.select(only, opts.quick)
    if not chosen and only != ["gpt_scoped"]:
        ap.error(f"--only {only} matches no workload; names: {', '.join(w.name for w in workloads.all_workloads())}")

    started = time.perf_counter()
    info = machine_info()
    print(f"jaxscope benchmark: {len(chosen)} workloads; {info['cpu_count']} CPUs ({info['cpu']}), Python {info['python']}, "
          f"jax {info['jax']}, PySide6 {info['PySide6']}; 2M-iteration Python loop {info['python_loop_2M_s']:.2f} s; "
          f"load average {info['loadavg_start'][0]:.2f}", flush=True)  # fmt: skip
    records: list[dict[str, Any]] = []
    naive_timed_out: dict[str, str] = {}  # family -> size at which the naive script timed out
    export_result: dict[str, Any] = {}
    scoped_result: dict[str, Any] = {}
    structure_result: dict[str, Any] = {}
    jpviz_done = False
    with tempfile.TemporaryDirectory(prefix="jaxscope-bench-") as tmp:
        for w in chosen:
            t_w = time.perf_counter()
            path = w.write(tmp)
            reps = opts.reps or REPS[w.size]
            rec: dict[str, Any] = {"name": w.name, "family": w.family, "size": w.size, "kind": w.kind, "n": w.n, "describe": w.describe()}
            print(f"\n.. {w.name}: bare make_jaxpr", end="", flush=True)
            rec["bare"] = stages.bare_make_jaxpr(w, path, reps)
            if not opts.reps and reps < 3 and rec["bare"].get("median_s", QUICK_S) < QUICK_S:
                reps = 3  # cheap enough for a median
                rec["bare"] = stages.bare_make_jaxpr(w, path, reps)
            print(", jaxscope", end="", flush=True)
            rec["gui"] = stages.gui(w, path, reps, GUI_TIMEOUT_S[w.size], png=w.name in PNG_AT)
            if opts.no_naive:
                rec["naive"] = {}
            elif w.family in naive_timed_out:
                rec["naive"] = {
                    "skipped": f"> {opts.naive_timeout:.0f} s (not run: timed out at {naive_timed_out[w.family]})",
                    "implied_min_s": opts.naive_timeout,
                }
            elif workloads.SIZES.index(w.size) > workloads.SIZES.index(opts.naive_max_size):
                rec["naive"] = {"skipped": f"not run above {opts.naive_max_size} (--naive-max-size)"}
            else:
                print(", naive", end="", flush=True)
                rec["naive"] = stages.naive(w, path, opts.naive_timeout)
                if "timeout_s" in rec["naive"]:
                    naive_timed_out[w.family] = w.size
            if w.size == "1k" and not jpviz_done and w.family in ("gpt", "mlp"):
                print(", jpviz", end="", flush=True)
                rec["jpviz"] = stages.jpviz(w, path, opts.jpviz_path, 120)
                jpviz_done = True
            rec["summary"] = report.summarize(rec)
            rec["targets"] = report.targets(rec)
            rec["wall_s"] = time.perf_counter() - t_w
            print(f" ({rec['wall_s']:.0f} s)", flush=True)
            print(report.table(rec), flush=True)
            records.append(rec)
        if not opts.no_export:
            target = next((name for name in EXPORT_AT if any(w.name == name for w in chosen)), None)
            if target is not None:
                w = workloads.make(*target.split("-"))
                print(f"\n.. jaxscope export vs bare python: {target}", flush=True)
                export_result = stages.export_vs_bare(w, w.write(tmp))
            if not only or "gpt_scoped" in only:  # issue 33.7: `--only gpt_scoped` runs it alone
                w = workloads.scoped("1k" if opts.quick else "50k")
                print(f"\n.. jaxscope export --scopes --collapse 1 vs bare python: {w.name}", flush=True)
                scoped_result = stages.export_vs_bare(w, w.write(tmp), extra=("--scopes", "--collapse", "1"))
                structure_result = stages.structure(w, w.write(tmp), None if opts.quick else workloads.scoped("200k"), tmp)
    extra = [report.export_target(export_result)] if export_result else []
    if scoped_result:
        extra.append(report.export_target(scoped_result, "T7", report.SCOPED_EXPORT_RATIO))
        if "error" in scoped_result:
            print(f"   scoped export error: {scoped_result['error']}")
    extra = [x for x in extra if x is not None] + report.structure_targets(structure_result)
    if export_result and "error" in export_result:
        print(f"   export comparison error: {export_result['error']}")
    print(report.summary_table(records, extra))
    total = time.perf_counter() - started
    info["loadavg_end"] = os.getloadavg()
    print(
        f"\nbenchmark wall time {total / 60:.1f} min; load average at the end {info['loadavg_end'][0]:.2f}; "
        f"results in {os.path.relpath(opts.out)}"
    )
    with open(opts.out, "w") as fh:
        json.dump({"version": 2, "machine": info, "wall_s": total, "argv": sys.argv[1:], "workloads": records, "export": export_result,
                   "scoped_export": scoped_result, "structure": structure_result,
                   "export_target": extra[0] if extra else None}, fh, indent=1, default=str)  # fmt: skip
    return 0


def reprint(path: str) -> int:
    """The tables of a saved run, summaries and target verdicts recomputed from its raw numbers."""
    with open(path) as fh:
        saved = json.load(fh)
    records = saved.get("workloads") or []
    for rec in records:
        rec["summary"] = report.summarize(rec)
        rec["targets"] = report.targets(rec)
        print(report.table(rec))
    export_result, scoped_result = saved.get("export"), saved.get("scoped_export")
    extra = [report.export_target(export_result)] if export_result else []
    if scoped_result:
        extra.append(report.export_target(scoped_result, "T7", report.SCOPED_EXPORT_RATIO))
    extra += report.structure_targets(saved.get("structure") or {})
    print(report.summary_table(records, [e for e in extra if e]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
