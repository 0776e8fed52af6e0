"""What a profiled run's clocks mean: how much of the step the device was busy (host-bound or
device-bound), and the FLOP/s a row of the program achieved against the chip's peak.

The figures come from the profile (`HloResult.run_s`, `device_s`, `op_times`) and XLA's prices;
the peaks are the vendors' published dense bf16 rates, for the chips whose kind JAX names."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxscope.schema.hlo import HloResult

# device_kind (as JAX names it) -> dense bf16 FLOP/s: the vendor's datasheet figure per chip
PEAK_FLOPS = {
    "TPU v4": 275e12,
    "TPU v5 lite": 197e12,  # v5e
    "TPU v5": 459e12,  # v5p
    "TPU v5p": 459e12,
    "TPU v6 lite": 918e12,  # v6e (Trillium)
    "NVIDIA H100 80GB HBM3": 989e12,
    "NVIDIA A100-SXM4-40GB": 312e12,
    "NVIDIA A100-SXM4-80GB": 312e12,
}
HOST_BOUND = 0.5  # below this share of the step busy, the device waits on the host


def peak_flops(kind: str) -> float:
    """The chip's dense bf16 peak (0 when not known: then no share of it is claimed)."""
    return PEAK_FLOPS.get(kind, 0.0)


def busy_seconds(xla: HloResult, seen: float) -> float:
    """Seconds per run the device spent on the program: its module events on an accelerator, the
    named instructions' time on the CPU (`seen`)."""
    return xla.device_s if xla.plane else seen


def busy_share(xla: HloResult, seen: float) -> float:
    """The share of the median run's wall time the device spent on the program (`busy_seconds`)."""
    return busy_seconds(xla, seen) / xla.run_s if xla.run_s > 0 else 0.0


def bound(share: float) -> str:
    """What a busy share means: "host-bound" (the device waits on the host) or "device-bound"."""
    return "host-bound" if share < HOST_BOUND else "device-bound"


def busy_line(xla: HloResult, seen: float, runs: int) -> str:
    """One sentence of what the profile measured: the step's wall time, how much of it the device
    was busy, and what that means ("host-bound — dispatch and Python around the step")."""
    wall = f"{1e3 * xla.run_s:.3f} ms per run (median of {runs}, after a warm run)"
    where = f"{xla.device_kind or xla.device}, {xla.plane}" if xla.plane else f"{xla.device or 'cpu'}, ops on host threads"
    if xla.plane and xla.device_s <= 0 and seen <= 0:
        return f"measured: {wall}; the profile's device plane {xla.plane} timed none of the program's instructions"
    if not xla.plane and seen <= 0:
        return f"measured: {wall}; this backend's profile names none of the program's instructions: no per-op times (not guessed)"
    share = busy_share(xla, seen)
    who = "device busy" if xla.plane else "XLA's ops busy"
    head = f"measured: {who} {100 * share:.1f} % of {wall} ({1e3 * busy_seconds(xla, seen):.3f} ms; {where}): {bound(share)}"
    if share < HOST_BOUND:
        return head + " — dispatch and Python around the step take the rest; a bigger batch or more steps per call fill it"
    return head + " — the program's own work is the step's time"


def achieved(flops: float, seconds: float, kind: str) -> str:
    """`12.3 TFLOP/s (6 % of peak)`: a row's FLOPs over its measured seconds ("" with no time)."""
    if seconds <= 0 or flops <= 0:
        return ""
    per_s = flops / seconds
    text = rate(per_s)
    peak = peak_flops(kind)
    return f"{text} ({100 * per_s / peak:.1f} % of peak)" if peak else text


def rate(per_s: float) -> str:
    """`197 TFLOP/s`."""
    for unit, scale in (("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)):
        if per_s >= scale:
            return f"{per_s / scale:.3g} {unit}"
    return f"{per_s:.3g} FLOP/s"
