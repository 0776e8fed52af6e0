"""Fault tests through the real worker processes: every failure is a structured error and the
next request succeeds."""

from __future__ import annotations

import io
import os
import pathlib
import shutil
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from jaxscope.runtime.worker_client import WorkerClient, WorkerError
from jaxscope.schema.trace import FunctionRef, TraceRequest, TraceResult
from tests.conftest import line_in, run_cli

CASES = os.path.join(os.path.dirname(__file__), "cases")


def request(case: str, args: str = "f32[3]", path: str | None = None) -> TraceRequest:
    return TraceRequest(FunctionRef(qualname="f", path=path or os.path.join(CASES, case)), args=args)


@pytest.fixture(scope="module")
def client():
    with WorkerClient(spare=True, timeouts={"load": 4.0, "trace": 4.0}) as c:
        yield c


def fails(client: WorkerClient, req: TraceRequest, timeout: float = 60) -> WorkerError:
    with pytest.raises(WorkerError) as err:
        client.trace(req).result(timeout=timeout)
    return err.value


def succeeds(client: WorkerClient) -> TraceResult:
    result = client.trace(request("ok.py")).result(timeout=60)
    assert [n.label for n in result.graph.top.nodes if n.kind == "eqn"] == ["sin", "mul"]
    return result


def line_of(case: str, text: str) -> int:
    return line_in(pathlib.Path(CASES) / case, text)


@pytest.mark.parametrize(
    ("case", "kind", "fragment", "line_text"),
    [
        ("syntax_error.py", "syntax", "expected ':'", "def f(x)"),
        ("import_error.py", "import", "a_module_that_does_not_exist_anywhere", "import a_module_that"),
        ("raises_at_import.py", "import", "missing_key", 'VALUE = CONFIG["missing_key"]'),
        ("raises_in_call.py", "user-code", "user bug: bad value", 'raise ValueError("user bug'),
        ("tracer_bool.py", "tracer", "", "if x.sum() > 0:"),
        ("sys_exit.py", "exit", "sys.exit(3)", None),
        ("recursion.py", "user-code", "recursion", "return f(x) + 1"),
        ("nul_bytes.py", "syntax", "a NUL byte on line 2", None),
        ("not_python.py", "syntax", "", None),
    ],
)
def test_user_code_errors(client, case, kind, fragment, line_text):
    err = fails(client, request(case))
    assert err.info.kind == kind, err.info
    assert fragment in err.info.message
    if line_text is not None:
        assert err.info.location is not None, err.info
        assert err.info.location.line == line_of(case, line_text)
    succeeds(client)


def test_tracer_error_has_a_hint(client):
    err = fails(client, request("tracer_bool.py"))
    assert err.info.exc_type == "TracerBoolConversionError"
    assert "lax.cond" in err.info.hint


def test_missing_file_and_directory(client):
    assert fails(client, request("nope.py")).info.kind == "not-found"
    err = fails(client, request("", path=CASES))
    assert err.info.kind == "not-found" and "directory" in err.info.message
    succeeds(client)


@pytest.mark.parametrize(
    ("case", "fragment"),
    [("os_exit.py", "exited with code 7"), ("segfault.py", "SIGSEGV")],
)
def test_worker_death_is_reported_with_stderr(client, case, fragment):
    err = fails(client, request(case))
    assert err.info.kind == "crash"
    assert fragment in err.info.message
    if case == "segfault.py":
        assert "Segmentation fault" in err.info.stderr_tail  # faulthandler's report
    succeeds(client)


def test_infinite_loop_times_out_at_its_line(client):
    t0 = time.monotonic()
    err = fails(client, request("infinite_loop.py"))
    assert err.info.kind == "timeout"
    assert "trace phase ran past its 4 s limit" in err.info.message
    assert err.info.location is not None and err.info.location.line in (2, 3)
    assert time.monotonic() - t0 < 15
    succeeds(client)


def test_hang_at_import_times_out(client):
    err = fails(client, request("loop_at_import.py"))
    assert err.info.kind == "timeout" and err.info.phase == "load"
    succeeds(client)


def test_cancel_is_prompt_and_next_request_works(client):
    phases: list[str] = []
    reached = threading.Event()

    def on_phase(p: str) -> None:
        phases.append(p)
        if p == "trace":
            reached.set()

    future = client.trace(request("infinite_loop.py"), on_phase=on_phase)
    assert reached.wait(60)
    t0 = time.monotonic()
    client.cancel()
    assert time.monotonic() - t0 < 0.05
    with pytest.raises(WorkerError) as err:
        future.result(timeout=10)
    assert err.value.info.kind == "cancelled"
    assert phases[:2] == ["load", "trace"]
    succeeds(client)


