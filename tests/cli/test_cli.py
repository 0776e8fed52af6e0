"""`jaxscope` end to end (in this process where a child proves nothing more): export, determinism, jaxpr, list, and clean errors."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import cli_in_process as jaxscope
from tests.conftest import run_cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASICS = str(ROOT / "examples" / "basics.py")
CASES = ROOT / "tests" / "faults" / "cases"


def test_export_svg_is_valid_and_deterministic(tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    first = jaxscope("export", f"{BASICS}::predict", "-o", str(a))
    assert first.returncode == 0, first.stderr
    assert "wrote" in first.stdout
    second = run_cli("export", f"{BASICS}::predict", "-o", str(b))  # another process: other string hashes
    assert second.returncode == 0, second.stderr
    assert a.read_bytes() == b.read_bytes()
    root = ET.fromstring(a.read_text())
    assert root.tag.endswith("svg")
    text = " ".join(t for t in root.itertext())
    for word in ("dot_general", "tanh", "jit(layer)", "f32[16,8]"):
        assert word in text


def test_export_other_formats(tmp_path):
    out = jaxscope("export", f"{BASICS}::loss", "-o", str(tmp_path / "g.json"), "--collapse", "0")
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "g.json").read_text())
    assert {"graph", "layout", "schema_version"} <= set(data)
    out = jaxscope("export", f"{BASICS}::predict", "-o", str(tmp_path / "g.dot"), "--theme", "dark")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    out = jaxscope("export", f"{BASICS}::predict", "-o", str(tmp_path / "g.png"), "--dpi", "144")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


LONG_EDGES_SOURCE = """
import jax.numpy as jnp


def f(x):
    kept, h = [], x
    for _ in range(100):
        h = jnp.sin(h)
        kept.append(h)
    for early in kept:  # each value also read at the very end: 100 edges reaching far down
        h = h + early
    return h
"""


def test_export_draws_many_long_edges_as_their_ends_unless_asked_whole(tmp_path):
    source = tmp_path / "long.py"
    source.write_text(LONG_EDGES_SOURCE)
    drawn = {}
    for mode in ("auto", "whole"):
        out = tmp_path / f"{mode}.svg"
        done = jaxscope("export", f"{source}::f", "--args", "f32[4]", "-o", str(out), "--long-edges", mode)
        assert done.returncode == 0, done.stderr
        ns = "{http://www.w3.org/2000/svg}"
        groups = [g for g in ET.fromstring(out.read_text()).iter(ns + "g") if "edge" in (g.get("class") or "").split()]
        drawn[mode] = sum(g.find(ns + "path").get("d").count("M") == 2 for g in groups)
    assert drawn["auto"] >= 64 and drawn["whole"] == 0


def test_jaxpr_and_list():
    args = "{'w1': f32[4,8], 'b1': f32[8], 'w2': f32[8,3], 'b2': f32[3]}, f32[2,4], use_bias=False"
    out = jaxscope("jaxpr", f"{BASICS}::predict", "--args", args)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("{ lambda")
    assert "dot_general" in out.stdout and "basics.py" in out.stdout
    out = jaxscope("list", BASICS)
    assert out.returncode == 0, out.stderr
    assert "::predict(params, x, use_bias)" in out.stdout and "--args" in out.stdout


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["export", f"{BASICS}::predict", "--args", "f33[2]", "-o", "x.svg"], 2, "f33"),
        (["export", f"{BASICS}::nope", "-o", "x.svg"], 2, "no function 'nope'"),
        (["export", "no_target_separator", "-o", "x.svg"], 2, "::"),
        (["jaxpr", f"{CASES}/syntax_error.py::f", "--args", "f32[3]"], 3, "syntax"),
        (["jaxpr", f"{CASES}/tracer_bool.py::f", "--args", "f32[3]"], 3, "if x.sum() > 0:"),
        (["jaxpr", f"{BASICS}::predict", "--args", "f32[3]"], 2, "cannot be called"),
        (["export", f"{BASICS}::predict", "-o", "x.svg", "--long-edges", "sideways"], 2, "invalid choice: 'sideways'"),
    ],
)
def test_errors_are_one_paragraph_with_exit_codes(args, code, fragment):
    out = jaxscope(*args)
    assert out.returncode == code, out.stderr
    assert fragment in out.stderr
    assert "Traceback (most recent call last)" not in out.stderr


def test_module_target_is_imported_from_the_working_directory():
    corpus = ROOT / "tests" / "worker" / "corpus"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "jaxscope", "jaxpr", "higher_order:uses_cond", "--args", "f32[3], f32[3]"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=corpus,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "cond[" in out.stdout


def test_a_step_assigned_from_another_module_with_a_maker_by_attribute(tmp_path: pathlib.Path) -> None:
    """Issue 47, 5: `train_step = jax.jit(steps.step)` with `JAXSCOPE_INPUTS = {"train_step": data.make}`
    was not listed, and tracing it asked for specs ("give one spec per parameter")."""
    (tmp_path / "steps.py").write_text("import jax.numpy as jnp\n\n\ndef step(params, x):\n    return jnp.sum(jnp.tanh(x @ params['w']))\n")
    (tmp_path / "data.py").write_text("import jax.numpy as jnp\n\n\ndef make():\n    return {'w': jnp.ones((4, 3))}, jnp.ones((2, 4))\n")
    train = tmp_path / "train.py"
    train.write_text(
        "import jax\n\nimport data\nimport steps\n\ntrain_step = jax.jit(steps.step)\nJAXSCOPE_INPUTS = {'train_step': data.make}\n"
    )
    listed = jaxscope("list", str(train))
    assert (
        listed.returncode == 0
        and f"{train}::train_step(…)  line 6  inputs from data.make()  assigned: jax.jit(steps.step)" in listed.stdout
    )
    traced = jaxscope("jaxpr", f"{train}::train_step")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout.startswith("{ lambda ; a:f32[4,3] b:f32[2,4]. let") and "tanh" in traced.stdout
