"""The `hlo` request: StableHLO with locations, or the optimized HLO with XLA's cost analysis."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import jax

from jaxscope.ir import hlo_marks
from jaxscope.ir.hlo_links import hlo_ops, hlo_ops_to_wire, ops_to_wire, stablehlo_ops
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.worker import jax_compat
from jaxscope.worker.profile import ProfileReading, read_events
from jaxscope.worker.program import MadeText, Program, executable, plain_lowering, program
from jaxscope.worker.trace import Phase, last_graph, runtime_failure
from jaxscope.worker.xla_cost import instruction_costs


def run_hlo(request: HloRequest, phase: Phase) -> HloResult:
    """Lower (and compile) the function; failures become TraceError with the phase they hit.

    The program is lowered a second time with each equation marked (`hlo_marks`), which gives
    every line of the text its own equations: StableHLO shows the plain lowering, matched line by
    line; the compiled text is the marked one, compiled once, with the marks stripped. The program
    and what was made of it are kept (`worker.program`): the next request of the same target
    (another stage, a profiled run) lowers and compiles nothing again."""
    p = program(request, phase)
    if request.stage == "stablehlo":
        made = p.stablehlo = p.stablehlo or _stablehlo_text(p)
        timings = {**p.timings, **made.seconds}
        return HloResult(
            request,
            made.text,
            timings=timings,
            jax_version=jax.__version__,
            ops=_op_map(request, made.text, timings),
            exact=made.exact,
        )
    if p.cost_before is None:
        p.cost_before = _lowered_cost(p.marked if p.marked is not None else plain_lowering(p))
    compiled = executable(p, phase)
    device = _device(request.device)
    made = p.compiled_text = p.compiled_text or _compiled_text(p, compiled, device)
    timings = {**p.timings, **made.seconds}
    reading, run_s = _profile(p.prep, request.profile, phase, int(device.id)) if request.profile > 0 else (ProfileReading(), 0.0)
    return HloResult(
        request,
        made.text,
        _numbers(_first(compiled.cost_analysis())),
        _memory(compiled),
        timings,
        jax.__version__,
        _op_map(request, made.text, timings),
        made.exact,
        p.cost_before,
        reading.op_times,
        run_s,
        jax_compat.input_shardings(compiled, p.traced.jaxpr),
        made.priced,
        f"{device.platform}:{device.id}",
        str(getattr(device, "device_kind", "")),
        reading.plane,
        reading.device_s,
    )


def _stablehlo_text(p: Program) -> MadeText:
    """The plain lowering's text, each line's equations read against the marked one's."""
    t = time.perf_counter()
    text = plain_lowering(p).as_text(debug_info=True)
    chains = hlo_marks.stablehlo_chains(text, p.marked.as_text(debug_info=True)) if p.marked is not None else None
    seconds = {"as_text": time.perf_counter() - t}
    return MadeText(text, _exact(chains, p.structure, seconds), None, seconds)


def _compiled_text(p: Program, compiled: Any, device: Any) -> MadeText:
    """The executable's text, its marks stripped, each line's equations read from them and each
    instruction priced by XLA's cost model on `device`."""
    t = time.perf_counter()
    raw = compiled.as_text() or ""
    text = hlo_marks.strip(raw)
    seconds = {"as_text": time.perf_counter() - t}
    chains = hlo_marks.compiled_chains(raw) if p.structure is not None else None
    t = time.perf_counter()
    # the raw text, marks and all: stripping a mark can leave a name HLO cannot parse (`%.6`); lines are the same
    priced = instruction_costs(raw, device, trips_by_while_line(chains, p.scans))
    seconds["price"] = time.perf_counter() - t
    return MadeText(text, _exact(chains, p.structure, seconds), priced, seconds)


def _device(name: str) -> Any:
    """The device the program was compiled for (its backend prices it)."""
    from jaxscope.worker.runs.inputs import list_devices, pick_device

    return pick_device(name, list_devices())[0] if name else jax.devices()[0]


