"""`make bench` (part): the interactive HTML page of a 10k- and a 50k-equation train step: the
export's time and the file's size, then, in headless Chromium (tests/browser/harness.py), the
time from opening the file to its first level being drawn and interactive, and an expand.

    python benchmarks/html_page.py [--only gpt-10k ...]

Targets (issue 51): a 10k-equation step's page at most 5 MB and interactive within 2 s; a 50k
one opens (first level) within 5 s. `flat-200k`: a synthetic page of 200k equations in one body
(tests/browser/test_page_faults.big_page), its open and a search, as the page draws only what is
in view (drawing every box took 73 s to open and 22 s to search). Not a test: the numbers depend
on the machine."""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import workloads  # noqa: E402 - after sys.path gets this directory

from tests.browser.harness import Page, browser_missing  # noqa: E402

TARGETS = {"gpt-10k": (5.0, 2.0), "gpt-50k": (None, 5.0)}  # MB, seconds to interactive


def flat_page(tmp: str) -> None:
    """The synthetic 200k-equation page: seconds to make it, to open it, to search it, to fit it whole."""
    from tests.browser.test_page_faults import big_page

    start = time.perf_counter()
    out = big_page(pathlib.Path(tmp) / "flat-200k.html")
    made_s = time.perf_counter() - start
    page = Page()
    try:
        ready_s = page.open(out, timeout=300)
        start = time.perf_counter()
        said = page.search("sin")
        search_s = time.perf_counter() - start
        start = time.perf_counter()
        page.js("document.getElementById('fit').click()")
        fit_s = time.perf_counter() - start
        in_view = len(page.in_view())
    finally:
        page.close()
    print(f"{'workload':<10} {'page MB':>8} {'made s':>7} {'ready s':>8} {'search s':>9} {'fit s':>6}  search says")
    mb = out.stat().st_size / 1e6
    after = f"{said} ({in_view} boxes as elements after Fit)"
    print(f"{'flat-200k':<10} {mb:8.2f} {made_s:7.1f} {ready_s:8.2f} {search_s:9.2f} {fit_s:6.2f}  {after}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=[*TARGETS, "flat-200k"])
    opts = ap.parse_args()
    missing = browser_missing()
    if missing:
        print(f"html_page: {missing}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if "flat-200k" in opts.only:
            flat_page(tmp)
        for name in [n for n in opts.only if n != "flat-200k"]:
            family, size = name.rsplit("-", 1)
            w = workloads.make(family.replace("-", "_"), size)
            source = w.write(tmp)
            out = pathlib.Path(tmp) / f"{name}.html"
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "jaxscope", "export", f"{source}::{w.function}", "--args", w.args, "-o", str(out)],
                capture_output=True,
                text=True,
                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            )
            export_s = time.perf_counter() - start
            if done.returncode != 0:
                print(f"{name}: export failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            page = Page()
            try:
                ready_s = page.open(out)
                boxes = len(page.drawn())
                shut = page.js(
                    "return [...document.querySelectorAll('g.node')].map(g => g.getAttribute('data-path'))"
                    ".filter(p => window.jaxscopePage.drawn().byPath.get(p).n.subs.length)"
                )
                expand_s = None
                if shut:
                    t = time.perf_counter()
                    page.js("window.jaxscopePage.toggle(arguments[0])", shut[0])
                    expand_s = time.perf_counter() - t
            finally:
                page.close()
            rows.append((name, w.describe(), out.stat().st_size / 1e6, export_s, ready_s, boxes, expand_s))
    if not rows:
        return 0
    print(f"{'workload':<10} {'model':<14} {'page MB':>8} {'export s':>9} {'ready s':>8} {'boxes':>6} {'expand s':>9}  target")
    for name, model, mb, export_s, ready_s, boxes, expand_s in rows:
        max_mb, max_s = TARGETS.get(name, (None, None))
        ok = (max_mb is None or mb <= max_mb) and (max_s is None or ready_s <= max_s)
        target = f"{'≤ ' + str(max_mb) + ' MB, ' if max_mb else ''}≤ {max_s} s: {'PASS' if ok else 'MISS'}" if max_s else ""
        expand = f"{expand_s:9.2f}" if expand_s is not None else f"{'-':>9}"
        print(f"{name:<10} {model:<14} {mb:8.2f} {export_s:9.1f} {ready_s:8.2f} {boxes:6d} {expand}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
