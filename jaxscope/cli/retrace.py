"""`jaxscope retrace`: would jit trace the function again for other arguments, and why."""

from __future__ import annotations

import argparse
from typing import Any

from jaxscope.cli.common import CliError, TargetOptions, add_target
from jaxscope.session import resolve_call, worker_job


def add_parser(sub: Any) -> None:
    p = sub.add_parser("retrace", help="would jit trace the function again for other arguments? and why")
    add_target(p)
    p.add_argument("--vs", required=True, metavar="SPEC", help="the second call's arguments, e.g. 'f32[16,4], use_bias=False'")
    p.add_argument("--json", action="store_true", help="print the verdict and reasons as JSON")
    p.add_argument(
        "--diff", action="store_true", help="also trace both calls and show the difference, equation by equation (as `jaxscope diff`)"
    )


def run(opts: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from jaxscope.analysis.retrace import RetraceRequest, RetraceResult
    from jaxscope.schema.codec import from_jsonable
    from jaxscope.targets import argspec

    target = TargetOptions.of(opts)
    ref, before, inputs = resolve_call(target.target, target.args, target.inputs)
    if inputs:
        raise CliError(
            "retrace compares two argument specs (--args and --vs); a maker's inputs are not compared yet: give the first call as --args"
        )
    try:
        argspec.parse_call(opts.vs)
    except argspec.SpecError as exc:
        raise CliError(f"bad --vs:\n{exc}") from None
    timeouts = {"trace": target.timeout} if target.timeout else None
    request = RetraceRequest(ref, before, opts.vs)
    result = worker_job("retrace", request, lambda d: from_jsonable(RetraceResult, d), timeouts, target.debug, target.env(), target.python)
    if opts.json:
        print(json.dumps(asdict(result), sort_keys=True, indent=1))
    else:
        print(result.summary())
    if opts.diff:
        _difference(target, before, opts.vs)
    return 0


def _difference(target: TargetOptions, before: str, vs: str) -> None:
    """Both calls traced (one worker) and diffed."""
    from jaxscope.analysis.diff_view import report
    from jaxscope.analysis.trace_diff import diff
    from jaxscope.session import close_soon, one_off_client, trace

    client = one_off_client({"trace": target.timeout} if target.timeout else None, target.python, target.env())
    try:
        a, b = (trace(target.target, call, debug=target.debug, diagnose=False, client=client) for call in (before, vs))
    finally:
        close_soon(client)
    found = diff(a.graph, b.graph)
    print()
    print("\n".join(report(a.graph, b.graph, found, (f"({before})", f"({vs})"))))
