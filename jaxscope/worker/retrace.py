"""The `retrace` request: would jit trace `f` again for new arguments? Asked of JAX itself.

Both calls go through one `jax.jit` of one wrapper object, so the second call hits JAX's trace
cache exactly when jit would reuse the trace; the wrapper counts how often Python ran. JAX's
cache-miss explanation (`jax_explain_cache_misses`) is captured from its logger as well.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import jax

from jaxscope.analysis.retrace import RetraceRequest, RetraceResult, diff_calls
from jaxscope.targets.discover import DiscoveryError, discover_file
from jaxscope.worker.trace import Phase, bind, parse_call, prepare, trace_failure


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "CACHE MISS" in text:  # the 'at' of a miss seen from jaxscope's worker is not the user's
            self.messages.append(re.sub(r"CACHE MISS at <[^>]*>:[\d:]+ \([^)]*\):", "CACHE MISS:", text))


def run_retrace(request: RetraceRequest, phase: Phase) -> RetraceResult:
    """Trace with `before`, then `after`, through one jit; raise TraceError if either fails."""
    before = prepare(request.function, request.before, phase)
    after_call = parse_call(request.after)
    after = bind(before.fn, after_call, request.function.qualname)
    fn_info = None
    if request.function.path:
        try:
            fn_info = discover_file(request.function.path).get(request.function.qualname)
        except DiscoveryError:
            pass
    reasons = tuple(diff_calls(fn_info, parse_call(request.before), after_call))
    if (before.static_argnums, before.static_argnames) != (after.static_argnums, after.static_argnames):
        return RetraceResult(request, retraced=True, reasons=reasons, checked_by_jax=False)

    phase("trace")
    runs = [0]
    target = before.target

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs[0] += 1
        return target(*args, **kwargs)

    functools.update_wrapper(counted, target)  # JAX names and explains it as the user's function
    jitted = before.jit(counted)
    jax.clear_caches()
    _trace(jitted, before, "trace (before)")
    first = runs[0]
    capture = _Capture()
    logger = logging.getLogger("jax")
    flag = "jax_explain_cache_misses"  # an attribute jax sets on Config at runtime (typed from 0.12 on): read by name
    old = getattr(jax.config, flag)
    logger.addHandler(capture)
    jax.config.update(flag, True)
    try:
        _trace(jitted, after, "trace (after)")
    finally:
        jax.config.update(flag, old)
        logger.removeHandler(capture)
    return RetraceResult(request, retraced=runs[0] > first, reasons=reasons, jax_says="\n".join(capture.messages))


def _trace(jitted: Any, prep: Any, phase: str) -> None:
    try:
        jitted.trace(*prep.args, **prep.kwargs)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise trace_failure(exc, phase) from None
