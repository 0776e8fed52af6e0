"""A Pygments lexer for JAX's jaxpr text, so the jaxpr view can be highlighted like code.

Line-local on purpose: every rule matches within one line, so a view may lex any single line on
its own (the Qt views highlight only the lines on screen of a 50k-line jaxpr). Nothing is
registered with Pygments; import `JaxprLexer` directly.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

# f32[3,4], ~f32[], key<fry>[], bool[], f32[8@x], f32[3]{V:i}
_TYPE = r"~?[A-Za-z_][A-Za-z0-9_]*(?:<[^<>\n]*>)?\[[^\]\n]*\](?:\{[^{}\n]*\})?"
_VAR = r"[A-Za-z_][A-Za-z0-9_]*"
_NUM = r"-?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
_LIT = rf"(?:{_NUM}|True|False)"


class JaxprLexer(RegexLexer):  # type: ignore[misc]  # pygments has no type stubs here: RegexLexer is Any
    """Tokens: ``{ lambda``, ``let``, ``in``, ``;``, binders with types, primitive names,
    ``name=value`` params, typed literals (``2.0:f32[]``) and ``# file:line:col (fn)`` comments."""

    name = "Jaxpr"
    aliases: list[str] = []  # not registered
    filenames: list[str] = []
    flags = re.MULTILINE

    tokens = {
        "root": [
            (r"\n", Whitespace),
            (r"[ \t]+", Whitespace),
            (r"#.*$", Comment.Single),
            # let name = { lambda ...   (a hoisted sub-jaxpr shared by several equations)
            (rf"(let)(\s+)({_VAR})(\s*)(=)(?=\s*\{{)", bygroups(Keyword, Whitespace, Name.Label, Whitespace, Operator)),
            (r"(\{)(\s*)(lambda)\b", bygroups(Punctuation, Whitespace, Keyword)),
            (r"(\.)(\s+)(let)\b", bygroups(Punctuation, Whitespace, Keyword)),
            (r"\bin\b(?=\s*(?:\(|$))", Keyword),
            # c:f32[3]  -- a typed binder (or a typed var in the outputs)
            (rf"({_LIT})(:)({_TYPE})", bygroups(Number, Punctuation, Keyword.Type)),
            (rf"({_VAR})(:)({_TYPE})", bygroups(Name.Variable, Punctuation, Keyword.Type)),
            # = prim[ ...   or   = prim operands
            (rf"(=)(\s+)({_VAR})", bygroups(Operator, Whitespace, Name.Function)),
            # name=value inside [...]
            (rf"({_VAR})(=)(?!=)", bygroups(Name.Attribute, Operator)),
            (r"\b(?:None|True|False)\b", Keyword.Constant),
            (r"\b(?:b?float\d+|u?int\d+|complex\d+|bool|float0)\b", Keyword.Type),
            (rf"(?<![\w.]){_NUM}(?![\w.])", Number),
            (r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"", String),
            (_VAR, Name),
            (r"[{}()\[\];,.]", Punctuation),
            (r"[=:@~*+/<>|&^%!-]", Operator),
            (r".", Text),
        ],
    }
