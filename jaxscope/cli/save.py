"""`jaxscope save`: a trace as one file that opens (in the app and in every command) without the code."""

from __future__ import annotations

import argparse
from typing import Any

from jaxscope.cli.common import CliError, TargetOptions, add_target, output_file


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "save",
        help="save a trace as NAME.jaxscope: graph, jaxpr, HLO, diagnostics, sources; opens without the code",
        description="Trace the function and write one compressed file with everything the window shows of it: the graph "
        "(scopes, source lines), the jaxpr, StableHLO and the compiled HLO, diagnostics and control flow, a run "
        "(--run) and a copy of your source files. `jaxscope NAME.jaxscope` opens it; export, jaxpr, hlo, explain, "
        "links, cost and diff read it as they read a target, with no worker and none of your libraries.",
    )
    add_target(p)
    p.add_argument("-o", "--output", type=output_file, required=True, metavar="NAME.jaxscope", help="where to write it")
    p.add_argument("--no-compile", action="store_true", help="leave the compiled HLO out (compiling a big program takes long)")
    p.add_argument("--run", action="store_true", help="also run the function jitted and eagerly, and keep the comparison")
    p.add_argument(
        "--time",
        action="store_true",
        help="also run the compiled program under the profiler and keep its measured time (cost --time and the Cost pane "
        "read it where the device is not: a TPU's figures on a laptop)",
    )


def run(opts: argparse.Namespace) -> int:
    from jaxscope.analysis.measures import PROFILE_RUNS
    from jaxscope.saved_traces import is_document, load, record, write

    if not is_document(opts.output):
        raise CliError(f"-o {opts.output}: a saved trace's name ends in .jaxscope")
    if opts.no_compile and opts.time:
        raise CliError("--time measures the compiled program: drop --no-compile")
    if is_document(opts.target):
        doc = load(opts.target)  # a copy (e.g. written again in this version's format)
    else:
        doc = record(
            opts.target,
            opts.args,
            opts.inputs,
            timeout=opts.timeout,
            debug=opts.debug,
            python=opts.python,
            env=TargetOptions.of(opts).env(),
            device=opts.device,
            compile_hlo=not opts.no_compile,
            run=opts.run,
            profile=PROFILE_RUNS if opts.time else 0,
        )
    try:
        size = write(doc, opts.output)
    except OSError as exc:
        raise CliError(f"cannot write {opts.output}: {exc}") from None
    timed = doc.compiled is not None and doc.compiled.run_s > 0
    there = (("StableHLO", doc.stablehlo), ("compiled HLO", doc.compiled), ("measured time", timed), ("run", doc.run))
    parts = ["jaxpr"] + [name for name, found in there if found]
    files = len(doc.sources)
    print(
        f"wrote {opts.output} ({doc.trace.graph.top.total_eqns} equations, {', '.join(parts)}, "
        f"{files} source file{'s' if files != 1 else ''}; {_size(size)})"
    )
    return 0


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"
