"""A saved trace is data (issue 46): whatever a `.jaxscope` file holds, the commands that read it
end in a sentence and exit 2, within seconds and a bounded memory; they never hang, print a
traceback, exit 5 ("internal error"), or let an escape byte reach the terminal. Made from a real
trace (a flax + optax train step with its IR texts and a run), changed at the JSON level."""

from __future__ import annotations

import contextlib
import io
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxscope.cli.main import main
from tests.faults.hostile_documents import (
    bomb,
    escaped_everywhere,
    load_json,
    mutate,
    with_cycle,
    with_dtype_digits,
    with_flow_past_the_source,
    write_json,
)

ROOT = Path(__file__).resolve().parents[2]
JAXSCOPE = str(Path(sys.executable).with_name("jaxscope"))
READERS = (
    ["jaxpr"],
    ["hlo"],
    ["hlo", "--stage", "compiled"],
    ["explain"],
    ["links"],
    ["links", "--stage", "compiled"],
    ["cost"],
    ["cost", "--by", "scope"],
    ["cost", "--by", "fusion"],
)


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A flax + optax step saved with its IR texts and a run (the worker runs once, here)."""
    where = tmp_path_factory.mktemp("real")
    doc = where / "step.jaxscope"
    done = subprocess.run(
        [JAXSCOPE, "save", f"{ROOT}/tests/worker/corpus/mlp_norm.py::step", "--run", "-o", str(doc)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=where,
    )
    assert done.returncode == 0, done.stderr
    return doc


def cli(*args: str, cwd: Path, memory_mb: int = 0, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    def cap() -> None:
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([JAXSCOPE, *args], capture_output=True, timeout=timeout, cwd=cwd, env=env, preexec_fn=cap)


def in_process(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_a_subgraph_cycle_is_refused_at_once_by_every_command(real: Path, tmp_path: Path) -> None:
    doc = write_json(with_cycle(load_json(real)), tmp_path / "cycle.jaxscope")
    for args in (*READERS, ["export", "-o", str(tmp_path / "x.svg")], ["diff", str(real)]):
        start = time.monotonic()
        done = cli(args[0], str(doc), *args[1:], cwd=tmp_path, memory_mb=1024, timeout=30)
        assert done.returncode == 2, (args, done.stderr)
        assert b"contains it again (a cycle:" in done.stderr, done.stderr
        assert time.monotonic() - start < 30


def test_a_gzip_bomb_is_refused_within_its_limit(tmp_path: Path) -> None:
    doc = bomb(tmp_path / "bomb.jaxscope", 400)  # ~400 KB that inflate to 400 MB
    assert doc.stat().st_size < 1 << 20
    done = cli("jaxpr", str(doc), cwd=tmp_path, memory_mb=1024, timeout=30)
    assert done.returncode == 2, done.stderr
    assert b"inflates to more than 256 MB" in done.stderr


def test_no_escape_byte_from_a_document_reaches_the_terminal(real: Path, tmp_path: Path) -> None:
    doc = write_json(escaped_everywhere(load_json(real)), tmp_path / "esc.jaxscope")
    other = write_json(load_json(real), tmp_path / "plain.jaxscope")
    for args in (*READERS, ["diff", str(other)], ["diff", str(other), "--all"], ["diff", str(other), "--json"], ["cost", "--json"]):
        done = cli(args[0], str(doc), *args[1:], cwd=tmp_path)
        assert done.returncode in (0, 1), (args, done.stderr)
        for stream in (done.stdout, done.stderr):
            assert not any(b in stream for b in (b"\x1b", b"\x07", "\x9b".encode(), "\u202e".encode())), (args, stream[:300])
    shown = cli("jaxpr", str(doc), cwd=tmp_path).stdout.decode()
    assert "\\u001b]0;pwned\\u0007" in shown  # said, escaped, not dropped


def test_wrong_field_types_are_one_sentence_never_a_traceback(real: Path, tmp_path: Path) -> None:
    """The field fuzzer: a few hundred documents with one to three fields of a wrong type, out of
    range, swapped with another field's value, or missing, through every reading command in-process
    (JAXSCOPE_FUZZ_RUNS for more)."""
    base = load_json(real)
    rng = random.Random(46)
    runs = int(os.environ.get("JAXSCOPE_FUZZ_RUNS", "150"))
    refused = 0
    for k in range(runs):
        doc = write_json(mutate(base, rng, rng.choice((1, 1, 2, 3))), tmp_path / f"m{k % 4}.jaxscope")
        for args in READERS[k % len(READERS) :: 3] + (["diff", str(real)],):
            code, out, err = in_process(args[0], str(doc), *args[1:])
            assert code in (0, 1, 2), (k, args, err[-2000:])
            assert "Traceback" not in err and "internal error" not in err, (k, args, err[-2000:])
            if code == 2:
                refused += 1
                assert err.count("\n") <= 2 and len(err) < 1000, (k, args, err[:2000])
    assert refused > runs // 4  # most mutations are caught by the check, not by luck downstream


def test_fifos_devices_and_huge_files_are_not_read(real: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jaxscope"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jaxscope"
    zero.symlink_to("/dev/zero")
    for doc, said in ((fifo, b"is a FIFO (named pipe), not a file"), (zero, b"is a character device, not a file")):
        done = cli("jaxpr", str(doc), cwd=tmp_path, memory_mb=1024, timeout=30)
        assert done.returncode == 2 and said in done.stderr, done.stderr
    big = tmp_path / "big.jaxscope"
    with open(big, "wb") as fh:
        fh.truncate(300 << 20)  # sparse: 300 MB of zeros on no disk
    done = cli("jaxpr", str(big), cwd=tmp_path, memory_mb=1024, timeout=30)
    assert done.returncode == 2 and b"more than the 256.0 MB jaxscope reads" in done.stderr, done.stderr


def test_output_cut_short_by_its_reader_ends_quietly(real: Path, tmp_path: Path) -> None:
    """`jaxscope explain X | head`: exit 0 and nothing said, as other Unix tools (issue 48, 5)."""
    data = load_json(real)
    data["trace"]["jaxpr_text"] *= 200  # more than a pipe holds
    doc = write_json(data, tmp_path / "long.jaxscope")
    for command in ("jaxpr", "explain", "links"):
        done = subprocess.run(
            f"set -o pipefail; {JAXSCOPE} {command} {doc} | head -c 100",
            shell=True,
            capture_output=True,
            timeout=60,
            executable="/bin/bash",
            cwd=tmp_path,
        )
        assert len(done.stdout) == 100
        assert done.returncode == 0, (command, done.stderr)
        assert b"error" not in done.stderr and b"Broken" not in done.stderr, (command, done.stderr)


def test_explain_of_a_trace_saved_without_its_control_flow_is_the_files_fault(real: Path, tmp_path: Path) -> None:
    data = load_json(real)
    data["trace"]["flow"] = None
    doc = write_json(data, tmp_path / "noflow.jaxscope")
    code, _, err = in_process("explain", str(doc))
    assert code == 2 and "holds no record of the Python control flow of its trace: nothing to explain" in err, err


@pytest.mark.parametrize("command", ["diff", "hlo", "export", "save"])
def test_an_empty_output_name_is_refused(real: Path, command: str) -> None:
    """Issue 46, 11: `diff -o ''` exited 0 writing nothing (`hlo -o ''` printed to stdout)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
        main([command, str(real), *([str(real)] if command == "diff" else []), "-o", ""])
    assert done.value.code == 2 and "argument -o/--output: give a file name (it is empty)" in err.getvalue()


