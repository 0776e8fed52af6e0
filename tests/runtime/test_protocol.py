"""The worker wire format: long lists travel as separate lines and come back in place."""

from __future__ import annotations

import gc
import io
import json

from jaxscope.runtime import protocol


def roundtrip(message: dict) -> tuple[dict | None, list[bytes]]:
    data = protocol.dumps(message)
    return protocol.read(io.BytesIO(data)), data.splitlines()


def test_small_message_is_one_line():
    msg = {"id": 1, "ok": True, "result": {"x": [1, 2, 3], "nan": float("nan")}}
    back, lines = roundtrip(msg)
    assert len(lines) == 1 and back == {"id": 1, "ok": True, "result": {"x": [1, 2, 3], "nan": "nan"}}


def test_long_lists_are_split_into_parts_and_joined_in_order():
    n = protocol.PART_ITEMS
    nodes = [{"id": f"e{i}", "avals": ["f32[2]"]} for i in range(2 * n + 5)]
    msg = {"id": 7, "result": {"graph": {"bodies": {"b0": {"nodes": nodes, "edges": list(range(n + 1))}, "b1": {"nodes": nodes[:3]}}}}}
    back, lines = roundtrip(msg)
    assert len(lines) == 3 + 2 + 1  # 3 parts of nodes, 2 of edges, the message
    assert max(len(line) for line in lines) < len(json.dumps(nodes))  # no line carries the whole list
    assert back == msg
    assert msg["result"]["graph"]["bodies"]["b0"]["nodes"] is nodes  # the caller's message is untouched


def test_long_strings_are_split_into_parts_and_joined_in_order():
    """A printed jaxpr of megabytes: no single line (one json.loads, holding the GIL) carries it."""
    n = protocol.PART_CHARS
    text = ('abcdefg\n\té"\\ ' * n)[: 5 * n // 2]  # escapes, and a non-ASCII character
    assert 2 * n < len(text) < 3 * n
    msg = {"id": 3, "ok": True, "result": {"text": text, "short": "x" * 10, "lines": [text[:5]] * 3}}
    for plain in (False, True):
        data = protocol.dumps(msg, plain)
        lines = data.splitlines()
        assert len(lines) == 3 + 1 and max(len(line) for line in lines) < 2 * n  # three parts, then the message
        assert protocol.read(io.BytesIO(data)) == msg
    assert msg["result"]["text"] is text


def test_a_long_string_is_grown_part_by_part_and_lets_each_part_go():
    """One join of a 14.6 MB jaxpr held the GIL 41-43 ms in a big process (the GUI's stall while
    its reader thread put the text together): the text is appended to a part at a time, and each
    part let go once appended, whatever its kind of characters."""
    parts = {0: "ab" * 5, 1: "é" * 3, 2: "\U0001f600", 3: "z"}
    expected = "".join(parts.values())
    got = protocol.joined_text([0, 1, 2, 3], parts)
    assert got == expected and parts == {}
    assert protocol.joined_text([], {}) == ""


def test_messages_follow_each_other_and_the_end_of_stream_is_none():
    n = protocol.PART_ITEMS
    stream = io.BytesIO(protocol.dumps({"a": list(range(n + 1))}) + protocol.dumps({"b": 2}))
    assert protocol.read(stream) == {"a": list(range(n + 1))}
    assert protocol.read(stream) == {"b": 2}
    assert protocol.read(stream) is None
    truncated = protocol.dumps({"a": list(range(3 * n))}).splitlines(keepends=True)[0]
    assert protocol.read(io.BytesIO(truncated)) is None  # a worker that died mid-message


def test_a_message_in_parts_is_read_with_the_collector_paused_then_frozen():
    # Between two part lines the collector used to rescan every part read so far (40-90 ms
    # pauses in the GUI while a 50k-equation graph came in): it stays off until the message is
    # whole, the message is frozen, and the collector is on again afterwards, also at a cut-off end.
    message = {"graph": {"nodes": [[k, "add", [k, k + 1]] for k in range(3 * protocol.PART_ITEMS)]}}
    text = protocol.dumps(message)
    enabled_while_reading = []

    class Spy(io.BytesIO):
        def readline(self, *args):
            enabled_while_reading.append(gc.isenabled())
            return super().readline(*args)

    gc.unfreeze()
    try:
        assert protocol.read(Spy(text)) == message
        assert enabled_while_reading[0] and not any(enabled_while_reading[1:])  # off from the first part on
        assert gc.isenabled() and gc.get_freeze_count() > 0
        cut = b"".join(text.splitlines(keepends=True)[:2])
        assert protocol.read(Spy(cut)) is None and gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_plain_message_reads_back_as_the_json_encoded_one():
    """`plain` (no floats: a graph's wire form) goes through orjson: same lines read back the same,
    odd strings included."""
    n = protocol.PART_ITEMS
    nodes = [[f"e{i}", "eqn", 'añadir "x"\n\t\x01 → 𝔼', ["f32[2]"], [], None, True, -i] for i in range(2 * n + 5)]
    msg = {"id": 3, "event": "graph", "graph": {"bodies": {"b0": {"nodes": nodes, "edges": list(range(n + 1))}}, "t": ("a", 1)}}
    plain = protocol.dumps(msg, plain=True)
    assert len(plain.splitlines()) == len(protocol.dumps(msg).splitlines())
    assert protocol.read(io.BytesIO(plain)) == protocol.read(io.BytesIO(protocol.dumps(msg)))
    stream = io.BytesIO()
    protocol.write(stream, msg, plain=True)
    assert stream.getvalue() == plain
