"""The `jaxscope` command. Headless sub-commands never import Qt (PNG/PDF export aside) or jax.

Exit codes: 0 ok, 2 bad usage / spec / missing target, 3 the user's code failed,
4 timeout or cancel, 5 the worker crashed or jaxscope failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxscope import __version__
from jaxscope.layout.edge_shape import LONG_EDGES

if TYPE_CHECKING:
    from jaxscope.schema.model import FunctionRef, TraceResult

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
    p.add_argument("--highlight", default="", metavar="QUERY",
                   help="outline the nodes a graph search matches: a primitive, an input name, :LINE or LINE")
    p.add_argument("--layout-budget", type=float, default=5.0, metavar="S",
                   help="seconds Graphviz may take before the fast layered layout is used")
    p.add_argument("--long-edges", choices=LONG_EDGES, default="auto",
                   help="draw edges longer than 1200 x 800 px as their two ends: auto (where there are 64 or more, "
                        "as the window does), ends (always) or whole (never)")

    p = sub.add_parser("jaxpr", help="trace a function and print its jaxpr")
    _add_target(p)

    p = sub.add_parser("explain", help="trace a function and annotate its source with what tracing did to each line")
    _add_target(p)
    p.add_argument("--json", action="store_true", help="print the line marks as JSON")

    p = sub.add_parser("hlo", help="print (or write) the StableHLO or the compiled HLO of a function, with XLA's cost analysis")
    _add_target(p)
    p.add_argument("--stage", choices=["stablehlo", "compiled"], default="stablehlo",
                   help="stablehlo: what jit hands XLA (with source locations); compiled: what XLA made of it")
    p.add_argument("-o", "--output", metavar="FILE", help="write the text here (e.g. f.mlir, f.hlo) instead of stdout")

    p = sub.add_parser("retrace", help="would jit trace the function again for other arguments? and why")
    _add_target(p)
    p.add_argument("--vs", required=True, metavar="SPEC", help="the second call's arguments, e.g. 'f32[16,4], use_bias=False'")
    p.add_argument("--json", action="store_true", help="print the verdict and reasons as JSON")

    from jaxscope.cli_run import add_parser as add_run_parser

    add_run_parser(sub)

    p = sub.add_parser("list", help="list the functions in a file (without running it)")
    p.add_argument("file")

    p = sub.add_parser("open", help="open the desktop app on a function")
    _add_target(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in {"export", "jaxpr", "hlo", "explain", "retrace", "run", "list", "open", "-h", "--help", "--version"}:
        argv.insert(0, "open")  # `jaxscope file.py::f` opens the app
    opts = parser.parse_args(argv)
    debug = getattr(opts, "debug", False)
    try:
        if opts.command == "export":
            return cmd_export(opts)
        if opts.command == "jaxpr":
            return cmd_jaxpr(opts)
        if opts.command == "explain":
            return cmd_explain(opts)
        if opts.command == "hlo":
            return cmd_hlo(opts)
        if opts.command == "retrace":
            return cmd_retrace(opts)
        if opts.command == "run":
            from jaxscope.cli_run import cmd_run

            return cmd_run(opts)
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
    from jaxscope.spec import argspec
    from jaxscope.spec.discover import EXAMPLES_VAR, DiscoveryError, discover_file
    from jaxscope.spec.target import TargetError, parse_target

    if "::" not in target and target.endswith(".py"):
        target = _default_target(target)
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


def _default_target(path: str) -> str:
    """`file.py` -> `file.py::f` for its JAXSCOPE_MAIN, its one function with inputs, or its only function."""
    from jaxscope.spec.discover import MAIN_VAR, DiscoveryError, default_function, discover_file

    try:
        info = discover_file(path)
    except DiscoveryError as exc:
        raise CliError(str(exc), 3 if exc.line else 2) from None
    fn = default_function(info)
    if fn is None:
        names = ", ".join(f.name for f in info.functions) or "none"
        raise CliError(f"{path} has several functions ({names}): name one as {path}::NAME, or set {MAIN_VAR} = 'NAME' in the file")
    return f"{path}::{fn.name}"


def run_trace(
    opts: argparse.Namespace,
    *,
    jaxpr_text: bool,
    record_flow: bool = False,
    diagnose: bool = True,
    tap: Callable[[bytes | None], None] | None = None,
) -> TraceResult:
    """Trace in a one-off worker; failures become CliErrors with the worker's explanation. `tap`
    gets the reply's raw lines (`WorkerClient.submit`)."""
    import threading

    from jaxscope.runtime.worker_client import WorkerClient, WorkerError
    from jaxscope.schema.model import TraceRequest

    timeouts = {"trace": opts.timeout} if opts.timeout else None
    client = WorkerClient(spare=False, timeouts=timeouts)  # first: it imports jax while the target is resolved
    try:
        ref, args = resolve_call(opts.target, opts.args)
        future = client.trace(TraceRequest(function=ref, args=args, jaxpr_text=jaxpr_text, record_flow=record_flow, diagnose=diagnose), tap=tap)
        try:
            return future.result()
        except WorkerError as exc:
            text = format_error(exc.info, opts.debug)
            retry = _static_retry(ref, args, exc.info.argument)
            if retry:
                text += f"\ntry it static: --args {retry!r}"
            raise CliError(text, EXIT_CODES.get(exc.info.kind, 5)) from None
    finally:
        # The worker's exit (freeing a big program) takes ~0.2 s at 10k equations: it happens
        # while the command goes on (a non-daemon thread: the process still waits for it at exit).
        threading.Thread(target=client.close, name="worker-close").start()


