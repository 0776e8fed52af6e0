"""The texts of a program's stages and each equation's lines in them: the jaxpr, the StableHLO and
the compiled HLO, lowered by a worker or read from a saved trace. Shared by `jaxscope hlo`,
`links`, `cost` and `export` (`--links`, `--overlay time`, `--sharding`), so no command module
imports another, and by anything else that needs a stage's text for a target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from jaxscope.session import SessionError, resolve_call, worker_job

if TYPE_CHECKING:
    from jaxscope.schema.graph import Graph
    from jaxscope.schema.hlo import HloResult
    from jaxscope.schema.trace import TraceResult
    from jaxscope.schema.trace_file import TraceDocument


@dataclass(frozen=True)
class StageTarget:
    """What to lower and how: a target with its inputs (or the saved trace standing in for it), the
    device, a time limit, the worker's Python and environment."""

    target: str
    args: str | None = None
    inputs: str | None = None
    saved: TraceDocument | None = None
    device: str = ""
    timeout: float | None = None
    debug: bool = False
    python: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def lower(t: StageTarget, stage: str, profile: int = 0) -> HloResult:
    """The IR text of `t` at `stage` ("stablehlo" or "compiled"), from a worker or its saved trace;
    compiled and `profile` > 0, also each instruction's time over that many runs. SessionError
    (exit 2) when a saved trace lacks the stage or cannot be run."""
    from jaxscope.schema.codec import from_jsonable
    from jaxscope.schema.hlo import HloRequest, HloResult, Stage

    if t.saved is not None:
        found = t.saved.hlo(stage)
        if found is None:
            raise SessionError(f"{t.target} holds no {stage} text (saved with --no-compile, or lowering failed when it was saved)")
        if profile and found.run_s <= 0:
            raise SessionError(f"{t.target} holds no measured time: save it with `jaxscope save --time` where the program runs")
        return found
    ref, args, inputs = resolve_call(t.target, t.args, t.inputs)
    timeouts = {"lower": t.timeout, "compile": t.timeout} if t.timeout else None
    request = HloRequest(ref, args, cast("Stage", stage), inputs=inputs, profile=profile, device=t.device)
    return worker_job("hlo", request, lambda d: from_jsonable(HloResult, d), timeouts, t.debug, t.env, t.python)


def stage_lines(
    t: StageTarget, result: TraceResult, stage: str, warn: Callable[[str], None] = lambda _: None
) -> tuple[str, dict[str, list[int]]]:
    """The text `jaxscope jaxpr` (or `hlo --stage S`) prints for the target, and each equation's
    lines in it; `result` is the target's trace (with its jaxpr text for the jaxpr stage)."""
    from jaxscope.ir import hlo_marks, link_tables, linking

    if stage == "jaxpr":
        text = result.jaxpr_text.rstrip("\n") + "\n"
        links = linking.jaxpr_links(result.graph, text)
        if not links.exact:
            warn("this jaxpr's text did not line up with its equations; lines are by printed location")
        return text, link_tables.jaxpr_lines(result.graph, links)
    ir = lower(t, stage)
    if ir.exact is None:
        raise SessionError(f"no exact links for the {stage} text: this JAX ({ir.jax_version}) did not lower the marked program")
    exact = hlo_marks.from_wire(ir.exact)
    if stage == "compiled":
        from jaxscope.analysis.hlo_cost import merged_links

        exact = merged_links(ir.text, exact, ir.priced, result.graph)
    return ir.text, link_tables.ir_lines(exact)


def jaxpr_entry(graph: Graph, jaxpr_text: str) -> dict[str, Any]:
    """The jaxpr stage as an export carries it (`link_tables.export_entry`): the text and each
    equation's lines in it, for a caller that has the text but no command line (the API)."""
    from jaxscope.ir import link_tables, linking

    text = jaxpr_text.rstrip("\n") + "\n"
    return link_tables.export_entry(text, link_tables.jaxpr_lines(graph, linking.jaxpr_links(graph, text)))


def source_texts(graph: Graph) -> dict[str, str]:
    """The user's files the equations of a function traced in this process come from, for an HTML
    page's panel (`jaxscope.export` of a live function; a trace from a worker has its files'
    hashes, and `saved_traces.snapshot` keeps only those still as traced). Regular files, bounded;
    one gone or too big is left out, and the page says its lines are not there."""
    from jaxscope.ir.jaxpr_order import equations
    from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text

    out = {}
    for path in sorted({n.source.file for _, n in equations(graph) if n.source is not None}):
        try:
            out[path] = read_text(path, MAX_SOURCE_BYTES)
        except (OSError, ValueError):
            continue
    return out
