"""What the user's code did at trace time that the compiled program will not do again (issue 56).

Two watches around one trace, each cheap (no trace function: the trace of a big model stays as fast):

- `HostCalls` wraps the host's sources of changing values for the length of the trace (the module
  functions of `numpy.random` and `random`, `time.time`/`perf_counter`/`monotonic`, `os.urandom`) and
  records each call made *directly* from the user's code, with its line: what it returned is baked
  into the program as a constant.
- `StateSnapshot` fingerprints the state a function can keep outside its arguments (the contents of
  module-level containers, the attributes of the user's objects held in globals, the traced
  function's closure cells and, for a method, its object) before and after: a counter incremented
  at trace time shows as an attribute, item or cell that changed.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from collections.abc import Callable, Iterable
from types import FunctionType, ModuleType
from typing import Any, Literal

import numpy as np

from jaxscope.schema.graph import SourceLoc
from jaxscope.worker.userframes import is_user_file

MAX_ITEMS = 200  # items looked at per container or object
_RANDOM = (
    "random", "uniform", "randint", "randrange", "gauss", "normalvariate", "choice", "choices", "shuffle", "sample",
    "getrandbits", "betavariate", "expovariate",
)  # fmt: skip
_NOT_DRAWS = ("seed", "get_state", "set_state", "set_bit_generator", "get_bit_generator")
_TIME = ("time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns")


def _sources() -> list[tuple[Any, str, str]]:
    """(module, attribute, shown name) of each host function whose value changes from call to call."""
    found = [(np.random, name, f"np.random.{name}") for name in dir(np.random) if not name.startswith("_") and _is_draw(np.random, name)]
    found += [(random, name, f"random.{name}") for name in _RANDOM if hasattr(random, name)]
    found += [(time, name, f"time.{name}") for name in _TIME if hasattr(time, name)]
    found.append((os, "urandom", "os.urandom"))
    return found


def _is_draw(module: ModuleType, name: str) -> bool:
    value = getattr(module, name, None)
    return (
        callable(value)
        and not isinstance(value, type)
        and name not in ("seed", "get_state", "set_state", "set_bit_generator", "get_bit_generator")
    )


class HostCalls:
    """Context manager: calls of the host's changing values made from user lines while it is open."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, int, str], SourceLoc] = {}  # (file, line, name) -> where
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> HostCalls:
        for module, attr, shown in _sources():
            original = getattr(module, attr)
            self._saved.append((module, attr, original))
            setattr(module, attr, self._wrap(original, shown))
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        for module, attr, original in reversed(self._saved):
            setattr(module, attr, original)
        self._saved.clear()
        return False

    def _wrap(self, original: Callable[..., Any], shown: str) -> Callable[..., Any]:
        calls = self.calls

        @functools.wraps(original)
        def watched(*args: Any, **kwargs: Any) -> Any:
            frame = sys._getframe(1)
            code = frame.f_code
            if is_user_file(code.co_filename):
                key = (code.co_filename, frame.f_lineno, shown)
                calls.setdefault(key, SourceLoc(code.co_filename, frame.f_lineno, function=code.co_qualname))
            return original(*args, **kwargs)

        return watched


def _contents(value: Any, any_object: bool = False) -> dict[str, int] | None:
    """What a container or an object holds, as key -> identity (None: nothing to look into). An
    object's attributes count when its class is the user's (or `any_object`: a method's own object)."""
    if isinstance(value, dict):
        return {repr(k)[:60]: id(v) for _, (k, v) in zip(range(MAX_ITEMS), value.items(), strict=False)}
    if isinstance(value, list):
        return {f"[{i}]": id(v) for i, v in enumerate(value[:MAX_ITEMS])} | {"len": len(value)}
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict) and not isinstance(value, (ModuleType, type, FunctionType)) and (any_object or _user_class(value)):
        return {str(k): id(v) for _, (k, v) in zip(range(MAX_ITEMS), state.items(), strict=False)}
    return None


def _user_class(value: Any) -> bool:
    module = sys.modules.get(type(value).__module__)
    return is_user_file(getattr(module, "__file__", None) or "")


Probe = tuple[str, Callable[[], "dict[str, int] | None"], bool]  # (what the user calls it, its fingerprint now, a module global)


def probes(modules: Iterable[ModuleType], fn: Any) -> list[Probe]:
    """The state a traced function can reach besides its arguments: the user's module globals that hold
    containers or user objects, the object of a bound method, its closure cells and what they hold."""
    out: list[Probe] = []
    for module in modules:
        for name, value in list(vars(module).items()):
            if not name.startswith("__") and _contents(value) is not None:
                out.append((name, functools.partial(_contents, value), True))
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, ModuleType):
        out.append(("self", functools.partial(_contents, owner, True), False))
    target = getattr(fn, "__func__", fn)
    names = getattr(getattr(target, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, getattr(target, "__closure__", None) or (), strict=False):
        out.append((name, functools.partial(_cell, cell), False))
    return out


def _cell(cell: Any) -> dict[str, int] | None:
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return None
    return {"": id(value)} | (_contents(value) or {})


class StateSnapshot:
    """The probes' fingerprints now; `changed()` says which changed since, and where inside."""

    def __init__(self, found: list[Probe]) -> None:
        self._probes = found
        self._before = {name: read() for name, read, _ in found}

    def changed(self, referenced: set[str]) -> list[tuple[str, list[str]]]:
        """(holder name, the attributes or keys that changed; "" for the holder itself). A global
        counts only where `referenced` (names the traced code reads) holds it; `own` always do."""
        out = []
        for name, read, is_global in self._probes:
            if is_global and name not in referenced:
                continue
            before, now = self._before.get(name), read()
            if before is None or now is None or before == now:
                continue
            keys = [k for k in dict.fromkeys([*before, *now]) if before.get(k) != now.get(k)]
            out.append((name, keys))
        return out
