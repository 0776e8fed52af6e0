"""The worker environment that picks JAX's devices: simulated CPU device count and backends.

Both are read by XLA once, when the worker imports jax, so changing them means a new worker.
Only our own flag is replaced in `XLA_FLAGS`; whatever else the user set there is kept.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"
MAX_CPU_DEVICES = 64
PLATFORMS = ("", "cpu")  # "" = every backend JAX finds (GPU/TPU where present); "cpu" = CPU only


def xla_flags(current: str, cpu_devices: int) -> str:
    """`current` XLA_FLAGS with our device-count flag set to `cpu_devices` (removed for 1)."""
    kept = [flag for flag in shlex.split(current) if not flag.startswith(DEVICE_COUNT_FLAG)]
    if cpu_devices != 1:
        kept.append(f"{DEVICE_COUNT_FLAG}={cpu_devices}")
    return " ".join(shlex.quote(flag) for flag in kept)


def device_env(cpu_devices: int | None = 1, platforms: str = "", base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to give the worker on top of `base` (the app's own environment); `cpu_devices`
    None leaves XLA_FLAGS as `base` has it (a user's own device count is theirs)."""
    if cpu_devices is not None and not 1 <= cpu_devices <= MAX_CPU_DEVICES:
        raise ValueError(f"CPU device count must be between 1 and {MAX_CPU_DEVICES}, got {cpu_devices}")
    if platforms not in PLATFORMS:
        raise ValueError(f"backends must be one of {', '.join(repr(p) for p in PLATFORMS)}, got {platforms!r}")
    base = base or {}
    env = {"XLA_FLAGS": xla_flags(base.get("XLA_FLAGS", ""), cpu_devices)} if cpu_devices is not None else {}
    if platforms:
        env["JAX_PLATFORMS"] = platforms
    return env
