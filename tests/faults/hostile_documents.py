"""Hostile saved traces, made from real ones at the JSON level (issue 46): a sub-graph cycle, a
gzip bomb, escapes in every text, fields of the wrong type."""

from __future__ import annotations

import copy
import gzip
import json
import random
import zlib
from pathlib import Path
from typing import Any

ESC = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[31mred\x9b2J\u202e"


def load_json(path: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def write_json(data: dict[str, Any], path: Path) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data).encode(), mtime=0))
    return path


def with_cycle(data: dict[str, Any]) -> dict[str, Any]:
    """One body's sub-jaxpr points back at the root (a node of a non-root body, or of the root)."""
    data = copy.deepcopy(data)
    graph = data["trace"]["graph"]
    root = graph["root"]
    body = next((b for k, b in graph["bodies"].items() if k != root and b["nodes"]), graph["bodies"][root])
    node = next(n for n in body["nodes"] if n[1] == "eqn")
    node[8] = [*node[8], "cycle", root, "jaxpr"]
    return data


def bomb(path: Path, inflated_mb: int) -> Path:
    """A document whose JSON is a few hundred bytes of header and `inflated_mb` MB of spaces."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [z.compress(b'{"format": "jaxscope-trace", "version": 1, "trace": "')]
    chunk = b" " * (1 << 20)
    parts += [z.compress(chunk) for _ in range(inflated_mb)]
    parts += [z.compress(b'"}'), z.flush()]
    path.write_bytes(b"".join(parts))
    return path


def escaped_everywhere(data: dict[str, Any]) -> dict[str, Any]:
    """ESC, OSC and C1 bytes and a bidi override in every string a command can print."""
    data = copy.deepcopy(data)

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return value if key in ("path", "file", "wire", "format", "kind", "severity", "stage", "verdict") else value + ESC
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        return value

    trace = data["trace"]
    for field in ("jaxpr_text", "diagnostics", "warnings", "flow"):
        trace[field] = walk(trace.get(field), field)
    graph = trace["graph"]
    for body in graph["bodies"].values():
        body["title"] += ESC
        for node in body["nodes"]:
            if node[1] == "eqn":
                node[7] = node[7] + ESC  # the scope
                node[5] = [v + ESC for v in node[5]]  # params
    for stage in ("stablehlo", "compiled"):
        if data.get(stage):
            data[stage]["text"] = ESC + data[stage]["text"].replace("\n", ESC + "\n")
    data["sources"] = {p: t.replace("\n", f"  # {ESC}\n") for p, t in data["sources"].items()}
    return data


# ------------------------------------------------------------------------------ the field fuzzer

ODD_VALUES: list[Any] = [
    None,
    -1,
    -(2**40),
    2**70,
    1.5,
    True,
    "",
    "x",
    "\x1b]0;t\x07",
    "A" * 100_000,
    [],
    {},
    [1, "a"],
    {"a": 1},
    [[[[[[[[]]]]]]]],
    "e0:99/e0",
    "e0:-1/e1",
]


def positions(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((value, k))
            positions(v, out)
    elif isinstance(value, list):
        for k, v in enumerate(value):
            out.append((value, k))
            positions(v, out)
    return out


def mutate(data: dict[str, Any], rng: random.Random, count: int = 1) -> dict[str, Any]:
    """`data` with `count` fields replaced by a value of another type, another field's value, or removed."""
    data = copy.deepcopy(data)
    spots = positions(data, [])
    for _ in range(count):
        container, key = rng.choice(spots)
        roll = rng.random()
        if roll < 0.15 and isinstance(container, dict):
            container.pop(key, None)
        elif roll < 0.35:
            container[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif roll < 0.55 and isinstance(container[key], int) and not isinstance(container[key], bool):
            container[key] = rng.choice([-1, -2, container[key] + 1, container[key] * 1000, 2**31])
        else:
            other_container, other_key = rng.choice(spots)
            try:
                container[key] = copy.deepcopy(other_container[other_key])
            except (KeyError, IndexError):
                container[key] = rng.choice(ODD_VALUES)
    return data


def with_dtype_digits(data: dict[str, Any], digits: int) -> dict[str, Any]:
    """Every aval's dtype a number of `digits` digits (`f999…[3]`): no array's, a float overflow
    (400 digits) or past Python's 4,300-digit conversion limit (5,000) when read as bits."""
    data = copy.deepcopy(data)
    for body in data["trace"]["graph"]["bodies"].values():
        for node in body["nodes"]:
            node[3] = ["f" + "9" * digits + "[3]" for _ in node[3]]
    return data


def with_flow_past_the_source(data: dict[str, Any]) -> dict[str, Any]:
    """Control-flow marks on lines a million past the saved source's end."""
    data = copy.deepcopy(data)
    for record in data["trace"]["flow"]["files"]:
        record["line_hits"].append([10**6, 1])
        for construct in record["constructs"]:
            construct["line"], construct["end_line"] = 10**6, 10**6 + 3
    return data