def test_numbers_and_lines_from_a_document_are_bounded_before_use(real: Path, tmp_path: Path) -> None:
    """Issue 59.4: a 400- or 5,000-digit dtype (a float overflow, Python's int-conversion limit) and flow
    marks past the saved source's end were exit 5 ("internal error") in cost and explain."""
    base = load_json(real)
    docs = [with_dtype_digits(base, 400), with_dtype_digits(base, 5000), with_flow_past_the_source(base)]
    for k, data in enumerate(docs):
        doc = write_json(data, tmp_path / f"bounded{k}.jaxscope")
        for args in READERS:
            code, _, err = in_process(args[0], str(doc), *args[1:])
            assert code in (0, 2), (k, args, err[-2000:])
            assert "internal error" not in err and "Traceback" not in err, (k, args, err[-2000:])


def test_a_saved_runs_evidence_and_causes_are_data_too(real: Path, tmp_path: Path) -> None:
    """Issue 59, further: the reference runs' evidence and causes (issue 56) fuzzed in a saved run
    (an Adam step's noise, recorded by the real CLI: tests/fixtures/run_noise.json), read by `run`."""
    import json as _json

    base = load_json(real)
    base["run"] = _json.loads((ROOT / "tests" / "fixtures" / "run_noise.json").read_text())
    doc = write_json(base, tmp_path / "noise.jaxscope")
    code, out, err = in_process("run", str(doc))
    assert code == 0 and "cause: noise, explained" in out, err[-2000:]
    rng = random.Random(56)
    for k in range(int(os.environ.get("JAXSCOPE_FUZZ_RUNS", "150")) // 3):
        data = mutate({"run": base["run"]}, rng, rng.choice((1, 2, 3)))
        doc = write_json({**base, "run": data.get("run")}, tmp_path / f"r{k % 4}.jaxscope")
        code, _, err = in_process("run", str(doc))
        assert code in (0, 1, 2), (k, err[-2000:])
        assert "Traceback" not in err and "internal error" not in err, (k, err[-2000:])