def _profile(prep: Any, runs: int, phase: Phase, device_id: int) -> tuple[ProfileReading, float]:
    """Run the program `runs` times (after one warm run) under `jax.profiler` on the example inputs
    (the maker's, or generated as `run` makes them), and read each instruction's time from the
    trace (`worker.profile`): on an accelerator its device plane, on the CPU the host events named
    as the compiled module's instructions (the plain and the marked compile name them alike). A
    backend that records no per-op events gives none (said so, not guessed)."""
    import glob
    import gzip
    import json
    import shutil
    import statistics
    import tempfile

    from jaxscope.worker.runs.inputs import generate

    phase("profile")
    if prep.made is not None:
        made, args, kwargs = prep.made.concrete(0)
        prep = replace(prep, made=made)
    else:
        args, kwargs = generate(prep, 0)
    jitted = prep.jit(donate=False)  # run again and again with the same inputs
    try:
        jax.block_until_ready(jitted(*args, **kwargs))
        folder = tempfile.mkdtemp(prefix="jaxscope-profile-")
        times = []
        with jax.profiler.trace(folder, create_perfetto_trace=True):
            for _ in range(runs):
                t = time.perf_counter()
                jax.block_until_ready(jitted(*args, **kwargs))
                times.append(time.perf_counter() - t)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise runtime_failure(exc, "profile") from None
    events: list[dict[str, Any]] = []
    for path in glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            events += json.load(fh).get("traceEvents", [])
    shutil.rmtree(folder, ignore_errors=True)
    return read_events(events, runs, device_id), statistics.median(times)


def _lowered_cost(lowered: Any) -> dict[str, float]:
    """XLA's cost analysis of the program before XLA optimizes it: every op once, as the jaxpr has
    it (the compiled figure counts what fusion duplicated). The marks only rename: same figures."""
    try:
        return _numbers(_first(lowered.cost_analysis()))
    except Exception:  # a backend without it: the compiled figures still come
        return {}


def trips_by_while_line(chains: dict[int, list[hlo_marks.Chain]] | None, scans: dict[tuple[int, int], int]) -> dict[int, float]:
    """The compiled lines whose marks name one rolled scan alone (its while loop, or a line of the
    loop's own bookkeeping): that scan's length, for a while loop whose text gives no trip count."""
    out: dict[int, float] = {}
    for line, found in (chains or {}).items():
        owners = {chain[-1] for chain in found if chain}
        if len(owners) == 1 and (owner := next(iter(owners))) in scans:
            out[line] = float(scans[owner])
    return out


def _exact(
    chains: dict[int, list[hlo_marks.Chain]] | None, structure: hlo_marks.Structure | None, timings: dict[str, float]
) -> dict[str, Any] | None:
    if chains is None or structure is None:
        return None
    t = time.perf_counter()
    try:
        return hlo_marks.to_wire(hlo_marks.line_paths(chains, structure))
    finally:
        timings["exact"] = time.perf_counter() - t


def _op_map(request: HloRequest, text: str, timings: dict[str, float]) -> dict[str, Any] | None:
    """The text's op map (and a compiled text's fusions) against the graph the window shows (this
    worker's last trace, when it is of the same function and arguments): parsed here, the GUI
    process need not. None otherwise, or if parsing fails (the GUI then parses the text itself)."""
    graph = last_graph(request.function, request.args, request.inputs)
    if graph is None:
        return None
    t = time.perf_counter()
    try:
        with gc_paused():
            if request.stage == "stablehlo":
                return ops_to_wire(stablehlo_ops(graph, text))
            return hlo_ops_to_wire(*hlo_ops(graph, text))
    except Exception:  # only the head start is lost
        return None
    finally:
        timings["op_map"] = time.perf_counter() - t


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, (list, tuple)) and value else value  # older jax: one dict per device


def _numbers(mapping: Any) -> dict[str, float]:
    if not isinstance(mapping, dict):
        return {}
    out = {}
    for key, value in mapping.items():
        try:
            out[str(key)] = float(value)
        except (TypeError, ValueError):
            continue
    return dict(sorted(out.items()))


def _memory(compiled: Any) -> dict[str, float]:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # not every backend implements it
        return {}
    if stats is None:
        return {}
    names = (
        "argument_size_in_bytes",
        "output_size_in_bytes",
        "alias_size_in_bytes",
        "temp_size_in_bytes",
        "generated_code_size_in_bytes",
        "host_temp_size_in_bytes",
    )
    return {n: float(getattr(stats, n)) for n in names if isinstance(getattr(stats, n, None), (int, float))}
