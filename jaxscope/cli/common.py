"""What every `jaxscope` sub-command shares: the target arguments and the trace they ask for."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING

from jaxscope.schema.trace import TraceResult
from jaxscope.session import SessionError, trace

ARGS_HELP = (
    "the call's arguments in jaxpr notation, as in a Python call: "
    "'f32[8,128], {\"b\": f32[128]}, 3, training=True'. Array specs (also inside dicts, lists, tuples) "
    "are traced; Python literals are static. Default: the file's JAXSCOPE_ARGS entry for the function."
)


INPUTS_HELP = (
    "a maker: PATH.py::NAME or package.module:NAME, a function (of no arguments, or of the seed) that returns "
    "the example inputs: a tuple of arguments, a dict of keywords, or (args, kwargs). Any pytree: arrays, "
    "ShapeDtypeStructs, optax states, flax/equinox modules... Array leaves are traced, every other leaf is "
    "static. Default: the file's JAXSCOPE_INPUTS entry for the function (before JAXSCOPE_ARGS)."
)


if TYPE_CHECKING:
    from jaxscope.schema.trace_file import TraceDocument
    from jaxscope.stages import StageTarget


class CliError(SessionError):
    """Bad usage of a command (a bad option value, an unwritable output): its message and exit code."""


def output_file(text: str) -> str:
    """The `-o` argument type: a file name (`-o ''` wrote nothing and said nothing)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a file name (it is empty)")
    return text


def add_target(p: argparse.ArgumentParser) -> None:
    """The target and the options of every command that traces one."""
    p.add_argument("target", help="path/to/file.py::function, package.module:function, or a saved trace NAME.jaxscope")
    p.add_argument("--args", default=None, metavar="SPEC", help=ARGS_HELP)
    p.add_argument("--inputs", default=None, metavar="MAKER", help=INPUTS_HELP)
    p.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="the Python that runs your code, e.g. your project's .venv/bin/python (it needs jax; "
        "nothing of jaxscope). Default: JAXSCOPE_PYTHON, else jaxscope's own",
    )
    p.add_argument(
        "--x64",
        action="store_true",
        help="JAX's 64-bit mode (jax_enable_x64): f64/i64/u64/c128 stay 64-bit instead of being traced as 32-bit",
    )
    p.add_argument(
        "--device",
        default="",
        metavar="NAME",
        help="the device to trace, compile and run for, e.g. cpu:1 or gpu:0 (default: JAX's default device)",
    )
    p.add_argument(
        "--cpu-devices",
        type=int,
        default=None,
        metavar="N",
        help="simulate N CPU devices (XLA --xla_force_host_platform_device_count), e.g. for a program on a "
        "mesh; default: as XLA_FLAGS in the environment says",
    )
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="time limit for tracing (seconds)")
    p.add_argument("--debug", action="store_true", help="show full tracebacks and the worker's output")


@dataclass(frozen=True)
class TargetOptions:
    """The target a command names and how to trace it, typed once from its command line (`of`):
    what the commands' helpers take instead of the parser's namespace. A saved trace named as the
    target is read once (`saved`)."""

    target: str = ""
    args: str | None = None
    inputs: str | None = None
    python: str | None = None
    x64: bool = False
    device: str = ""
    cpu_devices: int | None = None
    timeout: float | None = None
    debug: bool = False
    backends: str = "all"  # (`run --backends cpu`: the worker hides the accelerators)

    @classmethod
    def of(cls, opts: argparse.Namespace) -> TargetOptions:
        """The options a command line gave (a command without one of them keeps its default)."""
        given = vars(opts)
        return cls(**{f.name: given[f.name] for f in fields(cls) if given.get(f.name) is not None})

    @cached_property
    def saved(self) -> TraceDocument | None:
        """The saved trace named as the target (None: a live target). The options that say how to
        trace do not apply to it: naming one is an error, not silently ignored."""
        from jaxscope.saved_traces import load

        return load(self.target) if self.names_saved() else None

    def names_saved(self) -> bool:
        """Whether the target is a saved trace; a CliError if options that say how to trace are given with it."""
        from jaxscope.saved_traces import is_document

        if not is_document(self.target):
            return False
        given = [f"--{name.replace('_', '-')}" for name in TRACE_OPTIONS if getattr(self, name) not in (None, False, "")]
        if given:
            raise CliError(
                f"{self.target} is a saved trace: {', '.join(given)} say{'s' if len(given) == 1 else ''} how to trace, "
                "and it is traced already (trace the function itself to change them)"
            )
        return True

    def env(self) -> dict[str, str]:
        """The worker's environment for --x64 and --cpu-devices (JAX reads both when it starts); without
        --cpu-devices, XLA_FLAGS stays as the environment has it."""
        import os

        from jaxscope.runtime.devices import device_env

        env = {"JAX_ENABLE_X64": "1"} if self.x64 else {}
        if self.debug:
            env["JAXSCOPE_DEBUG"] = "1"  # the worker says its memory cap
        try:
            env.update(device_env(self.cpu_devices, "" if self.backends == "all" else self.backends, os.environ))
        except ValueError as exc:
            raise CliError(f"--cpu-devices: {exc}") from None
        return env

    def trace(
        self,
        *,
        jaxpr_text: bool,
        record_flow: bool = False,
        diagnose: bool = True,
        tap: Callable[[bytes | None], None] | None = None,
    ) -> TraceResult:
        """`session.trace` of the target (its saved trace, if it names one); the trace's warnings
        (64-bit inputs narrowed, ...) go to stderr."""
        import sys

        from jaxscope.schema.flow import RECORDING_STOPPED

        if self.saved is not None:
            return self.saved.trace
        result = trace(
            self.target,
            self.args,
            inputs=self.inputs,
            timeout=self.timeout,
            debug=self.debug,
            jaxpr_text=jaxpr_text,
            record_flow=record_flow,
            diagnose=diagnose,
            tap=tap,
            python=self.python,
            env=self.env(),
            device=self.device,
        )
        for warning in result.warnings:
            if not warning.startswith(RECORDING_STOPPED):  # `explain` says that one itself
                print(f"jaxscope: warning: {warning}", file=sys.stderr)
        for found in result.diagnostics:
            if found.kind == "dead-code" and not record_flow:  # `explain` (which records the flow) lists it with the rest
                print(f"jaxscope: warning: {found.title}. {found.detail}", file=sys.stderr)
        return result

    def source_text(self, path: str) -> str:
        """A user file's text: the saved trace's copy when the target is one, else the file on disk
        (an OSError if it cannot be read)."""
        if self.saved is not None:
            text = self.saved.source(path)
            if text is None:
                raise FileNotFoundError(f"{path} was not saved in {self.target}")
            return text
        from jaxscope.schema.files import MAX_SOURCE_BYTES, read_text

        return read_text(path, MAX_SOURCE_BYTES)

    def stage(self) -> StageTarget:
        """The target as `jaxscope.stages` lowers it (its saved trace, if it names one)."""
        from jaxscope.stages import StageTarget

        return StageTarget(self.target, self.args, self.inputs, self.saved, self.device, self.timeout, self.debug, self.python, self.env())


TRACE_OPTIONS = ("args", "inputs", "python", "device", "cpu_devices", "x64", "timeout")


def warn(text: str) -> None:
    """A warning on stderr, as every command prints them."""
    import sys

    print(f"jaxscope: warning: {text}", file=sys.stderr)
