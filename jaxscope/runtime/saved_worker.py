"""A saved trace in the worker's place: the window asks for its trace, jaxpr, IR texts and run as
it asks a worker, and a document (`schema.trace_file`) answers, with no code, jax or process. What it
cannot answer (other inputs, a retrace, a run it did not save) fails as a worker's error would,
with a message that says why."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, NoReturn

from jaxscope.runtime.worker_client import WorkerError
from jaxscope.schema.trace import ErrorInfo, JaxprText, TraceRequest, TraceResult
from jaxscope.schema.trace_file import TraceDocument


class SavedWorker:
    busy = False  # answers at once: never busy

    def __init__(self, doc: TraceDocument, name: str) -> None:
        self.doc, self.name = doc, name

    def trace(self, request: TraceRequest, on_phase: Any = None, tap: Callable[[bytes | None], None] | None = None) -> Future[TraceResult]:
        return self.submit("trace", request, lambda d: d, on_phase, tap)

    def submit(
        self, op: str, request: Any, decode: Callable[[Any], Any], on_phase: Any = None, tap: Callable[[bytes | None], None] | None = None
    ) -> Future[Any]:
        future: Future[Any] = Future()
        if tap is not None:
            tap(None)
        try:
            future.set_result(self._answer(op, request))
        except WorkerError as exc:
            future.set_exception(exc)
        return future

    def _answer(self, op: str, request: Any) -> Any:
        saved = self.doc.trace.request
        asked = (request.function.qualname, getattr(request, "args", ""), getattr(request, "inputs", ""))
        if asked != (saved.function.qualname, saved.args, saved.inputs) or op not in ("trace", "jaxpr", "hlo", "run"):
            what = "trace other inputs" if op in ("trace", "jaxpr", "hlo") else f"{op} again"
            self._fail(
                f"{self.name} is a saved trace of {self.doc.target}: it holds no code to {what}. "
                f"Open {saved.function.path or 'the source file'} to trace it live."
            )
        if op == "trace":
            return self.doc.trace
        if op == "jaxpr":
            return JaxprText(request, self.doc.trace.jaxpr_text)
        if op == "hlo":
            found = self.doc.hlo(request.stage)
            if found is None:
                self._fail(f"{self.name} holds no {request.stage} text (it was not computed when the trace was saved)")
            if request.stage == "compiled" and getattr(request, "profile", 0) and found.run_s <= 0:
                self._fail(
                    f"{self.name} holds no profiled run (it was saved before one): measured time needs the program "
                    f"run live: open {saved.function.path or 'the source file'} to trace it"
                )
            return found
        if self.doc.run is None:
            self._fail(f"{self.name} holds no run: save the trace after a run (or `jaxscope save --run`) to keep one")
        return self.doc.run

    @staticmethod
    def _fail(message: str) -> NoReturn:
        raise WorkerError(ErrorInfo(kind="spec", message=message, phase="saved trace"))
