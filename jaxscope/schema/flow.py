"""What Python control flow did while JAX traced, as data: constructs, per-file line hits, the report.

`jaxscope.analysis.flow` computes it from the worker's line hits; the app and the CLI show it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

ConstructKind = Literal["if", "elif", "ifexp", "for", "while", "comprehension", "match", "boolop"]


Verdict = Literal[
    "body taken",  # the if/elif body (or one match case) ran, the alternative did not
    "else taken",  # the condition was false every time (the else/elif, or nothing, ran)
    "both taken",  # different calls went different ways (e.g. a helper called with different statics)
    "never reached",  # the construct's first line never ran during the trace
    "unrolled",  # a Python loop: `count` iterations baked into the jaxpr
    "ran",  # a comprehension ran
    "line ran",  # its line ran; the alternatives share a line so which one is unknown
    "staged",  # on a line traced into staged control flow (lax.cond/switch/while/scan)
]


STAGED_ROLE_PREFIXES = ("cond branch", "switch branch", "while", "scan body")


RECORDING_STOPPED = "control-flow recording stopped"  # starts a trace's warning when the recorder gave up (too big)


def recording_stopped(warnings: Iterable[str]) -> str | None:
    """The trace warning that says the control-flow recorder gave up on a program too big for
    it (its result then has no flow), or None."""
    return next((w for w in warnings if w.startswith(RECORDING_STOPPED)), None)


@dataclass(frozen=True, slots=True)
class Construct:
    """One control-flow construct of the user's source and what the trace did with it.

    `count`: for if/elif/match how often the test ran; for loops the total iterations; for the
    rest the hits of its line. `per_call`: loops only, iterations in each call of the enclosing
    function that reached the loop (a helper called 3 times -> 3 entries).
    """

    file: str
    line: int
    end_line: int
    kind: ConstructKind
    verdict: Verdict
    detail: str = ""
    test: str = ""  # the condition / loop header / comprehension, as source text (truncated)
    count: int = 0
    per_call: tuple[int, ...] = ()
    col: int = 0


@dataclass(frozen=True, slots=True)
class FileFlow:
    """One user file: raw line hits, the constructs found in it, and its staged lines."""

    path: str
    line_hits: tuple[tuple[int, int], ...] = ()  # (line, hits), sorted by line
    constructs: tuple[Construct, ...] = ()  # sorted by (line, col)
    staged_lines: tuple[int, ...] = ()

    def construct_at(self, line: int, kind: str | None = None) -> Construct | None:
        for c in self.constructs:
            if c.line == line and (kind is None or c.kind == kind):
                return c
        return None

    def hits(self, line: int) -> int:
        for ln, n in self.line_hits:
            if ln == line:
                return n
        return 0


@dataclass(frozen=True, slots=True)
class FlowReport:
    """Every user file that ran while tracing, plus the recorder's counters (its cost grows with
    `call_events`: about 2.5-3x the plain trace time before Python 3.12, a few % after; see the
    worker's pyflow module)."""

    files: tuple[FileFlow, ...] = ()
    user_calls: int = 0  # calls of user code objects seen
    line_events: int = 0
    call_events: int = 0  # every Python call seen by the global hook, jax's included
    analyse_s: float = 0.0
    notes: tuple[str, ...] = ()

    def file(self, path: str) -> FileFlow | None:
        want = normalized_path(path)
        for f in self.files:
            if normalized_path(f.path) == want:
                return f
        return None


def normalized_path(path: str) -> str:
    return os.path.normcase(os.path.abspath(path)) if path else path
