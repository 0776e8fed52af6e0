"""The `hlo` request: StableHLO with locations, or the optimized HLO with XLA's cost analysis."""

from __future__ import annotations

import time
from typing import Any

import jax

from jaxscope.ir.hlo_links import hlo_ops, hlo_ops_to_wire, ops_to_wire, stablehlo_ops
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.hlo import HloRequest, HloResult
from jaxscope.worker.trace import Phase, last_graph, prepare, runtime_failure, trace_failure


def run_hlo(request: HloRequest, phase: Phase) -> HloResult:
    """Lower (and compile) the function; failures become TraceError with the phase they hit."""
    prep = prepare(request.function, request.args, phase, request.inputs)
    timings: dict[str, float] = {}
    phase("lower")
    t0 = time.perf_counter()
    try:
        with gc_paused():  # as for the trace (`run_trace`): lowering traces again, and leaves no cycles
            lowered = prep.jit().lower(*prep.args, **prep.kwargs)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise trace_failure(exc, "lower") from None
    timings["lower"] = time.perf_counter() - t0
    if request.stage == "stablehlo":
        t1 = time.perf_counter()
        text = lowered.as_text(debug_info=True)
        timings["as_text"] = time.perf_counter() - t1
        return HloResult(request, text, timings=timings, jax_version=jax.__version__, ops=_op_map(request, text, timings))
    phase("compile")
    t2 = time.perf_counter()
    try:
        compiled = lowered.compile()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise runtime_failure(exc, "compile") from None
    timings["compile"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    text = compiled.as_text() or ""
    timings["as_text"] = time.perf_counter() - t3
    return HloResult(
        request, text, _numbers(_first(compiled.cost_analysis())), _memory(compiled), timings, jax.__version__,
        _op_map(request, text, timings),
    )


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
    names = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
             "generated_code_size_in_bytes", "host_temp_size_in_bytes")
    return {n: float(getattr(stats, n)) for n in names if isinstance(getattr(stats, n, None), (int, float))}
