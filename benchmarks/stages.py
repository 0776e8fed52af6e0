"""Subprocess stages of the benchmark: each runs in a fresh Python process, under a timeout.

* `bare_make_jaxpr`: the floor, `jax.make_jaxpr` with JAX imported and warm (workloads.BARE_SCRIPT).
* `gui`: jaxscope's own pipeline in an offscreen GUI process (gui_stages.py).
* `naive`: the straightforward jaxpr -> DOT -> Graphviz script (naive.py).
* `jpviz`: the published jaxpr visualizer from PyPI, where it can be imported.
* `export_vs_bare`: `jaxscope export` (the CLI, cold) against a bare Python process that imports
  JAX and runs `make_jaxpr` on the same function.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from typing import Any

from workloads import BARE_SCRIPT, Workload, python_args

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, HERE, env.get("PYTHONPATH", "")) if p)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def _kill(proc: subprocess.Popen) -> None:
    """Kill a stage process we started, and the workers it started (they run in their own sessions)."""
    try:
        import psutil

        children = psutil.Process(proc.pid).children(recursive=True)
    except Exception:
        children = []
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    for child in children:
        try:
            child.kill()
        except Exception:
            pass


def run_lines(cmd: list[str], timeout: float, start_on: str | None = None) -> tuple[list[dict], bool, str]:
    """Run `cmd`, collecting its JSON stdout lines; (lines, timed_out, stderr tail).

    With `start_on`, the timeout starts when a line holding that key arrives (JAX's import is not
    the measured program's time); until then a generous 180 s applies."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT, start_new_session=True)
    lines: list[dict] = []
    err: list[str] = []
    started = threading.Event()

    def read_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            lines.append(obj)
            if start_on is not None and (start_on in obj or obj.get("key") == start_on):
                started.set()

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            del err[:-60]

    threads = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for t in threads:
        t.start()
    timed_out = False
    if start_on is not None:
        end = time.monotonic() + 180.0
        while not started.is_set() and proc.poll() is None and time.monotonic() < end:
            started.wait(0.1)
        timed_out = not started.is_set() and proc.poll() is None
    deadline = time.monotonic() + timeout
    while not timed_out and proc.poll() is None:
        if time.monotonic() > deadline:
            timed_out = True
            break
        time.sleep(0.05)
    if timed_out:
        _kill(proc)
    proc.wait()
    for t in threads:
        t.join(timeout=5)
    return lines, timed_out, "".join(err)[-3000:]


def bare_make_jaxpr(w: Workload, path: str, reps: int, timeout: float = 600) -> dict[str, Any]:
    lines, timed_out, err = run_lines([PY, "-c", BARE_SCRIPT, path, w.function, python_args(w.args), str(reps)], timeout)
    if timed_out or not lines:
        return {"error": "timeout" if timed_out else err[-800:]}
    out = lines[-1]
    times = sorted(out["times"])
    out["median_s"] = times[len(times) // 2]
    return out


def gui(w: Workload, path: str, reps: int, timeout: float, png: bool = False, extra: list[str] | None = None) -> dict[str, Any]:
    fd, args_file = tempfile.mkstemp(suffix=".args", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as fh:
        fh.write(w.args)
    cmd = [PY, os.path.join(HERE, "gui_stages.py"), path, args_file, "--reps", str(reps)] + (["--png"] if png else []) + (extra or [])
    lines, timed_out, err = run_lines(cmd, timeout)
    out: dict[str, Any] = {"runs": []}
    for line in lines:
        if line.get("key") == "run":
            out["runs"].append(line["value"])
        elif "key" in line:
            out[line["key"]] = line["value"]
    if timed_out:
        out["error"] = f"timed out after {timeout:.0f} s"
    elif "done" not in out:
        out["error"] = err[-1500:] or "no output"
    return out


def cost_analysis(w: Workload, path: str, timeout: float = 900) -> dict[str, Any]:
    """Issue 34.6: the cost figures' time on the traced program (`cost_stage.py`)."""
    fd, args_file = tempfile.mkstemp(suffix=".args", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as fh:
        fh.write(w.args)
    lines, timed_out, err = run_lines([PY, os.path.join(HERE, "cost_stage.py"), path, args_file, "--function", w.function], timeout)
    return lines[-1] if lines and not timed_out else {"error": "timeout" if timed_out else err[-800:]}


def structure(w: Workload, path: str, big: Workload | None, folder: str, timeout: float = 900) -> dict[str, Any]:
    """Issue 33: the window on a scoped train step, grouped by module as the app opens it: open ->
    interactive against bare make_jaxpr, and expanding its groups; with `big` (the 200k one), the
    GUI's peak memory opening that collapsed."""
    out: dict[str, Any] = {"workload": w.name, "bare": bare_make_jaxpr(w, path, 3)}
    out["gui"] = gui(w, path, 2, timeout, extra=["--pan", "0", "--no-cancel", "--no-app", "--no-extras"])
    out["cost"] = cost_analysis(w, path, timeout)
    if big is not None:
        got = gui(big, big.write(folder), 1, timeout, extra=["--pan", "0", "--no-cancel", "--no-app", "--no-extras", "--no-expand"])
        out["big"] = {"workload": big.name, "gui_peak_mb": got.get("gui_peak_mb"), "runs": got.get("runs"), "error": got.get("error")}
    return out


def naive(w: Workload, path: str, timeout: float) -> dict[str, Any]:
    svg = os.path.join(os.path.dirname(path), f"naive_{w.name}.svg")
    cmd = [PY, os.path.join(HERE, "naive.py"), path, w.function, python_args(w.args), svg]
    lines, timed_out, err = run_lines(cmd, timeout, start_on="ready")
    done = [x for x in lines if "total_s" in x]
    if timed_out:
        return {"timeout_s": timeout}
    if not done:
        return {"error": err.strip().splitlines()[-1][:300] if err.strip() else "no output"}
    out = done[-1]
    try:
        out["svg_mb"] = os.path.getsize(svg) / 1e6
        os.remove(svg)
    except OSError:
        pass
    return out


JPVIZ_SCRIPT = textwrap.dedent("""
    import sys, json, time, importlib.util
    extra = sys.argv[5]
    if extra:
        sys.path.insert(0, extra)
    import jax, jax.numpy as jnp
    try:
        import jpviz
        from importlib import metadata
        try:
            version = metadata.version("jpviz")
        except Exception:
            version = getattr(jpviz, "__version__", "?")
    except Exception as exc:
        print(json.dumps({"missing": f"{type(exc).__name__}: {exc}"})); raise SystemExit(0)
    import pygraphviz
    path, fn_name, args_expr, out = sys.argv[1:5]
    spec = importlib.util.spec_from_file_location("bench_user", path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    S = jax.ShapeDtypeStruct
    args = eval(args_expr)
    jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(1.0)
    print(json.dumps({"ready": True}), flush=True)
    t0 = time.perf_counter()
    try:
        g = jpviz.draw(jax.jit(getattr(m, fn_name)))(*args)
        t1 = time.perf_counter()
        def count(gr):
            own = [n for n in gr.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
            return len(own) + sum(count(s) for s in gr.get_subgraphs())
        nodes = count(g)
        text = g.to_string()
        pygraphviz.AGraph(string=text).draw(out, prog="dot")  # pydot needs a `dot` executable; the library does the same
        t2 = time.perf_counter()
        print(json.dumps({"version": version, "nodes": nodes, "jpviz_s": t1 - t0, "total_s": t2 - t0}))
    except Exception as exc:
        print(json.dumps({"version": version, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
""")


def jpviz(w: Workload, path: str, jpviz_path: str, timeout: float) -> dict[str, Any]:
    svg = os.path.join(os.path.dirname(path), f"jpviz_{w.name}.svg")
    cmd = [PY, "-c", JPVIZ_SCRIPT, path, w.function, python_args(w.args), svg, jpviz_path or ""]
    lines, timed_out, err = run_lines(cmd, timeout, start_on="ready")
    if timed_out:
        return {"timeout_s": timeout}
    for line in lines:
        if "missing" in line or "nodes" in line or "error" in line:
            return line
    return {"error": err.strip().splitlines()[-1][:300] if err.strip() else "no output"}


def export_vs_bare(w: Workload, path: str, timeout: float = 600, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Wall time of `jaxscope export FILE::fn --args ... -o x.svg [extra]` vs a bare `import jax; make_jaxpr`."""
    out_svg = os.path.join(os.path.dirname(path), f"export_{w.name}.svg")
    jaxscope = os.path.join(os.path.dirname(PY), "jaxscope")
    cli = [jaxscope] if os.path.exists(jaxscope) else [PY, "-m", "jaxscope"]
    res: dict[str, Any] = {"workload": w.name, "options": " ".join(extra)}
    for name, cmd in (
        ("bare_s", [PY, "-c", BARE_SCRIPT, path, w.function, python_args(w.args), "0"]),
        ("export_s", cli + ["export", f"{path}::{w.function}", "--args", w.args, "-o", out_svg, "--timeout", str(int(timeout)), *extra]),
    ):
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout)
        res[name] = time.perf_counter() - t
        if proc.returncode != 0:
            res["error"] = f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
    try:
        res["svg_mb"] = os.path.getsize(out_svg) / 1e6
    except OSError:
        pass
    if res.get("bare_s"):
        res["ratio"] = res["export_s"] / res["bare_s"]
    return res