def worker_job(
    op: str, request: Any, decode: Callable[[Any], Any], timeouts: dict[str, float] | None, debug: bool, env: dict[str, str] | None = None
) -> Any:
    """Run one request in a one-off worker; a failure becomes the CliError (and exit code) for its kind."""
    from jaxscope.runtime.worker_client import WorkerClient, WorkerError

    with WorkerClient(spare=False, timeouts=timeouts, env=env) as client:
        future = client.submit(op, request, decode)
        try:
            return future.result()
        except WorkerError as exc:
            raise CliError(format_error(exc.info, debug), EXIT_CODES.get(exc.info.kind, 5)) from None


def _static_retry(ref: FunctionRef, args: str, argument: str) -> str:
    """The --args that make `argument` static, when a tracer error names a traced scalar."""
    from jaxscope.spec.discover import DiscoveryError, discover_file
    from jaxscope.spec.static_fix import make_static, static_suggestion

    if not argument or not ref.path:
        return ""
    try:
        fn = discover_file(ref.path).get(ref.qualname)
    except DiscoveryError:
        return ""
    value = static_suggestion(fn, args, argument) if fn is not None else None
    return make_static(fn, args, argument, value) if fn is not None and value is not None else ""


def format_error(info: object, debug: bool) -> str:
    from jaxscope.schema.model import ErrorInfo

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
    from jaxscope.exporter import export, highlight_paths
    from jaxscope.layout.engine import auto_expanded, expanded_to_depth
    from jaxscope.runtime.layout_process import LayoutClient, LayoutError

    with LayoutClient(budget_s=opts.layout_budget) as layouts:
        # As in the app: the layout process starts now (while the worker imports jax) and lays out
        # the graph as the trace reply arrives. A --collapse depth needs the graph first.
        stream = layouts.stream(direction=opts.direction) if opts.collapse is None else None
        result = run_trace(opts, jaxpr_text=False, diagnose=False, tap=stream.feed if stream is not None else None)
        graph = result.graph
        layout = None
        if stream is not None:
            stream.bind(graph)
            try:
                layout = stream.future.result()
            except LayoutError:  # e.g. dot over budget before the graph was bound: ask again below
                layout = None
        if layout is None:
            expanded = auto_expanded(graph) if opts.collapse is None else expanded_to_depth(graph, opts.collapse)
            layout = layouts.layout(graph, expanded, direction=opts.direction)
    for note in layout.notes:
        print(f"jaxscope: note: {note}", file=sys.stderr)
    try:
        marks = highlight_paths(graph, layout, opts.highlight) if opts.highlight else frozenset()
        fmt = export(graph, layout, opts.output, theme=opts.theme, dpi=opts.dpi, fmt=opts.format, legend=opts.legend, highlight=marks,
                     long_edges=opts.long_edges)
    except (ValueError, OSError) as exc:
        raise CliError(f"cannot write {opts.output}: {exc}") from None
    top = graph.top
    print(f"wrote {opts.output} ({fmt}: {top.total_eqns} equations, {len(layout.nodes)} nodes drawn)")
    return 0


