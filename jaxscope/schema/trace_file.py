"""A saved trace: one file that holds everything the window shows of a trace, readable without the
user's code, their libraries, jax or a worker (`jaxscope save`, File -> Save Trace).

The file is gzip-compressed JSON (`zcat NAME.jaxscope | python -m json.tool` reads it):

    {"format": "jaxscope-trace", "version": 1, "jaxscope": "0.1.0", "created": "2026-...Z",
     "trace": <TraceResult, its graph in wire form (`graph_wire`)>,
     "stablehlo": <HloResult> | null, "compiled": <HloResult> | null, "run": <RunResult> | null,
     "sources": {path: text, ...}}

A reader refuses a newer `version` with a message that says so (what wrote it, what reads it); a
file that is not gzip, not JSON or lacks a part is "damaged", never a traceback.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import dataclass, field
from typing import Any

from jaxscope.schema.codec import from_jsonable, to_jsonable
from jaxscope.schema.collector import gc_paused
from jaxscope.schema.errors import JaxscopeError
from jaxscope.schema.files import MAX_SOURCE_BYTES, read_bytes
from jaxscope.schema.graph import SCHEMA_VERSION
from jaxscope.schema.graph_wire import to_wire_jsonable
from jaxscope.schema.hlo import HloResult
from jaxscope.schema.run import RunResult, run_result_from_jsonable
from jaxscope.schema.trace import TraceResult, result_from_jsonable
from jaxscope.schema.trace_file_check import (
    CheckError,
    cut,
    expect,
    fields,
    graph_path,
    hlo_maps,
    shown,
    text,
    typed,
    wire_graph,
)

FORMAT = "jaxscope-trace"
DOCUMENT_VERSION = 1
SUFFIX = ".jaxscope"

try:
    import orjson

    def _dumps(data: Any) -> bytes:
        return orjson.dumps(data)

    _loads: Any = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency; plain json keeps a stripped install working

    def _dumps(data: Any) -> bytes:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    _loads = json.loads


class DocumentError(JaxscopeError, ValueError):
    """A file that is no trace document this jaxscope can read (another format, a newer version,
    damaged or too big), and why. Remedy: open it with the jaxscope that saved it, or save it again."""


@dataclass(frozen=True, slots=True)
class TraceDocument:
    """One saved trace: the trace (graph with scopes and links, jaxpr text, control-flow record,
    diagnostics, inputs), the IR texts when they were computed, the last run, and the user's source
    files as they were when it was saved."""

    trace: TraceResult
    stablehlo: HloResult | None = None
    compiled: HloResult | None = None
    run: RunResult | None = None
    sources: dict[str, str] = field(default_factory=dict)  # absolute path -> text
    created: str = ""  # ISO 8601, UTC
    jaxscope_version: str = ""

    @property
    def target(self) -> str:
        """What was traced, as the user named it (`file.py::fn`), and with which inputs."""
        request = self.trace.request
        with_ = f" --inputs {request.inputs}" if request.inputs else f" --args {request.args!r}" if request.args else ""
        return request.function.display() + with_

    def hlo(self, stage: str) -> HloResult | None:
        return self.compiled if stage == "compiled" else self.stablehlo

    def source(self, path: str) -> str | None:
        """The saved text of `path` (None: not saved)."""
        return self.sources.get(path)


def encode(doc: TraceDocument, level: int = 6) -> bytes:
    """The file's bytes. The JSON is built from the codec's plain form (the graph as its compact wire)."""
    with gc_paused():
        data = {
            "format": FORMAT,
            "version": DOCUMENT_VERSION,
            "jaxscope": doc.jaxscope_version,
            "created": doc.created,
            "trace": to_wire_jsonable(doc.trace),
            "stablehlo": to_jsonable(doc.stablehlo),
            "compiled": to_jsonable(doc.compiled),
            "run": to_jsonable(doc.run),
            "sources": doc.sources,
        }
        raw = _dumps(data)
    return gzip.compress(raw, compresslevel=level, mtime=0)  # mtime 0: the same trace saves to the same bytes


def limit_bytes() -> int:
    """The most bytes a document may inflate to (`JAXSCOPE_DOCUMENT_LIMIT_MB`, 256 MB by default: a
    50k-equation train step with its IR texts inflates to tens of MB); the file itself is smaller."""
    try:
        return max(1, int(os.environ.get("JAXSCOPE_DOCUMENT_LIMIT_MB", "256"))) << 20
    except ValueError:
        return 256 << 20


def decode(blob: bytes, name: str = "the file") -> TraceDocument:
    """A document from a file's bytes; a DocumentError (naming `name`) for anything else. Nothing is
    decoded before `document_check` has checked the whole JSON: types, sizes, references, no cycles."""
    if blob[:2] != b"\x1f\x8b":
        if blob.lstrip()[:1] in (b"{", b"["):
            raise DocumentError(
                f"{name} is JSON, not a saved trace (a graph exported with --format json?): "
                f"save one with `jaxscope save TARGET -o NAME{SUFFIX}`"
            )
        raise DocumentError(
            f"{name} is not a jaxscope trace document (it is not gzip-compressed): save one with `jaxscope save TARGET -o NAME{SUFFIX}`"
        )
    raw = _inflate(blob, name, limit_bytes())
    with gc_paused():
        try:
            data = _loads(raw)
        except (ValueError, RecursionError) as exc:
            raise DocumentError(f"{name} is damaged: its content is not valid JSON ({shown(str(exc), 120)})") from None
        del raw
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DocumentError(f'{name} is gzip-compressed but no jaxscope trace document (no "format": "{FORMAT}")')
    version = data.get("version")
    if type(version) is not int or version < 1:
        raise DocumentError(f"{name} is damaged: its format version is {shown(version)}")
    if version > DOCUMENT_VERSION:
        raise DocumentError(
            f"{name} was saved by jaxscope {cut(data.get('jaxscope') or '?')} in trace format {version}; "
            f"this jaxscope reads format {DOCUMENT_VERSION} and older: upgrade jaxscope to open it"
        )
    try:
        _check(data)
    except CheckError as exc:
        raise DocumentError(f"{name} is damaged: {exc}") from None
    try:
        with gc_paused():
            trace = result_from_jsonable(data["trace"])
            stablehlo = from_jsonable(HloResult | None, data.get("stablehlo"))
            compiled = from_jsonable(HloResult | None, data.get("compiled"))
            run = run_result_from_jsonable(data["run"]) if data.get("run") is not None else None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # what the check lets through is a bug here
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise DocumentError(f"{name} is damaged: {shown(what, 200)}") from None
    return TraceDocument(trace, stablehlo, compiled, run, data.get("sources") or {}, data.get("created") or "", data.get("jaxscope") or "")


def _inflate(blob: bytes, name: str, limit: int) -> bytearray:
    """The gzip members of `blob`, inflated a megabyte at a time and refused past `limit` bytes (a
    2 MB file can inflate to gigabytes)."""
    out = bytearray()
    data = blob
    try:
        while data:
            z = zlib.decompressobj(wbits=31)  # gzip framing, CRC and length checked
            while data and not z.eof:
                out += z.decompress(data, 1 << 20)
                if len(out) > limit:
                    raise DocumentError(
                        f"{name} inflates to more than {limit >> 20} MB, more than a saved trace holds "
                        f"(a compressed bomb?); if it is a real trace, raise JAXSCOPE_DOCUMENT_LIMIT_MB"
                    )
                data = z.unconsumed_tail
            if not z.eof:
                raise EOFError("the compressed data ends before its last block")
            data = z.unused_data.lstrip(b"\0")  # another member may follow (`cat a.gz b.gz`); zero padding may
    except (EOFError, zlib.error) as exc:
        raise DocumentError(f"{name} is damaged: its compressed data is cut short or corrupt ({exc})") from None
    return out


def _check(data: dict[str, Any]) -> None:
    """`document_check` over the parts of a document (`CheckError` for the first fault)."""
    for key in ("jaxscope", "created"):
        text(data.get(key) or "", key, 200)
    trace = fields(data.get("trace"), "trace")
    typed(TraceResult, trace, "trace", skip=lambda f: f == "graph")
    version = trace.get("schema_version", SCHEMA_VERSION)
    expect(version <= SCHEMA_VERSION, "trace.schema_version", f"{version} is newer than this jaxscope reads ({SCHEMA_VERSION})")
    graph = wire_graph(trace.get("graph"), "trace.graph")
    for k, diagnostic in enumerate(trace.get("diagnostics") or ()):
        for j, path in enumerate(diagnostic.get("nodes") or ()):
            graph_path(path, graph, f"trace.diagnostics[{k}].nodes[{j}]")
    for stage in ("stablehlo", "compiled"):
        typed(HloResult, data.get(stage), stage)
        if isinstance(data.get(stage), dict):
            hlo_maps(data[stage], stage, graph)
    typed(RunResult, data.get("run"), "run")
    sources = fields(data.get("sources") or {}, "sources")
    for path, source in sources.items():
        text(path, "sources", 4096)
        text(source, f"sources[{shown(path)}]", MAX_SOURCE_BYTES)


def read(path: str) -> TraceDocument:
    """`decode` of the regular file at `path` (an OSError, a FIFO, a device or a file too big to
    be a trace: a DocumentError)."""
    try:
        blob = read_bytes(path, limit_bytes())
    except OSError as exc:
        raise DocumentError(f"cannot read {path}: {exc.strerror or exc}") from None
    return decode(blob, path)


def user_files(trace: TraceResult) -> list[str]:
    """The user's source files a trace involves (the function's, the maker's, each file that ran
    while tracing and each user frame of an equation): what a document keeps a copy of."""
    seen: dict[str, None] = {}
    request = trace.request
    if request.function.path:
        seen[request.function.path] = None
    maker_path, sep, _ = request.inputs.rpartition("::")
    if sep and maker_path.endswith(".py"):
        seen[maker_path] = None
    if trace.flow is not None:
        for f in trace.flow.files:
            seen.setdefault(f.path, None)
    frames: set[int] = set()
    for body in trace.graph.bodies.values():
        for node in body.nodes:
            if node.source is not None and not node.source.library:
                seen.setdefault(node.source.file, None)
            if node.frames and id(node.frames) not in frames:  # equal chains are one tuple: walked once
                frames.add(id(node.frames))
                for loc in node.frames:
                    if not loc.library:
                        seen.setdefault(loc.file, None)
    return [p for p in seen if p and not p.startswith("<")]
