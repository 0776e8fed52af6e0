"""`jaxscope diff A B`: two traces compared equation by equation (a static flag flipped, an edit,
other inputs, a library upgrade saved before and after), in words and as one coloured drawing."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from jaxscope.cli.common import ARGS_HELP, CliError, TargetOptions, output_file

if TYPE_CHECKING:
    from jaxscope.schema.trace import TraceResult


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two traces: matched, added, removed and changed equations (text, or -o diff.svg)",
        description="Trace A and B (a target each, or a saved NAME.jaxscope) and match their equations by structure: "
        "primitive, the jit/scan/cond they sit in, module scope, Python function and dataflow, never by variable name "
        "or line number. Prints what only A has (removed), what only B has (added), what changed (shapes, dtypes, "
        "params, where an operand comes from), and a summary line. Exit status 0 when they are the same program, 1 when not.",
    )
    p.add_argument("a", metavar="A", help="file.py::function, module:function or NAME.jaxscope")
    p.add_argument("b", metavar="B", nargs="?", default=None, help="the same kinds; default: A again (with --args-b/--inputs-b)")
    for side in ("a", "b"):
        p.add_argument(f"--args-{side}", default=None, metavar="SPEC", help=f"{side.upper()}'s arguments: {ARGS_HELP}")
        p.add_argument(f"--inputs-{side}", default=None, metavar="MAKER", help=f"{side.upper()}'s maker (PATH.py::NAME)")
    p.add_argument(
        "-o",
        "--output",
        type=output_file,
        default=None,
        metavar="FILE",
        help="draw both graphs as one (B's, with A's removed equations put back), added/removed/changed coloured: .svg, .png, .pdf or .dot",
    )
    p.add_argument(
        "--scopes",
        action="store_true",
        help="with -o: draw the model's modules as groups (as `export --scopes`), each coloured by what its "
        "equations share: a layer added whole is one green box",
    )
    p.add_argument(
        "--collapse",
        type=int,
        default=None,
        metavar="DEPTH",
        help="with -o: open nested sub-graphs (with --scopes, module groups) down to DEPTH levels; default: automatic",
    )
    p.add_argument("--all", action="store_true", help="list every added and removed equation (default: grouped by scope and line)")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.add_argument("--python", default=None, metavar="PATH", help="the Python that runs your code (default: jaxscope's own)")
    p.add_argument("--x64", action="store_true", help="JAX's 64-bit mode")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="time limit for each trace (seconds)")
    p.add_argument("--debug", action="store_true", help="show full tracebacks and the worker's output")


def run(opts: argparse.Namespace) -> int:
    from jaxscope.analysis.diff_view import report
    from jaxscope.analysis.trace_diff import diff

    b_target = opts.b or opts.a
    if opts.b is None and opts.args_b is None and opts.inputs_b is None:
        raise CliError("diff needs two traces: give B (a target or a saved trace), or B's inputs with --args-b/--inputs-b")
    how = TargetOptions.of(opts)  # how both sides are traced
    a, name_a = _side(replace(how, target=opts.a, args=opts.args_a, inputs=opts.inputs_a), "a")
    b, name_b = _side(replace(how, target=b_target, args=opts.args_b, inputs=opts.inputs_b), "b")
    found = diff(a.graph, b.graph)
    if opts.json:
        import json

        print(
            json.dumps(
                {
                    "a": name_a,
                    "b": name_b,
                    **found.counts(),
                    "arguments": list(found.inputs),
                    "removed_paths": list(found.removed),
                    "added_paths": list(found.added),
                    "changed_paths": [{"a": c.a, "b": c.b, "what": list(c.what)} for c in found.changed],
                },
                indent=1,
            )
        )
    else:
        sys.stdout.write("\n".join(report(a.graph, b.graph, found, (name_a, name_b), every=opts.all)) + "\n")
    if opts.output:
        _draw(opts.output, a, b, found, opts.scopes, opts.collapse)
    return 0 if found.identical else 1


def _side(t: TargetOptions, side: str) -> tuple[TraceResult, str]:
    from jaxscope.saved_traces import is_document, load
    from jaxscope.session import trace

    if is_document(t.target):
        if t.args is not None or t.inputs is not None:
            raise CliError(f"{t.target} is a saved trace: --args-{side}/--inputs-{side} do not apply to it")
        doc = load(t.target)
        return doc.trace, f"{t.target} ({doc.target})"
    result = trace(t.target, t.args, inputs=t.inputs, timeout=t.timeout, debug=t.debug, diagnose=False, python=t.python, env=t.env())
    request = result.request
    with_ = f" --inputs {request.inputs}" if request.inputs else f" --args {request.args!r}" if request.args else ""
    return result, t.target + with_


def _draw(output: str, a: TraceResult, b: TraceResult, found: Any, scopes: bool, depth: int | None) -> None:
    from jaxscope.analysis.diff_view import COLOURS, shown_status, union
    from jaxscope.analysis.scope_view import first_open
    from jaxscope.drawer import Drawer
    from jaxscope.drawing import Categorised, Decorations, DrawRequest, view_of
    from jaxscope.exporter import resolve_format
    from jaxscope.schema.expansion import expanded_to_depth

    both = union(a.graph, b.graph, found)
    shown = view_of(both.graph, "scopes" if scopes else "flat")
    graph = shown.graph
    fill = Categorised("diff", both.status, COLOURS, caption=found.summary())
    if depth is None:
        # a jit or scan with a change inside is drawn open; in a grouped view, every group holding a
        # difference, so the deepest groups that differ are boxes (a layer added whole: one green box per pass)
        status = shown_status(both.status, shown if shown.grouped else None)
        owners = _holding(graph, status) if shown.grouped else _owners_of(graph, {p for p, s in status.items() if s == "changed"})
        whole = {p for p, s in status.items() if s in ("added", "removed")}  # a layer added whole: one box of its colour
        expanded = frozenset(first_open(graph) - whole | owners)
    else:
        expanded = frozenset(expanded_to_depth(graph, depth))
    try:
        with Drawer() as drawer:
            page = resolve_format(output, None) == "html"
            drawing = drawer.draw(DrawRequest(shown, decorations=Decorations(fill=fill), opened=expanded, page=page))
        fmt = drawing.write(output)
    except (ValueError, OSError) as exc:
        raise CliError(f"cannot write {output}: {exc}") from None
    print(
        f"wrote {output} ({fmt}: {both.graph.top.total_eqns} equations of A and B, {len(drawing.layout.nodes)} nodes drawn)",
        file=sys.stderr,
    )


def _holding(graph: Any, status: dict[str, str]) -> set[str]:
    """The groups that hold a difference (``g3:0/g44:0/g50`` is held by ``g3`` and ``g3:0/g44``),
    but not one added or removed whole (a box of its colour), nor one of more boxes than fit
    (an optimizer's update of every leaf: a box coloured "changed")."""
    from jaxscope.analysis.scope_view import GROUPS_FIT
    from jaxscope.schema.graph import resolve

    out: set[str] = set()
    for path, state in status.items():
        if state == "same":
            continue
        parts = path.split("/")
        held = ("/".join(parts[:k])[: -len(":0")] for k in range(1, len(parts)) if parts[k - 1].endswith(":0"))
        out.update(g for g in held if status.get(g) not in ("added", "removed"))
    fits = set()
    for g in sorted(out, key=len):  # a group opens when it fits and what holds it is open
        owner = g.rsplit(":0/", 1)[0] if ":0/" in g else ""
        node = resolve(graph, g)[1]
        if (not owner or owner in fits) and len(graph.bodies[node.subgraphs[0].body].nodes) <= GROUPS_FIT:
            fits.add(g)
    return fits


def _owners_of(graph: Any, paths: set[str]) -> set[str]:
    """The owner paths among `paths` that own sub-graphs (what a layout can open)."""
    from jaxscope.schema.graph import resolve

    out = set()
    for path in paths:
        try:
            _, node = resolve(graph, path)
        except (KeyError, IndexError):
            continue
        if node.subgraphs:
            out.add(path)
    return out
