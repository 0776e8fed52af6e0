"""`jaxscope explain`: the source annotated with what tracing did to each line."""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

from jaxscope.cli.common import CliError, TargetOptions, add_target


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help="trace a function and annotate its source with what tracing did to each line")
    add_target(p)
    p.add_argument("--json", action="store_true", help="print the line marks as JSON")


_AUTODIFF = re.compile(r"\b(?:value_and_grad|grad|vjp|jacrev|jacfwd|hessian)\s*\(")  # `nnx.value_and_grad(f)(m)`, `eqx.filter_grad`
EXPLAIN_ABBR = {"emitted": "eqn", "python": "py", "not-taken": "-", "never": "!", "staged": "stg"}
EXPLAIN_LEGEND = (
    "eqn N  equations came from this line (N, all sub-graphs included)",
    "py     ran while tracing, emitted nothing",
    "py ∇   ran autodiff: its backward equations are counted on the forward lines they transpose",
    "stg N  traced into staged control flow (lax.cond/switch branches, while/scan bodies)",
    "-      branch not taken while tracing",
    "!      never reached while tracing",
    "×N     Python loop unrolled N times (×a,b per call)",
)


def run(opts: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from jaxscope.analysis.diagnostics import format_diagnostics
    from jaxscope.analysis.flow_marks import line_marks, static_values
    from jaxscope.schema.flow import recording_stopped
    from jaxscope.targets import argspec
    from jaxscope.targets.discover import DiscoveryError, discover_source

    target = TargetOptions.of(opts)
    result = target.trace(jaxpr_text=False, record_flow=True)
    flow = result.flow
    stopped = recording_stopped(result.warnings)
    if flow is None and stopped:
        raise CliError(f"{stopped}: nothing to explain", 5)
    if flow is None and target.saved is not None:  # the user's file, not jaxscope, lacks it: exit 2
        raise CliError(
            f"{opts.target} holds no record of the Python control flow of its trace: nothing to explain "
            "(`jaxscope save` records it; so does File → Save Trace after a trace in the window)",
            2,
        )
    if flow is None or not flow.files:
        raise CliError("no user code ran while tracing (nothing to explain)", 2)
    ref = result.request.function
    main_flow = (flow.file(ref.path) if ref.path else None) or max(flow.files, key=lambda f: sum(n for _, n in f.line_hits))
    path = main_flow.path
    try:
        source = target.source_text(path)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc}") from None
    lines = source.splitlines()
    try:
        info = discover_source(source, path)
    except DiscoveryError:
        info = None
    fn = info.get(ref.qualname) if info is not None else None
    statics = static_values(fn, argspec.parse_call(result.request.args)) if fn is not None else {}
    marks = line_marks(main_flow, result.graph, path, statics, source=source)

    others = _other_files(target, flow.files, main_flow, result.graph)
    if opts.json:
        data = {
            "file": path,
            "function": ref.qualname,
            "lines": [asdict(m) for _, m in sorted(marks.items())],
            "other_files": [{"file": p, "lines": [asdict(m) for _, m in sorted(ms.items())]} for p, _, _, ms in others],
            "diagnostics": [asdict(d) for d in result.diagnostics],
        }
        print(json.dumps(data, sort_keys=True, indent=1))
        return 0

    print(f"{path}::{ref.qualname}" + (f"({result.request.args})" if result.request.args else "()"))
    print()
    _print_annotated((path, lines, info, marks), fn, others)
    if result.diagnostics:
        print()
        print("diagnostics:")
        print(format_diagnostics(result.diagnostics, path))
    return 0


_Annotated = tuple[str, list[str], Any, dict[int, Any]]  # (path, its lines, what `discover` found in it, line marks)


def _other_files(target: TargetOptions, files: Any, main_flow: Any, graph: Any) -> list[_Annotated]:
    """The other user files that ran while tracing (helpers imported from them), with their marks."""
    from jaxscope.analysis.flow_marks import line_marks
    from jaxscope.targets.discover import DiscoveryError, discover_source

    out = []
    for other in files:
        if other is main_flow:
            continue
        try:
            text = target.source_text(other.path)
            other_info: Any = discover_source(text, other.path)
        except (OSError, DiscoveryError):
            continue
        other_marks = line_marks(other, graph, other.path, {}, source=text)
        if other_marks:
            out.append((other.path, text.splitlines(), other_info, other_marks))
    return out


