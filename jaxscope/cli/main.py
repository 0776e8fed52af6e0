"""The `jaxscope` command: its parser and the dispatch to one module per sub-command.

Exit codes: 0 ok, 2 bad usage / spec / missing target, 3 the user's code failed,
4 timeout, cancel or an accelerator held by another program, 5 the worker crashed or jaxscope failed (`jaxscope.session.EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from jaxscope.about import __version__
from jaxscope.cli import cost, diff, explain, export, hlo, jaxpr, links, list_functions, open_app, retrace, run, save
from jaxscope.cli.terminal import quiet_broken_pipe, sanitized
from jaxscope.session import SessionError, shared_workers

COMMANDS = {  # name -> module; the order is that of `jaxscope --help`
    "export": export,
    "jaxpr": jaxpr,
    "explain": explain,
    "hlo": hlo,
    "links": links,
    "cost": cost,
    "retrace": retrace,
    "save": save,
    "diff": diff,
    "run": run,
    "list": list_functions,
    "open": open_app,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxscope",
        description="See what JAX does to a Python function: its jaxpr as a graph, exported headless.",
    )
    parser.add_argument("--version", action="version", version=f"jaxscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command line; returns its exit code. Everything it prints is sanitized (`terminal`)."""
    with sanitized():
        try:
            return _main(argv)
        except BrokenPipeError:  # `jaxscope jaxpr X | head`: the reader has all it wanted
            quiet_broken_pipe()
            return 0


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in {*COMMANDS, "-h", "--help", "--version"}:
        argv.insert(0, "open")  # `jaxscope file.py::f` opens the app
    opts = parser.parse_args(argv)
    debug = getattr(opts, "debug", False)
    if opts.command not in (None, "open") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)  # `finally` blocks run: no half-written temporary file stays
    try:
        if opts.command in (None, "open"):
            return open_app.run(opts)  # no command: the app alone
        with shared_workers():  # one worker per command: an accelerator opened once
            return COMMANDS[opts.command].run(opts)
    except SessionError as exc:
        print(f"jaxscope: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("jaxscope: interrupted", file=sys.stderr)
        return 4
    except BrokenPipeError:
        raise
    except Exception as exc:
        if debug:
            raise
        print(f"jaxscope: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 5