def cmd_jaxpr(opts: argparse.Namespace) -> int:
    result = run_trace(opts, jaxpr_text=True)
    sys.stdout.write(result.jaxpr_text.rstrip("\n") + "\n")
    return 0


EXPLAIN_ABBR = {"emitted": "eqn", "python": "py", "not-taken": "-", "never": "!", "staged": "stg"}
EXPLAIN_LEGEND = (
    "eqn N  equations came from this line (N, all sub-graphs included)",
    "py     ran while tracing, emitted nothing",
    "stg N  traced into staged control flow (lax.cond/switch branches, while/scan bodies)",
    "-      branch not taken while tracing",
    "!      never reached while tracing",
    "×N     Python loop unrolled N times (×a,b per call)",
)


def cmd_explain(opts: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from jaxscope.spec import argspec
    from jaxscope.analysis.diagnostics import format_diagnostics
    from jaxscope.spec.discover import DiscoveryError, discover_file
    from jaxscope.analysis.flow import recording_stopped
    from jaxscope.analysis.flow_marks import line_marks, static_values

    result = run_trace(opts, jaxpr_text=False, record_flow=True)
    flow = result.flow
    stopped = recording_stopped(result.warnings)
    if flow is None and stopped:
        raise CliError(f"{stopped}: nothing to explain", 5)
    if flow is None or not flow.files:
        raise CliError("no user code ran while tracing (nothing to explain)", 5)
    ref = result.request.function
    main_flow = (flow.file(ref.path) if ref.path else None) or max(flow.files, key=lambda f: sum(n for _, n in f.line_hits))
    path = main_flow.path
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            source = fh.read()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc}") from None
    lines = source.splitlines()
    try:
        info = discover_file(path)
    except DiscoveryError:
        info = None
    fn = info.get(ref.qualname) if info is not None else None
    statics = static_values(fn, argspec.parse_call(result.request.args)) if fn is not None else {}
    marks = line_marks(main_flow, result.graph, path, statics, source=source)

    if opts.json:
        data = {
            "file": path,
            "function": ref.qualname,
            "lines": [asdict(m) for _, m in sorted(marks.items())],
            "diagnostics": [asdict(d) for d in result.diagnostics],
        }
        print(json.dumps(data, sort_keys=True, indent=1))
        return 0

    # the traced function plus every function of the file that ran (helpers), else the whole file
    spans: list[tuple[int, int]] = []
    if info is not None and fn is not None:
        for f in info.functions:
            if f is fn or any(f.line <= ln <= f.end_line for ln in marks):
                spans.append((f.line, f.end_line))
        for ln in marks:  # marks outside every listed function (module-level lambdas...)
            if not any(a <= ln <= b for a, b in spans):
                spans.append((ln, ln))
    if not spans:
        spans = [(1, len(lines))]
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        while a > 1 and lines[a - 2].lstrip().startswith("@"):
            a -= 1
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])

    badge_w = max((len(m.badge) for m in marks.values()), default=0)
    num_w = len(str(max(b for _, b in merged)))
    call = f"({result.request.args})" if result.request.args else "()"
    print(f"{path}::{ref.qualname}{call}")
    print()
    for i, (a, b) in enumerate(merged):
        if i:
            print(f"{'':>{7 + badge_w}} {'⋮':>{num_w}}")
        for ln in range(a, min(b, len(lines)) + 1):
            m = marks.get(ln)
            mark = ""
            if m is not None:
                abbr = EXPLAIN_ABBR.get(m.kind, "?")
                mark = f"{abbr} {m.eqns}" if m.eqns else abbr
            badge = m.badge if m is not None else ""
            code = lines[ln - 1].rstrip()
            print(f"{mark:<6} {badge:<{badge_w}} {ln:>{num_w}}  {code}".rstrip())
    print()
    print("legend:")
    used = {EXPLAIN_ABBR[m.kind] for m in marks.values()} | ({"×N"} if any(m.badge for m in marks.values()) else set())
    for entry in EXPLAIN_LEGEND:
        if entry.split(" ", 1)[0] in used:
            print(f"  {entry}")
    notes: list[tuple[int, int, str]] = []
    for ln, m in sorted(marks.items()):
        if not m.why:
            continue
        if notes and notes[-1][2] == m.why and notes[-1][1] >= ln - 1 - _blank_run(lines, notes[-1][1], ln):
            notes[-1] = (notes[-1][0], ln, m.why)
        else:
            notes.append((ln, ln, m.why))
    if notes:
        print()
        print("why:")
        for a, b, why in notes:
            where = f"{a}" if a == b else f"{a}-{b}"
            print(f"  {where:>{2 * num_w + 1}}  {why}")
    others = [f.path for f in flow.files if f is not main_flow]
    if others:
        print()
        print("other user files that ran while tracing: " + ", ".join(others))
    if result.diagnostics:
        print()
        print("diagnostics:")
        print(format_diagnostics(result.diagnostics, path))
    return 0


