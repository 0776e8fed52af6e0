"""Run vs eager: the request and the result of running a function jitted and eagerly, as plain data.

The worker runs the function jitted on one device and op by op under `jax.disable_jit()` with the
same inputs, then compares the outputs leaf by leaf. Everything here is JSON-safe: floats are
finite or None (a NaN error would not survive strict JSON), values are previewed as strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jaxscope.schema.codec import dumps, from_jsonable
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.trace import FunctionRef, InputLeaf

RUN_SCHEMA_VERSION = 2  # 2: reference runs, evidence and causes (a version-1 result reads with none)

PRECISIONS = ("default", "high", "highest")  # jax.default_matmul_precision's names
F64 = "f64"  # RunRequest.reference: the program in float64 on the CPU


@dataclass(frozen=True, slots=True)
class RunRequest:
    """Run `function` on `args` (call-argument text) jitted on `device` and eagerly; compare."""

    function: FunctionRef
    args: str = ""
    inputs: str = ""  # a maker (see TraceRequest.inputs): its values run instead of generated ones
    device: str = ""  # "cpu:0", "gpu:1", or a platform ("gpu"); "" = JAX's default device
    seed: int = 0
    repeats: int = 10  # steady-state jitted runs (median reported)
    rtol: float | None = None  # None = default for each leaf's dtype (compare_text.default_tolerances)
    atol: float | None = None
    find_nan: bool = False  # search for the first NaN/Inf equation even if the outputs are finite
    per_equation: bool = False  # compare every top-level intermediate, jit vs eager (worker.runs.replay)
    reference: str = ""  # "" none asked; F64 (float64 on the CPU) or a device ("cpu", "gpu:1")
    precision: str = ""  # "" JAX's default, or one of PRECISIONS for every matmul and convolution
    evidence: bool = True  # on a difference beyond tolerance, run what names its cause (worker.runs.evidence)


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """One device of the worker's JAX: `name` ("cpu:0") is what RunRequest.device accepts."""

    name: str
    platform: str
    id: int
    kind: str = ""
    process_index: int = 0
    bytes_limit: int | None = None  # from device.memory_stats(), where the backend has them
    bytes_in_use: int | None = None
    default: bool = False


@dataclass(frozen=True, slots=True)
class ReferenceCheck:
    """One output leaf against a reference run: how far jit and eager each are from it.

    RMSE is the root of the mean squared difference over positions finite in all three (as
    `torch._dynamo.utils.same` measures against its float64 reference)."""

    jit_rmse: float | None = None
    eager_rmse: float | None = None
    jit_max_abs: float | None = None
    eager_max_abs: float | None = None
    reference_max: float | None = None  # the largest |value| of the reference leaf
    dtype: str = ""  # the reference's dtype ("float64"; the program's own where it casts explicitly)
    preview: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LeafComparison:
    """One output leaf, jitted vs eager. Errors are over positions finite in both (None: not computable)."""

    path: str  # jax.tree_util.keystr of the leaf, e.g. "['w']" or "[0]"; "" for a lone array
    kind: str = "array"  # "array", "none" (a None output), "other" (not an array), "missing"
    shape: tuple[int, ...] = ()
    dtype: str = ""  # the jitted output's dtype, e.g. "float32"
    size: int = 0
    max_abs: float | None = None
    max_rel: float | None = None  # relative to the eager value, denominator guarded by the dtype's tiny
    max_ulp: int | None = None  # float dtypes only
    n_diff: int = 0  # elements that differ bitwise (NaN == NaN)
    worst_index: tuple[int, ...] = ()  # where max_abs occurs
    nonfinite_mismatch: int = 0  # positions NaN/Inf in one but not (the same way) in the other
    allclose: bool = True
    rtol: float = 0.0
    atol: float = 0.0
    jit_nan: int = 0
    jit_posinf: int = 0
    jit_neginf: int = 0
    eager_nan: int = 0
    eager_posinf: int = 0
    eager_neginf: int = 0
    jit_preview: tuple[str, ...] = ()
    eager_preview: tuple[str, ...] = ()
    note: str = ""
    reference: ReferenceCheck | None = None  # against the float64 reference, where one ran
    compute: str = ""  # the least precise float dtype on this output's way (its tolerance's dtype)

    @property
    def has_nan(self) -> bool:
        return bool(self.jit_nan or self.eager_nan)

    @property
    def nonfinite(self) -> bool:
        return bool(self.jit_nan or self.jit_posinf or self.jit_neginf or self.eager_nan or self.eager_posinf or self.eager_neginf)

    @property
    def exact(self) -> bool:
        return self.allclose and self.n_diff == 0 and self.nonfinite_mismatch == 0


@dataclass(frozen=True, slots=True)
class NanOrigin:
    """The first equation whose output is NaN/Inf while its inputs were finite (eager, one by one)."""

    path: str  # graph node path: "e4", or "e2:0/e1" inside a nested jit; "in0"/"c1" for an input/constant
    primitive: str = ""
    source: SourceLoc | None = None
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    out_aval: str = ""
    in_avals: tuple[str, ...] = ()
    detail: str = ""


