"""`jaxscope jaxpr`: trace a function and print its jaxpr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import TargetOptions, add_target


def add_parser(sub: Any) -> None:
    p = sub.add_parser("jaxpr", help="trace a function and print its jaxpr")
    add_target(p)


def run(opts: argparse.Namespace) -> int:
    from jaxscope.ir.linking import tidy_comments

    result = TargetOptions.of(opts).trace(jaxpr_text=True)
    # the locations at column 88, not past the longest line; the lines and their words as JAX printed them
    sys.stdout.write(tidy_comments(result.jaxpr_text.rstrip("\n")) + "\n")
    return 0
