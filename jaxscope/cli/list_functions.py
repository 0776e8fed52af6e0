"""`jaxscope list`: the functions of a file, found without running it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxscope.cli.common import CliError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("list", help="list the functions in a file (without running it)")
    p.add_argument("file")


def run(opts: argparse.Namespace) -> int:
    from jaxscope.targets.discover import DiscoveryError, discover_file

    try:
        info = discover_file(opts.file)
    except DiscoveryError as exc:
        raise CliError(str(exc)) from None
    for fn in info.functions:
        params = "…" if fn.refers else ", ".join(p.name for p in fn.params)
        example = f"  inputs from {fn.maker}()" if fn.maker else f"  --args {fn.example_args!r}" if fn.example_args else ""
        assigned = f"  assigned: {fn.refers}" if fn.refers else ""
        print(f"{opts.file}::{fn.name}({params})  line {fn.line}{example}{assigned}")
    for warning in info.warnings:
        print(f"jaxscope: warning: {warning}", file=sys.stderr)
    return 0
