"""Every file jaxscope writes (exports, `hlo -o`) is written whole or not at all, through links:
a full disk keeps the previous file, a symlink keeps pointing at the file it names, a FIFO or a
device is written into, never replaced."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import threading

import pytest

from jaxscope.exporter import export, read_json, write_output, write_text
from tests.graphs import sample_graph

BASICS = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "basics.py")


def _laid_out():
    from jaxscope.layout.engine import compute_layout

    graph = sample_graph()
    return graph, compute_layout(graph, frozenset(), engine="layered")


def test_a_symlink_stays_and_its_target_is_written(tmp_path):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    graph, layout = _laid_out()
    export(graph, layout, str(link))
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert read_json(real.read_text())[0] == graph


def test_a_hard_linked_file_is_written_for_every_name(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("old")
    os.link(first, second)
    write_text(str(first), "new")
    assert second.read_text() == "new" and os.stat(first).st_ino == os.stat(second).st_ino


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "out.svg"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text(str(fifo), "<svg/>")
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got == [b"<svg/>"]


def test_a_writer_that_fails_keeps_the_previous_file(tmp_path):
    out = tmp_path / "g.pdf"
    out.write_bytes(b"previous")

    def cut_short(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(b"%PDF-1.4 but no end")

    def ends(tmp: str) -> None:
        raise OSError("cut short")

    with pytest.raises(OSError, match="cut short"):
        write_output(str(out), cut_short, ends)
    assert out.read_bytes() == b"previous" and os.listdir(tmp_path) == ["g.pdf"]


def _cli_on_a_small_disk(tmp_path, kb: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with files capped at `kb` KB (`ulimit -f`; SIGXFSZ ignored: writes fail with EFBIG),
    which a writer meets as it would a full disk."""
    command = shlex.join([sys.executable, "-m", "jaxscope", *args])
    return subprocess.run(
        ["bash", "-c", f"trap '' XFSZ; ulimit -f {kb}; exec {command}"], cwd=tmp_path, capture_output=True, text=True, timeout=180
    )


@pytest.mark.parametrize(
    ("kb", "args"),
    [
        (8, ("export", f"{BASICS}::predict", "-o", "g.pdf")),  # Qt's PDF writer ignores the failed writes
        (1, ("hlo", f"{BASICS}::predict", "--stage", "compiled", "-o", "g.pdf")),  # ~5 KB of text
    ],
)
def test_a_full_disk_fails_the_command_and_keeps_the_previous_file(tmp_path, kb, args):
    previous = b"%PDF previous, whole\n%%EOF\n"
    (tmp_path / "g.pdf").write_bytes(previous)
    proc = _cli_on_a_small_disk(tmp_path, kb, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot write g.pdf" in proc.stderr
    assert (tmp_path / "g.pdf").read_bytes() == previous
    assert sorted(os.listdir(tmp_path)) == ["g.pdf"]  # no temporary file left behind
