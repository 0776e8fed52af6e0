"""Reading a `jax.profiler` trace (the Perfetto/Chrome JSON it writes beside the xplane): each
compiled instruction's time per run, and how long the device was busy.

On an accelerator the profile has a device plane (process `/device:TPU:0`, thread `XLA Ops`, one
event per instruction with its `long_name`, and thread `XLA Modules`, one event per program run):
those are the device's own clocks, and they are all that is read there (the host's events of the
same names are the launches, not the work). The CPU backend has no such plane: its instructions
run on host threads, whose events are named as the instructions. No jax here: the fixtures
recorded on a TPU are read by the same code on a CPU-only machine."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DEVICE_PLANE = re.compile(r"/device:(?P<platform>[A-Z]+):(?P<id>\d+)")
OPS_THREAD = "XLA Ops"
MODULES_THREAD = "XLA Modules"
_LONG_NAME = re.compile(r"\s*%?(?P<name>[\w.\-]+)\s*=")


@dataclass(frozen=True, slots=True)
class ProfileReading:
    """What one profile says of a program run `runs` times."""

    op_times: dict[str, float] = field(default_factory=dict)  # seconds per run of each instruction (by HLO name)
    plane: str = ""  # the device plane read ("/device:TPU:0"); "" when the ops ran on host threads (the CPU)
    device_s: float = 0.0  # seconds per run the device was busy running the program (its module events); 0 on the host


def read_events(events: Iterable[dict[str, Any]], runs: int, device_id: int = 0) -> ProfileReading:
    """The reading of one trace's events (its `traceEvents`), with the times divided by `runs`.

    With a device plane, the one of device `device_id` (else the first) is read alone: its
    `XLA Ops` events by instruction and its `XLA Modules` events for the busy time. Without one,
    every complete event counts under its name (the caller keeps the names that are instructions)."""
    events = list(events)
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for e in events:
        if e.get("ph") != "M" or not isinstance(e.get("args"), dict):
            continue
        name = e["args"].get("name")
        if not isinstance(name, str):
            continue
        if e.get("name") == "process_name":
            processes[e.get("pid")] = name
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = name
    planes = {pid: m for pid, name in processes.items() if (m := DEVICE_PLANE.match(name))}
    per = max(runs, 1)
    if not planes:
        host: dict[str, float] = {}
        for e in _complete(events):
            host[e["name"]] = host.get(e["name"], 0.0) + _seconds(e) / per
        return ProfileReading(host)
    pid = next((p for p, m in planes.items() if int(m.group("id")) == device_id), next(iter(planes)))
    thread_names = {tid: name for (p, tid), name in threads.items() if p == pid}
    has_ops_thread = OPS_THREAD in thread_names.values()
    ops: dict[str, float] = {}
    modules = 0.0
    for e in _complete(events):
        if e.get("pid") != pid:
            continue
        thread = thread_names.get(e.get("tid"), "")
        if thread == MODULES_THREAD:
            modules += _seconds(e)
        elif thread == OPS_THREAD or (not has_ops_thread and thread != "Steps"):
            name = instruction_name(e)
            ops[name] = ops.get(name, 0.0) + _seconds(e) / per
    busy = modules / per if modules else sum(ops.values())
    return ProfileReading({k: ops[k] for k in sorted(ops)}, processes[pid], busy)


def instruction_name(event: dict[str, Any]) -> str:
    """The HLO instruction a device event ran: its `hlo_op` (GPU), the name its `long_name`
    defines (`%fusion.3 = f32[…] fusion(…)`, TPU), else the event's own name."""
    args = event.get("args")
    args = args if isinstance(args, dict) else {}
    op = args.get("hlo_op")
    if isinstance(op, str) and op:
        return op
    long_name = args.get("long_name")
    if isinstance(long_name, str) and (m := _LONG_NAME.match(long_name)):
        return m.group("name")
    return str(event["name"])


def _complete(events: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    return (e for e in events if e.get("ph") == "X" and isinstance(e.get("name"), str))


def _seconds(event: dict[str, Any]) -> float:
    """An event's duration: the device's own picoseconds where given, else the trace's microseconds."""
    args = event.get("args")
    if isinstance(args, dict):
        try:
            ps = float(args.get("device_duration_ps", "nan"))
            if ps == ps:
                return ps / 1e12
        except (TypeError, ValueError):
            pass
    try:
        return float(event.get("dur", 0.0)) / 1e6
    except (TypeError, ValueError):
        return 0.0
