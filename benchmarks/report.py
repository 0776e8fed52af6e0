"""Summaries, targets (issue 10) with pass/miss, and the printed tables.

A workload's record (built by run_all.py, stored in results.json) holds the raw stage outputs;
`summarize` reduces its runs to medians (latencies to the worst run), `targets` checks them.
"""

from __future__ import annotations

import statistics
from typing import Any

PASS, MISS, NA = "PASS", "MISS", "-"

# issue 10, "Targets" (2-core CPU machine, JAX warm, medians)
RATIO_MULT, RATIO_ADD = 1.5, 0.3
ABS_UNROLLED = {"1k": 0.5, "10k": 1.5, "50k": 8.0}
ABS_JIT_50K = 1.5
BLOCK_MS = 50.0
CANCEL_MS = 50.0
PAN_MS, FIT_MS = 16.0, 100.0
EXPAND_SMALL_S, EXPAND_BIG_S, EXPAND_CACHED_S = 0.150, 1.0, 0.020
GUI_RSS_MB = 600.0
SVG_S, PNG_S = 3.0, 6.0
EXPORT_RATIO = 1.5


def _median(values: list[float]) -> float | None:
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def summarize(rec: dict[str, Any]) -> dict[str, Any]:
    """Medians over the runs of each stage; worst case of the loop lateness."""
    gui = rec.get("gui") or {}
    runs = gui.get("runs") or []
    s: dict[str, Any] = {"reps": len(runs)}
    for key in (
        "total_s",
        "worker_trace_s",
        "worker_graph_s",
        "worker_other_s",
        "transfer_s",
        "auto_expanded_s",
        "layout_s",
        "scene_s",
        "paint_s",
        "jaxpr_after_s",
        "jaxpr_print_s",
    ):
        s[key] = _median([r.get(key) for r in runs])
    if runs:
        last = runs[-1]
        for key in ("engine", "nodes_drawn", "edges_drawn", "expanded", "top_eqns", "total_eqns", "jaxpr_text_mb", "layout_notes"):
            s[key] = last.get(key)
        for key in ("diagnose", "load"):
            s[f"worker_{key}_s"] = _median([r.get("worker", {}).get(key) for r in runs])
        for scope in ("loop", "loop_trace", "loop_layout", "loop_with_scene"):
            s[f"{scope}_max_ms"] = max(r.get(scope, {}).get("max_ms", 0.0) for r in runs)
            s[f"{scope}_p99_ms"] = _median([r.get(scope, {}).get("p99_ms") for r in runs])
    bare = rec.get("bare") or {}
    s["bare_s"] = bare.get("median_s")
    s["bare_top"], s["bare_total"] = bare.get("top"), bare.get("total")
    if s.get("total_s") and s.get("bare_s"):
        s["ratio"] = s["total_s"] / s["bare_s"]
        s["ratio_limit_s"] = RATIO_MULT * s["bare_s"] + RATIO_ADD
    nv = rec.get("naive") or {}
    if s.get("total_s"):
        if "total_s" in nv:
            s["naive_ratio"] = nv["total_s"] / s["total_s"]
        elif "timeout_s" in nv or "implied_min_s" in nv:
            s["naive_ratio_min"] = nv.get("timeout_s", nv.get("implied_min_s")) / s["total_s"]
    return s


def _verdict(ok: bool | None) -> str:
    return NA if ok is None else (PASS if ok else MISS)


