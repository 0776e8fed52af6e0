"""Where the real window's GUI thread stalls while it opens a workload (a diagnostic, not a benchmark).

    python benchmarks/stalls.py gpt-50k [--over-ms 90] [--twice]

Opens the workload in a real `MainWindow` (offscreen, as `gui_stages.app_open` does) with a 10 ms
timer on the GUI thread. Each tick re-arms `faulthandler.dump_traceback_later`: when the loop
stalls longer than `--over-ms`, faulthandler's own C thread, which needs no GIL, writes every
thread's Python stack at that moment. A stall whose GUI-thread stack is deep in the event loop
with no Python frame of ours, while another thread sits in a C call, is a GIL or Qt lock held
elsewhere (that is how a 13 MB `json.loads` on a reader thread and a `setPlainText` on the
linking thread were found). Prints each stall (start, length, the window's slots that ran in it)
and the distinct stacks of the threads that were not waiting. `--twice` opens the workload again
in the same window (a re-trace replacing a big scene); `--after-bench` opens it first as `make bench`
does before its window open, and keeps that alive (a bigger heap, the bench's other processes).
"""

from __future__ import annotations

import argparse
import atexit
import faulthandler
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gui_stages
import workloads
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication

WAITING = (" in wait", " in _drain", " in _read_err", " in _read", " in get", " in _worker", " in _watch", " in readline", " in _pump")


def _timed(marks: list[tuple[float, float, str]], cls: type, name: str) -> None:
    """Record each call of `cls.name` as (start, end, name)."""
    original: Callable[..., Any] = getattr(cls, name)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            marks.append((start, time.perf_counter(), f"{cls.__name__}.{name}"))

    setattr(cls, name, wrapper)


def _busy_stacks(dump: str) -> list[str]:
    """The stacks in one faulthandler dump of threads that were doing something."""
    out = []
    for block in dump.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines() if line.strip() and not line.startswith("Timeout (")]
        frames = lines[1:3]
        if len(lines) < 2 or any(f.endswith(WAITING) or ("protocol.py" in f and f.endswith(" in read")) for f in frames):
            continue  # blocked in a wait or a pipe read (protocol.read's readline, a stream drain)
        out.append("\n".join([lines[0].split(" (")[0]] + ["    " + line[:140] for line in lines[1:6]]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", help="family-size, e.g. gpt-50k")
    ap.add_argument("--over-ms", type=float, default=90.0, help="report stalls longer than this")
    ap.add_argument("--twice", action="store_true", help="open it a second time in the same window")
    ap.add_argument(
        "--after-bench",
        action="store_true",
        help="first open it as `make bench` does before its window open (Controller-level, kept alive)",
    )
    opts = ap.parse_args()
    family, size = opts.workload.rsplit("-", 1)
    folder = tempfile.mkdtemp(prefix="jaxscope-stalls-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # its exports and settings: megabytes a run
    work = workloads.make(family, size)
    path = work.write(folder)

    QCoreApplication.setOrganizationName("jaxscope-bench")
    QCoreApplication.setApplicationName("jaxscope-bench")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
    app = QApplication.instance() or QApplication([sys.argv[0]])  # noqa: F841 - kept alive for the run

    from jaxscope.qt.app import window as main_window
    from jaxscope.qt.graph import view as graph_view
    from jaxscope.qt.panes import jaxpr_view

    marks: list[tuple[float, float, str]] = []
    for cls, names in (
        (main_window.MainWindow, [n for n in dir(main_window.MainWindow) if n.startswith("_on_")] + ["open_target"]),
        (graph_view.QtGraphView, ["set_graph"]),
        (jaxpr_view.QtJaxprView, ["set_text"]),
    ):
        for name in names:
            _timed(marks, cls, name)

    dump_path = os.path.join(folder, "stacks.txt")
    dump_file = open(dump_path, "w")  # faulthandler writes to it until the end
    over = opts.over_ms / 1000
    stalls: list[tuple[float, float]] = []
    last = [0.0]
    armed = [False]

    def tick() -> None:
        now = time.perf_counter()
        if armed[0]:
            faulthandler.dump_traceback_later(over, repeat=False, file=dump_file)
            if last[0] and now - last[0] > over:
                stalls.append((last[0], now))
        last[0] = now

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(gui_stages.TICK_MS)
    timer.timeout.connect(tick)
    start_probe = gui_stages.LoopProbe.start

    def start(self: gui_stages.LoopProbe) -> None:  # app_open starts its probe right before the open
        armed[0] = True
        last[0] = 0.0
        timer.start()
        start_probe(self)

    stop_probe = gui_stages.LoopProbe.stop

    def stop(self: gui_stages.LoopProbe) -> None:  # and stops it before the window closes
        armed[0] = False
        faulthandler.cancel_dump_traceback_later()
        stop_probe(self)

    gui_stages.LoopProbe.start = start  # type: ignore[method-assign]
    gui_stages.LoopProbe.stop = stop  # type: ignore[method-assign]
    if opts.twice:
        first_open = main_window.MainWindow.open_target

        def open_twice(self: Any, target: str, *args: Any, **kwargs: Any) -> Any:
            done = first_open(self, target, *args, **kwargs)
            if target.endswith("::train_step"):
                gui_stages.wait_until(lambda: self.doc.layout is not None and self.jaxpr.document().characterCount() > 100, 600)
                gui_stages.wait_until(lambda: False, 2.0)
                marks.append((time.perf_counter(), time.perf_counter(), "--- second open"))
                self.doc.layout = None
                done = first_open(self, target, *args, **kwargs)
            return done

        main_window.MainWindow.open_target = open_twice  # type: ignore[method-assign]

    if opts.after_bench:  # the bench's GUI process holds that open's graph, layout and scene meanwhile
        bench = gui_stages.Bench(path, work.args)
        bench.warm()
        bench.open_once(600)
        stalls.clear()
        marks.clear()
    result = gui_stages.app_open(path, "train_step", work.args, 600)
    armed[0] = False
    faulthandler.cancel_dump_traceback_later()
    timer.stop()
    dump_file.close()

    print(
        f"{opts.workload}: graph on screen {result.get('graph_s', float('nan')):.2f} s, "
        f"jaxpr at {result.get('jaxpr_s', float('nan')):.2f} s"
    )
    t0 = stalls[0][0] if stalls else 0.0
    for a, b in stalls:
        ran = [f"{name} {1000 * (s - a):+.0f}..{1000 * (e - a):+.0f} ms" for s, e, name in marks if e >= a - 0.005 and s <= b + 0.005]
        print(f"  stall {1000 * (b - a):4.0f} ms at {a - t0:6.2f} s: {'; '.join(ran) or '(none of the window slots)'}")
    with open(dump_path) as fh:
        dumps = [d for d in re.split(r"Timeout \([^)]*\)!\n", fh.read()) if d.strip()]
    seen: set[str] = set()
    for dump in dumps:
        for stack in _busy_stacks(dump):
            if stack not in seen:
                seen.add(stack)
                print(stack)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
