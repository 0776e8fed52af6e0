"""`jaxscope open` (and `jaxscope TARGET`): the desktop app on a function."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from jaxscope.cli.common import CliError, TargetOptions, add_target


def add_parser(sub: Any) -> None:
    p = sub.add_parser("open", help="open the desktop app on a function")
    add_target(p)


def run(opts: argparse.Namespace) -> int:
    target = TargetOptions.of(opts)  # (no command: no target)
    target.names_saved()  # `jaxscope NAME.jaxscope --args ...`: said, not ignored
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")
    )
    if headless:
        raise CliError("no display to open the desktop app on; use `jaxscope export TARGET -o graph.svg` headless", 2)
    from jaxscope.qt.app.main import main as gui_main

    return int(gui_main(target.target or None, target.args, target.inputs, target.python))
