"""The command line's target options, typed once (`cli.common.TargetOptions`, issue 61.2): what the
commands' helpers take instead of the parser's namespace. In process: nothing here needs a worker."""

from __future__ import annotations

import pathlib

import pytest

from jaxscope.cli.common import CliError, TargetOptions
from jaxscope.cli.main import build_parser

SAVED = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "mlp_loss.jaxscope"


def _of(*argv: str) -> TargetOptions:
    return TargetOptions.of(build_parser().parse_args(list(argv)))


def test_a_command_line_is_typed_once_with_each_commands_defaults():
    t = _of("export", "m.py::f", "-o", "g.svg", "--args", "f32[3]", "--x64", "--cpu-devices", "4", "--timeout", "9", "--device", "cpu:1")
    assert (t.target, t.args, t.inputs, t.x64, t.cpu_devices, t.timeout, t.device) == ("m.py::f", "f32[3]", None, True, 4, 9.0, "cpu:1")
    env = t.env()
    assert env["JAX_ENABLE_X64"] == "1" and "--xla_force_host_platform_device_count=4" in env["XLA_FLAGS"]
    run = _of("run", "m.py::f", "--backends", "cpu")
    assert run.backends == "cpu" and "JAX_ENABLE_X64" not in run.env()
    both = _of("diff", "a.py::f", "b.py::f", "--timeout", "3")  # no target option of its own: the defaults
    assert both == TargetOptions(timeout=3.0)
    with pytest.raises(CliError, match="--cpu-devices"):
        _of("jaxpr", "m.py::f", "--cpu-devices", "0").env()


def test_a_saved_trace_is_read_once_and_refuses_the_options_that_say_how_to_trace():
    t = _of("jaxpr", str(SAVED))
    doc = t.saved
    assert doc is not None and t.saved is doc  # read once
    assert t.trace(jaxpr_text=True) is doc.trace and t.stage().saved is doc
    path = next(iter(doc.sources))
    assert t.source_text(path) == doc.sources[path]
    with pytest.raises(FileNotFoundError, match="was not saved"):
        t.source_text("/nowhere/else.py")
    with pytest.raises(CliError, match=r"saved trace: --args, --x64 say how to trace"):
        _ = _of("jaxpr", str(SAVED), "--args", "f32[3]", "--x64").saved
    assert _of("jaxpr", "m.py::f").saved is None
