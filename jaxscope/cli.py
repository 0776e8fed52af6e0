"""The `jaxscope` command. Headless sub-commands never import Qt (PNG/PDF export aside) or jax.

Exit codes: 0 ok, 2 bad usage / spec / missing target, 3 the user's code failed,
4 timeout or cancel, 5 the worker crashed or jaxscope failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from jaxscope import __version__

if TYPE_CHECKING:
    from jaxscope.core.model import FunctionRef, TraceResult

EXIT_CODES = {
    "spec": 2,
    "not-found": 2,
    "syntax": 3,
    "import": 3,
    "user-code": 3,
    "tracer": 3,
    "exit": 3,
    "memory": 3,
    "timeout": 4,
    "cancelled": 4,
    "crash": 5,
    "internal": 5,
}

ARGS_HELP = (
    "the call's arguments in jaxpr notation, as in a Python call: "
    "'f32[8,128], {\"b\": f32[128]}, 3, training=True'. Array specs (also inside dicts, lists, tuples) "
    "are traced; Python literals are static. Default: the file's JAXSCOPE_ARGS entry for the function."
)


class CliError(Exception):
    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def _add_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="path/to/file.py::function or package.module:function")
    p.add_argument("--args", default=None, metavar="SPEC", help=ARGS_HELP)
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="time limit for tracing (seconds)")
    p.add_argument("--debug", action="store_true", help="show full tracebacks and the worker's output")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxscope",
        description="See what JAX does to a Python function: its jaxpr as a graph, exported headless.",
    )
    parser.add_argument("--version", action="version", version=f"jaxscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("export", help="trace a function and write its graph (svg, png, pdf, dot, json)")
    _add_target(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="output file; the suffix picks the format")
    p.add_argument("--format", choices=["svg", "png", "pdf", "dot", "json"], default=None)
    p.add_argument("--theme", choices=["light", "dark", "transparent"], default="light")
    p.add_argument("--dpi", type=int, default=96, help="PNG resolution (96 = 1 px per layout px)")
    p.add_argument("--collapse", type=int, default=None, metavar="DEPTH",
                   help="expand nested sub-graphs down to DEPTH levels (0 = all collapsed); default: automatic")
    p.add_argument("--direction", choices=["TB", "LR"], default="TB")
    p.add_argument("--legend", action="store_true", help="add a legend of node colours")
    p.add_argument("--layout-budget", type=float, default=5.0, metavar="S",
                   help="seconds Graphviz may take before the fast layered layout is used")

    p = sub.add_parser("jaxpr", help="trace a function and print its jaxpr")
    _add_target(p)

    p = sub.add_parser("list", help="list the functions in a file (without running it)")
    p.add_argument("file")

    p = sub.add_parser("open", help="open the desktop app on a function")
    _add_target(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in {"export", "jaxpr", "list", "open", "-h", "--help", "--version"}:
        argv.insert(0, "open")  # `jaxscope file.py::f` opens the app
    opts = parser.parse_args(argv)
    debug = getattr(opts, "debug", False)
    try:
        if opts.command == "export":
            return cmd_export(opts)
        if opts.command == "jaxpr":
            return cmd_jaxpr(opts)
        if opts.command == "list":
            return cmd_list(opts)
        return cmd_open(opts)
    except CliError as exc:
        print(f"jaxscope: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("jaxscope: interrupted", file=sys.stderr)
        return 4
    except Exception as exc:
        if debug:
            raise
        print(f"jaxscope: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=sys.stderr)
        return 5


def resolve_call(target: str, args: str | None) -> tuple[FunctionRef, str]:
    """Parse the target and pick the argument specs: --args, else the file's JAXSCOPE_ARGS."""
    from jaxscope.core import argspec
    from jaxscope.core.discover import EXAMPLES_VAR, DiscoveryError, discover_file
    from jaxscope.core.target import TargetError, parse_target

    try:
        ref = parse_target(target)
    except TargetError as exc:
        raise CliError(str(exc)) from None
    if ref.path:
        from dataclasses import replace

        ref = replace(ref, path=os.path.abspath(ref.path))
    if args is None and ref.path:
        try:
            info = discover_file(ref.path)
        except DiscoveryError as exc:
            raise CliError(str(exc), 3 if exc.line else 2) from None
        args = info.example_args.get(ref.qualname)
        fn = info.get(ref.qualname)
        if args is None:
            if fn is not None and any(p.default is None and p.kind in ("positional", "positional_only") for p in fn.params):
                names = ", ".join(p.name for p in fn.params)
                raise CliError(
                    f"{ref.qualname}({names}) needs arguments: pass --args (e.g. --args 'f32[8,128]') "
                    f"or add {EXAMPLES_VAR} = {{{ref.qualname!r}: '...'}} to {target.rsplit('::', 1)[0]}"
                )
            args = ""
    try:
        argspec.parse_call(args or "")
    except argspec.SpecError as exc:
        raise CliError(f"bad --args:\n{exc}") from None
    return ref, args or ""


