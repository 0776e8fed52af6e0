"""`jaxscope hlo`: the StableHLO or the compiled HLO of a function, with XLA's cost analysis."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import CliError, TargetOptions, add_target, output_file


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


def run(opts: argparse.Namespace) -> int:
    from jaxscope.stages import lower

    result = lower(TargetOptions.of(opts).stage(), opts.stage)
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