def _blank_run(lines: list[str], after: int, before: int) -> int:
    """How many lines strictly between `after` and `before` are blank or comments."""
    return sum(1 for ln in range(after + 1, before) if not lines[ln - 1].strip() or lines[ln - 1].strip().startswith("#"))


def cmd_hlo(opts: argparse.Namespace) -> int:
    from jaxscope.schema.hlo import HloRequest, HloResult
    from jaxscope.schema.codec import from_jsonable

    ref, args = resolve_call(opts.target, opts.args)
    timeouts = {"lower": opts.timeout, "compile": opts.timeout} if opts.timeout else None
    request = HloRequest(ref, args, opts.stage)
    result = worker_job("hlo", request, lambda d: from_jsonable(HloResult, d), timeouts, opts.debug)
    if opts.output:
        try:
            with open(opts.output, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(result.text)
        except OSError as exc:
            raise CliError(f"cannot write {opts.output}: {exc}") from None
        print(f"wrote {opts.output} ({opts.stage}: {result.text.count(chr(10))} lines)")
    else:
        sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
    summary = result.summary()
    if summary:
        print(f"jaxscope: {summary}", file=sys.stderr)
    return 0


def cmd_retrace(opts: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from jaxscope.spec import argspec
    from jaxscope.analysis.retrace import RetraceRequest, RetraceResult
    from jaxscope.schema.codec import from_jsonable

    ref, before = resolve_call(opts.target, opts.args)
    try:
        argspec.parse_call(opts.vs)
    except argspec.SpecError as exc:
        raise CliError(f"bad --vs:\n{exc}") from None
    timeouts = {"trace": opts.timeout} if opts.timeout else None
    request = RetraceRequest(ref, before, opts.vs)
    result = worker_job("retrace", request, lambda d: from_jsonable(RetraceResult, d), timeouts, opts.debug)
    if opts.json:
        print(json.dumps(asdict(result), sort_keys=True, indent=1))
    else:
        print(result.summary())
    return 0


def cmd_list(opts: argparse.Namespace) -> int:
    from jaxscope.spec.discover import DiscoveryError, discover_file

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
