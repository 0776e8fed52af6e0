"""Run-vs-eager data without JAX: tolerances, verdicts, JSON round trip, the terminal table."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jaxscope.analysis.runs.verdicts import default_tolerances, fmt_seconds, format_run, verdict
from jaxscope.schema.graph import SourceLoc
from jaxscope.schema.run import (
    DeviceInfo,
    InputLeaf,
    LeafComparison,
    NanOrigin,
    RunRequest,
    RunResult,
    run_result_from_jsonable,
)
from jaxscope.schema.trace import FunctionRef


def leaf(path: str = "", **kw: object) -> LeafComparison:
    base: dict = {"shape": (4,), "dtype": "float32", "size": 4, "max_abs": 0.0, "max_rel": 0.0, "max_ulp": 0, "rtol": 1e-5, "atol": 1e-6}
    base.update(kw)
    return LeafComparison(path, **base)


def sample_result(**kw: object) -> RunResult:
    cpu = DeviceInfo("cpu:0", "cpu", 0, "cpu", default=True)
    base: dict = {
        "request": RunRequest(FunctionRef("f", "/p/m.py"), "f32[4]", seed=3),
        "device": cpu,
        "devices": (cpu, DeviceInfo("cpu:1", "cpu", 1, "cpu")),
        "inputs": (InputLeaf("x", "f32[4]", ("0.1", "-1.2", "3", "4"), 4), InputLeaf("n", "static", ("2",))),
        "input_source": "seed 3",
        "compile_s": 0.05,
        "first_call_s": 0.001,
        "steady_s": 2e-5,
        "steady_runs": (2e-5, 3e-5, 1e-5),
        "eager_first_s": 0.2,
        "eager_s": 4e-4,
        "leaves": (leaf("['w']", max_abs=1.2e-7, max_rel=3e-7, max_ulp=2, n_diff=1, jit_preview=("1.5",), eager_preview=("1.5",)),),
    }
    base.update(kw)
    ok, text, expl = verdict(base["leaves"])
    return RunResult(**{"ok": ok, "verdict": text, "explanation": expl, **base})


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        ("float32", (1e-5, 1e-6)),
        ("float64", (1e-12, 1e-14)),
        ("bfloat16", (5e-2, 1e-2)),
        ("float16", (1e-2, 1e-3)),
        ("int32", (0.0, 0.0)),
        ("bool", (0.0, 0.0)),
        ("uint8", (0.0, 0.0)),
        ("float8_e4m3fn", (0.25, 0.1)),
    ],
)
def test_default_tolerances(dtype, expected):
    assert default_tolerances(dtype) == expected


def test_tolerances_loosen_with_precision():
    order = ["float64", "float32", "float16", "bfloat16", "float8_e5m2"]
    rtols = [default_tolerances(d)[0] for d in order]
    assert rtols == sorted(rtols)


def test_verdicts():
    ok, text, expl = verdict([leaf(), leaf("[1]")])
    assert ok and "exactly on all 2" in text and expl == ""
    ok, text, expl = verdict([leaf(n_diff=3, max_ulp=2, max_abs=1e-7)])
    assert ok and "within tolerance" in text and "up to 2 ULP" in text and "FMA" in expl
    ok, text, expl = verdict([leaf("['a']", allclose=False, n_diff=4, max_abs=0.1)])
    assert not ok and "DIFFER" in text and "out['a']" in text and "larger than reordering" in expl
    ok, text, _ = verdict([leaf(jit_nan=2, eager_nan=2)])
    assert not ok and "NaN in outputs: out (jit 2, eager 2)" in text
    ok, text, _ = verdict([leaf(jit_posinf=1, eager_posinf=1)])
    assert ok and "Inf in outputs" in text
    ok, text, _ = verdict([LeafComparison("[0]", kind="none")])
    assert ok and "no array outputs" in text


def test_json_round_trip_and_schema_guard():
    nan = NanOrigin("e1:0/e2", "log", SourceLoc("/p/m.py", 7, 4), nan=3, out_aval="f32[4]", in_avals=("f32[4]",))
    result = sample_result(first_nan=nan, nan_searched=True, warnings=("w",))
    back = RunResult.from_json(result.to_json())
    assert back == result
    data = json.loads(result.to_json())
    data["schema_version"] = 99
    with pytest.raises(ValueError, match="newer"):
        run_result_from_jsonable(data)


def test_format_run_table():
    nan = NanOrigin("e1", "log", SourceLoc("/p/m.py", 7, 4), nan=3, detail="its inputs are finite")
    text = format_run(sample_result(first_nan=nan, nan_searched=True))
    assert text.startswith("run /p/m.py::f(f32[4])")
    assert "device: cpu:0 (cpu)" in text and "other devices: cpu:1 (cpu)" in text
    assert "inputs (seed 3):" in text and "[0.1, -1.2, 3, 4]" in text and "= 2" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("out['w']"))
    assert row.split()[:7] == ["out['w']", "[4]", "float32", "1.2e-07", "3e-07", "2", "1/4"]
    assert "yes (rtol 1e-05, atol 1e-06)" in row
    assert "steady 20.0 µs (median of 3)" in text and "first run 200.00 ms" in text
    assert "OK: jit and eager agree within tolerance" in text and "FMA" in text
    assert "first NaN/Inf: e1 log at /p/m.py:7: its inputs are finite" in text


def test_format_non_array_rows_and_failure():
    leaves = (LeafComparison("[0]", kind="none", note="None (no array to compare)"), leaf("[1]", allclose=False, max_abs=0.5, n_diff=4))
    text = format_run(sample_result(leaves=leaves, nan_searched=True))
    assert "out[0]: None" in text and "FAIL: jit and eager DIFFER" in text
    assert "no equation produced NaN/Inf" in text


def test_fmt_seconds():
    assert fmt_seconds(2.5e-6) == "2.5 µs" and fmt_seconds(0.0125) == "12.50 ms" and fmt_seconds(3.0) == "3.00 s"


def test_core_run_modules_import_no_jax():
    code = (
        "import sys, jaxscope.schema.run, jaxscope.analysis.runs.verdicts, jaxscope.cli.run;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'numpy', 'PySide6'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
