"""`jaxscope jaxpr`: trace a function and print its jaxpr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import add_target, trace_target


def add_parser(sub: Any) -> None:
    p = sub.add_parser("jaxpr", help="trace a function and print its jaxpr")
    add_target(p)


def run(opts: argparse.Namespace) -> int:
    result = trace_target(opts, jaxpr_text=True)
    sys.stdout.write(result.jaxpr_text.rstrip("\n") + "\n")
    return 0
