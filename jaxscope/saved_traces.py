"""Saved traces (`schema.trace_file`) as the commands and the app use them: record one from a target
in one worker (trace, jaxpr, StableHLO, compiled HLO, optionally a run, the user's sources), write it,
and open one in place of a target: every command that reads a target takes `NAME.jaxscope` and then
needs no user code, no worker and no user library.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Callable
from typing import Any

from jaxscope.about import __version__
from jaxscope.schema.files import MAX_SOURCE_BYTES, digest, read_bytes
from jaxscope.schema.trace import TraceResult
from jaxscope.schema.trace_file import SUFFIX, DocumentError, TraceDocument, encode, read, user_files
from jaxscope.session import SessionError

_opened: dict[str, tuple[tuple[float, int], TraceDocument]] = {}  # path -> (mtime, size), document: read once per command


def is_document(target: str) -> bool:
    return target.endswith(SUFFIX)


def load(path: str) -> TraceDocument:
    """The document at `path` (read once while it is unchanged); a SessionError that says what is
    wrong with it otherwise."""
    path = os.path.abspath(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SessionError(f"cannot open {path}: {exc.strerror or exc}", 2) from exc
    stamp = (st.st_mtime, st.st_size)
    seen = _opened.get(path)
    if seen is not None and seen[0] == stamp:
        return seen[1]
    try:
        doc = read(path)
    except DocumentError as exc:
        raise SessionError(str(exc), 2) from exc
    _opened.clear()
    _opened[path] = (stamp, doc)
    return doc


def snapshot(trace: TraceResult, warn: Callable[[str], None] | None = None) -> dict[str, str]:
    """The text of each user file of `trace`, read now and kept only while it has the bytes that
    were traced (`TraceResult.source_hashes`): a file saved over since (an edit, a re-trace that
    failed) would pair the graph with code it did not come from. What is left out is said to `warn`."""
    from jaxscope.targets.discover import DiscoveryError, decode_source

    out: dict[str, str] = {}
    for path in user_files(trace):
        try:
            data = read_bytes(path, MAX_SOURCE_BYTES)
            traced = trace.source_hashes.get(path)
            if traced is not None and digest(data) != traced:
                raise OSError(
                    f"{os.path.basename(path)} changed since it was traced: its source is not saved with the trace "
                    "(trace it again, then save)"
                )
            out[path] = decode_source(data, path)
        except (OSError, DiscoveryError) as exc:  # gone since the trace, not a file, too big, changed, or no text
            if warn is not None and not isinstance(exc, FileNotFoundError):
                warn(f"{path}: {exc.strerror or exc}" if isinstance(exc, OSError) and exc.strerror else str(exc))
    return out


def stamp() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write(doc: TraceDocument, path: str) -> int:
    """Write `doc` to `path` (the previous file stays if this fails); its size in bytes."""
    from jaxscope.exporter import write_output

    blob = encode(doc)

    def put(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(blob)

    write_output(path, put)
    return len(blob)


def record(
    target: str,
    args: str | None,
    inputs: str | None,
    *,
    timeout: float | None = None,
    debug: bool = False,
    python: str | None = None,
    env: dict[str, str] | None = None,
    device: str = "",
    compile_hlo: bool = True,
    run: bool = False,
    profile: int = 0,
) -> TraceDocument:
    """Trace `target` and gather what the window would show of it, in one worker: the trace with its
    jaxpr, control flow and diagnostics, StableHLO, the compiled HLO (`compile_hlo`), a run against
    eager (`run`), the compiled program's runs under the profiler (`profile` > 0: its measured time on
    the device, kept for a machine without it), and the user's source files. A failing IR or run step is left out with a warning
    on stderr; a failing trace is a SessionError."""
    from jaxscope.schema.codec import from_jsonable
    from jaxscope.schema.hlo import HloRequest, HloResult, Stage
    from jaxscope.schema.run import RunRequest, RunResult, run_result_from_jsonable
    from jaxscope.session import client_job, close_soon, one_off_client, trace

    timeouts = {phase: timeout for phase in ("trace", "inputs", "lower", "compile", "run")} if timeout else None
    client = one_off_client(timeouts, python, env)
    try:
        result = trace(target, args, inputs=inputs, debug=debug, jaxpr_text=True, record_flow=True, client=client, device=device)
        request = result.request

        def step(what: str, op: str, job: object, decode: Callable[[Any], Any]) -> Any:
            try:
                return client_job(client, op, job, decode, debug)
            except SessionError as exc:
                print(f"jaxscope: warning: the document has no {what}: {exc}", file=sys.stderr)
                return None

        def hlo(stage: Stage) -> HloResult | None:
            runs = profile if stage == "compiled" else 0
            job = HloRequest(request.function, request.args, stage, inputs=request.inputs, profile=runs, device=device)
            found: HloResult | None = step(f"{stage} text", "hlo", job, lambda d: from_jsonable(HloResult, d))
            return found

        stablehlo = hlo("stablehlo")
        compiled = hlo("compiled") if compile_hlo else None
        ran: RunResult | None = None
        if run:
            job = RunRequest(function=request.function, args=request.args, inputs=request.inputs, device=device)
            ran = step("run", "run", job, run_result_from_jsonable)
    finally:
        close_soon(client)
    sources = snapshot(result, warn=lambda text: print(f"jaxscope: warning: {text}", file=sys.stderr))
    return TraceDocument(result, stablehlo, compiled, ran, sources, stamp(), __version__)