def targets(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Each applicable target: {id, what, value, limit, verdict} (value/limit already formatted)."""
    s = rec["summary"]
    gui = rec.get("gui") or {}
    size, kind = rec["size"], rec["kind"]
    out: list[dict[str, Any]] = []

    def add(tid: str, what: str, value: float | None, limit: float, unit: str = "s", fmt: str = "{:.2f}") -> None:
        ok = None if value is None else value <= limit
        shown = "n/a" if value is None else fmt.format(value) + f" {unit}"
        limit_text = f"≤ {fmt.format(limit)} {unit}"
        out.append({"id": tid, "what": what, "value": shown, "limit": limit_text, "verdict": _verdict(ok), "raw": value})

    if s.get("ratio_limit_s") is not None:
        add("T1", "open→interactive ≤ 1.5×make_jaxpr + 0.3 s", s.get("total_s"), s["ratio_limit_s"])
    if kind == "unrolled":
        add("T2", f"open→interactive, unrolled {size}", s.get("total_s"), ABS_UNROLLED[size])
    if kind == "jit-structured" and size == "50k":
        add("T2", "open→interactive, jit-structured 50k", s.get("total_s"), ABS_JIT_50K)
    if s.get("reps"):
        add("T3", "GUI loop blocked during trace+layout (max lateness)", s.get("loop_max_ms"), BLOCK_MS, "ms", "{:.0f}")
    expands = gui.get("expand") or []
    worst_expand_block = max((e[k]["loop"]["max_ms"] for e in expands for k in ("first", "zoomed") if k in e), default=None)
    if worst_expand_block is not None:
        add("T3", "GUI loop blocked during expand layout (max lateness)", worst_expand_block, BLOCK_MS, "ms", "{:.0f}")
    svg = gui.get("svg") or {}
    if "s" in svg:
        blocked = (svg.get("loop") or {}).get("max_ms", svg["s"] * 1000)  # older results: exported on the GUI thread
        add("T3", "GUI loop blocked during SVG export (max lateness; exported on a thread)", blocked, BLOCK_MS, "ms", "{:.0f}")
    ir_loop = (gui.get("app") or {}).get("ir_loop") or {}
    if ir_loop.get("ticks"):
        ir_what = "GUI loop blocked while the window lowers (and compiles) and shows the IR (max lateness)"
        add("T3", ir_what, ir_loop["max_ms"], BLOCK_MS, "ms", "{:.0f}")
    cancel = gui.get("cancel") or {}
    if "to_failed_ms" in cancel:
        add("T3", "cancel: cancel() to trace_failed", cancel["to_failed_ms"], CANCEL_MS, "ms", "{:.0f}")
    pan = gui.get("pan") or {}
    if size == "50k" and pan:
        add("T4", "pan at zoom 1 (median repaint)", pan.get("pan_median_ms"), PAN_MS, "ms", "{:.1f}")
        add("T4", "fit-all repaint (median)", pan.get("fit_median_ms"), FIT_MS, "ms", "{:.0f}")
    for e in expands:
        eq = e["eqns"]
        limit = EXPAND_SMALL_S if eq <= 2500 else EXPAND_BIG_S if eq <= 30000 else None
        if "zoomed" in e and limit is not None:
            add("T5", f"expand {e['owner']} ({eq:,} eqns) zoomed in on it, to first paint", e["zoomed"]["first_paint_s"], limit)
        if "first" not in e:
            continue
        if limit is not None:
            add("T5", f"expand {e['owner']} ({eq:,} eqns) with the whole graph shown, to repaint", e["first"]["total_s"], limit)
        add("T5", f"expand {e['owner']} again (cached), to repaint", e["cached"]["total_s"], EXPAND_CACHED_S, "s", "{:.3f}")
    if size == "50k":
        opened = gui.get("gui_peak_after_open_mb", gui.get("gui_peak_mb"))  # the SVG export and expands come after
        add("T6", "GUI process peak RSS with the program open (before SVG export and expands)", opened, GUI_RSS_MB, "MB", "{:.0f}")
        if "s" in svg:
            add("T6", "SVG export (full graph)", svg["s"], SVG_S)
        png = gui.get("png") or {}
        if "s" in png:
            add("T6", "PNG export (size capped)", png["s"], PNG_S)
    return out


def export_target(exp: dict[str, Any], target: str = "T6", limit: float = EXPORT_RATIO) -> dict[str, Any] | None:
    if not exp or "ratio" not in exp:
        return None
    ok = exp["ratio"] <= limit
    options = f" {exp['options']}" if exp.get("options") else ""
    return {
        "id": target,
        "what": f"`jaxscope export{options}` {exp['workload']} vs bare `import jax; make_jaxpr` process",
        "value": f"{exp['export_s']:.2f} s vs {exp['bare_s']:.2f} s = {exp['ratio']:.2f}×",
        "limit": f"≤ {limit}×",
        "verdict": _verdict(ok),
    }


SCOPED_EXPORT_RATIO = 1.3  # issue 33.7: a scoped train step exported at --collapse 1 vs bare make_jaxpr
SCOPED_OPEN_RATIO, SCOPED_OPEN_ADD = 1.3, 0.3  # issue 33.7: the window's open of it, vs make_jaxpr
EXPAND_MS = 100.0  # issue 33.4: one module group expanded, to its first paint
BIG_OPEN_MB = 2048.0  # issue 33.7: the GUI's peak memory opening a 200k-equation program
COST_SHARE = 0.10  # issue 34.6: the cost analysis at 50k, as a share of make_jaxpr's time


def structure_targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """T8: the window on the scoped GPT (`run_all`'s structure stage): open -> interactive against
    make_jaxpr, a group's expand, and the 200k open's GUI memory."""
    out: list[dict[str, Any]] = []

    def add(what: str, value: float | None, limit: float, shown: str) -> None:
        out.append(
            {
                "id": "T8",
                "what": what,
                "value": shown,
                "limit": f"≤ {limit:.2f}" if limit < 1000 else f"≤ {limit:.0f} MB",
                "verdict": _verdict(None if value is None else value <= limit),
            }
        )

    gui, bare = res.get("gui") or {}, (res.get("bare") or {}).get("median_s")
    runs = gui.get("runs") or []
    if runs and bare:
        total = min(r["total_s"] for r in runs)
        limit = SCOPED_OPEN_RATIO * bare + SCOPED_OPEN_ADD
        add(f"window open→interactive, {res['workload']} (grouped), vs make_jaxpr {bare:.2f} s", total, limit, f"{total:.2f} s")
    expands = [e[k] for e in gui.get("expand") or [] for k in ("first", "zoomed") if k in e]
    if expands:
        worst = max(e["first_paint_s"] for e in expands) * 1000
        what = f"expand a module group of {res['workload']}, to its first paint (worst of {len(expands)})"
        add(what, worst, EXPAND_MS, f"{worst:.0f} ms")
    analysis = (res.get("cost") or {}).get("analysis_s")
    if analysis is not None and bare:
        out.append(
            {
                "id": "T9",
                "what": f"cost figures of {res['workload']} (every equation's cost, total, liveness) vs make_jaxpr",
                "value": f"{analysis:.2f} s = {100 * analysis / bare:.0f} %",
                "limit": f"≤ {100 * COST_SHARE:.0f} %",
                "verdict": _verdict(analysis <= COST_SHARE * bare),
            }
        )
    big = res.get("big") or {}
    if big.get("gui_peak_mb") is not None:
        add(
            f"GUI peak memory opening {big.get('workload', 'the 200k program')} collapsed",
            big["gui_peak_mb"],
            BIG_OPEN_MB,
            f"{big['gui_peak_mb']:.0f} MB",
        )
    return out


# ------------------------------------------------------------------------------- printing


def _s(v: float | None, unit: str = "s", fmt: str = "{:.3f}") -> str:
    return "n/a" if v is None else fmt.format(v) + (f" {unit}" if unit else "")


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f} ms"


def naive_text(nv: dict[str, Any], s: dict[str, Any]) -> str:
    if not nv:
        return "not run"
    if "skipped" in nv:
        return nv["skipped"]
    if "timeout_s" in nv:
        ratio = f" (> {s['naive_ratio_min']:.0f}× jaxscope)" if s.get("naive_ratio_min") else ""
        return f"> {nv['timeout_s']:.0f} s, killed{ratio}"
    if "total_s" in nv:
        ratio = f" = {s['naive_ratio']:.1f}× jaxscope" if s.get("naive_ratio") else ""
        return (
            f"{nv['total_s']:.2f} s{ratio} (make_jaxpr {nv['make_jaxpr_s']:.2f} + DOT text {nv['dot_text_s']:.2f} + "
            f"dot {nv['graphviz_s']:.2f}; {nv['nodes']:,} nodes)"
        )
    return f"error: {nv.get('error', '?')}"


def jpviz_text(jp: dict[str, Any], eqns: int | None) -> str:
    if not jp:
        return "not run"
    if "missing" in jp:
        return (
            "not installed: jpviz 0.1.7 (PyPI) pins jax<0.5 and pydot<2, so installing it would downgrade JAX; "
            "measured with --jpviz-path (benchmarks/README.md) it draws 1 node for any function on jax 0.10"
        )
    if "timeout_s" in jp:
        return f"> {jp['timeout_s']:.0f} s, killed"
    if "error" in jp:
        return f"jpviz {jp.get('version', '?')} fails on this JAX: {jp['error']}"
    total = f" of {eqns:,} equations" if eqns else ""
    return (
        f"jpviz {jp.get('version', '?')}: {jp['total_s']:.2f} s, draws {jp['nodes']} node(s){total}"
        " — useless on this JAX (written for jax<0.5)"
    )


def table(rec: dict[str, Any]) -> str:
    s = rec["summary"]
    gui = rec.get("gui") or {}
    lines: list[str] = []
    eq = f"{s.get('top_eqns') or s.get('bare_top') or '?'} top level / {s.get('total_eqns') or s.get('bare_total') or '?'} total"
    reps = s.get("reps", 0)
    lines.append(f"== {rec['name']}  ({rec['describe']}, {rec['kind']})  equations {eq};  {reps} run{'s' if reps != 1 else ''}, medians")
    if gui.get("error"):
        lines.append(f"   !! jaxscope run failed: ...{gui['error'][-700:]}")
    rows: list[tuple[str, str, str]] = []
    bare = rec.get("bare") or {}
    bare_note = "" if "error" not in bare else f"error: {bare['error'][:80]}"
    rows.append(("bare jax.make_jaxpr (fresh process, warm)", _s(s.get("bare_s")), bare_note))
    rows.append(("worker: trace (jit(f).trace)", _s(s.get("worker_trace_s")), ""))
    rows.append(("worker: graph build", _s(s.get("worker_graph_s")), ""))
    rows.append(("worker: load + diagnose", _s(s.get("worker_other_s")), f"diagnose {_s(s.get('worker_diagnose_s'))}"))
    rows.append(("transfer + decode (pipe, JSON)", _s(s.get("transfer_s")), ""))
    rows.append(("auto_expanded (GUI thread)", _s(s.get("auto_expanded_s")), f"{s.get('expanded', '?')} owners expanded"))
    notes = "; ".join(s.get("layout_notes") or [])
    rows.append(("layout (layout process)", _s(s.get("layout_s")),
                 f"{s.get('engine', '?')}, {s.get('nodes_drawn', 0) or 0:,} nodes / {s.get('edges_drawn', 0) or 0:,} edges"
                 + (f"; {notes[:60]}" if notes else "")))  # fmt: skip
    rows.append(("scene build (QtGraphView.set_graph)", _s(s.get("scene_s")), ""))
    rows.append(("first paint (viewport grab)", _s(s.get("paint_s")), ""))
    ratio = f"{s['ratio']:.2f}× make_jaxpr" if s.get("ratio") else ""
    rows.append(("OPEN → INTERACTIVE", _s(s.get("total_s")), ratio))
    rows.append(("then: jaxpr text, printed and linked", _s(s.get("jaxpr_after_s")),
                 f"worker print {_s(s.get('jaxpr_print_s'))}, {(s.get('jaxpr_text_mb') or 0):.1f} MB; "
                 "not in the total: the graph is usable"))  # fmt: skip
    rows.append(("GUI loop lateness, trace+layout", f"max {_ms(s.get('loop_max_ms'))}",
                 f"p99 {_ms(s.get('loop_p99_ms'))}; trace part max {_ms(s.get('loop_trace_max_ms'))}, "
                 f"layout part max {_ms(s.get('loop_layout_max_ms'))}"))  # fmt: skip
    rows.append(
        (
            "GUI loop lateness incl. scene build",
            f"max {_ms(s.get('loop_with_scene_max_ms'))}",
            f"p99 {_ms(s.get('loop_with_scene_p99_ms'))}",
        )
    )
    svg = gui.get("svg") or {}
    blocked = (svg.get("loop") or {}).get("max_ms")
    svg_note = (f"{svg.get('mb', 0):.1f} MB" + (f"; GUI loop max lateness {_ms(blocked)}" if blocked is not None else "")) if svg else ""
    rows.append(("SVG export (core.export to a file, GUI-process thread)", _s(svg.get("s")), svg_note))
    png = gui.get("png") or {}
    if png:
        rows.append(("PNG export (core.export, capped)", _s(png.get("s")), f"{png.get('mb', 0):.1f} MB"))
    rows.append(("peak RSS: GUI / worker / layout process",
                 f"{_s(gui.get('gui_peak_after_open_mb', gui.get('gui_peak_mb')), 'MB', '{:.0f}')}",
                 f"worker {_s(gui.get('worker_peak_mb'), 'MB', '{:.0f}')}, layout {_s(gui.get('layout_worker_peak_mb'), 'MB', '{:.0f}')}; "
                 f"GUI {_s(gui.get('gui_peak_mb'), 'MB', '{:.0f}')} after the SVG export and expands"))  # fmt: skip
    ex = gui.get("app_extras") or {}
    if ex and "error" not in ex:
        rows.append(("app extras on GUI thread (not in total)", _s(sum(ex.values())),
                     f"jaxpr pane {_s(ex.get('jaxpr_pane_s'))}, node sources {_s(ex.get('jaxpr_links_s'))}, "
                     f"line maps {_s(ex.get('line_maps_s'))}"))  # fmt: skip
    app = gui.get("app") or {}
    if app:
        if "error" in app:
            rows.append(("app (MainWindow): open → graph on screen", "failed", str(app["error"])[:120]))
        else:
            loop = app.get("loop") or {}
            rows.append(("app (MainWindow): open → graph on screen", _s(app.get("graph_s")),
                         f"jaxpr shown at {_s(app.get('jaxpr_s'))}; GUI loop max lateness {_ms(loop.get('max_ms'))} "
                         f"(p99 {_ms(loop.get('p99_ms'))}), scene build included; "
                         f"control-flow marks {'on' if app.get('flow') else 'off'}"))  # fmt: skip
            ir = app.get("ir_loop") or {}
            if app.get("ir_s") is not None:
                what = (
                    "StableHLO lowered, compiled by XLA, both shown"
                    if app.get("ir_stages") == 2
                    else "StableHLO lowered and shown (compiling is asked for, above the auto-compile limit)"
                )
                rows.append(("app (MainWindow): open → IR shown", _s(app.get("ir_s")),
                             f"{what}; GUI loop max lateness from the jaxpr on {_ms(ir.get('max_ms'))} "
                             f"(p99 {_ms(ir.get('p99_ms'))})"))  # fmt: skip
    for e in gui.get("expand") or []:
        z = e.get("zoomed")
        if z is not None:
            part = (
                f"{z['preview_nodes']:,} of {z['nodes_drawn']:,} nodes first"
                if z.get("preview_nodes")
                else "no part first (a small layout)"
            )
            shown = z.get("loop_with_preview") or z["loop"]
            rows.append((f"expand {e['owner']} ({e['eqns']:,} eqns) zoomed in on it", _s(z["first_paint_s"]),
                         f"first paint ({part}); the whole layout painted at {_s(z['total_s'])}; GUI loop max "
                         f"lateness {_ms(z['loop']['max_ms'])}, {_ms(shown['max_ms'])} with the part's scene and paint"))  # fmt: skip
            continue
        f, c, b = e["first"], e["cached"], e["collapse"]
        rows.append((f"expand {e['owner']} ({e['eqns']:,} eqns)", _s(f["total_s"]),
                     f"layout {_s(f['layout_s'])} + scene {_s(f['scene_s'])} + paint {_s(f['paint_s'])}; {f['nodes_drawn']:,} nodes; "
                     f"collapse {_s(b['total_s'])}; again (cached) {_s(c['total_s'])} (layout {_s(c['layout_s'])})"))  # fmt: skip
    pan = gui.get("pan") or {}
    if pan:
        rows.append(("pan at zoom 1 / fit-all repaint", f"{pan['pan_median_ms']:.1f} ms",
                     f"pan max {pan['pan_max_ms']:.1f} ms; "
                     f"fit-all median {pan['fit_median_ms']:.0f} ms (zoom {pan['fit_zoom']:.3f})"))  # fmt: skip
    cancel = gui.get("cancel") or {}
    if cancel:
        if "to_failed_ms" in cancel:
            rows.append(
                (
                    "cancel a running trace",
                    f"{cancel['to_failed_ms']:.0f} ms",
                    f"cancel() call {cancel['call_ms']:.1f} ms, after {cancel['after_s']:.2f} s",
                )
            )
        else:
            rows.append(("cancel a running trace", "n/a", cancel.get("error", "")))
    rows.append(("NAIVE: jaxpr → DOT → dot → SVG", naive_text(rec.get("naive") or {}, s), ""))
    if rec.get("jpviz"):
        rows.append(("jpviz (PyPI)", jpviz_text(rec["jpviz"], s.get("total_eqns")), ""))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows if len(r[1]) < 40)
    for a, b, c in rows:
        lines.append(f"   {a:<{w0}}  {b:>{w1}}  {c}".rstrip())
    tg = rec.get("targets") or []
    if tg:
        lines.append("   targets:")
        for t in tg:
            lines.append(f"     [{t['verdict']:>4}] {t['id']} {t['what']}: {t['value']} ({t['limit']})")
    return "\n".join(lines)


def summary_table(records: list[dict[str, Any]], extra: list[dict[str, Any]]) -> str:
    lines = ["", "== SUMMARY (open → interactive vs bare make_jaxpr; naive baseline; targets)"]
    head = (
        f"   {'workload':<13} {'eqns':>7} {'make_jaxpr':>10} {'jaxscope':>9} {'ratio':>6} {'T1 bound':>9} "
        f"{'naive':>16} {'pass':>5} {'miss':>5}"
    )
    lines.append(head)
    for rec in records:
        s = rec["summary"]
        nv = rec.get("naive") or {}
        if "total_s" in nv:
            r = s.get("naive_ratio", 0)
            naive = f"{nv['total_s']:.1f} s ({r:.1f}×)" if r < 10 else f"{nv['total_s']:.1f} s ({r:.0f}×)"
        elif "timeout_s" in nv:
            naive = f"> {nv['timeout_s']:.0f} s" + (f" (>{s['naive_ratio_min']:.0f}×)" if s.get("naive_ratio_min") else "")
        elif "skipped" in nv:
            naive = "> timeout†" if "timed out" in nv["skipped"] else "not run‡"
        else:
            naive = "error" if nv else "-"
        tg = rec.get("targets") or []
        n_pass = sum(t["verdict"] == PASS for t in tg)
        n_miss = sum(t["verdict"] == MISS for t in tg)
        eq = s.get("total_eqns") or s.get("bare_total") or 0
        lines.append(
            f"   {rec['name']:<13} {eq:>7,} {_s(s.get('bare_s'), '', '{:.2f}'):>10} {_s(s.get('total_s'), '', '{:.2f}'):>9} "
            f"{(format(s['ratio'], '.2f') + '×') if s.get('ratio') else 'n/a':>6} {_s(s.get('ratio_limit_s'), '', '{:.2f}'):>9} "
            f"{naive:>16} {n_pass:>5} {n_miss:>5}"
        )
    lines.append("   (seconds; † not run: a smaller size of the same workload already exceeded the naive timeout;")
    lines.append("    ‡ not run above --naive-max-size)")
    lines.append("")
    lines.append("   targets missed:")
    missed = [(rec["name"], t) for rec in records for t in rec.get("targets") or [] if t["verdict"] == MISS]
    missed += [("-", t) for t in extra if t and t["verdict"] == MISS]
    if not missed:
        lines.append("     none")
    for name, t in missed:
        lines.append(f"     {name:<13} {t['id']} {t['what']}: {t['value']} ({t['limit']})")
    passed = sum(t["verdict"] == PASS for rec in records for t in rec.get("targets") or []) + sum(
        1 for t in extra if t and t["verdict"] == PASS
    )
    total = passed + len(missed)
    lines.append(f"   {passed} of {total} target checks pass.")
    for t in extra:
        if t and t["verdict"] != MISS:
            lines.append(f"   [{t['verdict']:>4}] {t['id']} {t['what']}: {t['value']} ({t['limit']})")
    return "\n".join(lines)
