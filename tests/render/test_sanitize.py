"""Hostile strings stay literal text in XML and DOT, and the output stays valid."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxscope.render.sanitize import REPLACEMENT, clean_text, dot_escape, dot_id, dot_string, xml_attr, xml_text
from tests.conftest import HOSTILE


def test_clean_text_keeps_ordinary_text():
    for s in (
        "",
        "x",
        "params['w1']",
        "函数",
        "emoji 🙂",
        "tab\there",
        "two\nlines",
        "é ß Ω",
        "zero\u200bwidth",
        "mark\u200eltr\u200frtl",
        "\u061c",
    ):
        assert clean_text(s) == s


@pytest.mark.parametrize(
    "bad",
    [
        "\x00",
        "\x01",
        "\x08",
        "\x0b",
        "\x0c",
        "\r",
        "\x1b",
        "\x1f",
        "\x7f",
        "\x80",
        "\x85",
        "\x9f",
        "\ud800",
        "\udfff",
        "\ufffe",
        "\uffff",
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
    ],
)
def test_clean_text_replaces_dangerous_code_points(bad):
    assert clean_text(f"a{bad}b") == f"a{REPLACEMENT}b"


def test_clean_text_replaces_each_code_point_once():
    assert clean_text("\x00\x01\u202e") == REPLACEMENT * 3
    assert clean_text("a\x00b") == "a\ufffdb"


@pytest.mark.parametrize("s", HOSTILE)
def test_xml_text_and_attr_round_trip_through_a_parser(s):
    doc = f"<r a=\"{xml_attr(s)}\" b='{xml_attr(s)}'>{xml_text(s)}</r>"
    root = ET.fromstring(doc.encode("utf-8"))
    assert root.text == clean_text(s)
    assert root.get("a") == clean_text(s) == root.get("b")


def test_xml_escapes_markup_and_keeps_whitespace_in_attributes():
    assert xml_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert xml_text("a & b") == "a &amp; b"
    assert xml_attr("\"'") == "&quot;&apos;"
    attr = xml_attr("a\tb\nc")
    assert "\n" not in attr and "\t" not in attr
    assert ET.fromstring(f'<r a="{attr}"/>').get("a") == "a\tb\nc"  # not normalised to spaces


ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


@given(st.text(alphabet=st.sampled_from("ab &<>\"'\t\n\x01\u202e\ud800é;#"), max_size=12))
@settings(max_examples=300, deadline=None)
def test_xml_escapes_each_character_once(s):
    """The chained replaces give what a one-pass per-character table gives ("&" is not escaped twice)."""
    assert xml_text(s) == clean_text(s).translate(str.maketrans(ESCAPES))
    assert xml_attr(s) == clean_text(s).translate(str.maketrans({**ESCAPES, "\t": "&#9;", "\n": "&#10;"}))


def test_xml_output_is_encodable():
    for s in HOSTILE:
        xml_text(s).encode("utf-8")  # lone surrogates are gone
        xml_attr(s).encode("utf-8")


def test_dot_escape_stops_graphviz_escapes():
    assert dot_escape("name=\\N") == "name=\\\\N"
    assert dot_escape("\\l\\G") == "\\\\l\\\\G"
    assert dot_escape("trailing\\") == "trailing\\\\"
    assert dot_escape('say "hi"') == 'say \\"hi\\"'
    assert dot_escape("two\nlines") == "two\\nlines"
    assert dot_escape("&amp;") == "&amp;amp;"
    assert dot_escape("a\x00b") == "a\ufffdb"
    assert dot_string("<b>x</b>") == '"<b>x</b>"'  # quoted: never an HTML-like label


def test_dot_id_quotes():
    assert dot_id("e4:1/e0") == '"e4:1/e0"'
    assert dot_id("in0#2") == '"in0#2"'
    assert dot_id('a"b') == '"a\\"b"'
    assert dot_id("a\\") == '"a\\\\"'  # can never escape the closing quote


def test_dot_strings_render_literally_in_graphviz():
    import pygraphviz as pgv

    names = [s for s in HOSTILE if s.strip()]
    body = "\n".join(f'n{i} [label={dot_string(s)}, pos="0,{i * 40}!"];' for i, s in enumerate(names))
    graph = pgv.AGraph(string=f"digraph {{ node [shape=box, fixedsize=false]; {body} }}")
    graph.layout(prog="nop")
    svg = graph.draw(format="svg").decode("utf-8")
    root = ET.fromstring(svg)  # valid XML
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    for s in names:
        assert clean_text(s) in texts, s
