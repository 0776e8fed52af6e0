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
from jaxscope.worker.trace import Phase, last_graph, prepare, runtime_failure, trace_failure
from jaxscope.worker.xla_cost import instruction_costs


def run_hlo(request: HloRequest, phase: Phase) -> HloResult:
    """Lower (and compile) the function; failures become TraceError with the phase they hit.

    The program is lowered a second time with each equation marked (`hlo_marks`), which gives
    every line of the text its own equations: StableHLO shows the plain lowering, matched line by
    line; the compiled text is the marked one, compiled once, with the marks stripped."""
    prep = prepare(request.function, request.args, phase, request.inputs)
    timings: dict[str, float] = {}
    phase("lower")
    t0 = time.perf_counter()
    try:
        with gc_paused():  # as for the trace (`run_trace`): tracing and lowering leave no cycles
            traced = prep.jit().trace(*prep.args, **prep.kwargs)
            lowered = traced.lower() if request.stage == "stablehlo" else None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise trace_failure(exc, "lower") from None
    t1 = time.perf_counter()
    scans: dict[tuple[int, int], int] = {}
    marked, structure = _marked_lowering(traced, scans)
    timings["marks"] = time.perf_counter() - t1
    if request.stage == "stablehlo":
        timings["lower"] = t1 - t0
        assert lowered is not None
        t2 = time.perf_counter()
        text = lowered.as_text(debug_info=True)
        chains = hlo_marks.stablehlo_chains(text, marked.as_text(debug_info=True)) if marked is not None else None
        timings["as_text"] = time.perf_counter() - t2
        return HloResult(
            request,
            text,
            timings=timings,
            jax_version=jax.__version__,
            ops=_op_map(request, text, timings),
            exact=_exact(chains, structure, timings),
        )
    if marked is None:
        try:
            marked = traced.lower()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise trace_failure(exc, "lower") from None
    timings["lower"] = time.perf_counter() - t0 - timings["marks"]
    before = _lowered_cost(marked)
    phase("compile")
    t2 = time.perf_counter()
    try:
        compiled = marked.compile()
    except Exception:  # XLA's own error, from the plain program: the marks are not to blame
        compiled, structure = _compile_plain(traced), None
    timings["compile"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    raw = compiled.as_text() or ""
    text = hlo_marks.strip(raw)
    timings["as_text"] = time.perf_counter() - t3
    chains = hlo_marks.compiled_chains(raw) if structure is not None else None
    t4 = time.perf_counter()
    # the raw text, marks and all: stripping a mark can leave a name HLO cannot parse (`%.6`); lines are the same
    device = _device(request.device)
    priced = instruction_costs(raw, device, _loop_trips(chains, scans))
    timings["price"] = time.perf_counter() - t4
    reading, run_s = _profile(prep, request.profile, phase, int(device.id)) if request.profile > 0 else (ProfileReading(), 0.0)
    return HloResult(
        request,
        text,
        _numbers(_first(compiled.cost_analysis())),
        _memory(compiled),
        timings,
        jax.__version__,
        _op_map(request, text, timings),
        _exact(chains, structure, timings),
        before,
        reading.op_times,
        run_s,
        jax_compat.input_shardings(compiled, traced.jaxpr),
        priced,
        f"{device.platform}:{device.id}",
        str(getattr(device, "device_kind", "")),
        reading.plane,
        reading.device_s,
    )


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


def _compile_plain(traced: Any) -> Any:
    try:
        return traced.lower().compile()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise runtime_failure(exc, "compile") from None


def _marked_lowering(traced: Any, scans: dict[tuple[int, int], int]) -> tuple[Any, hlo_marks.Structure | None]:
    """The program lowered with every equation marked, and its body structure; (None, None) if
    that fails (a JAX whose internals moved): the text is then linked by source location only."""
    try:
        with gc_paused():
            closed, structure = mark_equations(traced.jaxpr, scans)
            return jax_compat.with_jaxpr(traced, closed).lower(), structure
    except Exception:
        return None, None


def mark_equations(closed: Any, scans: dict[tuple[int, int], int] | None = None) -> tuple[Any, dict[int, dict[int, tuple[int, ...]]]]:
    """A copy of `closed` whose equations' name stacks end in their mark, and its structure; each
    rolled scan's length by its mark into `scans` (the trip count of the while loop it becomes).

    Bodies are numbered in the order `to_graph` numbers them (first visit, depth first, sub-jaxprs
    in `jax_compat.subjaxprs` order), so a mark names the graph's own ``b{n}``/``e{i}``. A body
    used twice is marked once and stays one object, so JAX lowers it to one function as before."""
    numbers: dict[int, int] = {}
    done: dict[int, Any] = {}  # id(open jaxpr) -> its marked copy
    closed_done: dict[int, Any] = {}  # id(ClosedJaxpr) -> its marked copy: shared bodies stay shared
    keep: list[Any] = []  # ids stay unique only while the objects live
    structure: dict[int, dict[int, tuple[int, ...]]] = {}

    def swap(value: Any) -> Any:
        if isinstance(value, jax_compat.ClosedJaxpr):
            got = closed_done.get(id(value))
            if got is None:
                keep.append(value)
                got = closed_done[id(value)] = jax_compat.ClosedJaxpr(done[id(value.jaxpr)], value.consts)
            return got
        if isinstance(value, jax_compat.Jaxpr):
            return done[id(value)]
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*map(swap, value))
        if isinstance(value, (tuple, list)):
            return type(value)(map(swap, value))
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    def mark(jaxpr: Any) -> None:
        if id(jaxpr) in numbers:
            return
        body = numbers[id(jaxpr)] = len(numbers)
        keep.append(jaxpr)
        eqns = structure[body] = {}
        new = []
        for i, eqn in enumerate(jaxpr.eqns):
            subs = jax_compat.subjaxprs(eqn.params)
            for _path, sub, _consts in subs:
                mark(sub)
            eqns[i] = tuple(numbers[id(sub)] for _path, sub, _consts in subs)
            if scans is not None and eqn.primitive.name == "scan" and eqn.params.get("unroll", 1) == 1:
                scans[(body, i)] = int(eqn.params["length"])
            params = {k: swap(v) for k, v in eqn.params.items()} if subs else eqn.params
            info = eqn.source_info
            stack = info.name_stack.extend(hlo_marks.mark_name(body, i))
            new.append(eqn.replace(params=params, source_info=info.replace(name_stack=stack)))
        done[id(jaxpr)] = jaxpr.replace(eqns=new)

    mark(closed.jaxpr)
    return jax_compat.ClosedJaxpr(done[id(closed.jaxpr)], closed.consts), structure


def _loop_trips(chains: dict[int, list[hlo_marks.Chain]] | None, scans: dict[tuple[int, int], int]) -> dict[int, float]:
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