@dataclass(frozen=True, slots=True)
class EqnDivergence:
    """One top-level equation's output, jitted vs eager: where the difference starts and grows."""

    path: str  # graph node path "e4"
    primitive: str
    source: SourceLoc | None
    aval: str
    max_abs: float
    max_rel: float
    nonfinite_mismatch: int = 0  # positions NaN/Inf in one and not the other
    jit_preview: tuple[str, ...] = ()  # the first few values of each, for the node the user clicks
    eager_preview: tuple[str, ...] = ()
    note: str = ""  # what the evidence says of it: "cancels: 16 digits", "trace-time: changed on a second trace"


@dataclass(frozen=True, slots=True)
class Site:
    """An equation named as evidence: its graph path, primitive, line, what it showed, what it feeds."""

    path: str  # graph node path: "e4", "e2:0/e1"; "c3" for a captured constant
    primitive: str = ""
    source: SourceLoc | None = None
    detail: str = ""  # e.g. "9.1e-18 in float64 against terms of 0.31: 16 digits cancel"
    feeds: tuple[str, ...] = ()  # the output leaf paths downstream of it


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the worker ran and measured to name the cause of a difference (worker.runs.evidence).

    Each part is empty when it was not run; `runs` says what ran, `failures` what could not."""

    runs: tuple[str, ...] = ()  # "a float64 reference of the traced program on cpu:0", ...
    reference: str = ""  # what LeafComparison.reference is measured against
    replay_differs: tuple[str, ...] = ()  # outputs where eager Python differs from the traced program replayed op by op
    replay_detail: tuple[str, ...] = ()  # one line per such output: the two distances
    retrace_sites: tuple[Site, ...] = ()  # where a second trace of the same call gave another program
    trace_calls: tuple[Site, ...] = ()  # the host's random numbers or clock read, state changed, while tracing
    cancellations: tuple[Site, ...] = ()  # equations whose float64 result cancels: |result| << sum of |terms|
    highest: tuple[LeafComparison, ...] = ()  # jit vs eager with every matmul at precision highest
    matmuls: tuple[Site, ...] = ()  # the dot_generals and convolutions (precision's evidence)
    transcendentals: tuple[Site, ...] = ()  # exp, log, tanh, ... (device arithmetic's evidence)
    device: str = ""  # the reference device, for `device_leaves`
    device_leaves: tuple[LeafComparison, ...] = ()  # jit on the run's device vs jit on `device`
    device_highest: tuple[LeafComparison, ...] = ()  # the same with every matmul at precision highest
    failures: tuple[str, ...] = ()


CAUSES = ("trace-time", "precision", "noise", "device", "unexplained")


@dataclass(frozen=True, slots=True)
class Cause:
    """Why some outputs differ, with its evidence (analysis.runs.causes.judge).

    `explained` differences (rounding noise, matmul precision) are accepted: the run is OK; a
    trace-time, device-arithmetic or unexplained difference fails it."""

    kind: str  # one of CAUSES
    explained: bool
    outputs: tuple[str, ...]  # output leaf paths
    summary: str
    evidence: tuple[str, ...] = ()
    sites: tuple[Site, ...] = ()
    fix: str = ""
    between: str = "jit and eager"  # or "cpu:0 and gpu:0" for a device reference


@dataclass(frozen=True, slots=True)
class RunResult:
    """Times, per-leaf comparison and verdict of one run request."""

    request: RunRequest
    device: DeviceInfo | None = None
    devices: tuple[DeviceInfo, ...] = ()
    inputs: tuple[InputLeaf, ...] = ()
    input_source: str = ""  # "seed 0", or the maker's label: "make_inputs() in train.py"
    trace_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0
    first_call_s: float = 0.0
    steady_s: float = 0.0  # median of steady_runs
    steady_runs: tuple[float, ...] = ()
    eager_first_s: float = 0.0  # includes compiling each primitive once
    eager_s: float = 0.0  # a warm eager run (median of a few when fast)
    leaves: tuple[LeafComparison, ...] = ()
    ok: bool = True  # every leaf allclose and no NaN anywhere
    verdict: str = ""
    explanation: str = ""  # why small differences are expected (or what else to check)
    first_nan: NanOrigin | None = None
    nan_searched: bool = False
    divergence: tuple[EqnDivergence, ...] = ()  # with RunRequest.per_equation
    evidence: Evidence | None = None
    causes: tuple[Cause, ...] = ()
    inputs_made: str = ""  # where the inputs were made and placed: "on the host (cpu:0), placed on gpu:0"
    warnings: tuple[str, ...] = ()
    jax_version: str = ""
    schema_version: int = RUN_SCHEMA_VERSION

    def to_json(self) -> str:
        return dumps(self)

    @staticmethod
    def from_json(text: str | bytes) -> RunResult:
        return run_result_from_jsonable(json.loads(text))


def run_result_from_jsonable(data: dict[str, Any]) -> RunResult:
    """Rebuild a RunResult (the decoder for `WorkerClient.submit("run", ...)`), refusing newer schemas."""
    version = data.get("schema_version", 0)
    if type(version) is not int:
        raise ValueError(f"run result schema {str(version)[:20]!r} is not a schema version (a whole number)")
    if version > RUN_SCHEMA_VERSION:
        raise ValueError(f"run result schema {version} is newer than supported ({RUN_SCHEMA_VERSION})")
    result: RunResult = from_jsonable(RunResult, data)
    return result