def run_trace(opts: argparse.Namespace, *, jaxpr_text: bool) -> TraceResult:
    """Trace in a one-off worker; failures become CliErrors with the worker's explanation."""
    from jaxscope.core.client import WorkerClient, WorkerError
    from jaxscope.core.model import TraceRequest

    ref, args = resolve_call(opts.target, opts.args)
    timeouts = {"trace": opts.timeout} if opts.timeout else None
    with WorkerClient(spare=False, timeouts=timeouts) as client:
        future = client.trace(TraceRequest(function=ref, args=args, jaxpr_text=jaxpr_text, record_flow=False))
        try:
            return future.result()
        except WorkerError as exc:
            raise CliError(format_error(exc.info, opts.debug), EXIT_CODES.get(exc.info.kind, 5)) from None


def format_error(info: object, debug: bool) -> str:
    from jaxscope.core.model import ErrorInfo

    assert isinstance(info, ErrorInfo)
    text = info.summary()
    if info.location is not None:
        code = _source_line(info.location.file, info.location.line)
        if code:
            text += f"\n  {info.location.line} | {code}"
    if debug and info.traceback:
        text += "\ntraceback (user frames):" + "".join(f"\n  {f.file}:{f.line} in {f.function}: {f.code}" for f in info.traceback)
    if info.stderr_tail and (debug or info.kind == "crash"):
        tail = info.stderr_tail.strip().splitlines()[-20:]
        text += "\nworker output (last lines):\n  " + "\n  ".join(tail)
    return text


def _source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.rstrip()
    except OSError:
        pass
    return ""


def cmd_export(opts: argparse.Namespace) -> int:
    from jaxscope.core.export import export
    from jaxscope.core.layout import auto_expanded, expanded_to_depth
    from jaxscope.core.layout_client import LayoutClient

    result = run_trace(opts, jaxpr_text=False)
    graph = result.graph
    expanded = auto_expanded(graph) if opts.collapse is None else expanded_to_depth(graph, opts.collapse)
    with LayoutClient(budget_s=opts.layout_budget) as layouts:
        layout = layouts.layout(graph, expanded, direction=opts.direction)
    for note in layout.notes:
        print(f"jaxscope: note: {note}", file=sys.stderr)
    try:
        fmt = export(graph, layout, opts.output, theme=opts.theme, dpi=opts.dpi, fmt=opts.format, legend=opts.legend)
    except (ValueError, OSError) as exc:
        raise CliError(f"cannot write {opts.output}: {exc}") from None
    top = graph.top
    print(f"wrote {opts.output} ({fmt}: {top.total_eqns} equations, {len(layout.nodes)} nodes drawn)")
    return 0


def cmd_jaxpr(opts: argparse.Namespace) -> int:
    result = run_trace(opts, jaxpr_text=True)
    sys.stdout.write(result.jaxpr_text.rstrip("\n") + "\n")
    return 0


def cmd_list(opts: argparse.Namespace) -> int:
    from jaxscope.core.discover import DiscoveryError, discover_file

    try:
        info = discover_file(opts.file)
    except DiscoveryError as exc:
        raise CliError(str(exc)) from None
    for fn in info.functions:
        params = ", ".join(p.name for p in fn.params)
        example = f"  --args {fn.example_args!r}" if fn.example_args else ""
        print(f"{opts.file}::{fn.name}({params})  line {fn.line}{example}")
    for warning in info.warnings:
        print(f"jaxscope: warning: {warning}", file=sys.stderr)
    return 0


def cmd_open(opts: argparse.Namespace) -> int:
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")
    )
    if headless:
        raise CliError("no display to open the desktop app on; use `jaxscope export TARGET -o graph.svg` headless", 2)
    from jaxscope.qt.app import main as gui_main

    return int(gui_main(opts))
