"""`jaxscope links`: the exact equation <-> jaxpr line table (issue 32.4, the jaxpr stage)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("flax")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "worker" / "corpus" / "models.py"


def jaxscope(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "jaxscope", *args], capture_output=True, text=True, timeout=180, cwd=ROOT, env=env)


def test_every_equation_of_a_three_block_train_step_owns_its_jaxpr_lines():
    table = jaxscope("links", f"{MODELS}::deep_step")
    printed = jaxscope("jaxpr", f"{MODELS}::deep_step")
    assert table.returncode == 0 and printed.returncode == 0, table.stderr + printed.stderr
    text = printed.stdout.split("\n")
    header, *rows = table.stdout.rstrip("\n").split("\n")
    assert header == "path\tprimitive\tscope\tsource\tlines"
    parsed = [row.split("\t") for row in rows]
    assert all(len(r) == 5 for r in parsed) and len({r[0] for r in parsed}) == len(parsed)
    shown = [r for r in parsed if r[4] != "-" and r[1] in text[int(r[4].split(",")[0]) - 1]]
    assert len(shown) >= 0.95 * len(parsed)
    dots = [r for r in parsed if r[1] == "dot_general" and "/" not in r[0]]
    firsts = [r[4].split(",")[0] for r in dots]
    assert len(dots) >= 12 and len(set(firsts)) == len(dots)  # no line claimed by two dot_generals
    scopes = {r[2] for r in dots}
    assert any("block1/proj" in s for s in scopes) and any("transpose(jvp(Deep))/block2/proj" in s for s in scopes)
    assert all(r[3].startswith(str(MODELS)) for r in dots)
