"""The workbench's job ledger without Qt (issue 61.1): the latest request of a lane wins, lanes do
not cancel each other, the busy state follows the busy lanes (a trace whose layout follows stays
busy), and answers checked on other threads see the same rule."""

from __future__ import annotations

import threading

from jaxscope.job_ledger import JobLedger


def _ledger() -> tuple[JobLedger, list[bool]]:
    ledger, said = JobLedger(), []
    ledger.on_busy(said.append)
    return ledger, said


def test_the_latest_request_of_a_lane_wins_and_lanes_are_apart() -> None:
    ledger, said = _ledger()
    first = ledger.start("user")
    second = ledger.start("user")
    printed = ledger.start("ir")
    assert not ledger.current(first) and ledger.current(second) and ledger.current(printed)
    assert not ledger.finish(first) and ledger.busy  # a late answer to the older trace: dropped, still busy
    assert ledger.finish(printed) and ledger.busy  # the IR texts are no busy state
    assert ledger.finish(second) and not ledger.busy
    assert said == [True, False]


def test_a_trace_whose_layout_follows_stays_busy_until_the_layout_ends() -> None:
    ledger, said = _ledger()
    trace = ledger.start("user")
    assert ledger.finish(trace, more_to_come=True) and ledger.busy
    layout = ledger.start("layout")
    again = ledger.start("layout")  # the user toggled a cluster meanwhile
    assert not ledger.finish(layout) and ledger.busy
    assert ledger.finish(again) and not ledger.busy
    assert said == [True, False]


def test_dropping_a_lane_makes_its_answers_moot() -> None:
    ledger, _ = _ledger()
    parse = ledger.start("ir")
    ledger.drop("ir")
    assert not ledger.finish(parse)


def test_answers_on_other_threads_see_the_latest_request() -> None:
    ledger, _ = _ledger()
    tickets = [ledger.start("layout") for _ in range(50)]
    seen: list[bool] = []
    threads = [threading.Thread(target=lambda t=t: seen.append(ledger.current(t))) for t in tickets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == [False] * 49 + [True]