def test_the_spare_worker_starts_only_while_nothing_runs():
    """The spare (the next request's worker, pre-warmed) does not import JAX while a trace runs
    (2 cores), nor start inside `trace` (the GUI thread's call): it starts once the active worker is
    idle, or after a cancel, so the retry does not wait for a fresh worker."""
    reached = threading.Event()
    with WorkerClient(spare=True, timeouts={"load": 10.0, "trace": 10.0}) as c:
        future = c.trace(request("infinite_loop.py"), on_phase=lambda p: p == "trace" and reached.set())
        assert reached.wait(60)
        time.sleep(0.3)
        assert c.processes()[1] is None  # the trace has both cores
        c.cancel()
        with pytest.raises(WorkerError):
            future.result(timeout=10)
        deadline = time.monotonic() + 10
        while (warm := c.processes()[0] or c.processes()[1]) is None and time.monotonic() < deadline:
            time.sleep(0.02)  # started by the cancel (and made the active one once the old one is gone)
        assert warm is not None
        succeeds(c)
        assert c.processes()[0] is warm  # the retry ran on it
        deadline = time.monotonic() + 10
        while c.processes()[1] is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.processes()[1] is not None and c.processes()[1] is not warm  # the next one, started after the reply


def test_latest_request_wins(client):
    first = client.trace(request("infinite_loop.py"))
    second = client.trace(request("ok.py"))
    with pytest.raises(WorkerError) as err:
        first.result(timeout=10)
    assert err.value.info.kind == "cancelled"
    assert second.result(timeout=60).graph.top.n_eqns == 2


def test_megabytes_of_prints_do_not_block(client):
    result = client.trace(request("prints.py")).result(timeout=60)
    assert result.graph.top.n_eqns == 1
    assert "x" * 99 in client.output_tail()


def test_config_change_does_not_leak_into_the_next_file(client):
    probe = client.trace(request("dtype_probe.py", "i32[3]")).result(timeout=60)
    assert probe.graph.top.nodes[-1].avals == ("i32[3]",)
    changed = client.trace(request("config_change.py", "f32[3]")).result(timeout=60)
    assert any("i64" in a for n in changed.graph.top.nodes for a in n.avals)
    again = client.trace(request("dtype_probe.py", "i32[3]")).result(timeout=60)
    assert again.graph.top.nodes[-1].avals == ("i32[3]",)


def test_edited_helper_module_is_picked_up(client, tmp_path):
    (tmp_path / "helper_mod.py").write_text("FACTOR = 2.0\n")
    main = tmp_path / "main.py"
    main.write_text(
        textwrap.dedent("""
        import jax.numpy as jnp
        import helper_mod

        def f(x):
            return x * helper_mod.FACTOR
    """)
    )
    req = request("", path=str(main))
    first = client.trace(req).result(timeout=60)
    assert [n.label for n in first.graph.top.nodes if n.kind == "literal"] == ["2.0"]
    time.sleep(0.01)
    (tmp_path / "helper_mod.py").write_text("FACTOR = 5.0\n")
    os.utime(tmp_path / "helper_mod.py", (time.time() + 5, time.time() + 5))
    second = client.trace(req).result(timeout=60)
    assert [n.label for n in second.graph.top.nodes if n.kind == "literal"] == ["5.0"]


def test_crash_loop_guard_then_restart(tmp_path):
    shutil.copy(os.path.join(CASES, "os_exit.py"), tmp_path / "os_exit.py")
    with WorkerClient(spare=True) as c:
        for _ in range(3):
            assert fails(c, request("", path=str(tmp_path / "os_exit.py"))).info.kind == "crash"
        err = fails(c, request("ok.py"))
        assert err.info.kind == "crash" and "not restarting" in err.info.message
        c.restart()
        succeeds(c)


def test_memory_cap_is_a_memory_error_and_the_next_request_works():
    """RLIMIT_AS turns a host-memory blow-up into a MemoryError at the user's line, not a frozen machine.
    jax plus a trace fit in well under 1500 MB (measured: 500 MB is enough on CPU)."""
    with WorkerClient(spare=False, memory_limit_mb=1500) as c:
        succeeds(c)
        err = fails(c, request("memory_hog.py"))
        assert err.info.kind == "memory" and "ran out of memory" in err.info.message, err.info
        assert err.info.location is not None and err.info.location.line == line_of("memory_hog.py", "np.ones")
        succeeds(c)  # on a fresh worker: one that hit its cap is not reused


