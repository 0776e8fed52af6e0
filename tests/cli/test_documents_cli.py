"""Saved traces and diffs from the command line (issue 36), on a flax + optax train step written
here: saved, its file deleted, read back from another folder by every command; diffed against the
same step with its static flag flipped."""

from __future__ import annotations

import gzip
import xml.dom.minidom
from pathlib import Path

import pytest

from tests.conftest import cli_in_process as jaxscope

ROOT = Path(__file__).resolve().parents[2]

CORPUS = ROOT / "tests" / "worker" / "corpus" / "mlp_norm.py"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The step saved (with a run), and what the live commands printed before its file went."""
    where = tmp_path_factory.mktemp("user")
    source = where / "train.py"
    source.write_text(CORPUS.read_text())
    doc = where / "step.jaxscope"
    plain = where / "plain.jaxscope"
    made = jaxscope("save", f"{source}::step", "--run", "-o", str(doc), cwd=where)
    assert made.returncode == 0, made.stderr
    assert "jaxpr, StableHLO, compiled HLO, run, 1 source file" in made.stdout
    made = jaxscope("save", f"{source}::step", "--inputs", f"{source}::make_plain", "--no-compile", "-o", str(plain), cwd=where)
    assert made.returncode == 0, made.stderr
    live = jaxscope("jaxpr", f"{source}::step", cwd=where)
    assert live.returncode == 0, live.stderr
    source.unlink()  # from here on, nothing of the user's code exists
    return {"doc": doc, "plain": plain, "jaxpr": live.stdout, "elsewhere": tmp_path_factory.mktemp("elsewhere")}


def test_a_saved_trace_prints_and_exports_without_its_code(saved: dict[str, object]) -> None:
    doc, there = str(saved["doc"]), saved["elsewhere"]
    assert isinstance(there, Path)
    printed = jaxscope("jaxpr", doc, cwd=there)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == saved["jaxpr"]
    out = there / "step.svg"
    drawn = jaxscope("export", doc, "-o", str(out), "--flat", cwd=there)  # every equation drawn
    assert drawn.returncode == 0, drawn.stderr
    svg = xml.dom.minidom.parse(str(out))
    assert any("dot_general" in (t.firstChild.data if t.firstChild else "") for t in svg.getElementsByTagName("text"))
    explained = jaxscope("explain", doc, cwd=there)  # the source comes from the document's copy
    assert explained.returncode == 0, explained.stderr
    assert "if self.use_norm:" in explained.stdout and "x = nn.LayerNorm()(x)" in explained.stdout
    hlo = jaxscope("hlo", doc, "--stage", "compiled", cwd=there)
    assert hlo.returncode == 0 and hlo.stdout.startswith("HloModule"), hlo.stderr
    ran = jaxscope("run", doc, cwd=there)
    assert ran.returncode == 0 and "the run saved in" in ran.stderr, ran.stderr
    cost = jaxscope("cost", doc, cwd=there)
    assert cost.returncode == 0 and "total flops:" in cost.stdout, cost.stderr


def test_what_a_saved_trace_cannot_do_is_said(saved: dict[str, object]) -> None:
    doc, plain, there = str(saved["doc"]), str(saved["plain"]), saved["elsewhere"]
    assert isinstance(there, Path)
    again = jaxscope("jaxpr", doc, "--args", "f32[3]", cwd=there)
    assert again.returncode == 2 and "is a saved trace: --args says how to trace" in again.stderr
    app = jaxscope("open", doc, "--args", "f32[3]", "--x64", cwd=there)  # said before any window opens
    assert app.returncode == 2 and "is a saved trace: --args, --x64 say how to trace" in app.stderr
    retrace = jaxscope("retrace", doc, "--vs", "f32[2]", cwd=there)
    assert retrace.returncode == 2 and "it holds no code" in retrace.stderr
    compiled = jaxscope("hlo", plain, "--stage", "compiled", cwd=there)
    assert compiled.returncode == 2 and "holds no compiled text (saved with --no-compile" in compiled.stderr
    newer = there / "newer.jaxscope"
    newer.write_bytes(gzip.compress(b'{"format": "jaxscope-trace", "version": 99, "jaxscope": "7.0"}'))
    refused = jaxscope("export", str(newer), "-o", str(there / "x.svg"), cwd=there)
    assert refused.returncode == 2 and "saved by jaxscope 7.0 in trace format 99" in refused.stderr
    cut = there / "cut.jaxscope"
    cut.write_bytes(Path(doc).read_bytes()[:5000])
    damaged = jaxscope("jaxpr", str(cut), cwd=there)
    assert damaged.returncode == 2 and "is damaged" in damaged.stderr and "Traceback" not in damaged.stderr


def test_diff_of_the_step_with_its_static_flag_flipped(saved: dict[str, object]) -> None:
    doc, plain, there = str(saved["doc"]), str(saved["plain"]), saved["elsewhere"]
    assert isinstance(there, Path)
    out = there / "diff.svg"
    found = jaxscope("diff", plain, doc, "-o", str(out), cwd=there)
    assert found.returncode == 1, found.stderr  # they differ
    summary = found.stdout.rstrip().splitlines()[-1]
    counts = dict((k, int(v)) for k, v in (part.split() for part in summary.split(", ")))
    assert set(counts) == {"matched", "added", "removed", "changed"}
    assert counts["matched"] > 50 and counts["added"] > 50 and counts["removed"] == 0
    assert "LayerNorm_0" in found.stdout and "+ argument params['params']['LayerNorm_0']['scale'] f32[16]" in found.stdout
    svg = xml.dom.minidom.parse(str(out))
    texts = {t.firstChild.data for t in svg.getElementsByTagName("text") if t.firstChild}
    assert {"same", "added", "removed", "changed"} <= texts and summary in texts
    assert svg.toxml().count('fill="#8fd694"') >= counts["added"]  # every added equation is drawn green
    grouped = there / "grouped.svg"  # by module: the LayerNorm the flag adds is one green box per pass
    drawn = jaxscope("diff", plain, doc, "--scopes", "-o", str(grouped), cwd=there)
    assert drawn.returncode == 1, drawn.stderr
    boxes = {
        g.getAttribute("data-path"): g for g in xml.dom.minidom.parse(str(grouped)).getElementsByTagName("g") if g.getAttribute("data-path")
    }
    norm = [g for g in boxes.values() if g.getElementsByTagName("title")[0].firstChild.data.startswith("LayerNorm_0 ")]
    assert len(norm) == 2 and all(r.getAttribute("fill") == "#8fd694" for g in norm for r in g.getElementsByTagName("rect"))
    same = jaxscope("diff", doc, doc, cwd=there)
    assert same.returncode == 0 and same.stdout.rstrip().endswith("added 0, removed 0, changed 0")


def test_a_source_changed_since_the_trace_is_not_saved_with_it(saved: dict[str, object]) -> None:
    """Issue 46, 9: the trace keeps a hash of each file it ran; a save copies a file only while it
    still has those bytes (an edit, a failed re-trace or a rewrite during the save would pair the
    graph with code it did not come from)."""
    from jaxscope.saved_traces import load, snapshot

    trace = load(str(saved["doc"])).trace
    path = Path(trace.request.function.path)
    assert list(trace.source_hashes) == [str(path)]
    notes: list[str] = []
    path.write_text(CORPUS.read_text())  # the bytes that were traced
    try:
        assert snapshot(trace, notes.append) == {str(path): CORPUS.read_text()} and notes == []
        path.write_text(CORPUS.read_text() + "\nbroken(\n")
        assert snapshot(trace, notes.append) == {}
        assert notes == ["train.py changed since it was traced: its source is not saved with the trace (trace it again, then save)"]
    finally:
        path.unlink()
