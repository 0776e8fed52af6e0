"""The workbench model without Qt (issue 61.1): a trace taken, its layouts, a cluster toggled and
kept across a re-trace, a failure, staleness, grouping switched, a saved trace standing in: each a
typed event, and the layouts it asks for are of the graph it shows."""

from __future__ import annotations

import pathlib

from jaxscope.analysis.scope_view import first_open, for_window
from jaxscope.ir import linking
from jaxscope.saved_traces import load
from jaxscope.schema.layout import Layout
from jaxscope.schema.trace import ErrorInfo
from jaxscope.workbench import Event, Failed, Grouped, LaidOut, Saved, Stale, Traced, Workbench

SAVED = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tpu" / "vit_step.jaxscope"


def _bench() -> tuple[Workbench, list[Event]]:
    bench, events = Workbench(), []
    bench.subscribe(events.append)
    return bench, events


def test_a_trace_its_layouts_and_a_toggle_kept_across_a_retrace() -> None:
    saved = load(str(SAVED))
    result = saved.trace
    bench, events = _bench()
    bench.open_file(result.request.function.path)
    request, expanded = bench.trace_request(result.request.function.qualname, result.request.args, result.request.inputs)
    assert request.function.path == result.request.function.path and expanded is None  # the layout's own first pick
    view = for_window(result.graph, bench.grouping)
    ask = bench.take_trace(result, view, linking.jaxpr_links(result.graph, ""), first_open(view.graph))
    assert isinstance(events[-1], Traced) and events[-1].previous is None and bench.doc.result is result
    assert ask.graph is view.graph and ask.expanded == first_open(view.graph) and view.grouped
    assert not bench.take_layout(result.graph, Layout(1, 1, (), ()), frozenset())  # not the graph shown: dropped
    assert bench.take_layout(view.graph, Layout(1, 1, (), ()), ask.expanded)
    assert isinstance(events[-1], LaidOut) and not events[-1].keep  # a new trace's first layout is fitted
    owner = sorted(ask.expanded)[0]
    toggled = bench.toggle(owner)
    assert toggled is not None and toggled.expanded == ask.expanded - {owner} and bench.doc.user_toggled
    bench.take_layout(view.graph, Layout(2, 2, (), ()), toggled.expanded)
    assert events[-1].keep  # the user's own toggle keeps the view in place
    _, kept = bench.trace_request(result.request.function.qualname, result.request.args, result.request.inputs)
    assert kept == toggled.expanded  # a re-trace of the function shown keeps what the user opened


def test_failure_staleness_grouping_and_a_saved_trace_are_said() -> None:
    saved = load(str(SAVED))
    bench, events = _bench()
    bench.open_file(saved.trace.request.function.path)
    bench.fail(ErrorInfo(kind="user-code", message="boom"))
    bench.mark_stale(True)
    bench.mark_stale(True)  # said once
    assert [type(e) for e in events] == [Failed, Stale] and bench.failure is not None
    view = for_window(saved.trace.graph, True)
    bench.take_trace(saved.trace, view, linking.jaxpr_links(saved.trace.graph, ""), first_open(view.graph))
    assert bench.failure is None and not bench.doc.stale  # a trace that succeeded clears them
    program = bench.set_grouping(False)
    assert isinstance(events[-1], Grouped) and not events[-1].on and program is saved.trace.graph
    assert bench.take_grouped(program, True, for_window(program, True)) is None  # made for a grouping asked before: dropped
    flat = bench.take_grouped(program, False, for_window(program, False))
    assert flat is not None and flat.graph is saved.trace.graph and bench.doc.shown is saved.trace.graph
    assert bench.take_grouped(program, False, for_window(program, False)) is None  # drawn the same: nothing to lay out
    bench.stand_in(saved, str(SAVED))
    assert isinstance(events[-1], Saved) and bench.saved is saved and bench.saved_path == str(SAVED)
    bench.stand_in(None)
    assert bench.saved is None and bench.saved_path == ""
