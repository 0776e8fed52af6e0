"""A saved trace answering in the worker's place says what it cannot answer."""

from __future__ import annotations

import pytest

from jaxscope.runtime.saved_worker import SavedWorker
from jaxscope.runtime.worker_client import WorkerError
from jaxscope.schema.hlo import HloRequest
from tests.schema.test_document import _doc


def test_a_profiled_run_it_does_not_hold_is_refused_with_the_way_to_one() -> None:
    """Measured time asks for the compiled program run under the profiler: a saved trace with no
    profiled run says so (it answered with its plain compiled text, and the Cost pane waited)."""
    doc = _doc()
    saved = SavedWorker(doc, "x.jaxscope")
    ref, args = doc.trace.request.function, doc.trace.request.args
    plain = saved.submit("hlo", HloRequest(ref, args, "compiled"), lambda d: d).result()
    assert plain is doc.hlo("compiled")
    with pytest.raises(WorkerError, match="holds no profiled run") as caught:
        saved.submit("hlo", HloRequest(ref, args, "compiled", profile=5), lambda d: d).result()
    assert "/p/model.py" in caught.value.info.message  # where to trace it live
