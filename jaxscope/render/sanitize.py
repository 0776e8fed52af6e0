"""Make user-controlled text safe for SVG/XML and DOT while keeping it faithful.

Every name that reaches an export (function and argument names, named scopes, pytree keys,
string-valued params, file paths) is user data. Measured failures without this module (see
research/anchors-ecosystem-reliability.md §B5): ``\\x01`` makes an SVG XML-invalid, NUL
truncates a Graphviz label, ``\\N``/``\\G``/``\\l`` are expanded by Graphviz, ``<...>`` becomes a
Graphviz HTML-like label, and U+202E (right-to-left override) passes through and allows spoofing.

`clean_text` replaces, with U+FFFD (so the reader sees that something was there):

* C0 controls except tab and newline (so also NUL and CR), DEL, and C1 controls (U+0080-U+009F);
* surrogate code points U+D800-U+DFFF (only ever "lone" in a Python str; not valid XML);
* the non-characters U+FFFE and U+FFFF (not valid XML);
* the bidi *embedding, override and isolate* controls U+202A-U+202E and U+2066-U+2069, the ones
  that reorder a whole run of text (CVE-2021-42574, "Trojan Source").

It deliberately keeps U+200E/U+200F (LRM/RLM) and U+061C (ALM): they are zero-width marks with
no scope, used legitimately in right-to-left text, and can only nudge the neutral characters
next to them; they cannot flip a run the way an override can. Everything else, including
non-ASCII letters, CJK and emoji, passes through unchanged.
"""

from __future__ import annotations

import functools
import re

REPLACEMENT = "\ufffd"

_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def clean_text(s: str) -> str:
    """`s` with control, surrogate, non-character and bidi-override code points replaced by U+FFFD."""
    return _BAD.sub(REPLACEMENT, s)


def _escape(s: str) -> str:
    """XML's five special characters escaped ("&" first). Chained `str.replace`, not
    `str.translate`: translate goes through a per-character table lookup, ten times slower
    (0.34 s of gpt-50k's SVG export, for its 62k tooltips)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&apos;")


@functools.lru_cache(maxsize=1 << 16)  # a graph repeats its primitives, avals and paths' stems thousands of times
def xml_text(s: str) -> str:
    """`s` cleaned and escaped for XML character data."""
    return _escape(clean_text(s))


@functools.lru_cache(maxsize=1 << 16)
def xml_attr(s: str) -> str:
    """`s` cleaned and escaped for a double- or single-quoted XML attribute value; a raw tab or
    newline would be normalised to a space by XML parsers, so they are escaped too."""
    return _escape(clean_text(s)).replace("\t", "&#9;").replace("\n", "&#10;")


def clear_caches() -> None:
    """Empty the escape caches. They pay off within one document, but kept they would hold a big
    graph's unique paths and tooltips: after an SVG export of gpt-50k, ~100 MB of the GUI's
    memory (the strings, and the half-empty allocator arenas around them)."""
    xml_text.cache_clear()
    xml_attr.cache_clear()


def dot_escape(s: str) -> str:
    """The inside of a DOT label string (an *escString*) that Graphviz renders literally.

    Backslashes are doubled, so ``\\N``, ``\\G``, ``\\l`` and a trailing backslash stay text;
    quotes are escaped; a newline becomes Graphviz's ``\\n`` (a centred line break); ``&`` becomes
    ``&amp;``, because Graphviz decodes HTML entities in every label (``&amp;`` would otherwise
    show as ``&``, ``&#60;`` as ``<``). ``<`` and ``>`` need nothing: inside a double-quoted
    string they are never an HTML-like label.
    """
    text = clean_text(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return text.replace("&", "&amp;")


def dot_string(s: str) -> str:
    """A double-quoted DOT string literal for a label-like attribute, rendered literally."""
    return f'"{dot_escape(s)}"'


def dot_id(s: str) -> str:
    """A double-quoted DOT identifier (node, cluster or graph name).

    Graphviz keeps the backslashes of an identifier as they are written, so only a quote (and a
    backslash, which could otherwise escape the closing quote) is escaped; newlines become spaces.
    """
    return '"' + clean_text(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