def _print_annotated(main: _Annotated, fn: Any, others: list[_Annotated]) -> None:
    """The function's file annotated, then each other file, the legend of what is used and the why."""
    _path, lines, info, marks = main
    everything = [*marks.values(), *(m for *_, ms in others for m in ms.values())]
    badge_w = max((len(m.badge) for m in everything), default=0)
    notes = _annotate(lines, info, fn, marks, badge_w, "")
    for other_path, other_lines, other_info, other_marks in others:
        print()
        print(f"── {other_path} (ran while tracing)")
        notes += _annotate(other_lines, other_info, None, other_marks, badge_w, os.path.basename(other_path) + ":")
    print()
    print("legend:")
    used = {EXPLAIN_ABBR[m.kind] for m in everything} | ({"×N"} if any(m.badge for m in everything) else set())
    for entry in EXPLAIN_LEGEND:
        if entry.split(" ", 1)[0] in used:
            print(f"  {entry}")
    if notes:
        print()
        print("why:")
        width = max(len(where) for where, _ in notes)
        for where, why in notes:
            print(f"  {where:>{width}}  {why}")


def _annotate(lines: list[str], info: Any, fn: Any, marks: dict[int, Any], badge_w: int, prefix: str) -> list[tuple[str, str]]:
    """Print the traced function (`fn`, or none for a helper file) and every function of the file
    that ran, each line with its mark; return the "why" notes, their lines named `prefix` + line.
    Only lines the source has are read: a saved trace may name others (damaged, or hostile)."""
    marks = {ln: m for ln, m in marks.items() if 1 <= ln <= len(lines)}
    spans: list[tuple[int, int]] = []
    if info is not None:
        for f in info.functions:
            if f is fn or any(f.line <= ln <= f.end_line for ln in marks):
                spans.append((f.line, f.end_line))
        for ln in marks:  # marks outside every listed function (module-level lambdas...)
            if not any(a <= ln <= b for a, b in spans):
                spans.append((ln, ln))
    spans = [(max(a, 1), min(b, len(lines))) for a, b in spans if a <= len(lines) and b >= 1]
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
    num_w = len(str(max(b for _, b in merged)))
    shown = {ln: _mark(m, lines[ln - 1]) for ln, m in marks.items()}
    mark_w = max(6, *map(len, shown.values()))  # `eqn 1234` keeps the code in its column
    for i, (a, b) in enumerate(merged):
        if i:
            print(f"{'':>{mark_w + 1 + badge_w}} {'⋮':>{num_w}}")
        for ln in range(a, min(b, len(lines)) + 1):
            m = marks.get(ln)
            badge = m.badge if m is not None else ""
            print(f"{shown.get(ln, ''):<{mark_w}} {badge:<{badge_w}} {ln:>{num_w}}  {lines[ln - 1].rstrip()}".rstrip())
    notes: list[tuple[int, int, str]] = []
    for ln, m in sorted(marks.items()):
        if not m.why:
            continue
        if notes and notes[-1][2] == m.why and notes[-1][1] >= ln - 1 - _blank_run(lines, notes[-1][1], ln):
            notes[-1] = (notes[-1][0], ln, m.why)
        else:
            notes.append((ln, ln, m.why))
    return [(f"{prefix}{a}" if a == b else f"{prefix}{a}-{b}", why) for a, b, why in notes]


def _mark(m: Any, line: str) -> str:
    """A line's mark: its kind, its equations' count, and for a line that ran autodiff (`py ∇`) that
    its backward pass is there too, counted on the forward lines (JAX gives a transposed equation the
    location of the one it transposes)."""
    abbr = EXPLAIN_ABBR.get(m.kind, "?")
    if m.eqns:
        return f"{abbr} {m.eqns}"
    return f"{abbr} ∇" if abbr == "py" and _AUTODIFF.search(line) else abbr


def _blank_run(lines: list[str], after: int, before: int) -> int:
    """How many lines strictly between `after` and `before` are blank or comments."""
    return sum(1 for ln in range(after + 1, before) if not lines[ln - 1].strip() or lines[ln - 1].strip().startswith("#"))
