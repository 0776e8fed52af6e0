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

RUN_SCHEMA_VERSION = 1


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
    per_equation: bool = False  # compare every top-level intermediate, jit vs eager (worker.replay)


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
