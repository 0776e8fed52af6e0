"""The worker wire format: one JSON object per line, on a private pipe.

User prints and XLA logs go to the worker's stdout/stderr, which the client drains separately,
so they can never corrupt a message. Non-finite floats are not valid JSON: senders encode them
as strings (see `dumps`).
"""

from __future__ import annotations

import json
import math
from typing import Any, BinaryIO

PROTOCOL_VERSION = 1


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)  # "nan", "inf", "-inf"
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dumps(message: dict[str, Any]) -> bytes:
    """Encode one message as a strict-JSON line."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def write(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(dumps(message))
    stream.flush()


def read(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message, or None at end of stream."""
    line = stream.readline()
    if not line:
        return None
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("protocol message is not an object")
    return data
