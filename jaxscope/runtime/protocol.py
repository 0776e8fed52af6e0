"""The worker wire format: one JSON object per line, on a private pipe.

User prints and XLA logs go to the worker's stdout/stderr, which the client drains separately,
so they can never corrupt a message. Non-finite floats are not valid JSON: senders encode them
as strings (see `dumps`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from jaxscope.schema.collector import gc_paused

_fast: Callable[[Any], bytes] | None
try:
    import orjson

    def _fast(message: Any) -> bytes:
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
except ImportError:  # a worker in the user's own Python (--python) may lack orjson: plain json then
    _fast = None

PROTOCOL_VERSION = 1


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)  # "nan", "inf", "-inf"
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


PART_ITEMS = 2000  # a list longer than this travels in separate lines of at most this many items
PART_CHARS = 1 << 18  # and a string longer than this in lines of at most this many characters
_PARTS = "\x00jaxscope-parts"  # replaces a long list in the main message: {_PARTS: [part ids]}
_TEXT_PARTS = "\x00jaxscope-text-parts"  # replaces a long string: {_TEXT_PARTS: [part ids]}
_PART = "\x00jaxscope-part"  # a part line: {_PART: id, "items": [...] or "..."}


def _split(obj: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    """`obj` with its long lists and strings (found through dicts only: cheap) moved into `parts`.
    A string too: one json.loads of a 13 MB printed jaxpr held the GIL for 0.19 s, a stall of the
    GUI thread while its reply was read."""
    out = obj
    for key, value in obj.items():
        if isinstance(value, dict):
            new = _split(value, parts)
        elif isinstance(value, (list, tuple)) and len(value) > PART_ITEMS:
            ids = []
            for i in range(0, len(value), PART_ITEMS):
                ids.append(len(parts))
                parts.append(list(value[i : i + PART_ITEMS]))
            new = {_PARTS: ids}
        elif isinstance(value, str) and len(value) > PART_CHARS:
            ids = []
            for i in range(0, len(value), PART_CHARS):
                ids.append(len(parts))
                parts.append(value[i : i + PART_CHARS])
            new = {_TEXT_PARTS: ids}
        else:
            continue
        if out is obj:
            out = dict(obj)  # the caller's message stays as it was
        out[key] = new
    return out


def _join(obj: dict[str, Any], parts: dict[int, Any]) -> dict[str, Any]:
    for key, value in obj.items():
        if isinstance(value, dict):
            ids = value.get(_PARTS)
            text_ids = value.get(_TEXT_PARTS)
            if ids is not None and len(value) == 1:
                obj[key] = [item for i in ids for item in parts[i]]
            elif text_ids is not None and len(value) == 1:
                obj[key] = joined_text(text_ids, parts)
            else:
                _join(value, parts)
    return obj


def joined_text(ids: list[int], parts: dict[int, Any]) -> str:
    """The text parts `ids` as one string, grown part by part: one join of a 14.6 MB jaxpr held
    the GIL (the GUI's stall) 41-43 ms in a big process, as its fresh pages were first touched;
    appending to a string nothing else holds resizes it in place, a part's worth at a time
    (~3 ms at most), for ~3x a join's total. Each part is let go once appended."""
    text = ""
    for i in ids:
        text += parts.pop(i)
    return text


def _escaped(obj: Any) -> Any:
    """`obj` with every string that UTF-8 cannot carry (a lone surrogate, from a file name or a
    `named_scope` decoded with surrogateescape) written with its escapes shown: "\\udcff"."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return obj.encode("utf-8", "backslashreplace").decode("utf-8")
        return obj
    if isinstance(obj, dict):
        return {_escaped(k): _escaped(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_escaped(v) for v in obj]
    return obj


def _line(message: Any, plain: bool = False) -> bytes:
    try:
        return _encoded(message, plain)
    except (UnicodeEncodeError, TypeError) as exc:  # orjson says "str is not valid UTF-8" as a TypeError
        if isinstance(exc, TypeError) and "UTF-8" not in str(exc):
            raise
        return _encoded(_escaped(message), plain)


def _encoded(message: Any, plain: bool) -> bytes:
    if plain and _fast is not None:
        return _fast(message)
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def dumps(message: dict[str, Any], plain: bool = False) -> bytes:
    """Encode one message as strict-JSON lines: its long lists first, in parts, then the message.

    The reader decodes line by line, so no single `json.loads` (one GIL hold in the GUI process)
    is longer than a part: a 50k-equation graph in one line held the GIL for over a second.
    `plain` promises a message without floats (strings, ints, bools, None, lists and dicts with
    string keys, as a graph's wire form): orjson encodes it, 13x faster than `json` (gpt-50k's
    graph: 490 -> 37 ms); it would write a non-finite float as null, hence the promise."""
    return b"".join(_lines(message, plain))


def write(stream: BinaryIO, message: dict[str, Any], plain: bool = False) -> None:
    """`dumps(message, plain)` onto `stream`, each part as soon as it is encoded (the reader
    decodes a part while the next is encoded), then flushed."""
    for line in _lines(message, plain):
        stream.write(line)
    stream.flush()


def _lines(message: dict[str, Any], plain: bool = False) -> Iterator[bytes]:
    parts: list[Any] = []
    main = _split(message, parts)
    for i, items in enumerate(parts):
        yield _line({_PART: i, "items": items}, plain)
    yield _line(main, plain)


def read(stream: BinaryIO, on_line: Callable[[bytes], None] | None = None) -> dict[str, Any] | None:
    """The next message (its parts put back in place), or None at end of stream. `on_line` gets
    each raw line before it is decoded (to forward a reply to another process as it arrives)."""
    parts: dict[int, list[Any] | str] = {}  # a long list's or a long string's parts
    with contextlib.ExitStack() as paused:  # from the first part of a message to its end
        while True:
            line = stream.readline()
            if not line:
                return None
            if on_line is not None:
                on_line(line)
            with gc_paused():  # hundreds of thousands of new containers: no collection halfway through
                data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("protocol message is not an object")
            if _PART in data:
                if not parts:
                    # Paused per line only, the collector rescanned the parts read so far between
                    # two lines: 40-60 ms pauses in the GUI while a 50k-equation graph came in.
                    paused.enter_context(gc_paused())
                items = data.get("items")
                parts[int(data[_PART])] = items if isinstance(items, str) else list(items or ())
                continue
            if not parts:
                return data
            message = _join(data, parts)
            gc.freeze()  # a big message, alive now: no collection rescans it (see `collector`)
            return message