@pytest.mark.parametrize(
    ("function", "args", "kind", "fragment"),
    [
        ("nope", "f32[3]", "not-found", "has no function 'nope'"),
        ("f", "f32[3], f32[3]", "spec", "f(x) cannot be called with (f32[3], f32[3]): too many positional arguments"),
        ("f", "f32[3], y=f32[2]", "spec", "got an unexpected keyword argument 'y'"),
        ("f", "f32[3", "spec", "unbalanced brackets: '[' is never closed"),
        ("f", "q99[3]", "spec", "unknown dtype 'q99'"),
    ],
)
def test_bad_requests_say_what_is_wrong(client, function, args, kind, fragment):
    err = fails(client, TraceRequest(FunctionRef(qualname=function, path=os.path.join(CASES, "ok.py")), args=args))
    assert err.info.kind == kind and fragment in err.info.message, err.info
    succeeds(client)


def test_an_empty_file_has_no_function(client, tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("")
    err = fails(client, request("empty.py", path=str(empty)))
    assert err.info.kind == "not-found" and "has no function 'f'" in err.info.message
    succeeds(client)


def test_code_nested_too_deeply_is_a_syntax_error_of_the_user(client, tmp_path):
    """Python cannot compile a 30,000-term sum (RecursionError in its compiler): the user's code, at
    its line, not an internal error; the CLI exits 3 with the same words."""
    import subprocess
    import sys

    path = tmp_path / "deep.py"
    path.write_text("def f(x):\n    return " + " + ".join(["x"] * 30_000) + "\n")
    err = fails(client, request("", path=str(path)))
    assert err.info.kind == "syntax" and "nested too deeply" in err.info.message
    assert err.info.location is not None and err.info.location.line == 2
    succeeds(client)
    done = subprocess.run(
        [sys.executable, "-m", "jaxscope", "jaxpr", f"{path}::f", "--args", "f32[3]"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3 and "nested too deeply" in done.stderr and "internal error" not in done.stderr
    listed = subprocess.run([sys.executable, "-m", "jaxscope", "list", str(path)], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 2 and "nested too deeply" in listed.stderr and len(listed.stderr) < 600


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("stdout_none.py", None),  # traced: the worker flushes its own streams, and gives them back to sys
        ("closerange.py", None),  # traced: the worker's pipes sit above what is closed in bulk
        ("closerange_all.py", "your code closed the worker's channel"),
        ("jit_none.py", "your code replaced jax.jit"),
    ],
)
def test_user_faults_are_the_users(client, case, says):
    """Issue 37.7: these were a "crash error during graph" (result lost), a "crash during load" with a
    jaxscope traceback, and "internal error ... this is a jaxscope bug"."""
    if says is None:
        result = client.trace(request(case)).result(timeout=60)
        assert [n.label for n in result.graph.top.nodes if n.kind == "eqn"] == ["sin"]
    else:
        err = fails(client, request(case))
        assert err.info.kind == "user-code" and says in err.info.message, err.info
        assert "jaxscope bug" not in err.info.hint
    succeeds(client)  # and jax.jit is jax.jit again for the next file


def test_source_encodings_follow_pythons_rules_in_the_worker(client, tmp_path):
    """The worker compiled a latin-1 comment that `python file.py` refuses, and said ":0 ... (line
    None)" of a UTF-16 file: it now reads source as Python does, and says where and what to do."""
    utf16 = tmp_path / "wide.py"
    utf16.write_bytes("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x)\n".encode("utf-16"))
    err = fails(client, request("", path=str(utf16)))
    assert err.info.kind == "syntax" and "UTF-16" in err.info.message and err.info.location.line == 1
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"import jax.numpy as jnp\n# caf\xe9\ndef f(x):\n    return jnp.sin(x)\n")
    err = fails(client, request("", path=str(latin)))
    assert err.info.kind == "syntax" and "0xe9 on line 2" in err.info.message and err.info.location.line == 2
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nimport jax.numpy as jnp\n# caf\xe9\ndef f(x):\n    return jnp.sin(x)\n")
    assert client.trace(request("", path=str(latin))).result(timeout=60).graph.top.nodes


def test_a_fork_that_never_exits_does_not_multiply(client):
    """Issue 37.10: each request runs the file anew, so a child that never exits multiplied (12 after
    4 re-traces). The worker ends its group's strays after each request, and says so in its output."""
    for _ in range(4):
        client.trace(request("fork_forever.py")).result(timeout=60)
    pid = client.worker_info()["pid"]

    def members() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != pid:
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        fields = fh.read().rsplit(b")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[2]) == pid and fields[0] != b"Z":
                    found.append(int(entry))
        return found

    deadline = time.monotonic() + 10  # a killed process that is not the worker's child dies on its own time
    while members() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert members() == []
    deadline = time.monotonic() + 10  # the worker's stderr is drained by a thread of its own
    while "ended 1 process(es) your code started" not in client.output_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "ended 1 process(es) your code started" in client.output_tail()


def test_a_child_in_a_session_of_its_own_is_ended_too(client):
    """Issue 46, 11: a child user code started with start_new_session=True left the worker's
    process group, so it outlived every request; the worker ends its own children too."""
    client.trace(request("setsid_child.py")).result(timeout=60)
    pidfile = Path(tempfile.gettempdir()) / f"jaxscope-setsid-{client.worker_info()['pid']}.pid"
    pid = int(pidfile.read_text())
    pidfile.unlink()
    assert _ends_within(pid, 10), f"the child {pid} still runs"


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` is gone (or a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


HOG = """import numpy as np
import jax.numpy as jnp


def make():
    reserved = np.ones(3 * 2**30 // 8)  # 3 GB held by the maker
    return (jnp.ones(4) + reserved[:4],)


def f(x):
    return x * 2


JAXSCOPE_INPUTS = {"f": make}
"""


def test_memory_limits_only_lower_what_was_inherited_and_the_users_setting_is_obeyed(tmp_path):
    """Issue 59.1: under a scheduler's hard `ulimit -v` (8 GB: below 60 % of this machine's RAM) an export
    works (it raised the hard limit: exit 5); JAXSCOPE_MEMORY_LIMIT_MB=1500 caps a maker holding 3 GB (exit 3)."""
    import resource
    import subprocess
    import sys

    (tmp_path / "hog.py").write_text(HOG)

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (8_000_000 * 1024, 8_000_000 * 1024))

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("JAXSCOPE_MEMORY_LIMIT_MB", None)
    cmd = [sys.executable, "-m", "jaxscope", "export", f"{tmp_path}/hog.py::f", "--args", "f32[4]", "-o", str(tmp_path / "f.svg")]
    under = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, preexec_fn=capped)
    assert under.returncode == 0, under.stderr[-2000:]
    env["JAXSCOPE_MEMORY_LIMIT_MB"] = "1500"
    cmd = [sys.executable, "-m", "jaxscope", "export", f"{tmp_path}/hog.py::f", "-o", str(tmp_path / "g.svg")]
    hog = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert hog.returncode == 3 and "ran out of memory" in hog.stderr, hog.stderr[-2000:]


def test_a_double_forked_daemon_of_the_traced_code_is_gone_after_the_export(tmp_path):
    """Issue 59.2: fork, setsid, fork: the daemon left the worker's group and its children (PPID 1) and
    outlived the command; it carries the worker's token and is ended with it."""
    import glob
    import subprocess
    import sys

    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "jaxscope-daemon-*.pid")))
    cmd = [sys.executable, "-m", "jaxscope", "export", f"{CASES}/double_fork.py::f", "--args", "f32[3]", "-o", str(tmp_path / "f.svg")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr[-2000:]
    (pidfile,) = set(glob.glob(os.path.join(tempfile.gettempdir(), "jaxscope-daemon-*.pid"))) - before
    pid = int(Path(pidfile).read_text())
    os.unlink(pidfile)
    if not _ends_within(pid, 10):
        os.kill(pid, 9)
        raise AssertionError(f"the daemon {pid} outlived the export")


def test_a_lone_surrogate_from_user_code_travels_escaped(tmp_path):
    """Issue 59.4: a lone surrogate in a scope name or a maker's dict key was exit 5 (orjson: "str is not
    valid UTF-8"); it is carried escaped ("\\udcff") end to end."""
    from jaxscope.runtime import protocol

    assert protocol.read(io.BytesIO(protocol.dumps({"a": "x\udcff", "b\udcff": [1]}, plain=True))) == {"a": "x\\udcff", "b\\udcff": [1]}
    for target, spec in (("f", ["--args", "f32[3]"]), ("g", [])):
        out = tmp_path / f"{target}.svg"
        done = run_cli("export", f"{CASES}/lone_surrogate.py::{target}", *spec, "-o", str(out))
        assert done.returncode == 0, done.stderr[-2000:]
        assert "\\udcff" in out.read_text() or target == "f"
