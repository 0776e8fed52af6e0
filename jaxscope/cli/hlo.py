"""`jaxscope hlo`: the StableHLO or the compiled HLO of a function, with XLA's cost analysis."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, cast

from jaxscope.cli.common import CliError, add_target, output_file, saved, worker_env
from jaxscope.session import resolve_call, worker_job

if TYPE_CHECKING:
    from jaxscope.schema.hlo import HloResult, Stage


def add_parser(sub: Any) -> None:
    p = sub.add_parser("hlo", help="print (or write) the StableHLO or the compiled HLO of a function, with XLA's cost analysis")
    add_target(p)
    p.add_argument(
        "--stage",
        choices=["stablehlo", "compiled"],
        default="stablehlo",
        help="stablehlo: what jit hands XLA (with source locations); compiled: what XLA made of it",
    )
    p.add_argument("-o", "--output", type=output_file, metavar="FILE", help="write the text here (e.g. f.mlir, f.hlo) instead of stdout")


def lower(opts: argparse.Namespace, stage: str, profile: int = 0) -> HloResult:
    """The IR text of the command line's target at `stage`, from a worker (`hlo`, `links`, `cost`);
    compiled and `profile` > 0, also each instruction's time over that many runs."""
    from jaxscope.schema.codec import from_jsonable
    from jaxscope.schema.hlo import HloRequest, HloResult

    doc = saved(opts)
    if doc is not None:
        if profile:
            raise CliError(f"{opts.target} is a saved trace: timing runs the program, which needs its code")
        found = doc.hlo(stage)
        if found is None:
            raise CliError(f"{opts.target} holds no {stage} text (saved with --no-compile, or lowering failed when it was saved)")
        return found
    ref, args, inputs = resolve_call(opts.target, opts.args, opts.inputs)
    timeouts = {"lower": opts.timeout, "compile": opts.timeout} if opts.timeout else None
    request = HloRequest(ref, args, cast("Stage", stage), inputs=inputs, profile=profile, device=opts.device)
    return worker_job("hlo", request, lambda d: from_jsonable(HloResult, d), timeouts, opts.debug, worker_env(opts), opts.python)


def run(opts: argparse.Namespace) -> int:
    result = lower(opts, opts.stage)
    if opts.output:
        try:
            from jaxscope.exporter import write_text

            write_text(opts.output, result.text)  # the previous file stays if this fails
        except OSError as exc:
            raise CliError(f"cannot write {opts.output}: {exc}") from None
        print(f"wrote {opts.output} ({opts.stage}: {result.text.count(chr(10))} lines)")
    else:
        sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
    summary = result.summary()
    if summary:
        print(f"jaxscope: {summary}", file=sys.stderr)
    return 0
