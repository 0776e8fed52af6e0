"""What XLA gets and what it makes of it, as plain data: the IR texts and XLA's cost estimates.

Lowering (StableHLO) takes about as long as tracing; compiling can take minutes on big unrolled
programs, so the two are separate requests and the app shows StableHLO while XLA compiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from jaxscope.schema.trace import FunctionRef

Stage = Literal["stablehlo", "compiled"]


@dataclass(frozen=True, slots=True)
class HloRequest:
    """Lower (and for "compiled", compile) `function` for the abstract `args`."""

    function: FunctionRef
    args: str = ""
    stage: Stage = "stablehlo"
    inputs: str = ""  # a maker, as TraceRequest.inputs
    profile: int = 0  # compiled: also run it this many times under the profiler (`HloResult.op_times`)
    device: str = ""  # lower and compile for this device ("gpu:0"; "" JAX's default)


@dataclass(frozen=True, slots=True)
class InstructionCosts:
    """The compiled program priced by XLA's own cost model, instruction by instruction
    (`worker.xla_cost`): each row (text line, flops, transcendentals, bytes accessed, runs of its
    computation per program run), on the backend it was compiled for."""

    rows: tuple[tuple[int, float, float, float, float], ...] = ()
    opcodes: tuple[str, ...] = ()  # each row's instruction opcode ("dot", "fusion", "convolution")
    # (operand line, user line) of the instructions of the computations that run as such: an
    # instruction no equation named (XLA dropped its metadata) is credited through its neighbours
    edges: tuple[tuple[int, int], ...] = ()
    backend: str = ""  # "cpu", "tpu", "gpu": whose cost model priced it
    unknown_trips: int = 0  # while loops whose trip count XLA did not know (their bodies counted once)
    failures: tuple[str, ...] = ()  # instructions XLA would not price alone (with why)
    model: str = ""  # whose cost model priced them when not the backend's own ("cpu": a TPU's plugin prices none alone)


@dataclass(frozen=True, slots=True)
class HloResult:
    """One IR text; for "compiled", XLA's cost and memory analysis (empty where XLA gives none)."""

    request: HloRequest
    text: str
    cost: dict[str, float] = field(default_factory=dict)  # flops, transcendentals, bytes accessed, ...
    memory: dict[str, float] = field(default_factory=dict)  # argument/output/temp/generated code bytes
    timings: dict[str, float] = field(default_factory=dict)  # lower, as_text, compile
    jax_version: str = ""
    ops: dict[str, Any] | None = None  # the text's op map (`hlo_links.ops_to_wire`; compiled: `hlo_ops_to_wire`), if made
    exact: dict[str, Any] | None = None  # each line's own equations (`hlo_marks.to_wire`); None: linked by location only
    lowered_cost: dict[str, float] = field(default_factory=dict)  # compiled: XLA's cost analysis before optimizing
    op_times: dict[str, float] = field(default_factory=dict)  # profiled: seconds per run of each instruction the profile named
    run_s: float = 0.0  # profiled: seconds per run of the whole program (the median run)
    # compiled: each argument's sharding as XLA prints it, by name (jax 0.12 no longer writes them into the text)
    shardings: dict[str, str] = field(default_factory=dict)
    priced: InstructionCosts | None = None  # compiled: each instruction as XLA's cost model prices it
    device: str = ""  # compiled: the device it was compiled for ("tpu:0")
    device_kind: str = ""  # and its kind, as JAX names it ("TPU v5 lite", "cpu")
    plane: str = ""  # profiled: the profile's device plane that timed it ("/device:TPU:0"); "" host threads (the CPU)
    device_s: float = 0.0  # profiled on an accelerator: seconds per run the device was busy with the program

    def summary(self) -> str:
        """One line of the figures people look at first."""
        parts = []
        for key, label in (("flops", "flops"), ("transcendentals", "transcendentals"), ("bytes accessed", "bytes accessed")):
            if key in self.cost:
                parts.append(f"{label} {_num(self.cost[key])}")
        if parts:  # not the Cost pane's per-primitive count: XLA's, of this text (fused, simplified)
            parts[0] = f"XLA's count: {parts[0]}"
        for key, label in (
            ("argument_size_in_bytes", "args"),
            ("output_size_in_bytes", "out"),
            ("temp_size_in_bytes", "temp"),
            ("generated_code_size_in_bytes", "code"),
        ):
            if key in self.memory:
                parts.append(f"{label} {_bytes(self.memory[key])}")
        if "compile" in self.timings:
            parts.append(f"compiled in {self.timings['compile']:.2f} s")
        elif "lower" in self.timings:
            parts.append(f"lowered in {self.timings['lower']:.2f} s")
        return ", ".join(parts)


def _num(v: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


def _bytes(v: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(v) >= scale:
            return f"{v / scale:.1f} {unit}"
    return f"{int(v)} B"
